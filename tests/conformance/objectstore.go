package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/picomq/pico/ports"
)

// ObjectStoreOpener returns a fresh, empty store for one subtest and
// registers any cleanup with t.Cleanup.
type ObjectStoreOpener func(t *testing.T) ports.ObjectStore

// ObjectStore runs the object store suite.
func ObjectStore(t *testing.T, open ObjectStoreOpener) {
	t.Run("PutGetRoundTrip", func(t *testing.T) { testObjRoundTrip(t, open) })
	t.Run("Overwrite", func(t *testing.T) { testObjOverwrite(t, open) })
	t.Run("RangedGet", func(t *testing.T) { testObjRanges(t, open) })
	t.Run("RangedGetEmptyObject", func(t *testing.T) { testObjEmptyRanges(t, open) })
	t.Run("NegativeOffsetFails", func(t *testing.T) { testObjNegativeOffset(t, open) })
	t.Run("GetMissingIsNotFound", func(t *testing.T) { testObjNotFound(t, open) })
	t.Run("PutIfAbsent", func(t *testing.T) { testObjPutIfAbsent(t, open) })
	t.Run("RacingPutIfAbsentOneWinner", func(t *testing.T) { testObjPutIfAbsentRace(t, open) })
	t.Run("ListOrderPrefixAfter", func(t *testing.T) { testObjList(t, open) })
	t.Run("ListPagination", func(t *testing.T) { testObjListPages(t, open) })
	t.Run("ListBadLimitFails", func(t *testing.T) { testObjListLimit(t, open) })
	t.Run("DeleteIdempotent", func(t *testing.T) { testObjDelete(t, open) })
	t.Run("DeleteMany", func(t *testing.T) { testObjDeleteMany(t, open) })
	t.Run("SlicesAreNotShared", func(t *testing.T) { testObjSlicesNotShared(t, open) })
	t.Run("InvalidKeysRejected", func(t *testing.T) { testObjInvalidKeys(t, open) })
	t.Run("CancelledContextFails", func(t *testing.T) { testObjCancelled(t, open) })
}

func mustPut(ctx context.Context, t *testing.T, s ports.ObjectStore, key string, body []byte) {
	t.Helper()
	if err := s.Put(ctx, key, body); err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(body), err)
	}
}

func mustGet(ctx context.Context, t *testing.T, s ports.ObjectStore, key string, off, length int64) []byte {
	t.Helper()
	body, err := s.Get(ctx, key, off, length)
	if err != nil {
		t.Fatalf("Get(%q, %d, %d): %v", key, off, length, err)
	}
	return body
}

func expectBody(ctx context.Context, t *testing.T, s ports.ObjectStore, key string, off, length int64, want []byte) {
	t.Helper()
	got := mustGet(ctx, t, s, key, off, length)
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q, %d, %d) = %d bytes %s, want %d bytes %s", key, off, length, len(got), head(got), len(want), head(want))
	}
}

func expectNotFound(ctx context.Context, t *testing.T, s ports.ObjectStore, key string) {
	t.Helper()
	for _, r := range [][2]int64{{0, -1}, {0, 1}, {5, 10}, {0, 0}} {
		if body, err := s.Get(ctx, key, r[0], r[1]); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("Get(%q, %d, %d) = %d bytes, %v; want ErrNotFound", key, r[0], r[1], len(body), err)
		}
	}
}

func mustList(ctx context.Context, t *testing.T, s ports.ObjectStore, prefix, after string, limit int) []ports.ObjectInfo {
	t.Helper()
	infos, err := s.List(ctx, prefix, after, limit)
	if err != nil {
		t.Fatalf("List(%q, %q, %d): %v", prefix, after, limit, err)
	}
	return infos
}

func expectKeys(ctx context.Context, t *testing.T, s ports.ObjectStore, prefix, after string, limit int, want ...string) {
	t.Helper()
	got := keysOf(mustList(ctx, t, s, prefix, after, limit))
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("List(%q, %q, %d) = %q, want %q", prefix, after, limit, got, want)
	}
}

func keysOf(infos []ports.ObjectInfo) []string {
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return keys
}

// head abbreviates a body for failure messages.
func head(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("%q…", b[:16])
	}
	return fmt.Sprintf("%q", b)
}

func testObjRoundTrip(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	bodies := map[string][]byte{
		"empty":           {},
		"nil":             nil,
		"one":             {0x7f},
		"all-bytes":       allBytes(),
		"nested/a/b/c/d":  []byte("deep"),
		"big/5MiB":        pseudoRandom(5 << 20),
		"names/ü 日本 +%?#": []byte("unicode and URL-special characters"),
	}
	for key, body := range bodies {
		mustPut(ctx, t, s, key, body)
	}
	for key, body := range bodies {
		expectBody(ctx, t, s, key, 0, -1, body)
	}
	infos := mustList(ctx, t, s, "", "", 100)
	if len(infos) != len(bodies) {
		t.Fatalf("List = %q, want the %d keys put", keysOf(infos), len(bodies))
	}
	for _, info := range infos {
		if want := int64(len(bodies[info.Key])); info.Size != want {
			t.Fatalf("List: %q has size %d, want %d", info.Key, info.Size, want)
		}
	}
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func testObjOverwrite(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustPut(ctx, t, s, "k", []byte("a long first version"))
	mustPut(ctx, t, s, "k", []byte("short"))
	expectBody(ctx, t, s, "k", 0, -1, []byte("short"))
	if infos := mustList(ctx, t, s, "", "", 10); len(infos) != 1 || infos[0].Size != 5 {
		t.Fatalf("List after overwrite = %+v, want one object of 5 bytes", infos)
	}
	mustPut(ctx, t, s, "k", nil)
	expectBody(ctx, t, s, "k", 0, -1, []byte{})
}

func testObjRanges(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	body := pseudoRandom(1000)
	mustPut(ctx, t, s, "obj", body)
	for _, c := range []struct {
		name        string
		off, length int64
		want        []byte
	}{
		{"whole", 0, -1, body},
		{"whole by length", 0, 1000, body},
		{"first byte", 0, 1, body[:1]},
		{"middle", 100, 200, body[100:300]},
		{"to end", 900, -1, body[900:]},
		{"last byte", 999, 1, body[999:]},
		{"runs past end", 900, 500, body[900:]},
		{"from start past end", 0, 5000, body},
		{"offset at end", 1000, -1, nil},
		{"offset at end with length", 1000, 10, nil},
		{"offset past end", 2000, 5, nil},
		{"offset past end to end", 2000, -1, nil},
		{"zero length", 10, 0, nil},
		{"zero length past end", 5000, 0, nil},
	} {
		got := mustGet(ctx, t, s, "obj", c.off, c.length)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: Get(%d, %d) = %d bytes %s, want %d bytes %s", c.name, c.off, c.length, len(got), head(got), len(c.want), head(c.want))
		}
	}
}

func testObjEmptyRanges(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustPut(ctx, t, s, "empty", nil)
	for _, r := range [][2]int64{{0, -1}, {0, 0}, {0, 10}, {5, -1}, {5, 5}} {
		if got := mustGet(ctx, t, s, "empty", r[0], r[1]); len(got) != 0 {
			t.Errorf("Get(empty, %d, %d) = %d bytes, want none", r[0], r[1], len(got))
		}
	}
}

func testObjNegativeOffset(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustPut(ctx, t, s, "obj", []byte("body"))
	if got, err := s.Get(ctx, "obj", -1, 2); err == nil {
		t.Fatalf("Get(obj, -1, 2) = %q, nil; want an error", got)
	}
}

func testObjNotFound(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	expectNotFound(ctx, t, s, "missing")
	mustPut(ctx, t, s, "dir/file", []byte("x"))
	// Neighbours of a stored key are not stored keys.
	expectNotFound(ctx, t, s, "dir")
	expectNotFound(ctx, t, s, "dir/fil")
	expectNotFound(ctx, t, s, "dir/file/below")
	expectNotFound(ctx, t, s, "dir/file2")
	mustDelete(ctx, t, s, "dir/file")
	expectNotFound(ctx, t, s, "dir/file")
}

func testObjPutIfAbsent(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	if err := s.PutIfAbsent(ctx, "claim", []byte("first")); err != nil {
		t.Fatalf("first PutIfAbsent: %v", err)
	}
	if err := s.PutIfAbsent(ctx, "claim", []byte("second")); !errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("second PutIfAbsent = %v, want ErrPrecondition", err)
	}
	if err := s.PutIfAbsent(ctx, "claim", []byte("first")); !errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("PutIfAbsent of the same body again = %v, want ErrPrecondition", err)
	}
	expectBody(ctx, t, s, "claim", 0, -1, []byte("first"))

	mustPut(ctx, t, s, "plain", []byte("put"))
	if err := s.PutIfAbsent(ctx, "plain", []byte("other")); !errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("PutIfAbsent over a Put = %v, want ErrPrecondition", err)
	}
	expectBody(ctx, t, s, "plain", 0, -1, []byte("put"))

	mustDelete(ctx, t, s, "claim")
	if err := s.PutIfAbsent(ctx, "claim", []byte("after delete")); err != nil {
		t.Fatalf("PutIfAbsent after Delete: %v", err)
	}
	expectBody(ctx, t, s, "claim", 0, -1, []byte("after delete"))
	if err := s.PutIfAbsent(ctx, "empty", nil); err != nil {
		t.Fatalf("PutIfAbsent of an empty body: %v", err)
	}
	if err := s.PutIfAbsent(ctx, "empty", nil); !errors.Is(err, ports.ErrPrecondition) {
		t.Fatalf("second PutIfAbsent of an empty body = %v, want ErrPrecondition", err)
	}
}

func testObjPutIfAbsentRace(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	const writers = 32
	// Small bodies race on the commit; large ones overlap their uploads, and
	// some servers refuse those before reading them (see s3store).
	for round, size := range []int{0, 64 << 10, 2 << 20} {
		key := fmt.Sprintf("race/%d", round)
		filler := pseudoRandom(size)
		bodyOf := func(w int) []byte {
			return append(fmt.Appendf(nil, "writer-%02d:", w), filler...)
		}
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				<-start
				errs[w] = s.PutIfAbsent(ctx, key, bodyOf(w))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("%s: writers %d and %d both won", key, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, ports.ErrPrecondition):
				t.Fatalf("%s: writer %d: %v, want nil or ErrPrecondition", key, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("%s: no writer won", key)
		}
		expectBody(ctx, t, s, key, 0, -1, bodyOf(winner))
	}
}

func testObjList(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	// '-' < '/' < '0' byte-wise: a/… keys sort between a-… and a0.
	keys := []string{"a/1", "a/10", "a/2", "a/3/x", "a-b", "a0", "b", "ab/c", "a/1z", "c/d/e/f"}
	for i, k := range keys {
		mustPut(ctx, t, s, k, bytes.Repeat([]byte("x"), i))
	}
	sorted := slices.Sorted(slices.Values(keys))
	expectKeys(ctx, t, s, "", "", 100, sorted...)
	if got := keysOf(mustList(ctx, t, s, "", "", 100)); !slices.Equal(got, []string{"a-b", "a/1", "a/10", "a/1z", "a/2", "a/3/x", "a0", "ab/c", "b", "c/d/e/f"}) {
		t.Fatalf("List order = %q", got)
	}
	for _, info := range mustList(ctx, t, s, "", "", 100) {
		if want := int64(slices.Index(keys, info.Key)); info.Size != want {
			t.Fatalf("List: %q has size %d, want %d", info.Key, info.Size, want)
		}
	}
	expectKeys(ctx, t, s, "a/", "", 100, "a/1", "a/10", "a/1z", "a/2", "a/3/x")
	expectKeys(ctx, t, s, "a/1", "", 100, "a/1", "a/10", "a/1z")
	expectKeys(ctx, t, s, "a", "", 100, "a-b", "a/1", "a/10", "a/1z", "a/2", "a/3/x", "a0", "ab/c")
	expectKeys(ctx, t, s, "a/3/", "", 100, "a/3/x")
	expectKeys(ctx, t, s, "c/d/", "", 100, "c/d/e/f")
	expectKeys(ctx, t, s, "a/1z", "", 100, "a/1z")
	expectKeys(ctx, t, s, "zz", "", 100)
	expectKeys(ctx, t, s, "a/4", "", 100)
	// after is exclusive, need not be a stored key, and may sort before or
	// after the prefix.
	expectKeys(ctx, t, s, "a/", "a/10", 100, "a/1z", "a/2", "a/3/x")
	expectKeys(ctx, t, s, "a/", "a/15", 100, "a/1z", "a/2", "a/3/x")
	expectKeys(ctx, t, s, "a/", "a", 100, "a/1", "a/10", "a/1z", "a/2", "a/3/x")
	expectKeys(ctx, t, s, "a/", "a/3/x", 100)
	expectKeys(ctx, t, s, "a/", "b", 100)
	expectKeys(ctx, t, s, "", "a0", 100, "ab/c", "b", "c/d/e/f")
	expectKeys(ctx, t, s, "", "a/2", 100, "a/3/x", "a0", "ab/c", "b", "c/d/e/f")
	expectKeys(ctx, t, s, "", "a/3", 100, "a/3/x", "a0", "ab/c", "b", "c/d/e/f")
	expectKeys(ctx, t, s, "a/", "a/", 100, "a/1", "a/10", "a/1z", "a/2", "a/3/x")
	expectKeys(ctx, t, s, "", "c/d/e/f", 100)
	// limit
	expectKeys(ctx, t, s, "", "", 1, "a-b")
	expectKeys(ctx, t, s, "a/", "", 2, "a/1", "a/10")
	expectKeys(ctx, t, s, "a/", "a/1", 2, "a/10", "a/1z")
}

func testObjListPages(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	// More than one S3 listing page (1000 keys), with other keys around.
	const n = 1234
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("p/%05d", i))
	}
	mustPut(ctx, t, s, "o/before", nil)
	mustPut(ctx, t, s, "q/after", nil)
	putAll(ctx, t, s, want)

	all := mustList(ctx, t, s, "p/", "", 5000)
	if got := keysOf(all); !slices.Equal(got, want) {
		t.Fatalf("List(p/, limit 5000) returned %d keys, want %d in order", len(got), n)
	}
	if got := keysOf(mustList(ctx, t, s, "p/", "", 1100)); !slices.Equal(got, want[:1100]) {
		t.Fatalf("List(p/, limit 1100) returned %d keys, want the first 1100", len(got))
	}
	// Walk in pages of 100 with after = the last key seen.
	var walked []string
	after := ""
	for {
		page := keysOf(mustList(ctx, t, s, "p/", after, 100))
		if len(page) == 0 {
			break
		}
		if len(page) > 100 {
			t.Fatalf("List(limit 100) returned %d keys", len(page))
		}
		walked = append(walked, page...)
		after = page[len(page)-1]
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("paged walk returned %d keys, want %d in order", len(walked), n)
	}
}

func putAll(ctx context.Context, t *testing.T, s ports.ObjectStore, keys []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 32)
	for _, k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := s.Put(ctx, k, []byte(k)); err != nil {
				errs <- fmt.Errorf("Put(%q): %w", k, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testObjListLimit(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustPut(ctx, t, s, "k", nil)
	for _, limit := range []int{0, -1} {
		if infos, err := s.List(ctx, "", "", limit); err == nil {
			t.Fatalf("List(limit %d) = %q, nil; want an error", limit, keysOf(infos))
		}
	}
}

func mustDelete(ctx context.Context, t *testing.T, s ports.ObjectStore, key string) {
	t.Helper()
	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("Delete(%q): %v", key, err)
	}
}

func testObjDelete(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustDelete(ctx, t, s, "never/was")
	mustPut(ctx, t, s, "d/1", []byte("one"))
	mustPut(ctx, t, s, "d/2", []byte("two"))
	mustPut(ctx, t, s, "d/sub/3", []byte("three"))
	mustDelete(ctx, t, s, "d/1")
	mustDelete(ctx, t, s, "d/1")
	mustDelete(ctx, t, s, "d")
	expectNotFound(ctx, t, s, "d/1")
	expectBody(ctx, t, s, "d/2", 0, -1, []byte("two"))
	expectKeys(ctx, t, s, "", "", 10, "d/2", "d/sub/3")
	mustDelete(ctx, t, s, "d/sub/3")
	mustDelete(ctx, t, s, "d/2")
	expectKeys(ctx, t, s, "", "", 10)
	// The key can be written again, also below a removed directory.
	mustPut(ctx, t, s, "d/sub/3", []byte("again"))
	expectBody(ctx, t, s, "d/sub/3", 0, -1, []byte("again"))
}

// testObjDeleteMany deletes more keys in one call than S3 takes in one
// request, absent ones among them.
func testObjDeleteMany(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	if err := s.Delete(ctx); err != nil {
		t.Fatalf("Delete() = %v", err)
	}
	var keys []string
	for i := range 1003 {
		keys = append(keys, fmt.Sprintf("many/%04d", i))
	}
	putAll(ctx, t, s, append(slices.Clone(keys), "keep/1"))
	doomed := append(slices.Clone(keys), "absent/1", "many/9999")
	if err := s.Delete(ctx, doomed...); err != nil {
		t.Fatalf("Delete(%d keys): %v", len(doomed), err)
	}
	expectKeys(ctx, t, s, "", "", 2000, "keep/1")
	if err := s.Delete(ctx, "keep/1", "bad//key"); err == nil {
		t.Errorf("Delete with an invalid key = nil, want an error")
	}
}

func testObjSlicesNotShared(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	body := []byte("original")
	mustPut(ctx, t, s, "put", body)
	if err := s.PutIfAbsent(ctx, "pia", body); err != nil {
		t.Fatal(err)
	}
	copy(body, "MUTATED!")
	expectBody(ctx, t, s, "put", 0, -1, []byte("original"))
	expectBody(ctx, t, s, "pia", 0, -1, []byte("original"))

	got := mustGet(ctx, t, s, "put", 0, -1)
	copy(got, "MUTATED!")
	part := mustGet(ctx, t, s, "put", 2, 3)
	copy(part, "XYZ")
	_ = append(part, "spill"...) // would write past the range if the capacity were shared
	expectBody(ctx, t, s, "put", 0, -1, []byte("original"))
}

func testObjInvalidKeys(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	bad := []string{"", "/abs", "trailing/", "a//b", ".", "..", "../escape", "a/../b", "a/./b", "nul\x00", "\xff\xfe", strings.Repeat("k", 1025)}
	for _, key := range bad {
		if err := s.Put(ctx, key, []byte("x")); err == nil {
			t.Errorf("Put(%q) = nil, want an error", key)
		}
		if err := s.PutIfAbsent(ctx, key, []byte("x")); err == nil {
			t.Errorf("PutIfAbsent(%q) = nil, want an error", key)
		}
		if _, err := s.Get(ctx, key, 0, -1); err == nil || errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want an error other than ErrNotFound", key, err)
		}
		if err := s.Delete(ctx, key); err == nil {
			t.Errorf("Delete(%q) = nil, want an error", key)
		}
	}
	expectKeys(ctx, t, s, "", "", 100)
	// Long keys and deep paths work (below 1024 bytes, so that a store with
	// a key prefix stays within S3's limit).
	long := strings.Repeat("k/", 449) + "kk"
	mustPut(ctx, t, s, long, []byte("long"))
	expectBody(ctx, t, s, long, 0, -1, []byte("long"))
}

func testObjCancelled(t *testing.T, open ObjectStoreOpener) {
	ctx := testContext(t)
	s := open(t)
	mustPut(ctx, t, s, "exists", []byte("x"))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", op, err)
		}
	}
	check("Put", s.Put(cancelled, "new", []byte("x")))
	check("PutIfAbsent", s.PutIfAbsent(cancelled, "new2", []byte("x")))
	_, err := s.Get(cancelled, "exists", 0, -1)
	check("Get", err)
	_, err = s.List(cancelled, "", "", 10)
	check("List", err)
	check("Delete", s.Delete(cancelled, "exists"))
	// Nothing changed.
	expectKeys(ctx, t, s, "", "", 10, "exists")
}
