package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/picoproc"
)

// streamSnapshot is what a client can observe of a stream: its HEAD headers
// and every record in the JSON and binary formats (bodies, headers,
// offsets, timestamps).
type streamSnapshot struct {
	head   string
	json   string
	binary string
}

// headHeaders are the HEAD headers a restart must not change.
var headHeaders = []string{"Content-Type", "Pico-Next-Seq", "Pico-Start-Seq", "Pico-TTL", "Pico-Expires-At", "Pico-Closed"}

func snapshot(t *testing.T, u string) streamSnapshot {
	t.Helper()
	h := send(t, "HEAD", u, nil, nil).wantStatus(t, 200)
	var s streamSnapshot
	for _, name := range headHeaders {
		s.head += fmt.Sprintf("%s=%q ", name, h.header.Get(name))
	}
	records, err := json.Marshal(readAll(t, u))
	if err != nil {
		t.Fatal(err)
	}
	s.json = string(records)
	s.binary = fmt.Sprintf("%+v", readAllBinary(t, u))
	return s
}

// readAllBinary is readAll in the binary format.
func readAllBinary(t *testing.T, u string) []picowire.SeqRecord {
	t.Helper()
	var all []picowire.SeqRecord
	for seq := "0"; ; {
		r := send(t, "GET", u+"?format=binary&seq="+seq, nil, nil).wantStatus(t, 200)
		page, err := picowire.DecodeBatchResponse(r.body, picowire.BatchLimits{MaxRecords: 1 << 16, MaxHeaders: 64})
		if err != nil {
			t.Fatalf("%s: %v", r.what, err)
		}
		all = append(all, page...)
		next := r.header.Get("Pico-Next-Seq")
		if r.header.Get("Pico-Up-To-Date") == "true" || next == seq {
			return all
		}
		seq = next
	}
}

func wantSameSnapshot(t *testing.T, what string, got, want streamSnapshot) {
	t.Helper()
	if got.head != want.head {
		t.Errorf("%s: HEAD after restart %s, before %s", what, got.head, want.head)
	}
	if got.json != want.json {
		t.Errorf("%s: JSON records after restart\n%s\nbefore\n%s", what, got.json, want.json)
	}
	if got.binary != want.binary {
		t.Errorf("%s: binary records after restart\n%s\nbefore\n%s", what, got.binary, want.binary)
	}
}

// TestRestartKeepsStreams writes every kind of record and stream state,
// stops the node with SIGTERM, starts it again on the same directories and
// reads everything back unchanged.
func TestRestartKeepsStreams(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	mixed, sealed, trimmed := n.URL+"/restart/mixed", n.URL+"/restart/sealed", n.URL+"/restart/trimmed"

	send(t, "PUT", mixed, hdr("Content-Type", "text/plain", "Pico-TTL", "3600"), nil).wantStatus(t, 201)
	mustAppend(t, mixed, picowire.BatchJSONContentType, jsonBatch(
		batchItem{Body: "j0", Headers: map[string]string{"k": "v"}},
		batchItem{BodyB64: base64.StdEncoding.EncodeToString([]byte{0xfe, 0xff}), Headers: map[string]string{"bin": "yes"}},
	))
	mustAppend(t, mixed, picowire.BatchContentType, picowire.EncodeBatch([]domain.Record{
		{Body: []byte("b0"), Headers: []domain.Header{{Key: "h", Value: "1"}}},
		{Body: []byte{0, 1, 2, 3}},
	}))
	time.Sleep(5 * time.Millisecond) // a later timestamp for the next append
	mustAppend(t, mixed, "text/plain", []byte("raw"))
	mustAppend(t, mixed, "text/plain", []byte("p0"), "Pico-Producer-Id", "p", "Pico-Producer-Epoch", "1", "Pico-Producer-Seq", "0")

	send(t, "PUT", sealed, hdr("Content-Type", "application/json", "Pico-Expires-At", "2099-06-01T00:00:00Z"), []byte(`{"n":0}`)).wantStatus(t, 201)
	mustAppend(t, sealed, "application/json", []byte(`{"n":1}`), "Pico-Closed", "true")

	mustCreate(t, trimmed, "text/plain")
	mustAppend(t, trimmed, picowire.BatchJSONContentType, textBatch("t0", "t1", "t2", "t3"))
	send(t, "POST", trimmed, hdr("Pico-Trim-Seq", "2"), nil).wantStatus(t, 200).wantHeaders(t, "Pico-Start-Seq", "2")

	before := map[string]streamSnapshot{}
	for _, u := range []string{mixed, sealed, trimmed} {
		before[u] = snapshot(t, u)
	}
	if code := n.Stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0\nstderr:\n%s", code, n.Stderr)
	}

	n = n.restart(t)
	for _, u := range []string{mixed, sealed, trimmed} {
		wantSameSnapshot(t, u, snapshot(t, u), before[u])
	}
	wantBodies(t, "mixed after restart", readAll(t, mixed), 0, "j0", "\xfe\xff", "b0", "\x00\x01\x02\x03", "raw", "p0")
	wantBodies(t, "trimmed after restart", readAll(t, trimmed), 2, "t2", "t3")

	// State behind the records survives too: the seal, the producer's
	// sequence, and offsets and timestamps carry on from where they were.
	send(t, "POST", sealed, hdr("Content-Type", "application/json"), []byte(`{"n":2}`)).wantError(t, 409, "closed")
	send(t, "POST", mixed, hdr("Content-Type", "text/plain", "Pico-Producer-Id", "p", "Pico-Producer-Epoch", "1", "Pico-Producer-Seq", "0"),
		[]byte("p0")).wantStatus(t, 200).wantHeaders(t, "Pico-Start-Seq", "", "Pico-Next-Seq", "6")
	last := readAll(t, mixed)[5].Timestamp
	next := mustAppend(t, mixed, "text/plain", []byte("after"))
	wantRange(t, "append after restart", next, 6, 7)
	if ts := appendTimestamp(t, next); ts < last {
		t.Errorf("timestamp after restart %d is before the last one %d", ts, last)
	}

	if code := n.Stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("SIGINT: exit code %d, want 0", code)
	}
	n = n.restart(t)
	wantBodies(t, "mixed after a second restart", readAll(t, mixed), 0, "j0", "\xfe\xff", "b0", "\x00\x01\x02\x03", "raw", "p0", "after")
}

// TestKillNineKeepsAcknowledgedAppends kills the node with SIGKILL while
// writers append: every append it acknowledged must be there after a
// restart, at the offset it was acknowledged at.
func TestKillNineKeepsAcknowledgedAppends(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	u := n.URL + "/crash/s"
	mustCreate(t, u, "text/plain")

	const writers, killAfter = 4, 200
	acked := make(chan [2]string, 4096) // seq, body
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			appendUntilFailure(u, fmt.Sprintf("w%d-", w), acked)
		}()
	}
	got := map[uint64]string{}
	collect := func(a [2]string) {
		seq, err := strconv.ParseUint(a[0], 10, 64)
		if err != nil {
			t.Errorf("acknowledged append with Pico-Start-Seq %q", a[0])
		}
		got[seq] = a[1]
	}
	for len(got) < killAfter {
		collect(<-acked)
	}
	if err := n.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	n.AwaitExit(t, 10*time.Second)
	wg.Wait()
	close(acked)
	for a := range acked {
		collect(a)
	}

	n = n.restart(t)
	stored := readEverything(t, u)
	for seq, body := range got {
		if seq >= uint64(len(stored)) || stored[seq] != body {
			t.Errorf("acknowledged record %d %q is lost after SIGKILL (stored %d records)", seq, body, len(stored))
		}
	}
	// Appends carry on after the last stored record: no offset is reused.
	tail := uint64(len(stored))
	wantRange(t, "append after SIGKILL", mustAppend(t, u, "text/plain", []byte("after")), tail, tail+1)
	t.Logf("%d appends acknowledged, %d records after restart", len(got), len(stored))
}

// appendUntilFailure appends single records until one is not acknowledged,
// reporting each acknowledged offset and body.
func appendUntilFailure(u, prefix string, acked chan<- [2]string) {
	for i := 0; ; i++ {
		body := prefix + strconv.Itoa(i)
		r, err := do("POST", u, hdr("Content-Type", "text/plain"), []byte(body))
		if err != nil || r.status != 200 {
			return
		}
		acked <- [2]string{r.header.Get("Pico-Start-Seq"), body}
	}
}

// readEverything pages through a stream from 0 to its tail.
func readEverything(t *testing.T, u string) []string {
	t.Helper()
	var bodies []string
	for {
		r := send(t, "GET", fmt.Sprintf("%s?seq=%d", u, len(bodies)), nil, nil).wantStatus(t, 200)
		for _, rec := range r.records(t) {
			if rec.Seq != uint64(len(bodies)) {
				t.Fatalf("record %d where %d was expected", rec.Seq, len(bodies))
			}
			bodies = append(bodies, string(rec.bytes(t)))
		}
		if r.header.Get("Pico-Up-To-Date") == "true" {
			return bodies
		}
	}
}

// TestGracefulShutdown: after SIGTERM the node reports not ready but keeps
// serving for --shutdown-drain-sec, then ends open long-polls and event
// streams with complete responses and exits 0.
func TestGracefulShutdown(t *testing.T) {
	const drain = 2 * time.Second
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{
		"--shutdown-drain-sec", "2", "--long-poll-timeout-sec", "30", "--sse-max-duration-sec", "30"}})
	u := n.URL + "/shutdown/s"
	mustCreate(t, u, "text/plain")
	mustAppend(t, u, "text/plain", []byte("x"))

	poll := sendAsync("GET", u+"?seq=1&live=long-poll", nil, nil)
	events, done := openEvents(t, u+"?seq=1&live=sse", nil)
	wantControlEvent(t, nextEvent(t, events, 2*time.Second), map[string]any{"next_seq": 1, "up_to_date": true})
	time.Sleep(200 * time.Millisecond) // the long-poll is waiting by now

	signalled := time.Now()
	if err := n.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, n.AdminURL+"/ready", 503, drain/2)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "1")
	if during := time.Since(signalled); during >= drain {
		t.Fatalf("checks took %v, longer than the drain: they did not run during it", during)
	}

	select {
	case got := <-poll:
		if got.err != nil {
			t.Fatalf("long-poll during shutdown: %v", got.err)
		}
		got.wantStatus(t, 204).wantHeaders(t, "Pico-Next-Seq", "1", "Pico-Up-To-Date", "true")
		if ended := time.Since(signalled); ended < drain-200*time.Millisecond {
			t.Errorf("long-poll ended %v after SIGTERM, before the %v drain was over", ended, drain)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("long-poll still open 15s after SIGTERM")
	}
	wantCleanEnd(t, events, done, 15*time.Second)
	if code := n.AwaitExit(t, 30*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, n.Stderr)
	}
}

// awaitStatus polls url until it answers status.
func awaitStatus(t *testing.T, url string, status int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := picoproc.Status(url)
		if got == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s answers %d, want %d within %v", url, got, status, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledNodeCommitsWhatItsWALHeld kills a single node (SIGKILL) while
// its acknowledged appends are only in its WAL, and starts it again: with
// nobody asking for the stream, the new process (the lease holder) takes
// the stream over and commits them, so the listing shows them before any
// read, and a read returns them all.
func TestKilledNodeCommitsWhatItsWALHeld(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(),
		flags: []string{"--wal-upload-interval-ms", "3600000"}}) // appends stay in its WAL
	const path = "/restart/killed"
	mustCreate(t, n.URL+path, "text/plain")
	mustAppend(t, n.URL+path, "text/plain", []byte("a"))
	mustAppend(t, n.URL+path, "text/plain", []byte("b"))
	n.Stop(t, syscall.SIGKILL)

	n = n.restart(t)
	started := time.Now()
	// The restarted process takes its dead predecessor's lease at once (it
	// would otherwise wait out its 10 s TTL) and takes over what its WAL held.
	awaitListedNext(t, n.URL, path, 2, 8*time.Second)
	t.Logf("committed %v after the restarted node was ready", time.Since(started).Round(100*time.Millisecond))
	wantBodies(t, "after the restart", readAll(t, n.URL+path), 0, "a", "b")
}
