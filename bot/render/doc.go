// Package render builds every Slack message h9 sends: the root message, the
// live checklist, the review and step-approval dialogs, notices and the
// /h9 status and help answers.
//
// It is pure: no I/O, no logging, no clock. Every renderer returns a Message
// that passes CheckLimits, whatever the input, and every piece of text that
// came from a user or the model goes through Escape, so it can never ping
// <!channel>, forge a <@U…> mention or a link.
//
// Lengths are measured in UTF-16 code units (see Len), which is never less
// than what Slack counts as characters, so a message within our limits is
// within Slack's.
package render
