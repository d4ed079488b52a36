package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// listNames is a Pico listing's names.
func listNames(t *testing.T, url string, h http.Header) []string {
	t.Helper()
	r := send(t, "GET", url, h, nil).wantStatus(t, http.StatusOK)
	var page struct {
		Streams []struct {
			Name string `json:"name"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatalf("%s: %s: %v", r.what, clipBody(r.body), err)
	}
	names := make([]string, len(page.Streams))
	for i, s := range page.Streams {
		names[i] = s.Name
	}
	return names
}

// readBodies reads a Pico stream from seq 0 and returns its bodies.
func readBodies(t *testing.T, url string, h http.Header) []string {
	t.Helper()
	r := send(t, "GET", url+"?seq=0&format=json", h, nil).wantStatus(t, http.StatusOK)
	var bodies []string
	for _, rec := range r.records(t) {
		bodies = append(bodies, string(rec.bytes(t)))
	}
	return bodies
}

// TestAuthAutoPrefix: an auto-prefixed token's stream names are relative
// to its prefix on both stream listeners: it creates, reads, lists and
// forks inside the prefix, names outside it are taken as relative too, and
// what it is answered names streams as it named them.
func TestAuthAutoPrefix(t *testing.T) {
	n := startAuthNode(t, nodeConfig{})
	tenant := bearer(issueToken(t, n.AdminURL, rootToken, "tenant-a",
		`{"streams":[{"prefix":"/tenants/a/"}],"groups":{"stream":{"read":true,"write":true}},"audiences":["pico","durable_streams"],"autoPrefixStreams":true}`))
	root := bearer(rootToken)
	rootCreate(t, n.URL, "/tenants/b/x", "b's record")
	rootCreate(t, n.URL, "/tenants/a/tenants/b/x", "a's nested record")
	rootCreate(t, n.URL, "/orders", "the top-level orders")

	t.Run("pico-create", func(t *testing.T) {
		r := send(t, "PUT", n.URL+"/orders", withType(tenant, "text/plain"), nil).
			wantStatus(t, http.StatusCreated)
		r.wantHeaders(t, "Location", "/orders")
		send(t, "POST", n.URL+"/orders", withType(tenant, "text/plain"), []byte("o1")).wantStatus(t, http.StatusOK)
		if got := readBodies(t, n.URL+"/tenants/a/orders", root); !slices.Equal(got, []string{"o1"}) {
			t.Errorf("root reads /tenants/a/orders: %q, want the tenant's record", got)
		}
		if got := readBodies(t, n.URL+"/orders", root); !slices.Equal(got, []string{"the top-level orders"}) {
			t.Errorf("root reads /orders: %q, want the top-level stream untouched", got)
		}
		if got := readBodies(t, n.URL+"/orders", tenant); !slices.Equal(got, []string{"o1"}) {
			t.Errorf("the tenant reads /orders: %q, want its own", got)
		}
	})

	t.Run("names-outside-resolve-inside", func(t *testing.T) {
		if got := readBodies(t, n.URL+"/tenants/b/x", tenant); !slices.Equal(got, []string{"a's nested record"}) {
			t.Errorf("the tenant reads /tenants/b/x: %q, want /tenants/a/tenants/b/x's", got)
		}
		send(t, "GET", n.URL+"/tenants/b/none", tenant, nil).wantStatus(t, http.StatusNotFound)
		send(t, "GET", n.DS+"/tenants/b/x?offset=-1", tenant, nil).wantStatus(t, http.StatusOK).wantBody(t, "a's nested record")
	})

	t.Run("ds-create-and-fork", func(t *testing.T) {
		r := send(t, "PUT", n.DS+"/events", withType(tenant, "text/plain"), []byte("e1")).wantStatus(t, http.StatusCreated)
		if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/events") || strings.Contains(loc, "/tenants/a/") {
			t.Errorf("Location %q: want the tenant's own name", loc)
		}
		send(t, "HEAD", n.URL+"/tenants/a/events", root, nil).wantStatus(t, http.StatusOK)
		send(t, "HEAD", n.URL+"/events", root, nil).wantStatus(t, http.StatusNotFound)
		// A fork's source is named inside the prefix too.
		send(t, "PUT", n.DS+"/copy", withHeader(tenant, "Stream-Forked-From", "/orders"), nil).wantStatus(t, http.StatusCreated)
		send(t, "GET", n.DS+"/copy?offset=-1", tenant, nil).wantStatus(t, http.StatusOK).wantBody(t, "o1")
		if got := readBodies(t, n.URL+"/tenants/a/copy", root); !slices.Equal(got, []string{"o1"}) {
			t.Errorf("root reads /tenants/a/copy: %q, want the fork of /tenants/a/orders", got)
		}
	})

	t.Run("listing-strips-the-prefix", func(t *testing.T) {
		got := listNames(t, n.URL+"/", tenant)
		if want := []string{"/copy", "/events", "/orders", "/tenants/b/x"}; !slices.Equal(got, want) {
			t.Errorf("the tenant's listing: %q, want %q", got, want)
		}
		if got := listNames(t, n.URL+"/?prefix=/ord", tenant); !slices.Equal(got, []string{"/orders"}) {
			t.Errorf("the tenant's listing of prefix /ord: %q, want [/orders]", got)
		}
		if got := listNames(t, n.URL+"/?start_after=/events", tenant); !slices.Equal(got, []string{"/orders", "/tenants/b/x"}) {
			t.Errorf("the tenant's listing after /events: %q", got)
		}
		all := listNames(t, n.URL+"/?prefix=/tenants/", root)
		for _, want := range []string{"/tenants/a/orders", "/tenants/a/events", "/tenants/b/x"} {
			if !slices.Contains(all, want) {
				t.Errorf("root's listing %q lacks %s", all, want)
			}
		}
	})
}

// TestAuthForkNeedsReadOnTheSource: a Durable Streams fork copies its
// source, so a token that may create streams under /m/ cannot fork one it
// may not read.
func TestAuthForkNeedsReadOnTheSource(t *testing.T) {
	n := startAuthNode(t, nodeConfig{})
	rootCreate(t, n.URL, "/secret/s", "hidden")
	rootCreate(t, n.URL, "/m/open", "visible")
	writer := bearer(issueToken(t, n.AdminURL, rootToken, "m-writer",
		scopeJSON([]string{"/m/*"}, []string{"stream.read", "stream.write"}, []string{"durable_streams"})))
	send(t, "GET", n.DS+"/secret/s?offset=-1", writer, nil).wantStatus(t, http.StatusForbidden)
	r := send(t, "PUT", n.DS+"/m/copy", withHeader(writer, "Stream-Forked-From", "/secret/s"), nil)
	wantRefusal(t, r, lnDS, http.StatusForbidden, "")
	send(t, "HEAD", n.URL+"/m/copy", bearer(rootToken), nil).wantStatus(t, http.StatusNotFound)
	send(t, "PUT", n.DS+"/m/copy", withHeader(writer, "Stream-Forked-From", "/m/open"), nil).wantStatus(t, http.StatusCreated)
	send(t, "GET", n.DS+"/m/copy?offset=-1", writer, nil).wantStatus(t, http.StatusOK).wantBody(t, "visible")
}

// withType is h with a Content-Type.
func withType(h http.Header, contentType string) http.Header {
	return withHeader(h, "Content-Type", contentType)
}

// withHeader is a copy of h with one more header.
func withHeader(h http.Header, name, value string) http.Header {
	c := h.Clone()
	c.Set(name, value)
	return c
}
