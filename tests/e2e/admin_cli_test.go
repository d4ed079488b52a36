package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestAdminCLI runs `pico admin` against a real node's admin listener: a
// stream's metadata, the nodes, and a node's slots set and read back.
func TestAdminCLI(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	env := []string{"PICO_ADMIN_ENDPOINT=" + n.AdminURL}
	mustCreate(t, n.URL+"/adm/s", "text/plain")
	mustAppend(t, n.URL+"/adm/s", "text/plain", []byte("a"))

	var nodes []struct {
		ID    uint32 `json:"id"`
		Slots uint32 `json:"slots"`
	}
	decode(t, runPico(t, env, "", "admin", "nodes", "--json").stdout, &nodes)
	if len(nodes) != 1 {
		t.Fatalf("nodes %+v, want one", nodes)
	}
	id := nodes[0].ID

	var st struct {
		Name        string `json:"name"`
		Owner       uint32 `json:"owner"`
		Open        bool   `json:"open"`
		ContentType string `json:"contentType"`
	}
	decode(t, runPico(t, env, "", "admin", "stream", "/adm/s", "--json").stdout, &st)
	if st.Name != "/adm/s" || st.Owner != id || !st.Open || st.ContentType != "text/plain" {
		t.Fatalf("admin stream: %+v, want /adm/s open on node %d, text/plain", st, id)
	}
	runPico(t, env, "", "admin", "stream", "/adm/none").wantFailure(t, 1, "404", "no such stream: /adm/none")

	set := runPico(t, env, "", "admin", "set-slots", strconv.Itoa(int(id)), "--slots", "4", "--json")
	var after struct {
		ID    uint32 `json:"id"`
		Slots uint32 `json:"slots"`
	}
	decode(t, set.stdout, &after)
	decode(t, runPico(t, env, "", "admin", "nodes", "--json").stdout, &nodes)
	if after.ID != id || after.Slots != 4 || nodes[0].Slots != 4 {
		t.Fatalf("after set-slots 4: %+v, nodes %+v", after, nodes)
	}
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in %q", err, s)
	}
}
