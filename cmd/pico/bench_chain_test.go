package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// once applies change to the first page of at least three records.
func once(change func(page []picowire.SeqRecord) []picowire.SeqRecord) func([]picowire.SeqRecord) []picowire.SeqRecord {
	done := false
	return func(page []picowire.SeqRecord) []picowire.SeqRecord {
		if done || len(page) < 3 {
			return page
		}
		done = true
		return change(page)
	}
}

// TestBenchReadersCatchWhatTheServerGetsWrong: pico bench --readers
// against a fake server that serves one page changed: a record dropped,
// repeated, two swapped, one byte flipped, the tail withheld. Each run
// fails, saying what was wrong; an honest server's run passes.
func TestBenchReadersCatchWhatTheServerGetsWrong(t *testing.T) {
	settle := readersSettle
	readersSettle = 2 * time.Second
	t.Cleanup(func() { readersSettle = settle })
	for _, tc := range []struct {
		name   string
		mutate func([]picowire.SeqRecord) []picowire.SeqRecord
		want   string
	}{
		{"honest", nil, ""},
		{"dropped", once(func(p []picowire.SeqRecord) []picowire.SeqRecord { return slices.Delete(p, 1, 2) }), "missing or reordered"},
		{"duplicated", once(func(p []picowire.SeqRecord) []picowire.SeqRecord { return slices.Insert(p, 1, p[1]) }), "a duplicate"},
		{"reordered", once(func(p []picowire.SeqRecord) []picowire.SeqRecord { p[1], p[2] = p[2], p[1]; return p }), "missing or reordered"},
		{"corrupted", once(func(p []picowire.SeqRecord) []picowire.SeqRecord {
			body := bytes.Clone(p[1].Body)
			body[len(body)-1] ^= 1
			p[1].Record = domain.Record{Body: body}
			return p
		}), "is corrupt"},
		{"withheld", func(p []picowire.SeqRecord) []picowire.SeqRecord { return nil }, "missing at the end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := newFakePico(t)
			f.mutate = tc.mutate
			var stdout, stderr strings.Builder
			err := runBench(context.Background(), []string{"--endpoint", url, "-d", "0.3", "-w", "2", "-b", "3",
				"--record-size", "100", "--readers", "1", "--json"}, nil, &stdout, &stderr)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("an honest server's run failed: %v\n%s", err, stderr.String())
			case tc.want == "" && !strings.Contains(stdout.String(), `"records_verified"`):
				t.Fatalf("no records verified: %s", stdout.String())
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestChainCheckRefusesWhatIsNotABenchRecord: a record of the wrong size
// or without the header is corrupt, not a panic.
func TestChainCheckRefusesWhatIsNotABenchRecord(t *testing.T) {
	c := newChainCheck(100, false)
	for _, rec := range [][]byte{nil, []byte("short"), bytes.Repeat([]byte("x"), 100), append([]byte("pb1:zzzzzzzz"), bytes.Repeat([]byte(":"), 88)...)} {
		if _, _, _, err := c.check(rec); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("%q: %v, want corrupt", rec, err)
		}
	}
}

// FuzzChainCheck: no record read from a server makes the check panic,
// and a fresh check passes only a well-formed first record of a writer.
func FuzzChainCheck(f *testing.F) {
	var l chainLink
	good := bytes.Repeat([]byte("x"), 100)
	l.stamp(good, 7, time.Unix(1, 0))
	f.Add(good)
	f.Add([]byte("pb1:"))
	f.Fuzz(func(t *testing.T, rec []byte) {
		w, seq, _, err := newChainCheck(100, false).check(rec)
		if err == nil && (seq != 0 || len(rec) != 100 || !bytes.HasPrefix(rec, []byte(chainMagic))) {
			t.Fatalf("%q passed as writer %d seq %d", rec, w, seq)
		}
	})
}
