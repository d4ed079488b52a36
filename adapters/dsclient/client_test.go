package dsclient

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// captured is what a fake server saw of one request.
type captured struct {
	method, path, query string
	header              http.Header
	body                string
}

// serve starts a fake server that records the last request and answers
// with reply.
func serve(t *testing.T, reply http.HandlerFunc) (*Client, *captured) {
	t.Helper()
	seen := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*seen = captured{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: string(body)}
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, Options{}), seen
}

const off3 = "0000000000000000_0000000000000003"

func TestCreateSendsConfigAndReadsTheAnswer(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stream-Next-Offset", off3)
		w.WriteHeader(http.StatusCreated)
	})
	got, err := c.Create(t.Context(), "q", CreateOptions{ContentType: "text/plain", TTLSec: 60, Closed: true})
	if err != nil || !got.Created || got.Next != off3 {
		t.Fatalf("%+v %v", got, err)
	}
	h := seen.header
	if seen.method != "PUT" || seen.path != "/q" || h.Get("Content-Type") != "text/plain" || h.Get("Stream-TTL") != "60" ||
		h.Get("Stream-Closed") != "true" || h.Get("Stream-Expires-At") != "" {
		t.Fatalf("request %+v", seen)
	}
}

func TestAppendAndClose(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stream-Next-Offset", off3)
		if r.Header.Get("Stream-Closed") == "true" {
			w.Header().Set("Stream-Closed", "true")
		}
		w.WriteHeader(http.StatusNoContent)
	})
	got, err := c.Append(t.Context(), "/s", "application/json", []byte(`[1,2]`))
	if err != nil || got.Next != off3 || got.Closed {
		t.Fatalf("%+v %v", got, err)
	}
	if seen.method != "POST" || seen.body != "[1,2]" || seen.header.Get("Content-Type") != "application/json" {
		t.Fatalf("append request %+v", seen)
	}
	if _, err := c.Append(t.Context(), "/s", "text/plain", nil); err == nil {
		t.Fatal("an empty append was sent")
	}
	got, err = c.Close(t.Context(), "/s")
	if err != nil || !got.Closed || got.Next != off3 {
		t.Fatalf("%+v %v", got, err)
	}
	if seen.body != "" || seen.header.Get("Stream-Closed") != "true" || seen.header.Get("Content-Type") != "" {
		t.Fatalf("close request %+v", seen)
	}
}

func TestReadSplitsJSONMessages(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Stream-Next-Offset", off3)
		w.Header().Set("Stream-Up-To-Date", "true")
		w.Header().Set("Stream-Closed", "TRUE")
		io.WriteString(w, `[{"a": 1}, [1,2], "x"]`)
	})
	p, err := c.Read(t.Context(), "/s", Start, false)
	if err != nil || !p.UpToDate || !p.Closed || p.Next != off3 || !p.JSON() {
		t.Fatalf("%+v %v", p, err)
	}
	want := [][]byte{[]byte(`{"a": 1}`), []byte(`[1,2]`), []byte(`"x"`)}
	if !reflect.DeepEqual(p.Messages, want) {
		t.Fatalf("messages %q", p.Messages)
	}
	if seen.method != "GET" || seen.query != "offset=-1" {
		t.Fatalf("request %+v", seen)
	}
}

func TestReadRawAndLongPoll(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Get("live") == "long-poll" {
			w.Header().Set("Stream-Up-To-Date", "true")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Stream-Next-Offset", off3)
		io.WriteString(w, "abc")
	})
	p, err := c.Read(t.Context(), "/s", "0000000000000000_0000000000000000", false)
	if err != nil || string(p.Body) != "abc" || p.Messages != nil || p.UpToDate || p.JSON() {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = c.Read(t.Context(), "/s", off3, true)
	if err != nil || len(p.Body) != 0 || p.Next != off3 || !p.UpToDate {
		t.Fatalf("timed-out long-poll %+v %v", p, err)
	}
	if seen.query != "live=long-poll&offset="+off3 {
		t.Fatalf("query %q", seen.query)
	}
}

func TestHeadAndErrors(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/s":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Stream-Next-Offset", off3)
			w.Header().Set("Stream-TTL", "30")
			w.Header().Set("Stream-Closed", "true")
		case "/gone":
			http.Error(w, "stream not found", http.StatusNotFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, "stream is\nclosed")
		}
	})
	info, err := c.Head(t.Context(), "/s")
	if want := (Info{ContentType: "text/plain", Next: off3, TTLSec: 30, Closed: true}); err != nil || info != want {
		t.Fatalf("%+v %v", info, err)
	}
	if err := c.Delete(t.Context(), "/gone"); !NotFound(err) || err.Error() != "404 not_found: stream not found" {
		t.Fatalf("delete of a missing stream: %v", err)
	}
	if _, err := c.Head(t.Context(), "/gone"); !NotFound(err) {
		t.Fatalf("head of a missing stream: %v", err)
	}
	_, err = c.Append(t.Context(), "/c", "text/plain", []byte("x"))
	var e *Error
	if !errors.As(err, &e) || e.Status != 409 || err.Error() != "409 conflict: stream is closed" || NotFound(err) {
		t.Fatalf("conflict: %v", err)
	}
}

func TestRedirect307ResendsTheAppend(t *testing.T) {
	owner, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stream-Next-Offset", off3)
		w.WriteHeader(http.StatusNoContent)
	})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, owner.BaseURL()+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	got, err := New(front.URL, Options{}).Append(t.Context(), "/s", "text/plain", []byte("hello"))
	if err != nil || got.Next != off3 {
		t.Fatalf("%+v %v", got, err)
	}
	if seen.method != "POST" || seen.path != "/s" || seen.body != "hello" || seen.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("owner saw %+v", seen)
	}
}

func TestHTTP2OptionNegotiatesH2C(t *testing.T) {
	var proto atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.Protocols = &http.Protocols{}
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	for _, h2 := range []bool{true, false} {
		if err := New(srv.URL, Options{HTTP2: h2}).Delete(t.Context(), "/s"); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int32{true: 2, false: 1}[h2]; proto.Load() != want {
			t.Fatalf("HTTP2=%v: server saw HTTP/%d, want HTTP/%d", h2, proto.Load(), want)
		}
	}
}

func TestReadRefusesAnOversizedOrBadBody(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Stream-Next-Offset", off3)
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"not":"an array"}`)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(make([]byte, maxResponseBytes+1))
	})
	if _, err := c.Read(t.Context(), "/json", Start, false); err == nil || !strings.Contains(err.Error(), "not a JSON array") {
		t.Fatalf("bad JSON body: %v", err)
	}
	if _, err := c.Read(t.Context(), "/big", Start, false); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("oversized body: %v", err)
	}
}

func TestOffsetsAndEndpoints(t *testing.T) {
	for off, want := range map[string]bool{"-1": true, "now": true, off3: true, "1_2": true, "": false, "3": false,
		"a_1": false, "1_": false, "1_2_3": false, "../x": false} {
		if ValidOffset(off) != want {
			t.Errorf("ValidOffset(%q) = %v", off, !want)
		}
	}
	if !IsJSON("Application/JSON; charset=utf-8") || IsJSON("text/plain") || IsJSON("") {
		t.Error("IsJSON")
	}
	if _, err := New("localhost:4437", Options{}).Head(t.Context(), "/s"); err == nil || !strings.Contains(err.Error(), "want http://") {
		t.Fatalf("bad endpoint: %v", err)
	}
}
