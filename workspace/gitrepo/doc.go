// Package gitrepo gives sessions real git checkouts: a per-repository
// cache under H9_DATA_DIR, a checkout per session on its own h9/… branch
// that borrows the cache's objects, checkpoint commits, the session's diff,
// pushes and GitHub pull requests.
//
// The workspace, its files and its .git are written by the model, so they
// are hostile, and h9's own git (with the host's credentials, unsandboxed)
// never runs with their configuration:
//
//   - h9's git touches a workspace once, when it creates it from the cache
//     (an empty directory, nothing the model wrote yet).
//   - Commits in the workspace run inside the sandbox, as any of the
//     model's commands: they need no credential. The same sandboxed command
//     writes the new commits into a bundle file.
//   - h9 reads that file (a regular file, confined to the workspace) and
//     fetches it, with its objects checked, into the session's own bare
//     repository under the cache, whose configuration h9 alone writes and
//     which borrows the cache's objects through alternates. Diffs, stats and
//     pushes run there.
//   - The token for GitHub reaches git only through a credential helper in
//     the environment of h9's git child (never on disk, in argv, in a
//     remote URL, in the workspace or in the sandbox), and only for the
//     repository's own https host.
//
// The cache is shared by every session of a repository, in this process
// and in others on the same H9_DATA_DIR: fetches and links are serialised
// by a lock held both in process and on a file. Objects are only ever
// added to it (gc is off; small packs are rolled up), since checkouts hold
// hard links to its packs and session repositories borrow its objects.
//
// The package runs processes and returns errors; it never logs.
package gitrepo
