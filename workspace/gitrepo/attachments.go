package gitrepo

// attachmentsDir is where h9 puts the files shared in a session's thread
// (ARCHITECTURE.md, "Files and images from the thread"). They are the
// user's material, not the session's changes: no checkpoint commits them,
// so no diff or pull request shows them.
const attachmentsDir = ".h9/attachments"

// stageScript is the checkpoint's staging, in the sandboxed script: every
// change but the attachments, even ones the model staged itself, and an
// exclude so that the model's own git status does not list them either.
// Whatever the add took of them is taken off the index again, so nothing
// in the workspace (the model may rewrite .git/info/exclude or add a
// .gitignore rule) can bring them in.
const stageScript = "mkdir -p .git/info 2>/dev/null && { grep -qxF '/" + attachmentsDir + "/' .git/info/exclude 2>/dev/null || echo '/" + attachmentsDir + "/' >> .git/info/exclude; }\n" +
	"g add --all . || exit 3\n" +
	"g rm -r --cached --quiet --ignore-unmatch -- " + attachmentsDir + " >/dev/null || exit 3\n"
