package picohttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/internal/server/handlertest"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
)

func listOf(t *testing.T, h *harness, target string) listBody {
	t.Helper()
	rec := h.do(http.MethodGet, target, nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	handlertest.WantHeaders(t, rec, "Cache-Control", "no-store", "Content-Type", "application/json")
	var body listBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("list body %q: %v", rec.Body, err)
	}
	return body
}

func names(b listBody) []string {
	out := []string{}
	for _, s := range b.Streams {
		out = append(out, s.Name)
	}
	return out
}

func TestListEmptyIsAnArray(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodGet, "/", nil)
	if rec.Body.String() != `{"streams":[],"has_more":false}` {
		t.Errorf("empty list %q", rec.Body)
	}
}

func TestList(t *testing.T) {
	h := newHarness(t)
	expires := time.Now().Add(time.Hour).UnixMilli()/1000*1000 + 5
	h.create("/a/1", "Content-Type", "text/plain", "Pico-TTL", "60")
	h.create("/a/2", "Pico-Expires-At", strconv.FormatInt(expires, 10))
	h.create("/b/1")
	h.appendBodies("/a/1", "x", "y")
	h.do(http.MethodPost, "/a/1", nil, "Pico-Trim-Seq", "1")
	h.do(http.MethodPost, "/b/1", nil, "Pico-Closed", "true")

	all := listOf(t, h, "/")
	if got := names(all); len(got) != 3 || got[0] != "/a/1" || all.HasMore {
		t.Fatalf("list %+v", all)
	}
	first := all.Streams[0]
	if first != (listEntry{Name: "/a/1", ContentType: "text/plain", StartSeq: 1, NextSeq: 2, TTL: 60}) {
		t.Errorf("entry %+v", first)
	}
	if all.Streams[1].ExpiresAt != headerval.FormatExpiresAt(expires) || !all.Streams[2].Closed {
		t.Errorf("entries %+v", all.Streams)
	}
	raw := h.do(http.MethodGet, "/?prefix=/b", nil).Body.String()
	if raw != `{"streams":[{"name":"/b/1","content_type":"application/octet-stream","start_seq":0,"next_seq":0,"closed":true}],"has_more":false}` {
		t.Errorf("list JSON %s", raw)
	}
	page := listOf(t, h, "/?prefix=/a/&limit=1")
	if got := names(page); len(got) != 1 || got[0] != "/a/1" || !page.HasMore {
		t.Errorf("first page %+v", page)
	}
	page = listOf(t, h, "/?prefix=/a/&limit=1&start_after=/a/1")
	if got := names(page); len(got) != 1 || got[0] != "/a/2" || page.HasMore {
		t.Errorf("second page %+v", page)
	}
	if got := names(listOf(t, h, "/?limit=0&start_after=/a/2")); len(got) != 1 {
		t.Errorf("limit=0 is the default: %v", got)
	}
	handlertest.WantStatus(t, h.do(http.MethodGet, "/?limit=10000", nil), http.StatusOK)
	wantError(t, h.do(http.MethodGet, "/?limit=10001", nil), http.StatusBadRequest, "bad_request", "limit is at most 10000")
	wantError(t, h.do(http.MethodGet, "/?limit=-5", nil), http.StatusBadRequest, "bad_request", "limit must be")
	rec := h.do(http.MethodHead, "/", nil)
	handlertest.WantStatus(t, rec, http.StatusOK)
	if rec.Body.Len() != 0 {
		t.Errorf("HEAD / body %q", rec.Body)
	}
}
