package dshttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
)

func TestCatchUp(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "hello ", "world")
	for _, target := range []string{"/s", "/s?offset=-1", "/s?offset=" + off(0), "/s?offset=-1&unknown=1"} {
		rec := h.do(http.MethodGet, target, nil)
		handlertest.WantStatus(t, rec, http.StatusOK)
		handlertest.WantHeaders(t, rec, "Content-Type", "text/plain", "Stream-Next-Offset", off(2), "Stream-Up-To-Date", "true",
			"Stream-Closed", "", "Stream-Cursor", "", "Cache-Control", "no-cache")
		if rec.Body.String() != "hello world" {
			t.Errorf("%s: body %q", target, rec.Body)
		}
	}
	rec := h.do(http.MethodGet, "/s?offset="+off(1), nil)
	if rec.Body.String() != "world" {
		t.Errorf("from 1: body %q", rec.Body)
	}
	// At the tail: empty, up to date, the requested offset.
	rec = h.do(http.MethodGet, "/s?offset="+off(2), nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Next-Offset", off(2), "Stream-Up-To-Date", "true")
	if rec.Body.Len() != 0 {
		t.Errorf("tail body %q", rec.Body)
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/missing", nil), http.StatusNotFound)
}

func TestBinaryRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.create("/b")
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	handlertest.WantStatus(t, h.do(http.MethodPost, "/b", all, "Content-Type", "application/octet-stream"), http.StatusNoContent)
	rec := h.do(http.MethodGet, "/b", nil)
	if !bytes.Equal(rec.Body.Bytes(), all) {
		t.Errorf("read back %x", rec.Body.Bytes())
	}
	handlertest.WantHeaders(t, rec, "Content-Type", "application/octet-stream")
}

func TestJSONRead(t *testing.T) {
	h := newHarness(t)
	h.create("/j", "Content-Type", "application/json")
	rec := h.do(http.MethodGet, "/j", nil)
	if rec.Body.String() != "[]" {
		t.Errorf("empty JSON stream reads %q", rec.Body)
	}
	h.appendBodies("/j", "application/json", `{"a": 1}`, `[2, [3], "x y"]`)
	rec = h.do(http.MethodGet, "/j", nil)
	handlertest.WantHeaders(t, rec, "Content-Type", "application/json")
	if got := rec.Body.String(); got != `[{"a":1},2,[3],"x y"]` {
		t.Errorf("body %s", got)
	}
	var all []any
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil || len(all) != 4 {
		t.Errorf("body %s: %v", rec.Body, err)
	}
}

// TestBadOffsets: anything but -1, now or a minted offset is a 400.
func TestBadOffsets(t *testing.T) {
	h := newHarness(t)
	h.create("/s")
	for _, v := range []string{"abc", "0,1", "0_1,0_2", "0 1", " ", "/", "../0_1", "0_1/", "\x00", "0_0\x00", "\r", "\n", "0_0\r\n",
		"-2", "NOW", "1_0", "9999999999999999_9999999999999999", off(1)} {
		rec := h.do(http.MethodGet, "/s?offset="+url.QueryEscape(v), nil)
		handlertest.WantStatus(t, rec, http.StatusBadRequest)
		handlertest.WantHeaders(t, rec, "X-Content-Type-Options", "nosniff")
	}
	for _, q := range []string{"offset=", "offset", "offset=-1&offset=-1", "offset=now&offset=" + off(0), "offset=%zz", "a=1;offset=now"} {
		handlertest.WantStatus(t, h.do(http.MethodGet, "/s?"+q, nil), http.StatusBadRequest)
	}
}

func TestReadNow(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.create("/j", "Content-Type", "application/json")
	h.appendBodies("/s", "text/plain", "old", "older")
	h.appendBodies("/j", "application/json", "[1,2,3]")
	for name, body := range map[string]string{"/s": "", "/j": "[]"} {
		before := h.fake.AccessCount(name)
		rec := h.do(http.MethodGet, name+"?offset=now", nil)
		handlertest.WantStatus(t, rec, http.StatusOK)
		handlertest.WantHeaders(t, rec, "Stream-Up-To-Date", "true", "ETag", "", "Cache-Control", "no-store", "Stream-Closed", "")
		if rec.Body.String() != body {
			t.Errorf("%s: body %q, want %q", name, rec.Body, body)
		}
		if h.fake.AccessCount(name) == before {
			t.Errorf("%s: offset=now did not reach the service (it must renew the idle TTL)", name)
		}
	}
	handlertest.WantHeaders(t, h.do(http.MethodGet, "/s?offset=now", nil), "Stream-Next-Offset", off(2))
	handlertest.WantHeaders(t, h.do(http.MethodGet, "/j?offset=now", nil), "Stream-Next-Offset", off(3))
	h.closeStream("/s")
	handlertest.WantHeaders(t, h.do(http.MethodGet, "/s?offset=now", nil), "Stream-Closed", "true", "Stream-Up-To-Date", "true")
	handlertest.WantStatus(t, h.do(http.MethodGet, "/missing?offset=now", nil), http.StatusNotFound)
	if n := h.fake.heads.Load(); n != 0 {
		t.Errorf("offset=now made %d Head calls: a catch-up read at the tail is one Read", n)
	}
}

func TestChunking(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxChunkBytes = 10 })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "aaaaaa", "bbbbbb", "cccccccccccccccc", "d")
	var got []string
	offset := "-1"
	for range 10 {
		rec := h.do(http.MethodGet, "/s?offset="+offset, nil)
		handlertest.WantStatus(t, rec, http.StatusOK)
		got = append(got, rec.Body.String())
		offset = rec.Header().Get("Stream-Next-Offset")
		if rec.Header().Get("Stream-Up-To-Date") == "true" {
			break
		}
		handlertest.WantHeaders(t, rec, "Cache-Control", "public, max-age=60, stale-while-revalidate=300")
	}
	// A chunk ends between records, never inside one.
	if want := []string{"aaaaaa", "bbbbbb", "cccccccccccccccc", "d"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks %q, want %q", got, want)
	}
}

func TestClosedStreamReads(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxChunkBytes = 1 })
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a", "b")
	h.closeStream("/s")
	// A chunk short of the end does not say closed.
	rec := h.do(http.MethodGet, "/s", nil)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "", "Stream-Up-To-Date", "")
	rec = h.do(http.MethodGet, "/s?offset="+off(1), nil)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Up-To-Date", "true")
	// Reading at the end: empty, closed (EOF).
	rec = h.do(http.MethodGet, "/s?offset="+off(2), nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Stream-Closed", "true", "Stream-Up-To-Date", "true", "Stream-Next-Offset", off(2))
}

func TestETag(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	rec := h.do(http.MethodGet, "/s", nil)
	tag := rec.Header().Get("ETag")
	info, _ := h.fake.Info("/s")
	id := info.ID
	want := `"` + base64.RawURLEncoding.EncodeToString([]byte("/s")) + ":" + strconv.FormatUint(id, 10) + ":" + off(0) + ":" + off(1) + `"`
	if tag != want {
		t.Fatalf("ETag %s, want %s", tag, want)
	}
	for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
		rec := h.do(http.MethodGet, "/s", nil, "If-None-Match", inm)
		handlertest.WantStatus(t, rec, http.StatusNotModified)
		if rec.Body.Len() != 0 {
			t.Errorf("304 body %q", rec.Body)
		}
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s", nil, "If-None-Match", `"other"`), http.StatusOK)
	// An append changes the chunk from the start, and so its tag.
	h.appendBodies("/s", "text/plain", "b")
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s", nil, "If-None-Match", tag), http.StatusOK)
	// Closing changes the last chunk's tag, so a 304 cannot hide the end.
	tag = h.do(http.MethodGet, "/s", nil).Header().Get("ETag")
	h.closeStream("/s")
	rec = h.do(http.MethodGet, "/s", nil, "If-None-Match", tag)
	handlertest.WantStatus(t, rec, http.StatusOK)
	if got := rec.Header().Get("ETag"); !strings.HasSuffix(got, `:c"`) {
		t.Errorf("closed ETag %s", got)
	}
	// A re-created stream is another incarnation.
	h.do(http.MethodDelete, "/s", nil)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a")
	if got := h.do(http.MethodGet, "/s", nil).Header().Get("ETag"); got == want {
		t.Error("a re-created stream reuses its predecessor's ETag")
	}
}

// TestTrimmedOffsetIsGone: records trimmed (by Pico retention) are 410 to
// a reader that names their offset; a read from the start skips them.
func TestTrimmedOffsetIsGone(t *testing.T) {
	h := newHarness(t)
	h.create("/s", "Content-Type", "text/plain")
	h.appendBodies("/s", "text/plain", "a", "b", "c")
	if _, err := h.fake.Trim(context.Background(), "/s", 2); err != nil {
		t.Fatal(err)
	}
	wantError(t, h.do(http.MethodGet, "/s?offset="+off(1), nil), http.StatusGone, "before the first offset kept")
	rec := h.do(http.MethodGet, "/s", nil)
	if rec.Body.String() != "c" {
		t.Errorf("from the start: %q", rec.Body)
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/s?offset="+off(2), nil), http.StatusOK)
}
