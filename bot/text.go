package bot

import "github.com/h9-app/h9/bot/render"

// text is a plain message: a mrkdwn string, no blocks.
func text(s string) render.Message { return render.Message{Text: s} }
