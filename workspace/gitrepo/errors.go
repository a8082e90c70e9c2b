package gitrepo

import (
	"errors"

	"github.com/h9-app/h9/workspace/forge"
)

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrInvalidConfig: a repository's configuration is unusable.
	ErrInvalidConfig = errors.New("invalid repository configuration")
	// ErrUnknownRepo: no repository of that name is configured.
	ErrUnknownRepo = errors.New("unknown repository")
	// ErrNoBranch: the base branch does not exist in the repository.
	ErrNoBranch = errors.New("no such branch")
	// ErrBranchTaken: the session's branch already exists on the remote.
	ErrBranchTaken = errors.New("branch already exists")
	// ErrGit: a git command failed; the message carries git's own words.
	ErrGit = errors.New("git failed")
	// ErrRejected: the remote refused a push; the message says why.
	ErrRejected = errors.New("push rejected")
	// ErrSecretInBranch: a commit to push holds a setup secret's value.
	ErrSecretInBranch = errors.New("a setup secret is in the branch")
	// ErrNoPullRequests: the repository is on no forge or h9 has no token.
	ErrNoPullRequests = errors.New("pull requests are not configured")
	// ErrForge: the forge's API refused or failed a call (forge.Error).
	ErrForge = forge.ErrAPI
	// ErrGitHub is ErrForge's older name.
	ErrGitHub = ErrForge
	// ErrWorkspace: the session's checkout is missing or unusable.
	ErrWorkspace = errors.New("session checkout unusable")
)
