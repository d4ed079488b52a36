package adminhttp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/adapters/internal/adminwire"
	"github.com/picomq/pico/domain"
)

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// The dashboard's files are served with their types and a policy that
// allows only their own script and style; the script writes no markup, and
// every admin path and JSON field it reads exists.
func TestDashboard(t *testing.T) {
	n := &slotsNode{state: domain.NewState()}
	n.state.Apply(&domain.RegisterNode{Node: 1, Epoch: 1, Address: "http://n1", Slots: 1})
	n.state.Apply(&domain.CreateStream{By: domain.Proposer{Node: 1, Epoch: 1}, Name: "/s", Open: true})
	h := adminhttp.New(n, nil)

	files := map[string]string{}
	for path, typ := range map[string]string{"/": "text/html", "/dashboard.js": "text/javascript", "/dashboard.css": "text/css"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), typ) ||
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("GET %s: %d %q %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"))
		}
		files[path] = body
	}
	for _, ref := range []string{`src="/dashboard.js"`, `href="/dashboard.css"`} {
		if !strings.Contains(files["/"], ref) {
			t.Fatalf("the page does not load %s", ref)
		}
	}
	script := files["/dashboard.js"]
	for _, markup := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"} {
		if strings.Contains(script, markup) {
			t.Fatalf("the script writes markup (%s): data must go in as text", markup)
		}
	}

	// The paths it reads answer, and the fields it reads are in their JSON.
	if !strings.Contains(script, `"/admin/cluster"`) || !strings.Contains(script, `"/admin/streams"`) {
		t.Fatal("the script no longer reads /admin/cluster and /admin/streams: update this test")
	}
	for path, objects := range map[string][]string{"/admin/cluster": {"c"}, "/admin/streams/s": {"s"}} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(body), &fields); err != nil {
			t.Fatal(err)
		}
		for _, name := range objects {
			for _, field := range fieldsRead(script, name) {
				if _, ok := fields[field]; !ok && !omitted(field) {
					t.Errorf("the script reads %s.%s, which %s does not answer", name, field, path)
				}
			}
		}
	}
	nodeJSON, _ := json.Marshal(adminwire.Node{})
	for _, field := range fieldsRead(script, "n") {
		if !strings.Contains(string(nodeJSON), `"`+field+`"`) {
			t.Errorf("the script reads n.%s, which a node's JSON does not have", field)
		}
	}
}

// fieldsRead lists the fields the script reads of the object named name.
func fieldsRead(script, name string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`\b`+name+`\.([a-zA-Z]+)`).FindAllStringSubmatch(script, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// omitted: JSON fields the admin listener leaves out when they are zero.
func omitted(field string) bool {
	return slices.Contains([]string{"leaseEpoch", "transferTo"}, field)
}
