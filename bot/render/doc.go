// Package render builds every Slack message h9 sends: the root message, the
// live checklist, the review and step-approval dialogs, notices and the
// /h9 status and help answers.
//
// It is pure: no I/O, no logging, no clock. Every renderer returns a Message
// that passes CheckLimits, whatever the input, and every piece of text that
// came from a user or the model goes through Escape, so it can never ping
// <!channel>, forge a <@U…> mention or a link.
//
// The checklist keeps every plan readable and small (at most 11 blocks):
// up to six sections of todo lines, each line capped at 300 units. When a
// plan does not fit, it shows in plan order the lines that matter most —
// in_progress, then the five most recently completed, then pending, then
// older completed, then cancelled — and a "…and N more (…)" line counting
// the rest by status. A completed todo's line ends with its evidence in a
// few words (the latest tool calls, a bash exit as ✓ or ✗, a checkpoint's
// commit and +a −d), at most 140 of its 300 units; the title and the
// outcome messages carry the session's tokens and cost (Spend). Status
// lists and long texts are capped the same way.
//
// Lengths are measured in UTF-16 code units (see Len), which is never less
// than what Slack counts as characters, so a message within our limits is
// within Slack's.
package render
