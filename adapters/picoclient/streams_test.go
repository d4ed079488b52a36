package picoclient

import (
	"fmt"
	"net/http"
	"testing"
)

func TestCreateSendsConfigAndReadsResult(t *testing.T) {
	status := http.StatusCreated
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.Header().Set(hdrNextSeq, "1")
		w.Header().Set(hdrClosed, "true")
		w.WriteHeader(status)
	})
	opts := CreateOptions{ContentType: "text/plain", TTLSec: 60, Closed: true, Body: []byte("first")}
	got, err := c.Create(t.Context(), "/s", opts)
	if err != nil {
		t.Fatal(err)
	}
	if seen.method != http.MethodPut || seen.path != "/s" || seen.header.Get("Content-Type") != "text/plain" ||
		seen.header.Get(hdrTTL) != "60" || seen.header.Get(hdrClosed) != "true" ||
		seen.header.Get(hdrExpiresAt) != "" || string(seen.body) != "first" {
		t.Fatalf("request %+v", seen)
	}
	want := CreateResult{Created: true, Info: Info{Name: "/s", ContentType: "text/plain", Next: 1, TTLSec: 60, Closed: true}}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	status = http.StatusOK
	if got, err := c.Create(t.Context(), "/s", CreateOptions{ExpiresAt: "2030-01-01T00:00:00Z"}); err != nil || got.Created {
		t.Fatalf("existing stream: %+v %v", got, err)
	}
	if seen.header.Get(hdrExpiresAt) != "2030-01-01T00:00:00Z" || seen.header.Get(hdrTTL) != "" ||
		seen.header.Get(hdrClosed) != "" || len(seen.body) != 0 {
		t.Fatalf("request %+v", seen)
	}
}

func TestHeadReadsHeaders(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set(hdrStartSeq, "2")
		h.Set(hdrNextSeq, "9")
		h.Set(hdrTTL, "30")
		h.Set(hdrExpiresAt, "2030-01-01T00:00:00Z")
		h.Set(hdrClosed, "true")
	})
	got, err := c.Head(t.Context(), "/s")
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Name: "/s", ContentType: "application/json", Start: 2, Next: 9, TTLSec: 30,
		ExpiresAt: "2030-01-01T00:00:00Z", Closed: true}
	if seen.method != http.MethodHead || got != want {
		t.Fatalf("%s: got %+v, want %+v", seen.method, got, want)
	}
}

func TestHeadRejectsABadOffset(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Header().Set(hdrNextSeq, "-1") })
	if _, err := c.Head(t.Context(), "/s"); err == nil {
		t.Fatal("a negative Pico-Next-Seq was accepted")
	}
}

func TestDeleteSendsDelete(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	if err := c.Delete(t.Context(), "/s"); err != nil || seen.method != http.MethodDelete || seen.path != "/s" {
		t.Fatalf("%v %s %s", err, seen.method, seen.path)
	}
}

func TestListSendsQueryAndParsesPage(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"streams":[
			{"name":"/a","content_type":"text/plain","start_seq":1,"next_seq":5,"closed":true,"ttl":60},
			{"name":"/b","content_type":"application/json","start_seq":0,"next_seq":0,"closed":false,"expires_at":"2030-01-01T00:00:00Z"},
			{"name":"/c","content_type":"x","start_seq":0,"next_seq":0,"closed":false,"expires_at":1893456000000,"other":1}
		],"has_more":true}`)
	})
	page, err := c.List(t.Context(), "/", "/0", 3)
	if err != nil {
		t.Fatal(err)
	}
	if seen.path != "/" || seen.query["prefix"][0] != "/" || seen.query["start_after"][0] != "/0" || seen.query["limit"][0] != "3" {
		t.Fatalf("request %s %v", seen.path, seen.query)
	}
	want := []Info{
		{Name: "/a", ContentType: "text/plain", Start: 1, Next: 5, Closed: true, TTLSec: 60},
		{Name: "/b", ContentType: "application/json", ExpiresAt: "2030-01-01T00:00:00Z"},
		{Name: "/c", ContentType: "x", ExpiresAt: "1893456000000"},
	}
	if !page.HasMore || len(page.Streams) != len(want) {
		t.Fatalf("page %+v", page)
	}
	for i := range want {
		if page.Streams[i] != want[i] {
			t.Fatalf("stream %d: got %+v, want %+v", i, page.Streams[i], want[i])
		}
	}
	if _, err := c.List(t.Context(), "", "", 0); err != nil || len(seen.query) != 0 {
		t.Fatalf("defaults sent %v (%v)", seen.query, err)
	}
}
