package main

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ds runs the client with --protocol ds against url.
func ds(t *testing.T, url, stdin string, args ...string) result {
	t.Helper()
	return pico(t, stdin, append(args, "--protocol", "ds", "--endpoint", url)...)
}

var off = dsOffset

func TestDSCreateHeadCloseDelete(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	ds(t, url, "", "create", "/s", "--content-type", "text/plain", "--ttl", "60").want(t, 0, "", "created=true next="+off(0)+"\n")
	ds(t, url, "", "create", "/s", "--content-type", "text/plain").want(t, 0, "", "created=false next="+off(0)+"\n")
	ds(t, url, "", "create", "/s").want(t, 4, "", "pico: 409 conflict: stream exists with content type text/plain\n")
	ds(t, url, "", "head", "/s").want(t, 0, "next="+off(0)+" closed=false type=text/plain ttl=60\n", "")
	f.add("/s2", "application/json", "1", "2")
	ds(t, url, "", "close", "/s2").want(t, 0, "", "closed next="+off(2)+"\n")
	ds(t, url, "", "head", "/s2").want(t, 0, "next="+off(2)+" closed=true type=application/json\n", "")
	ds(t, url, "3\n", "append", "/s2").want(t, 4, "", "pico: 409 conflict: stream is closed\n")
	ds(t, url, "", "delete", "/s2").want(t, 0, "", "deleted=true\n")
	ds(t, url, "", "delete", "/s2").want(t, 3, "", "pico: not found: /s2\n")
	ds(t, url, "", "head", "/s2").want(t, 3, "", "pico: not found: /s2\n")
	ds(t, url, "", "close", "/s2").want(t, 3, "", "pico: not found: /s2\n")
}

func TestDSAppendRawSendsOneLineARequest(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	f.add("/s", "text/plain")
	ds(t, url, "a\n\nb\r\n", "append", "/s").want(t, 0, "", "next="+off(1)+"\nnext="+off(2)+"\n")
	want := []fakeAppend{{"text/plain", []string{"a"}}, {"text/plain", []string{"b"}}}
	if !reflect.DeepEqual(f.appends, want) {
		t.Fatalf("appends %q, want %q", f.appends, want)
	}
	ds(t, url, "a\nb\n", "append", "/s", "--batch", "2").
		want(t, 1, "", "pico: Durable Streams appends one body per request: use --batch 1\n")
	ds(t, url, "x\n", "append", "/nope").want(t, 3, "", "pico: not found: /nope\n")
	if len(f.appends) != 2 {
		t.Fatalf("refused appends sent something: %q", f.appends)
	}
}

func TestDSAppendJSONSendsArraysOfLines(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	f.add("/j", "application/json")
	ds(t, url, "{\"a\":1}\n[1,2]\n\"x\"\n", "append", "/j", "--batch", "2").
		want(t, 0, "", "next="+off(2)+"\nnext="+off(3)+"\n")
	want := []fakeAppend{{"application/json", []string{`[{"a":1},[1,2]]`}}, {"application/json", []string{`["x"]`}}}
	if !reflect.DeepEqual(f.appends, want) {
		t.Fatalf("appends %q, want %q", f.appends, want)
	}
	ds(t, url, "", "read", "/j").want(t, 0, "{\"a\":1}\n[1,2]\n\"x\"\n", "")
	ds(t, url, "{oops\n", "append", "/j").want(t, 1, "", "pico: not valid JSON, which a JSON stream needs: \"{oops\"\n")
}

func TestDSReadPagesToTheTail(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	f.add("/j", "application/json", `"a"`, `"b"`, `"c"`, `"d"`, `"e"`)
	f.pageSize = 2
	ds(t, url, "", "read", "/j").want(t, 0, "\"a\"\n\"b\"\n\"c\"\n\"d\"\n\"e\"\n", "")
	if want := []string{"offset=-1", "offset=" + off(2), "offset=" + off(4)}; !reflect.DeepEqual(f.reads, want) {
		t.Fatalf("reads %q, want %q", f.reads, want)
	}
	ds(t, url, "", "read", "/j", "--from", off(3)).want(t, 0, "\"d\"\n\"e\"\n", "")
	ds(t, url, "", "read", "/j", "--count", "3").want(t, 0, "\"a\"\n\"b\"\n\"c\"\n", "")
	ds(t, url, "", "read", "/j", "--from", "now").want(t, 0, "", "")
	f.add("/t", "text/plain", "ab", "c", "d\n")
	ds(t, url, "", "read", "/t").want(t, 0, "abcd\n", "")
	ds(t, url, "", "read", "/t", "--count", "1").want(t, 1, "",
		"pico: --count needs record boundaries, which only application/json streams have in Durable Streams\n")
	ds(t, url, "", "read", "/nope").want(t, 3, "", "pico: not found: /nope\n")
	for _, args := range [][]string{{"--from", "3"}, {"--show-seq"}} {
		if r := ds(t, url, "", append([]string{"read", "/j"}, args...)...); r.code != 2 {
			t.Fatalf("read %q: %+v", args, r)
		}
	}
}

func TestDSTailPrintsTheLastMessagesOrLines(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	f.add("/j", "application/json", "1", "2", "3", "4")
	f.pageSize = 3
	ds(t, url, "", "tail", "/j", "-n", "2").want(t, 0, "3\n4\n", "")
	ds(t, url, "", "tail", "/j").want(t, 0, "1\n2\n3\n4\n", "")
	ds(t, url, "", "tail", "/j", "-n", "0").want(t, 0, "", "")
	f.add("/t", "text/plain", "l1\nl2\nl", "3\n", "l4")
	ds(t, url, "", "tail", "/t", "-n", "2").want(t, 0, "l3\nl4", "")
	f.add("/empty", "text/plain")
	ds(t, url, "", "tail", "/empty").want(t, 0, "", "")
	ds(t, url, "", "tail", "/nope").want(t, 3, "", "pico: not found: /nope\n")
}

func TestDSTailFollowStopsWhenClosedOrInterrupted(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	f.add("/j", "application/json", "1", "2", "3").closed = true
	ds(t, url, "", "tail", "/j", "-f", "-n", "1").want(t, 0, "3\n", "")
	f.add("/t", "text/plain", "a")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	f.reads = nil
	picoCtx(ctx, "", "tail", "/t", "--follow", "--protocol", "ds", "--endpoint", url).want(t, 0, "a", "")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reads) < 2 || f.reads[1] != "live=long-poll&offset="+off(1) {
		t.Fatalf("reads %q: want long-polls from the tail", f.reads)
	}
}

func TestDSTailFollowPrintsNewMessages(t *testing.T) {
	isolate(t)
	f, url := newFakeDS(t)
	s := f.add("/j", "application/json", "1")
	go func() {
		time.Sleep(50 * time.Millisecond)
		f.mu.Lock()
		s.messages, s.closed = append(s.messages, []byte("2")), true
		f.mu.Unlock()
	}()
	ds(t, url, "", "tail", "/j", "-f").want(t, 0, "1\n2\n", "")
}

func TestDSRefusesPicoOnlyVerbs(t *testing.T) {
	isolate(t)
	_, url := newFakeDS(t)
	r := ds(t, url, "", "ls")
	if r.code != 1 || !strings.Contains(r.stderr, "ls is Pico-only: Durable Streams has no stream listing; use --protocol pico") {
		t.Fatalf("ls: %+v", r)
	}
	r = ds(t, url, "", "trim", "/s", "--seq", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "trim is Pico-only: Durable Streams has no trim; use --protocol pico") {
		t.Fatalf("trim: %+v", r)
	}
}
