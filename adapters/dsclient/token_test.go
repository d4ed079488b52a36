package dsclient

import (
	"net/http"
	"testing"
)

func TestTheTokenIsSentAsABearerCredential(t *testing.T) {
	const token = "c3ZjL2luZ2VzdA.AQEBAQEBAQEBAQEBAQEBAQ"
	anonymous, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no valid credential", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	if err := New(anonymous.BaseURL(), Options{Token: token}).Delete(t.Context(), "/s"); err != nil {
		t.Fatal(err)
	}
	if seen.header.Get("Authorization") != "Bearer "+token || seen.method != http.MethodDelete {
		t.Fatalf("the server saw %+v", seen)
	}
	err := anonymous.Delete(t.Context(), "/s")
	e, ok := err.(*Error)
	if !ok || e.Status != http.StatusUnauthorized || e.Message != "no valid credential" || seen.header.Get("Authorization") != "" {
		t.Fatalf("without a token: %#v, the server saw %v", err, seen.header)
	}
}
