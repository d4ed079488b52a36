package domain

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// genLog plans rows of 1..20 commands against a state it applies them to,
// and returns the encoded rows, the results and the final state. A warm log
// starts with the preamble row.
func genLog(s src, rows int, warm bool) ([][]byte, [][]Result, State) {
	g := gen{s}
	st := NewState()
	p := &planner{gen: g, s: &st}
	var log [][]byte
	var results [][]Result
	for i := range rows {
		var row []Command
		if i == 0 && warm {
			row = preambleCmds()
		} else {
			row = make([]Command, 1+g.intn(20))
		}
		res := make([]Result, len(row))
		for j := range row {
			p.now += int64(g.intn(30))
			if row[j] == nil {
				row[j] = p.command(g.busyCode())
			}
			res[j] = st.Apply(row[j])
		}
		st.Index = uint64(i + 1)
		log = append(log, EncodeRow(row))
		results = append(results, res)
	}
	return log, results, st
}

// fataler is what *testing.T and *rapid.T have in common here.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// replay applies encoded rows from..len(log) to s with ApplyRow.
func replay(t fataler, s *State, log [][]byte, from int) [][]Result {
	t.Helper()
	var out [][]Result
	for i := from; i < len(log); i++ {
		cmds, err := DecodeRow(log[i])
		if err != nil {
			t.Fatalf("row %d: %v", i+1, err)
		}
		out = append(out, s.ApplyRow(uint64(i+1), cmds))
		if s.Index != uint64(i+1) {
			t.Fatalf("Index %d after row %d", s.Index, i+1)
		}
	}
	return out
}

func TestReplayDeterminism(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		log, results, orig := genLog(rapidSrc{t}, rapid.IntRange(1, 12).Draw(t, "rows"), rapid.Bool().Draw(t, "warm"))
		a, b := NewState(), NewState()
		ra, rb := replay(t, &a, log, 0), replay(t, &b, log, 0)
		want := EncodeState(&orig)
		if !bytes.Equal(EncodeState(&a), want) || !bytes.Equal(EncodeState(&b), want) {
			t.Fatalf("replays encode differently from the original state")
		}
		if a.Hash() != b.Hash() || a.Hash() != orig.Hash() {
			t.Fatalf("hashes differ")
		}
		if !reflect.DeepEqual(ra, results) || !reflect.DeepEqual(rb, results) {
			t.Fatalf("replayed results differ:\n got %v\nwant %v", ra, results)
		}
	})
}

func TestSnapshotAndTail(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		log, results, full := genLog(rapidSrc{t}, rapid.IntRange(1, 12).Draw(t, "rows"), rapid.Bool().Draw(t, "warm"))
		k := rapid.IntRange(0, len(log)).Draw(t, "k")
		head := NewState()
		replay(t, &head, log[:k], 0)
		snap := EncodeState(&head)
		restored, err := DecodeState(snap)
		if err != nil {
			t.Fatalf("decode snapshot after %d rows: %v", k, err)
		}
		if !bytes.Equal(EncodeState(&restored), snap) {
			t.Fatalf("snapshot does not re-encode identically")
		}
		tail := replay(t, &restored, log, k)
		if !bytes.Equal(EncodeState(&restored), EncodeState(&full)) {
			t.Fatalf("snapshot after %d rows + tail differs from full replay", k)
		}
		if restored.Index != uint64(len(log)) {
			t.Fatalf("Index %d, want %d", restored.Index, len(log))
		}
		if len(tail)+len(results[k:]) > 0 && !reflect.DeepEqual(tail, results[k:]) {
			t.Fatalf("tail results differ after the snapshot")
		}
	})
}

// TestSnapshotLongLog checks snapshot + tail every 10 rows of a long log.
func TestSnapshotLongLog(t *testing.T) {
	log, _, full := genLog(newPRNG(7), 300, true)
	want := EncodeState(&full)
	s := NewState()
	var objects, garbage int
	for k := 0; k <= len(log); k += 10 {
		restored, err := DecodeState(EncodeState(&s))
		if err != nil {
			t.Fatalf("row %d: %v", k, err)
		}
		replay(t, &restored, log, k)
		if !bytes.Equal(EncodeState(&restored), want) {
			t.Fatalf("snapshot at row %d + tail differs from full replay", k)
		}
		replay(t, &s, log[:min(k+10, len(log))], k)
		objects, garbage = max(objects, s.objects.Len()), max(garbage, s.garbage.Len())
	}
	if objects == 0 || garbage == 0 {
		t.Errorf("log too dull: at most %d objects, %d garbage", objects, garbage)
	}
}
