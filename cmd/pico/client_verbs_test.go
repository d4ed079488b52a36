package main

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// isolate clears the client's environment and points the config file into
// a fresh directory, returning its path.
func isolate(t *testing.T) string {
	t.Helper()
	for _, env := range globalEnv {
		t.Setenv(env, "")
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	t.Setenv("PICO_CONFIG", path)
	return path
}

type result struct {
	code           int
	stdout, stderr string
}

func pico(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return picoCtx(t.Context(), stdin, args...)
}

func picoCtx(ctx context.Context, stdin string, args ...string) result {
	var stdout, stderr strings.Builder
	code := runClient(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

func (r result) want(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || r.stdout != stdout || r.stderr != stderr {
		t.Fatalf("got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q",
			r.code, r.stdout, r.stderr, code, stdout, stderr)
	}
}

func TestCreateReportsNewAndExistingStreams(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	pico(t, "", "create", "/s", "--content-type", "text/plain", "--ttl", "60", "--endpoint", url).want(t, 0, "", "created=true next=0\n")
	pico(t, "", "--endpoint", url, "create", "/s", "--content-type", "text/plain").want(t, 0, "", "created=false next=0\n")
	if s := f.streams["/s"]; s.ttl != 60 || s.contentType != "text/plain" {
		t.Fatalf("stream %+v", s)
	}
	pico(t, "", "create", "/s", "--endpoint", url).want(t, 4, "",
		"pico: 409 conflict: stream exists with content type text/plain\n")
	if r := pico(t, "", "create", "/t", "--ttl", "5", "--expires-at", "2030-01-01T00:00:00Z", "--endpoint", url); r.code != 2 {
		t.Fatalf("--ttl with --expires-at: %+v", r)
	}
}

func TestAppendSendsABatchPerNLinesAndTheRestAtEOF(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	pico(t, "a\nb\r\nc\n\ne", "append", "/s", "--batch", "2", "--endpoint", url).
		want(t, 0, "", "start=0 next=2\nstart=2 next=4\nstart=4 next=5\n")
	want := []fakeAppend{
		{"application/vnd.picomq.batch", []string{"a", "b"}},
		{"application/vnd.picomq.batch", []string{"c", ""}},
		{"", []string{"e"}},
	}
	if !reflect.DeepEqual(f.appends, want) {
		t.Fatalf("appends %q, want %q", f.appends, want)
	}
}

func TestAppendOneLinePerRequestSendsRawBodies(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	pico(t, "x\ny\n", "append", "/s", "--content-type", "text/plain", "--endpoint", url).
		want(t, 0, "", "start=0 next=1\nstart=1 next=2\n")
	want := []fakeAppend{{"text/plain", []string{"x"}}, {"text/plain", []string{"y"}}}
	if !reflect.DeepEqual(f.appends, want) {
		t.Fatalf("appends %q, want %q", f.appends, want)
	}
	pico(t, "", "append", "/s", "--endpoint", url).want(t, 0, "", "")
	if r := pico(t, "x\n", "append", "/s", "--batch", "0", "--endpoint", url); r.code != 2 {
		t.Fatalf("--batch 0: %+v", r)
	}
	pico(t, "x\n", "append", "/nope", "--endpoint", url).want(t, 3, "", "pico: not found: /nope\n")
}

// TestAppendSplitsKeys: with --key-separator the text before the first
// separator is the record's key (an empty one is a key), and a line
// without one stops the append with an error.
func TestAppendSplitsKeys(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	pico(t, "k1\tv1\n\tv2\tx\n", "append", "/s", "--batch", "2", "--key-separator", "\t", "--endpoint", url).
		want(t, 0, "", "start=0 next=2\n")
	if want := []fakeAppend{{"application/vnd.picomq.batch", []string{"v1", "v2\tx"}}}; !reflect.DeepEqual(f.appends, want) ||
		!reflect.DeepEqual(f.keys, []string{"k1", ""}) {
		t.Fatalf("appends %q keys %q", f.appends, f.keys)
	}
	if r := pico(t, "nokey\n", "append", "/s", "--key-separator", "=", "--endpoint", url); r.code == 0 || !strings.Contains(r.stderr, "no key separator") {
		t.Fatalf("a line without a key: %+v", r)
	}
}

// TestAppendSendsLinesAsTheyArrive holds stdin open after the first line:
// an append that read all of stdin first would never send it.
func TestAppendSendsLinesAsTheyArrive(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	stdin, feed := io.Pipe()
	done := make(chan int)
	go func() {
		done <- runClient(t.Context(), []string{"append", "/s", "--endpoint", url}, stdin, io.Discard, io.Discard)
	}()
	feed.Write([]byte("first\n"))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		f.mu.Lock()
		sent := len(f.appends)
		f.mu.Unlock()
		if sent == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first line was not sent while stdin stayed open")
		}
	}
	feed.Write([]byte("second"))
	feed.Close()
	if code := <-done; code != 0 || len(f.appends) != 2 {
		t.Fatalf("exit %d, appends %q", code, f.appends)
	}
}

func TestLineReaderBoundsLines(t *testing.T) {
	lines := newLineReader(strings.NewReader("1234\r\n12345\n"), 4)
	if line, err := lines.next(); err != nil || string(line) != "1234" {
		t.Fatalf("%q %v", line, err)
	}
	if _, err := lines.next(); err == nil || !strings.Contains(err.Error(), "line 2 is longer than 4 bytes") {
		t.Fatalf("err %v", err)
	}
	big := strings.Repeat("x", 200<<10) + "\n"
	if line, err := newLineReader(strings.NewReader(big), 300<<10).next(); err != nil || len(line) != 200<<10 {
		t.Fatalf("a line longer than the read buffer: %d bytes, %v", len(line), err)
	}
}

func TestReadPagesToTheTail(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a", "b", "c", "d", "e")
	f.pageSize = 2
	pico(t, "", "read", "/s", "--endpoint", url).want(t, 0, "a\nb\nc\nd\ne\n", "")
	if want := []string{"format=binary&seq=0", "format=binary&seq=2", "format=binary&seq=4"}; !reflect.DeepEqual(f.reads, want) {
		t.Fatalf("reads %q, want %q", f.reads, want)
	}
	pico(t, "", "read", "/s", "--from", "3", "--show-seq", "--endpoint", url).want(t, 0, "3\td\n4\te\n", "")
	pico(t, "", "read", "/s", "--count", "3", "--endpoint", url).want(t, 0, "a\nb\nc\n", "")
	pico(t, "", "trim", "/s", "--seq", "2", "--endpoint", url).want(t, 0, "", "trimmed start=2\n")
	pico(t, "", "read", "/s", "--endpoint", url).want(t, 0, "c\nd\ne\n", "")
	pico(t, "", "read", "/nope", "--endpoint", url).want(t, 3, "", "pico: not found: /nope\n")
}

func TestTailPrintsTheLastRecords(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a", "b", "c", "d")
	pico(t, "", "tail", "/s", "-n", "2", "--endpoint", url).want(t, 0, "c\nd\n", "")
	pico(t, "", "tail", "/s", "--endpoint", url).want(t, 0, "a\nb\nc\nd\n", "")
	pico(t, "", "tail", "/s", "-n", "0", "--endpoint", url).want(t, 0, "", "")
	f.add("/empty")
	pico(t, "", "tail", "/empty", "--endpoint", url).want(t, 0, "", "")
}

func TestTailFollowStopsWhenClosed(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a", "b", "c").closed = true
	pico(t, "", "tail", "/s", "-f", "-n", "1", "--endpoint", url).want(t, 0, "c\n", "")
}

func TestTailFollowExitsQuietlyWhenInterrupted(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	picoCtx(ctx, "", "tail", "/s", "--follow", "--endpoint", url).want(t, 0, "a\n", "")
	if len(f.reads) < 2 || !strings.Contains(f.reads[1], "live=long-poll") {
		t.Fatalf("reads %q: want long-polls", f.reads)
	}
}

func TestHeadPrintsOffsetsOrFails(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	s := f.add("/s", "a", "b")
	s.start, s.ttl, s.closed = 1, 30, true
	pico(t, "", "head", "/s", "--endpoint", url).want(t, 0, "start=1 next=3 closed=true type=text/plain ttl=30\n", "")
	pico(t, "", "head", "/nope", "--endpoint", url).want(t, 3, "", "pico: not found: /nope\n")
}

func TestListPagesThroughAllStreams(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	for _, name := range []string{"/a/1", "/a/2", "/a/3", "/b/1", "/a/4"} {
		f.add(name)
	}
	f.streams["/a/2"].closed = true
	f.listPage = 2
	want := "/a/1 start=0 next=0 closed=false\n/a/2 start=0 next=0 closed=true\n" +
		"/a/3 start=0 next=0 closed=false\n/a/4 start=0 next=0 closed=false\n"
	pico(t, "", "ls", "--prefix", "/a/", "--endpoint", url).want(t, 0, want, "")
	pico(t, "", "ls", "--limit", "1", "--endpoint", url).
		want(t, 0, "/a/1 start=0 next=0 closed=false\n", "more streams after /a/1; raise --limit or drop it\n")
}

func TestTrimNeedsASeq(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a", "b", "c")
	if r := pico(t, "", "trim", "/s", "--endpoint", url); r.code != 2 || !strings.Contains(r.stderr, "--seq is required") {
		t.Fatalf("%+v", r)
	}
	pico(t, "", "trim", "/s", "--seq", "9", "--endpoint", url).want(t, 0, "", "trimmed start=3\n")
}

func TestCloseThenAppendFails(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s", "a")
	pico(t, "", "close", "/s", "--endpoint", url).want(t, 0, "", "closed next=1\n")
	pico(t, "x\n", "append", "/s", "--endpoint", url).want(t, 4, "", "pico: 409 closed: stream is closed\n")
}

func TestDeleteThenNotFound(t *testing.T) {
	isolate(t)
	f, url := newFakePico(t)
	f.add("/s")
	pico(t, "", "delete", "/s", "--endpoint", url).want(t, 0, "", "deleted=true\n")
	pico(t, "", "delete", "/s", "--endpoint", url).want(t, 3, "", "pico: not found: /s\n")
}
