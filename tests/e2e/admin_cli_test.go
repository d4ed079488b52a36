package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestAdminCLI runs `pico admin` against a real node's admin listener: a
// stream's metadata (a name with a space, as the stream verbs spell it),
// the nodes, and a node's slots set and read back.
func TestAdminCLI(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	env := []string{"PICO_ENDPOINT=" + n.URL, "PICO_ADMIN_ENDPOINT=" + n.AdminURL}
	runPico(t, env, "", "create", "/adm/a b", "--content-type", "text/plain").want(t, 0, "")
	runPico(t, env, "a\n", "append", "/adm/a b").want(t, 0, "")

	var nodes []struct {
		ID    uint32 `json:"id"`
		Slots uint32 `json:"slots"`
	}
	adminJSON(t, env, &nodes, "nodes")
	if len(nodes) != 1 {
		t.Fatalf("nodes %+v, want one", nodes)
	}
	id := nodes[0].ID

	var st struct {
		Name         string `json:"name"`
		Owner        uint32 `json:"owner"`
		Open         bool   `json:"open"`
		ContentType  string `json:"contentType"`
		CommittedEnd uint64 `json:"committedEnd"`
	}
	adminJSON(t, env, &st, "stream", "/adm/a b")
	if st.Name != "/adm/a%20b" || st.Owner != id || !st.Open || st.ContentType != "text/plain" {
		t.Fatalf("admin stream: %+v, want /adm/a%%20b open on node %d, text/plain", st, id)
	}
	runPico(t, env, "", "admin", "stream", "/adm/none").wantFailure(t, 3, "404", "no such stream: /adm/none")

	var after struct {
		ID    uint32 `json:"id"`
		Slots uint32 `json:"slots"`
	}
	adminJSON(t, env, &after, "set-slots", strconv.Itoa(int(id)), "--slots", "4")
	adminJSON(t, env, &nodes, "nodes")
	if after.ID != id || after.Slots != 4 || nodes[0].Slots != 4 {
		t.Fatalf("after set-slots 4: %+v, nodes %+v", after, nodes)
	}
}

// adminJSON runs `pico admin ARGS --json`, which must succeed, and decodes
// its output into v.
func adminJSON(t *testing.T, env []string, v any, args ...string) {
	t.Helper()
	run := runPico(t, env, "", append(append([]string{"admin"}, args...), "--json")...)
	if run.code != 0 {
		t.Fatalf("%s: exit %d, stderr %q", run.args, run.code, run.stderr)
	}
	if err := json.Unmarshal([]byte(run.stdout), v); err != nil {
		t.Fatalf("%s: %v in %q", run.args, err, run.stdout)
	}
}
