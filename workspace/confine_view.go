package workspace

import (
	"os"
	"path/filepath"
)

// readableDevices are the device files a plan-mode command may read under
// Landlock; /dev/null may also be written.
var readableDevices = []string{"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// confinement builds plan mode's Landlock rules from the view: the same
// directories bwrap would show, minus the hidden ones and the secret files
// (Landlock allows, it cannot subtract: a directory holding one is allowed
// entry by entry), plus /proc (Landlock already denies the files of
// processes outside the domain, h9's among them) and the scratch /tmp.
func (s *sandbox) confinement(p place, scratch string) *confinement {
	c := &confinement{
		ReadDirs:   []string{"/proc", p.dir, p.home},
		ReadFiles:  readableDevices,
		WriteDirs:  []string{scratch},
		WriteFiles: []string{os.DevNull},
	}
	for _, r := range s.view.roots() {
		dirs, files := allowBelow(r, s.view.excludedUnder(r))
		c.ReadDirs = append(c.ReadDirs, dirs...)
		c.ReadFiles = append(c.ReadFiles, files...)
	}
	return c
}

// allowBelow lists the directories and files to allow so that everything
// under root is reachable except the excluded paths. Symlinks get no rule:
// Landlock judges the file they lead to.
func allowBelow(root string, excluded []string) (dirs, files []string) {
	if len(excluded) == 0 {
		return []string{root}, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		var below []string
		skip := false
		for _, x := range excluded {
			switch {
			case x == p:
				skip = true
			case within(x, p):
				below = append(below, x)
			}
		}
		switch {
		case skip:
		case len(below) > 0:
			d, f := allowBelow(p, below)
			dirs, files = append(dirs, d...), append(files, f...)
		case e.IsDir():
			dirs = append(dirs, p)
		case e.Type().IsRegular():
			files = append(files, p)
		}
	}
	return dirs, files
}

// execConfinement is the Landlock execution mode's (H9_SANDBOX=auto
// without bwrap): plan mode's view, and writes to the session's workspace
// and home besides the scratch /tmp. Everything else of the data
// directory, other sessions' workspaces among them, is neither readable
// nor writable. TCP is refused unless p asks for the network (a setup
// command); signals and abstract unix sockets are scoped to the command.
func (s *sandbox) execConfinement(p place, scratch string) *confinement {
	c := s.confinement(p, scratch)
	c.Landlock, c.Exec, c.Network = true, true, p.network
	read := c.ReadDirs[:0:0]
	for _, d := range c.ReadDirs {
		if d != p.dir && d != p.home {
			read = append(read, d)
		}
	}
	c.ReadDirs = read
	c.WriteDirs = append(c.WriteDirs, p.dir, p.home)
	return c
}
