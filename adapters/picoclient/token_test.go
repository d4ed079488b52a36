package picoclient

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTheTokenIsSentWithEveryRequestAndHop(t *testing.T) {
	const token = "c3ZjL2luZ2VzdA.AQEBAQEBAQEBAQEBAQEBAQ"
	var seen []string
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "owner "+r.Header.Get("Authorization"))
		w.Header().Set(hdrNextSeq, "3")
	}))
	t.Cleanup(owner.Close)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "front "+r.Header.Get("Authorization"))
		http.Redirect(w, r, owner.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	info, err := New(front.URL, Options{Token: token}).Head(t.Context(), "/s")
	if err != nil || info.Next != 3 {
		t.Fatalf("%+v %v", info, err)
	}
	if len(seen) != 2 || seen[0] != "front Bearer "+token || seen[1] != "owner Bearer "+token {
		t.Fatalf("the servers saw %q", seen)
	}
	seen = nil
	if _, err := New(owner.URL, Options{}).Head(t.Context(), "/s"); err != nil || len(seen) != 1 || seen[0] != "owner " {
		t.Fatalf("without a token the server saw %q (%v)", seen, err)
	}
}

func TestA401IsAnAPIErrorWithTheServersMessage(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"unauthorized","message":"no valid credential"}`))
	})
	_, err := c.List(t.Context(), "", "", 1)
	api, ok := err.(*APIError)
	if !ok || api.Status != http.StatusUnauthorized || api.Code != "unauthorized" || api.Message != "no valid credential" {
		t.Fatalf("err %#v", err)
	}
}
