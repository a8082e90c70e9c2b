package automation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/h9-app/h9/agent/store"
)

// A repository's own .h9/automations.yaml (ARCHITECTURE.md,
// "Automations"): read whenever h9 fetches the repository and at least
// every H9_AUTOMATION_REFRESH. A valid version replaces the repository's
// automations in the engine and is kept in the store, so it is in force
// again after a restart before the repository is fetched; an invalid one
// is said once in the repository's channels (once across a fleet and
// restarts: the said version is recorded first) and the last valid
// version stays in force.

// RepoReader reads repositories' files (workspace/gitrepo's Repos).
type RepoReader interface {
	// Fetch brings the repository's cache up to date.
	Fetch(ctx context.Context, repo string) (warning string, err error)
	// ReadDefaultBranchFile reads a file of the default branch from the
	// cache; found is false when there is none.
	ReadDefaultBranchFile(ctx context.Context, repo, path string) (data []byte, found bool, err error)
}

// repoFileRecord is what the store keeps of a repository's file, in the
// Cursor of the automation state named after the file.
type repoFileRecord struct {
	// Valid is the last valid version in force ("" = none, or no file).
	Valid string `json:"valid"`
	// Said is the hash of the invalid version already said.
	Said string `json:"said,omitempty"`
}

// fetchTimeout bounds one refresh's fetch of a repository.
const fetchTimeout = 5 * time.Minute

// RepoFiles keeps each repository's file in force in an engine. Run is
// its one goroutine; Fetched asks it to read a repository again.
type RepoFiles struct {
	e      *Engine
	reader RepoReader
	repos  []RepoFile
	env    Env
	every  time.Duration
	poke   chan string

	mu   sync.Mutex
	seen map[string]string // repository → hash of the version last handled
}

// NewRepoFiles reads the repositories' files into e every refresh (at
// least) with reader; env checks them as it checks the operator's file.
func NewRepoFiles(e *Engine, reader RepoReader, repos []RepoFile, env Env, refresh time.Duration) *RepoFiles {
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &RepoFiles{e: e, reader: reader, repos: repos, env: env, every: refresh,
		poke: make(chan string, len(repos)+1), seen: map[string]string{}}
}

// Fetched tells the refresher that h9 fetched the repository (a session
// started there): its file is read again, without another fetch.
func (r *RepoFiles) Fetched(repo string) {
	select {
	case r.poke <- repo:
	default:
	}
}

// Run puts the stored valid versions in force, then fetches and reads
// every repository's file, again every refresh and after each Fetched,
// until ctx ends.
func (r *RepoFiles) Run(ctx context.Context) {
	for _, rf := range r.repos {
		r.restore(ctx, rf)
	}
	r.refreshAll(ctx)
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.refreshAll(ctx)
		case name := <-r.poke:
			for _, rf := range r.repos {
				if strings.EqualFold(rf.Repo, name) {
					r.read(ctx, rf)
				}
			}
		}
	}
}

func (r *RepoFiles) refreshAll(ctx context.Context) {
	for _, rf := range r.repos {
		if ctx.Err() != nil {
			return
		}
		if !r.e.claimTurn(ctx, "refresh:"+rf.Repo, r.every) {
			// Another replica fetches it this time and keeps what it
			// read in the store: that is put in force here.
			r.follow(ctx, rf)
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
		_, err := r.reader.Fetch(fctx, rf.Repo)
		cancel()
		if err != nil {
			r.e.o.Log.Warn("fetching a repository for its automations failed; its last valid version stays", "repo", rf.Repo, "err", err)
		}
		r.read(ctx, rf) // the cache as it is: a failed fetch may have left an older copy
	}
}

// read reads one repository's file from the cache and applies it.
func (r *RepoFiles) read(ctx context.Context, rf RepoFile) {
	cctx, cancel := r.e.ctx(ctx)
	data, found, err := r.reader.ReadDefaultBranchFile(cctx, rf.Repo, RepoFilePath)
	cancel()
	if err != nil {
		r.e.o.Log.Warn("reading a repository's automations failed; its last valid version stays", "repo", rf.Repo, "err", err)
		return
	}
	if !found {
		data = nil
	}
	r.Apply(ctx, rf, data)
}

// Apply puts one version of a repository's file in force (nil data: the
// file is gone, and so are its automations), or says once why it cannot.
// The version handled last is not looked at again.
func (r *RepoFiles) Apply(ctx context.Context, rf RepoFile, data []byte) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	r.mu.Lock()
	same := r.seen[rf.Repo] == hash
	r.seen[rf.Repo] = hash
	r.mu.Unlock()
	if same {
		return
	}
	source := rf.Repo + "/" + RepoFilePath
	list, err := r.parse(rf, data)
	if err == nil {
		if err = r.e.Set(source, list); err == nil {
			r.keep(ctx, source, func(rec *repoFileRecord) bool {
				changed := rec.Valid != string(data) || rec.Said != ""
				rec.Valid, rec.Said = string(data), ""
				return changed
			})
			r.e.o.Log.Info("a repository's automations are in force", "repo", rf.Repo, "automations", len(list))
			return
		}
	}
	why := strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
	say := false
	r.keep(ctx, source, func(rec *repoFileRecord) bool {
		say = rec.Said != hash
		rec.Said = hash
		return say
	})
	r.e.o.Log.Warn("a repository's automations file is invalid; its last valid version stays", "repo", rf.Repo, "err", why, "said", say)
	if !say {
		return
	}
	for _, ch := range rf.Channels {
		cctx, cancel := r.e.ctx(ctx)
		err := r.e.o.Bot.Post(cctx, ch, "", fmt.Sprintf("h9 could not load %s; its last valid version stays in force.", why), "")
		cancel()
		if err != nil {
			r.e.o.Log.Warn("saying a repository's invalid automations failed", "repo", rf.Repo, "channel", ch, "err", err)
		}
	}
}

func (r *RepoFiles) parse(rf RepoFile, data []byte) ([]*Automation, error) {
	if data == nil {
		return nil, nil
	}
	return ParseRepoFile(rf, data, r.env)
}

// restore puts the stored valid version in force (at start, before the
// repository is fetched).
func (r *RepoFiles) restore(ctx context.Context, rf RepoFile) {
	source := rf.Repo + "/" + RepoFilePath
	st, err := r.e.state(ctx, source)
	if err != nil {
		r.e.o.Log.Warn("reading a repository's last valid automations failed", "repo", rf.Repo, "err", err)
		return
	}
	var rec repoFileRecord
	if len(st.Cursor) == 0 || json.Unmarshal(st.Cursor, &rec) != nil || rec.Valid == "" {
		return
	}
	list, err := r.parse(rf, []byte(rec.Valid))
	if err == nil {
		err = r.e.Set(source, list)
	}
	if err != nil {
		r.e.o.Log.Warn("a repository's last valid automations no longer load", "repo", rf.Repo, "err", err)
	}
}

// follow puts in force the valid version another replica read and kept
// in the store, if it is not the one in force here. What is said of an
// invalid version is that replica's to say.
func (r *RepoFiles) follow(ctx context.Context, rf RepoFile) {
	source := rf.Repo + "/" + RepoFilePath
	st, err := r.e.state(ctx, source)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.e.o.Log.Warn("reading a repository's automations from the store failed", "repo", rf.Repo, "err", err)
		return
	}
	var rec repoFileRecord
	if len(st.Cursor) == 0 || json.Unmarshal(st.Cursor, &rec) != nil {
		return
	}
	var data []byte
	if rec.Valid != "" {
		data = []byte(rec.Valid)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	r.mu.Lock()
	same := r.seen[rf.Repo] == hash
	r.mu.Unlock()
	if same {
		return
	}
	list, err := r.parse(rf, data)
	if err == nil {
		err = r.e.Set(source, list)
	}
	if err != nil {
		r.e.o.Log.Warn("a repository's automations kept by another replica do not load here", "repo", rf.Repo, "err", err)
		return
	}
	r.mu.Lock()
	r.seen[rf.Repo] = hash
	r.mu.Unlock()
}

// keep edits the stored record of a repository's file; edit reports
// whether it changed anything (nothing is written when not). said-once
// rests on the store's versions: of two replicas, one writes first.
func (r *RepoFiles) keep(ctx context.Context, source string, edit func(*repoFileRecord) bool) {
	for range 5 {
		st, err := r.e.state(ctx, source)
		if err != nil {
			r.e.o.Log.Warn("reading a repository file's record failed", "file", source, "err", err)
			return
		}
		var rec repoFileRecord
		if len(st.Cursor) > 0 {
			_ = json.Unmarshal(st.Cursor, &rec) // an unreadable record starts anew
		}
		if !edit(&rec) {
			return
		}
		if st.Cursor, err = json.Marshal(rec); err != nil {
			return
		}
		cctx, cancel := r.e.ctx(ctx)
		_, err = r.e.o.Store.PutAutomationState(cctx, st)
		cancel()
		if err == nil || !errors.Is(err, store.ErrConflict) {
			if err != nil {
				r.e.o.Log.Warn("saving a repository file's record failed", "file", source, "err", err)
			}
			return
		}
	}
}
