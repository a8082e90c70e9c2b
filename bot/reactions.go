package bot

// The reactions h9 puts on a reply: queued behind the current run, then
// picked up when h9 starts on it.
const (
	reactionQueued   = "hourglass_flowing_sand"
	reactionPickedUp = "eyes"
)
