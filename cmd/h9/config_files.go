package main

import "github.com/h9-app/h9/workspace"

// FilesConfig is the settings of files shared in threads and of images
// sent to the model (ARCHITECTURE.md, "Files and images from the thread").
type FilesConfig struct {
	AttachmentMax workspace.Size `split_words:"true" default:"20MiB" desc:"largest file h9 downloads from a thread into the workspace's .h9/attachments/ (10 per message)"`
	ModelVision   string         `split_words:"true" default:"auto" desc:"send shared images to the model: auto (until the endpoint refuses them), true or false"`
}

// checkFiles validates the files settings, one line naming the one at fault.
func (c *Config) checkFiles() error {
	if c.AttachmentMax <= 0 {
		return invalid("H9_ATTACHMENT_MAX must be a positive size, e.g. 20MiB (got %d bytes)", int64(c.AttachmentMax))
	}
	return oneOf("H9_MODEL_VISION", c.ModelVision, "auto", "true", "false")
}
