package gitrepo

import (
	"context"
	"errors"
	"testing"
)

func TestReadDefaultBranchFile(t *testing.T) {
	t.Parallel()
	remote := newRemote(t, map[string]string{"README.md": "hello\n", ".h9/automations.yaml": "automations: []\n"})
	r, err := New(Config{Dir: t.TempDir(), Repos: []Repo{{Name: "app", URL: remote}}, Author: Identity{Name: "h9", Email: "h9@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if _, _, err := r.ReadDefaultBranchFile(ctx, "app", ".h9/automations.yaml"); err == nil {
		t.Fatal("read a file before the cache exists")
	}
	if _, err := r.Fetch(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	data, found, err := r.ReadDefaultBranchFile(ctx, "app", ".h9/automations.yaml")
	if err != nil || !found || string(data) != "automations: []\n" {
		t.Fatalf("read %q, %v, %v", data, found, err)
	}
	if _, found, err := r.ReadDefaultBranchFile(ctx, "app", ".h9/missing.yaml"); err != nil || found {
		t.Fatalf("a missing file: found %v, %v", found, err)
	}
	if _, found, err := r.ReadDefaultBranchFile(ctx, "app", ".h9"); err != nil || found {
		t.Fatalf("a directory: found %v, %v", found, err)
	}
	if _, _, err := r.ReadDefaultBranchFile(ctx, "app", "../x"); err == nil {
		t.Fatal("read outside the repository")
	}
	if _, _, err := r.ReadDefaultBranchFile(ctx, "nope", "x"); !errors.Is(err, ErrUnknownRepo) {
		t.Fatalf("unknown repository: %v", err)
	}

	// A push is seen once the cache is fetched again.
	pushToRemote(t, remote, "main", map[string]string{".h9/automations.yaml": "automations: [x]\n"})
	if data, _, _ := r.ReadDefaultBranchFile(ctx, "app", ".h9/automations.yaml"); string(data) != "automations: []\n" {
		t.Fatalf("read %q before fetching", data)
	}
	if _, err := r.Fetch(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := r.ReadDefaultBranchFile(ctx, "app", ".h9/automations.yaml"); string(data) != "automations: [x]\n" {
		t.Fatalf("read %q after fetching", data)
	}
}
