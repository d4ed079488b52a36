package e2e

import (
	"testing"
)

// TestDSCLI drives a node's Durable Streams listener with the client's
// --protocol ds: text streams read back as their bytes run together, JSON
// streams one message a line.
func TestDSCLI(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--ds-listen", "127.0.0.1:0"}})
	m := dsLine.FindStringSubmatch(n.Stdout.String())
	if m == nil {
		t.Fatalf("no ds listener in the banner:\n%s", n.Stdout)
	}
	ds := m[1]
	env := append(clientEnv(t, ds), "PICO_PROTOCOL=ds")
	pico := func(stdin string, args ...string) cliRun {
		t.Helper()
		return runPico(t, env, stdin, append([]string{"--protocol", "ds"}, args...)...)
	}
	const q, j = "/v1/stream/q", "/v1/stream/j"

	t.Run("text", func(t *testing.T) {
		pico("", "create", q, "--content-type", "text/plain").want(t, 0, "").wantStderr(t, "created=true next="+dsOffset(0))
		pico("", "create", q, "--content-type", "text/plain").want(t, 0, "").wantStderr(t, "created=false")
		pico("", "create", q, "--content-type", "application/json").wantFailure(t, 4, "409")
		pico("a\nb\n", "append", q).want(t, 0, "").wantStderr(t, "next="+dsOffset(1), "next="+dsOffset(2))
		pico("c\nd\n", "append", q, "--batch", "2").wantFailure(t, 1, "Durable Streams appends one body per request: use --batch 1")
		pico("", "read", q).want(t, 0, "ab").wantNoStderr(t)
		pico("", "read", q, "--from", dsOffset(1)).want(t, 0, "b")
		pico("", "tail", q).want(t, 0, "ab")
		pico("", "head", q).want(t, 0, "next="+dsOffset(2)+" closed=false type=text/plain\n")
		pico("", "close", q).want(t, 0, "").wantStderr(t, "closed next="+dsOffset(2))
		pico("", "head", q).want(t, 0, "next="+dsOffset(2)+" closed=true type=text/plain\n")
		pico("e\n", "append", q).wantFailure(t, 4, "409")
		pico("", "tail", q, "-f").want(t, 0, "ab")
		pico("", "delete", q).want(t, 0, "").wantStderr(t, "deleted=true")
		pico("", "head", q).wantFailure(t, 3, "not found: "+q)
		pico("", "read", q).wantFailure(t, 3, "not found: "+q)
		pico("", "delete", q).wantFailure(t, 3, "not found: "+q)
	})
	t.Run("json", func(t *testing.T) {
		pico("", "create", j, "--content-type", "application/json", "--ttl", "3600").want(t, 0, "")
		pico("{\"a\":1}\n[1, 2]\n\"x\"\n", "append", j, "--batch", "2").want(t, 0, "").
			wantStderr(t, "next="+dsOffset(2), "next="+dsOffset(3))
		// The server stores JSON messages compacted.
		pico("", "read", j).want(t, 0, "{\"a\":1}\n[1,2]\n\"x\"\n")
		pico("", "read", j, "--count", "1").want(t, 0, "{\"a\":1}\n")
		pico("", "tail", j, "-n", "2").want(t, 0, "[1,2]\n\"x\"\n")
		pico("", "head", j).want(t, 0, "next="+dsOffset(3)+" closed=false type=application/json ttl=3600\n")
		pico("not json\n", "append", j).wantFailure(t, 1, "not valid JSON")

		follower := startFollower(t, env, j)
		follower.wantLines(t, "{\"a\":1}\n[1,2]\n\"x\"\n")
		pico("4\n", "append", j).want(t, 0, "")
		follower.wantLines(t, "4\n")
		pico("", "close", j).want(t, 0, "")
		follower.wantExit(t, 0)
	})
	t.Run("pico-only-verbs", func(t *testing.T) {
		pico("", "ls").wantFailure(t, 1, "ls is Pico-only")
		pico("", "trim", j, "--seq", "1").wantFailure(t, 1, "trim is Pico-only")
	})
}
