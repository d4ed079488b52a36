package livehttp

import (
	"bytes"
	"testing"
)

func TestSharedKeepsThePageItNames(t *testing.T) {
	var s Shared
	k := PageKey{ID: 7, From: 10, Next: 12, Form: 1}
	if _, ok := s.Load(k); ok {
		t.Fatal("an empty Shared has a page")
	}
	s.Store(k, []byte("page"))
	if b, ok := s.Load(k); !ok || string(b) != "page" {
		t.Fatalf("Load = %q, %v", b, ok)
	}
	for _, other := range []PageKey{{7, 10, 13, 1}, {7, 11, 12, 1}, {8, 10, 12, 1}, {7, 10, 12, 0}} {
		if b, ok := s.Load(other); ok {
			t.Errorf("%+v has %q, stored under %+v", other, b, k)
		}
	}
}

func TestSharedKeepsNoIncarnationlessOrLargePage(t *testing.T) {
	var s Shared
	s.Store(PageKey{From: 1, Next: 2}, []byte("x"))
	if _, ok := s.Load(PageKey{From: 1, Next: 2}); ok {
		t.Error("a page of ID 0 was kept")
	}
	big := PageKey{ID: 1, Next: 1}
	s.Store(big, bytes.Repeat([]byte("x"), MaxSharedBytes+1))
	if _, ok := s.Load(big); ok {
		t.Error("a page over MaxSharedBytes was kept")
	}
	var none *Shared
	none.Store(big, []byte("x"))
	if _, ok := none.Load(big); ok {
		t.Error("a nil Shared kept a page")
	}
}
