package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/h9-app/h9/workspace"
	"github.com/h9-app/h9/workspace/forge"
)

// Identity is a commit author.
type Identity struct{ Name, Email string }

// String is the "Name <email>" form of commit headers and trailers.
func (i Identity) String() string { return i.Name + " <" + i.Email + ">" }

// valid: both parts present, and nothing that would break the header.
func (i Identity) valid() bool {
	return strings.TrimSpace(i.Name) != "" && strings.TrimSpace(i.Email) != "" && !strings.ContainsAny(i.Name+i.Email, "<>\n\r")
}

// Config configures Repos.
type Config struct {
	// Dir holds the caches (H9_DATA_DIR/repos); the sandbox hides it.
	Dir        string
	Workspaces *workspace.Manager // where sessions' checkouts are made; nil: none are (h9 doctor)
	Repos      []Repo             // checked by Check
	Author     Identity           // H9_GIT_NAME / H9_GIT_EMAIL
	// GitHubToken (H9_GITHUB_TOKEN) opens pull requests and, when git has
	// no other credential, authenticates https pushes to GitHub.
	GitHubToken string
	GitHubAPI   string // H9_GITHUB_API_URL, ending in "/"
	GitLabAPI   string // H9_GITLAB_API_URL, ending in "/"
	// Tokens are the values of the variables the repositories' forges
	// name in token_env (H9_GITHUB_TOKEN falls back to GitHubToken).
	Tokens     map[string]string
	HTTPClient *http.Client // for the GitHub API; nil = http.DefaultClient
	// Spares: after each session's start, make the next one's checkout in
	// the background (spare.go), so a session starts without writing its
	// tree. Costs one working tree per repository and base branch.
	Spares bool
	// Secrets are the values of the repositories' `secrets:` (from h9's
	// environment at start), given to their setup commands only.
	Secrets map[string]string
}

// Repos is every configured repository and the sessions working in them.
// It is safe for concurrent use.
type Repos struct {
	cfg   Config
	repos []Repo
	locks *locks

	bg        context.Context // spares are made under it; Close cancels it
	stop      context.CancelFunc
	mu        sync.Mutex
	refilling map[string]bool         // repository@base → a spare is being made
	forges    map[string]forge.Client // repository name → its forge's client, made once (Forge)
	closed    bool
	wg        sync.WaitGroup
	spareErr  atomic.Value // errorOrNil: the last spare's outcome
}

// New checks cfg; it needs git on PATH once a repository is configured.
func New(cfg Config) (*Repos, error) {
	repos, err := Check(cfg.Repos)
	if err != nil {
		return nil, err
	}
	switch {
	case len(repos) == 0:
	case cfg.Dir == "":
		return nil, fmt.Errorf("%w: the cache directory is empty", ErrInvalidConfig)
	case !cfg.Author.valid():
		return nil, fmt.Errorf("%w: the commit author needs a name and an email without <, > or newlines", ErrInvalidConfig)
	}
	if err := checkSecretValues(repos, cfg.Secrets); err != nil {
		return nil, err
	}
	if len(repos) > 0 {
		if _, err := exec.LookPath("git"); err != nil {
			return nil, fmt.Errorf("%w: repositories are configured but git is not installed: %w", ErrInvalidConfig, err)
		}
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the repository cache: %w", err)
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	r := &Repos{cfg: cfg, repos: repos, locks: newLocks(), refilling: map[string]bool{}}
	r.bg, r.stop = context.WithCancel(context.Background())
	return r, nil
}

// List is the configured repositories in configuration order.
func (r *Repos) List() []Repo { return append([]Repo(nil), r.repos...) }

// Get finds a repository by name, ignoring case.
func (r *Repos) Get(name string) (Repo, bool) {
	for _, repo := range r.repos {
		if strings.EqualFold(repo.Name, name) {
			return repo, true
		}
	}
	return Repo{}, false
}

// ForChannel is the repository whose channels list the channel, if any.
func (r *Repos) ForChannel(channel string) (Repo, bool) {
	for _, repo := range r.repos {
		if slices.Contains(repo.Channels, channel) {
			return repo, true
		}
	}
	return Repo{}, false
}

// CanOpenPullRequests reports whether pull (or merge) requests can be
// opened for repo: it is on a forge and the forge's token is set.
func (r *Repos) CanOpenPullRequests(repo Repo) bool {
	return repo.Forge != nil && forge.Supported(forge.Kind(repo.Forge.Type)) && r.token(repo) != ""
}

func (r *Repos) repo(name string) (Repo, error) {
	repo, ok := r.Get(name)
	if !ok {
		return Repo{}, fmt.Errorf("%w: %q", ErrUnknownRepo, name)
	}
	return repo, nil
}

// repoDir holds one repository's cache: mirror.git, its lock, and the
// sessions' repositories.
func (r *Repos) repoDir(repo Repo) string { return filepath.Join(r.cfg.Dir, repo.Name) }

func (r *Repos) mirrorDir(repo Repo) string { return filepath.Join(r.repoDir(repo), "mirror.git") }

// remote is what a git child talking to repo's remote needs.
func (r *Repos) remote(repo Repo) credential {
	user := "x-access-token"
	if repo.Forge != nil && repo.Forge.Type == "gitlab" {
		user = "oauth2"
	}
	return credentialFor(repo.URL, r.token(repo), user)
}

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
