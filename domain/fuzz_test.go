package domain

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fuzzBase is a state with registered nodes, open streams, objects,
// reservations, garbage and keys for fuzzed commands to hit.
var fuzzBase = sync.OnceValue(func() State {
	_, _, s := genLog(newPRNG(11), 40, true)
	for _, c := range []Command{ // the proposers of the golden samples
		&RegisterNode{Node: 2, Epoch: 7, Slots: 3},
		&RegisterNode{Node: 1, Epoch: 9, Slots: 1},
		&CreateStream{By: Proposer{2, 7}, Name: "/fuzz", Open: true},
		&ReserveObjects{By: Proposer{2, 7}, Count: 8, TTLMs: 100},
	} {
		s.Apply(c)
	}
	return s
})

// applyChecked applies c, requiring that a rejection changes nothing but
// Applied and that invariants hold.
func applyChecked(t *testing.T, s *State, c Command) {
	t.Helper()
	before := *s
	before.Applied++
	want := EncodeState(&before)
	r := s.Apply(c)
	if r.Code != ResultOK && !bytes.Equal(EncodeState(s), want) {
		t.Fatalf("%s rejected (%v) but changed the state", describe(c), r)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatalf("after %s (%v): %v", describe(c), r, err)
	}
}

func goldenRows(f *testing.F) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	var rows [][]byte
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			f.Fatal(err)
		}
		rows = append(rows, b)
	}
	return rows
}

func FuzzDecodeRow(f *testing.F) {
	for _, row := range goldenRows(f) {
		f.Add(row)
	}
	log, _, _ := genLog(newPRNG(3), 20, true)
	for _, row := range log {
		f.Add(row)
	}
	for _, garbage := range [][]byte{nil, {0}, {1}, {1, 0}, {1, 1, 99, 0}, {1, 2, 1, 0, 1, 0},
		{1, 1, 3, 0x7f}, {1, 0xff, 0xff, 0xff, 0xff, 0x0f}} {
		f.Add(garbage)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cmds, err := DecodeRow(b)
		if err != nil {
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("error does not wrap ErrDecode: %v", err)
			}
			return
		}
		enc := EncodeRow(cmds)
		again, err := DecodeRow(enc)
		if err != nil {
			t.Fatalf("re-encoded row does not decode: %v", err)
		}
		if !sameCommands(cmds, again) {
			t.Fatalf("decode(encode(decode(b))) differs:\n%v\n%v", cmds, again)
		}
		if !bytes.Equal(EncodeRow(again), enc) {
			t.Fatalf("encoding is not stable")
		}
		s := fuzzBase()
		for _, c := range cmds {
			applyChecked(t, &s, c)
		}
		empty := NewState()
		for _, c := range cmds {
			applyChecked(t, &empty, c)
		}
	})
}

func FuzzDecodeState(f *testing.F) {
	empty := NewState()
	f.Add(EncodeState(&empty))
	base := fuzzBase()
	f.Add(EncodeState(&base))
	for seed := range uint64(4) {
		_, _, s := genLog(newPRNG(seed), 10+int(seed)*10, seed%2 == 0)
		f.Add(EncodeState(&s))
	}
	for _, garbage := range [][]byte{nil, {1}, {2}, {1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0},
		{1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}} {
		f.Add(garbage)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeState(b)
		if err != nil {
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("error does not wrap ErrDecode: %v", err)
			}
			return
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatalf("decoded state violates invariants: %v", err)
		}
		enc := EncodeState(&s)
		again, err := DecodeState(enc)
		if err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
		if !bytes.Equal(EncodeState(&again), enc) {
			t.Fatalf("encoding is not stable")
		}
		// Aim plausible commands at the decoded state's entities.
		h := fnv.New64a()
		h.Write(b)
		p := &planner{gen: gen{newPRNG(h.Sum64())}, s: &s}
		for range 40 {
			p.now += int64(p.intn(100))
			applyChecked(t, &s, p.command(p.code()))
		}
		applyChecked(t, &s, &ExpireReservations{By: p.live(), NowMs: math.MaxInt64})
	})
}
