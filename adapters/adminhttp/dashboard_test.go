package adminhttp_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
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
// every admin request it makes has a route, and every JSON field it reads
// exists.
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

	// The admin requests the script makes (literal: how it names the path),
	// and no other admin path is in it.
	requests := []struct{ method, path, literal string }{
		{http.MethodGet, "/admin/cluster", `"/admin/cluster"`},
		{http.MethodGet, "/admin/streams/s", `"/admin/streams"`},
		{http.MethodGet, "/admin/tokens", `"/admin/tokens"`},
		{http.MethodPost, "/admin/tokens", `"/admin/tokens"`},
		{http.MethodDelete, "/admin/tokens/t1", `"/admin/tokens/" + encodeURIComponent(`},
	}
	for _, r := range requests {
		if !strings.Contains(script, r.literal) || r.method != http.MethodGet && !strings.Contains(script, `method: "`+r.method+`"`) {
			t.Errorf("the script no longer sends %s %s as %s: update this test", r.method, r.path, r.literal)
		}
	}
	for _, lit := range regexp.MustCompile(`"/admin/[^"]*"`).FindAllString(script, -1) {
		if !slices.ContainsFunc(requests, func(r struct{ method, path, literal string }) bool { return strings.HasPrefix(r.literal, lit) }) {
			t.Errorf("the script uses %s, which this test does not check: add it to requests", lit)
		}
	}
	t.Run("routes", func(t *testing.T) {
		e := adminhttp.NewEcho(n, nil)
		for _, r := range requests {
			if !routed(e.Routes(), r.method, r.path) {
				t.Errorf("the script sends %s %s, which no admin route answers", r.method, r.path)
			}
		}
	})

	// The fields it reads are in the JSON the listener answers.
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
	// And in the admin JSON of a node, a token record (tok), its scope (with
	// matchers m and groups rw), a token list and an issued token.
	scope := domain.RootScope()
	scope.Streams = domain.Matchers{{Value: "/a"}, {Value: "/b/", Prefix: true}}
	scope.Expires, scope.ExpiresAtMs = true, 1
	scopeJSON, err := json.Marshal(scope)
	if err != nil {
		t.Fatal(err)
	}
	record := adminwire.Token{ID: "t", Scope: scopeJSON, Issuer: "root", CreatedAtMs: 1}
	scopeFields := keys(t, scope)
	matcherFields := map[string]any{}
	for _, m := range scopeFields["streams"].([]any) {
		maps.Copy(matcherFields, m.(map[string]any))
	}
	objects := map[string]map[string]any{
		"n":      keys(t, adminwire.Node{State: "alive", HeartbeatAgeMs: new(int64)}),
		"tok":    keys(t, record),
		"list":   keys(t, adminwire.Tokens{}),
		"issued": keys(t, adminwire.IssuedToken{Token: record, Wire: "w"}),
		"scope":  scopeFields,
		"m":      matcherFields,
		"rw":     scopeFields["groups"].(map[string]any)["stream"].(map[string]any),
	}
	for name, fields := range objects {
		for _, field := range fieldsRead(script, name) {
			if _, ok := fields[field]; !ok {
				t.Errorf("the script reads %s.%s, which its JSON does not have", name, field)
			}
		}
	}
}

// The script sends every request through one fetch, which carries the
// token stored in the session, and asks for a token on a 401.
func TestDashboardAuth(t *testing.T) {
	_, script := get(t, adminhttp.New(&slotsNode{state: domain.NewState()}, nil), "/dashboard.js")
	for _, want := range []string{
		`sessionStorage.getItem(tokenKey)`,
		`headers.set("Authorization", "Bearer " + token)`,
		`fetch(path, { ...options, headers,`,
		`resp.status === 401`,
		`input.type = "password"`,
		`sessionStorage.removeItem(tokenKey)`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %s", want)
		}
	}
	if c := strings.Count(script, "fetch("); c != 1 {
		t.Errorf("the script calls fetch %d times: every request must go through the one that sends the token", c)
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

// keys is the JSON object v marshals to.
func keys(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

// routed reports whether one of routes answers method and path (":name"
// matches a segment, "*" the rest).
func routed(routes []*echo.Route, method, path string) bool {
	for _, r := range routes {
		pattern := strings.ReplaceAll(regexp.QuoteMeta(r.Path), `\*`, `.*`)
		pattern = regexp.MustCompile(`:[^/]+`).ReplaceAllString(pattern, `[^/]+`)
		if r.Method == method && regexp.MustCompile(`^`+pattern+`$`).MatchString(path) {
			return true
		}
	}
	return false
}

// omitted: JSON fields the admin listener leaves out when they are zero.
func omitted(field string) bool {
	return slices.Contains([]string{"leaseEpoch", "transferTo"}, field)
}
