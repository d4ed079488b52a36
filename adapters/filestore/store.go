// Package filestore is a ports.ObjectStore on a local directory: one file per
// object, "/" in keys mapping to subdirectories, so wal/1/0001 is the file
// DIR/wal/1/0001.
//
// Writes go to a temporary file in the target directory that is synced and
// then renamed (Put) or hard-linked (PutIfAbsent) into place, and the
// directory is synced after, so an acknowledged object survives a crash and
// readers never see a partial one. link(2) fails when the name exists, which
// makes PutIfAbsent exclusive across processes sharing the directory.
//
// On a file system a name is a file or a directory, not both, so the store
// cannot hold both a key and a key below it (a/b and a/b/c); writing the
// second fails.
package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/picomq/pico/adapters/internal/storage/objkey"
	"github.com/picomq/pico/ports"
)

// tempPrefix starts the names of files being written. No key may have a
// segment starting with it, so List can skip them.
const tempPrefix = ".pico-tmp-"

// URLScheme is the prefix Open accepts in front of a directory.
const URLScheme = "file://"

// Store is an object store in one directory, safe for concurrent use, also
// by several processes.
type Store struct {
	root string
}

var _ ports.ObjectStore = (*Store)(nil)

// Open returns the store in dir, creating the directory if needed. dir is a
// path, or file://PATH where everything after "file://" is the path
// (file:///var/lib/pico is /var/lib/pico, file://data is ./data).
func Open(dir string) (*Store, error) {
	path := strings.TrimPrefix(dir, URLScheme)
	if path == "" {
		return nil, fmt.Errorf("filestore: open %q: no directory", dir)
	}
	root, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	return &Store{root: root}, nil
}

// Dir returns the absolute path of the store's directory.
func (s *Store) Dir() string { return s.root }

// Put implements ports.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	if err := s.check(ctx, "put", key); err != nil {
		return err
	}
	if err := s.publish(key, body, os.Rename); err != nil {
		return fmt.Errorf("filestore: put %s: %w", key, err)
	}
	return nil
}

// PutIfAbsent implements ports.ObjectStore.
func (s *Store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if err := s.check(ctx, "put-if-absent", key); err != nil {
		return err
	}
	err := s.publish(key, body, os.Link)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Lstat(s.path(key)); serr == nil && fi.IsDir() {
			return fmt.Errorf("filestore: put-if-absent %s: the name is a directory of longer keys", key)
		}
		return fmt.Errorf("filestore: put-if-absent %s: %w", key, ports.ErrPrecondition)
	}
	if err != nil {
		return fmt.Errorf("filestore: put-if-absent %s: %w", key, err)
	}
	return nil
}

// publish writes body to a synced temporary file beside the key's file,
// moves it into place with place (rename or link), and syncs the directory.
func (s *Store) publish(key string, body []byte, place func(tmp, final string) error) error {
	final := s.path(key)
	dir := filepath.Dir(final)
	tmp, err := s.writeTemp(dir, body)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after a rename it is gone already; after a link it is a second name
	if err := place(tmp, final); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeTemp writes body to a new synced file in dir, creating dir if needed.
// A concurrent Delete may remove an empty dir between its creation and the
// file's, hence the retries.
func (s *Store) writeTemp(dir string, body []byte) (string, error) {
	for attempt := 1; ; attempt++ {
		var f *os.File
		err := s.makeDirs(dir)
		if err == nil {
			f, err = os.OpenFile(filepath.Join(dir, tempPrefix+randomHex()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		}
		if errors.Is(err, fs.ErrNotExist) && attempt < 10 {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(body)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return "", err
		}
		return f.Name(), nil
	}
}

// makeDirs creates dir and its missing parents under the root, syncing each
// parent so that the new entries are durable too.
func (s *Store) makeDirs(dir string) error {
	if dir == s.root {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := s.makeDirs(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Also when another writer created it: that writer may not have synced
	// the parent yet.
	return syncDir(parent)
}

// Get implements ports.ObjectStore.
func (s *Store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := s.check(ctx, "get", key); err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, fmt.Errorf("filestore: get %s: negative offset %d", key, off)
	}
	body, err := readRange(s.path(key), off, length)
	if err != nil {
		return nil, fmt.Errorf("filestore: get %s: %w", key, err)
	}
	return body, nil
}

func readRange(path string, off, length int64) ([]byte, error) {
	f, err := os.Open(path)
	if isAbsent(err) {
		return nil, ports.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ports.ErrNotFound // a directory of longer keys, not an object
	}
	size := fi.Size()
	if off >= size {
		return []byte{}, nil
	}
	n := size - off
	if length >= 0 && length < n {
		n = length
	}
	buf := make([]byte, n)
	read, err := f.ReadAt(buf, off)
	if err == io.EOF && int64(read) == n {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return buf, nil
}

// isAbsent reports whether err from opening a key's file means there is no
// such object: the file or a directory on its path is missing, or a path
// component is a file (key a/b/c when a/b is an object).
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// Delete implements ports.ObjectStore, one key after another.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := s.delete(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// delete removes key, and the directories that left empty, up to the root.
func (s *Store) delete(ctx context.Context, key string) error {
	if err := s.check(ctx, "delete", key); err != nil {
		return err
	}
	path := s.path(key)
	fi, err := os.Lstat(path)
	if isAbsent(err) || (err == nil && fi.IsDir()) {
		return nil
	}
	if err == nil {
		err = os.Remove(path)
	}
	if isAbsent(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("filestore: delete %s: %w", key, err)
	}
	dir := filepath.Dir(path)
	if err := syncDir(dir); err != nil && !isAbsent(err) {
		return fmt.Errorf("filestore: delete %s: %w", key, err)
	}
	// Remove fails on a directory that is not empty, which ends the climb.
	for dir != s.root && os.Remove(dir) == nil {
		dir = filepath.Dir(dir)
	}
	return nil
}

// List implements ports.ObjectStore: a depth-first walk that visits each
// directory's entries in key order and skips subtrees outside the range.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	if limit < 1 {
		return nil, fmt.Errorf("filestore: list %s: limit %d is not positive", prefix, limit)
	}
	w := walk{ctx: ctx, prefix: prefix, after: after, limit: limit}
	if _, err := w.dir(s.root, ""); err != nil {
		return nil, fmt.Errorf("filestore: list %s: %w", prefix, err)
	}
	return w.out, nil
}

type walk struct {
	ctx           context.Context
	prefix, after string
	limit         int
	out           []ports.ObjectInfo
}

type entry struct {
	name  string
	key   string // the key of a file; for a directory the key prefix, ending in "/"
	isDir bool
}

// dir lists the directory at path, whose keys start with keyPrefix, and
// reports whether the walk is done.
func (w *walk) dir(path, keyPrefix string) (bool, error) {
	if err := w.ctx.Err(); err != nil {
		return true, err
	}
	des, err := os.ReadDir(path)
	if isAbsent(err) {
		return false, nil // removed by a concurrent Delete
	}
	if err != nil {
		return true, err
	}
	entries := make([]entry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, tempPrefix):
		case de.IsDir():
			entries = append(entries, entry{name, keyPrefix + name + "/", true})
		case de.Type().IsRegular():
			entries = append(entries, entry{name, keyPrefix + name, false})
		}
	}
	// Sorting by key rather than by name puts a directory "a" after a file
	// "a-b": '/' sorts after '-'.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range entries {
		if e.key > w.prefix && !strings.HasPrefix(e.key, w.prefix) {
			return true, nil // this and every later key sort after the prefix range
		}
		if e.isDir {
			// Keys below e.key all start with it and are longer than it.
			related := strings.HasPrefix(e.key, w.prefix) || strings.HasPrefix(w.prefix, e.key)
			pastAfter := w.after < e.key || strings.HasPrefix(w.after, e.key)
			if !related || !pastAfter {
				continue
			}
			if done, err := w.dir(filepath.Join(path, e.name), e.key); done || err != nil {
				return done, err
			}
			continue
		}
		if !strings.HasPrefix(e.key, w.prefix) || e.key <= w.after {
			continue
		}
		fi, err := os.Lstat(filepath.Join(path, e.name))
		if isAbsent(err) {
			continue
		}
		if err != nil {
			return true, err
		}
		w.out = append(w.out, ports.ObjectInfo{Key: e.key, Size: fi.Size()})
		if len(w.out) == w.limit {
			return true, nil
		}
	}
	return false, nil
}

func (s *Store) check(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("filestore: %s %s: %w", op, key, err)
	}
	if err := objkey.Check(key); err != nil {
		return fmt.Errorf("filestore: %s: %w", op, err)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(seg, tempPrefix) {
			return fmt.Errorf("filestore: %s: invalid key %q: segment starts with %q, reserved for temporary files", op, key, tempPrefix)
		}
	}
	return nil
}

// path maps a checked key to its file; the key rules keep it under root.
func (s *Store) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}
