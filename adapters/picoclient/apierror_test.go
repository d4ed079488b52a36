package picoclient

import (
	"fmt"
	"net/http"
	"testing"
)

func TestErrorsMapFromJSONBodies(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":"conflict","message":"stream exists with content type text/plain","next_seq":7}`)
	})
	_, err := c.Create(t.Context(), "/s", CreateOptions{ContentType: "application/json"})
	api, ok := err.(*APIError)
	if !ok || api.Status != 409 || api.Code != "conflict" || api.NextSeq == nil || *api.NextSeq != 7 {
		t.Fatalf("err %#v", err)
	}
	if err.Error() != "409 conflict: stream exists with content type text/plain" || NotFound(err) {
		t.Fatalf("Error() %q", err.Error())
	}
}

func TestErrorsMapFromBodilessAnswers(t *testing.T) {
	status := http.StatusNotFound
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if status == http.StatusServiceUnavailable {
			w.Header().Set("X-Error", "owner lookup failed")
		}
		w.Header().Set(hdrNextSeq, "3")
		w.WriteHeader(status)
	})
	_, err := c.Head(t.Context(), "/gone")
	if !NotFound(err) || err.Error() != "404 not_found" {
		t.Fatalf("err %v", err)
	}
	status = http.StatusServiceUnavailable
	err = c.Delete(t.Context(), "/s")
	api, _ := err.(*APIError)
	if api == nil || err.Error() != "503 service_unavailable: owner lookup failed" || api.NextSeq == nil || *api.NextSeq != 3 {
		t.Fatalf("err %v", err)
	}
}

func TestErrorsFromPlainTextBodiesKeepOneLine(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "body\ntoo large", http.StatusRequestEntityTooLarge)
	})
	err := c.Delete(t.Context(), "/s")
	if err == nil || err.Error() != "413 request_entity_too_large: body too large" {
		t.Fatalf("err %v", err)
	}
}
