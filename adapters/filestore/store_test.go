package filestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/picomq/pico/ports"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Deletes prune empty directories while other writers create files in
// them; no write may fail for it.
func TestPutsRaceDirectoryPruning(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("d/x/%d", g)
				if err := s.Put(ctx, key, []byte("x")); err != nil {
					t.Errorf("Put %s round %d: %v", key, i, err)
					return
				}
				if err := s.Delete(ctx, key); err != nil {
					t.Errorf("Delete %s round %d: %v", key, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if entries, err := os.ReadDir(s.Dir()); err != nil || len(entries) != 0 {
		t.Fatalf("store directory holds %d entries (%v), want it emptied", len(entries), err)
	}
}

// Two handles on one directory, as two processes would have.
func TestPutIfAbsentExclusiveAcrossHandles(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, "file://"+dir)
	ctx := t.Context()
	for round := range 20 {
		key := fmt.Sprintf("claim/%d", round)
		var errA, errB error
		var wg sync.WaitGroup
		wg.Go(func() { errA = a.PutIfAbsent(ctx, key, []byte("a")) })
		wg.Go(func() { errB = b.PutIfAbsent(ctx, key, []byte("b")) })
		wg.Wait()
		if (errA == nil) == (errB == nil) {
			t.Fatalf("%s: a: %v, b: %v; want exactly one winner", key, errA, errB)
		}
		loser := errA
		if errA == nil {
			loser = errB
		}
		if !errors.Is(loser, ports.ErrPrecondition) {
			t.Fatalf("%s: loser got %v, want ErrPrecondition", key, loser)
		}
	}
}

func TestLeftoverTempFilesAreInvisible(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := t.Context()
	if err := s.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// What a crash between writing and renaming leaves behind.
	for _, name := range []string{tempPrefix + "123", filepath.Join("a", tempPrefix+"456")} {
		if err := os.WriteFile(filepath.Join(s.Dir(), name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := s.List(ctx, "", "", 10)
	if err != nil || len(infos) != 1 || infos[0].Key != "a/b" {
		t.Fatalf("List = %v, %v; want only a/b", infos, err)
	}
	for _, key := range []string{tempPrefix + "123", "a/" + tempPrefix + "456", "x/" + tempPrefix + "y/z"} {
		if err := s.Put(ctx, key, []byte("x")); err == nil {
			t.Errorf("Put(%q) = nil, want an error: the prefix is reserved", key)
		}
	}
}

func TestKeyBelowAnObjectFails(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := t.Context()
	if err := s.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a/b/c", []byte("x")); err == nil {
		t.Fatal("Put(a/b/c) with a/b an object = nil, want an error")
	}
	if err := s.PutIfAbsent(ctx, "a", []byte("x")); err == nil || errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("PutIfAbsent(a) with a a directory = %v, want an error other than ErrPrecondition", err)
	}
}

func TestOpenRejectsEmpty(t *testing.T) {
	for _, dir := range []string{"", "file://"} {
		if _, err := Open(dir); err == nil {
			t.Errorf("Open(%q) = nil error", dir)
		}
	}
}
