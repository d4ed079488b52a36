package domain

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// checkTreap verifies order, heap priorities, key-derived priorities and the
// entry count of m.
func checkTreap[K cmp.Ordered, V any](m pmap[K, V]) error {
	var n int
	var walk func(x *pnode[K, V], lo, hi *K) error
	walk = func(x *pnode[K, V], lo, hi *K) error {
		if x == nil {
			return nil
		}
		n++
		switch {
		case lo != nil && x.key <= *lo, hi != nil && x.key >= *hi:
			return fmt.Errorf("key %v out of order", x.key)
		case x.prio != keyPrio(x.key):
			return fmt.Errorf("key %v has a foreign priority", x.key)
		case x.left != nil && x.left.prio > x.prio, x.right != nil && x.right.prio > x.prio:
			return fmt.Errorf("heap order broken under %v", x.key)
		}
		if err := walk(x.left, lo, &x.key); err != nil {
			return err
		}
		return walk(x.right, &x.key, hi)
	}
	if err := walk(m.root, nil, nil); err != nil {
		return err
	}
	if n != m.Len() {
		return fmt.Errorf("Len %d, %d nodes", m.Len(), n)
	}
	return nil
}

// sameShape reports whether two treaps have identical structure and
// (deeply) equal entries.
func sameShape[K cmp.Ordered, V any](a, b *pnode[K, V]) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.key == b.key && a.prio == b.prio && reflect.DeepEqual(a.val, b.val) &&
		sameShape(a.left, b.left) && sameShape(a.right, b.right)
}

func entries[K cmp.Ordered, V any](m pmap[K, V]) []K {
	var ks []K
	m.All(func(k K, _ V) bool { ks = append(ks, k); return true })
	return ks
}

// matches compares m with a plain map: Len, Get, All order and values.
func matches(m pmap[uint64, int], ref map[uint64]int) error {
	if m.Len() != len(ref) {
		return fmt.Errorf("Len %d, want %d", m.Len(), len(ref))
	}
	want := slices.Sorted(maps.Keys(ref))
	if got := entries(m); !slices.Equal(got, want) {
		return fmt.Errorf("All gives %v, want %v", got, want)
	}
	for k, v := range ref {
		if got, ok := m.Get(k); !ok || got != v {
			return fmt.Errorf("Get(%d) = %d %v, want %d", k, got, ok, v)
		}
	}
	return checkTreap(m)
}

func TestPmapModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type version struct {
			m   pmap[uint64, int]
			ref map[uint64]int
		}
		var m pmap[uint64, int]
		ref := map[uint64]int{}
		var old []version
		key := rapid.Uint64Range(0, 40)
		save := func() { old = append(old, version{m, maps.Clone(ref)}) }
		t.Repeat(map[string]func(*rapid.T){
			"Set": func(t *rapid.T) {
				save()
				k, v := key.Draw(t, "k"), rapid.Int().Draw(t, "v")
				m, ref[k] = m.Set(k, v), v
			},
			"Delete": func(t *rapid.T) {
				save()
				k := key.Draw(t, "k")
				m = m.Delete(k)
				delete(ref, k)
			},
			"Get": func(t *rapid.T) {
				k := key.Draw(t, "k")
				v, ok := m.Get(k)
				if want, present := ref[k]; ok != present || v != want {
					t.Fatalf("Get(%d) = %d %v, want %d %v", k, v, ok, want, present)
				}
			},
			"Floor": func(t *rapid.T) {
				k := key.Draw(t, "k")
				gk, gv, ok := m.Floor(k)
				var wk uint64
				found := false
				for rk := range ref {
					if rk <= k && (!found || rk > wk) {
						wk, found = rk, true
					}
				}
				if ok != found || (found && (gk != wk || gv != ref[wk])) {
					t.Fatalf("Floor(%d) = %d %d %v, want %d %v", k, gk, gv, ok, wk, found)
				}
			},
			"Ascend": func(t *rapid.T) {
				from, limit := key.Draw(t, "from"), rapid.IntRange(0, 10).Draw(t, "limit")
				var got, want []uint64
				m.Ascend(from, func(k uint64, v int) bool {
					if v != ref[k] {
						t.Fatalf("Ascend gives %d=%d, want %d", k, v, ref[k])
					}
					got = append(got, k)
					return len(got) < limit
				})
				for _, k := range slices.Sorted(maps.Keys(ref)) {
					if k >= from && len(want) < max(limit, 1) {
						want = append(want, k)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("Ascend(%d) stopping after %d = %v, want %v", from, limit, got, want)
				}
			},
			"": func(t *rapid.T) {
				if err := matches(m, ref); err != nil {
					t.Fatal(err)
				}
				for i, v := range old {
					if err := matches(v.m, v.ref); err != nil {
						t.Fatalf("version %d changed: %v", i, err)
					}
				}
			},
		})
	})
}

// TestPmapShape: a treap's shape depends only on its keys, so any history
// of Sets and Deletes and the sorted builder give the same tree.
func TestPmapShape(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfNDistinct(rapid.Uint64Range(0, 1000), 0, 60, rapid.ID).Draw(t, "keys")
		extra := rapid.SliceOfN(rapid.Uint64Range(1001, 1100), 0, 20).Draw(t, "extra")
		var bySet pmap[uint64, uint64]
		for _, k := range append(slices.Clone(extra), keys...) {
			bySet = bySet.Set(k, k*3)
		}
		for _, k := range extra {
			bySet = bySet.Delete(k)
		}
		sorted := slices.Sorted(slices.Values(keys))
		var b pmapBuilder[uint64, uint64]
		for _, k := range sorted {
			if !b.add(k, k*3) {
				t.Fatalf("builder refused ascending key %d", k)
			}
		}
		built := b.build()
		if err := checkTreap(built); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(entries(built), sorted) || !slices.Equal(entries(bySet), sorted) {
			t.Fatalf("entries differ: built %v, set %v", entries(built), entries(bySet))
		}
		if !sameShape(built.root, bySet.root) {
			t.Fatalf("builder and Set give different trees for %v", sorted)
		}
		if len(sorted) > 0 && (b.add(sorted[len(sorted)-1], 0) || b.add(sorted[0], 0)) {
			t.Fatalf("builder accepted a key out of order")
		}
	})
}

func TestPmapStringBuilder(t *testing.T) {
	names := []string{"", "/a", "/a/b", "/b", "a", "b", "stream-1", "stream-10", "stream-2", "z"}
	var b pmapBuilder[string, int]
	var bySet pmap[string, int]
	for i, n := range names {
		b.add(n, i)
		bySet = bySet.Set(names[len(names)-1-i], len(names)-1-i)
	}
	built := b.build()
	if !sameShape(built.root, bySet.root) || checkTreap(built) != nil || built.Len() != len(names) {
		t.Fatalf("string builder differs from Set")
	}
	var empty pmapBuilder[uint32, int]
	if m := empty.build(); m.Len() != 0 || m.root != nil {
		t.Fatalf("empty builder gives %+v", m)
	}
}

// TestKeyPrioStable pins the priority function: replicas must agree on it.
func TestKeyPrioStable(t *testing.T) {
	if keyPrio(uint64(7)) != keyPrio(uint32(7)) || keyPrio(uint64(0)) == keyPrio(uint64(1)) {
		t.Error("integer priorities inconsistent")
	}
	// splitmix64 of 0 is a published constant.
	if got := mix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("mix64(0) = %#x", got)
	}
	if keyPrio("a") == keyPrio("b") || keyPrio("") != mix64(14695981039346656037) {
		t.Error("string priorities inconsistent")
	}
}
