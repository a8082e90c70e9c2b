package gitrepo

import "path/filepath"

// cacheDir is the repository's cache of build and package downloads,
// shared by its sessions only and kept across them (workspace/cache.go).
// It sits beside the repository's mirror, under H9_DATA_DIR, which every
// command is otherwise denied.
func (r *Repos) cacheDir(repo Repo) (string, error) {
	return filepath.Abs(filepath.Join(r.repoDir(repo), "cache"))
}

// useCache gives session id the repository's cache.
func (r *Repos) useCache(repo Repo, id string) error {
	dir, err := r.cacheDir(repo)
	if err != nil {
		return err
	}
	return r.cfg.Workspaces.UseCache(id, dir)
}
