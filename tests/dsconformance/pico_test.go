package dsconformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/picomq/pico/tests/pgtest"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3test"
)

func TestMain(m *testing.M) {
	floorMain() // returns unless this process is a benchmark's floor server
	code := m.Run()
	picoproc.RemoveBinary()
	os.Exit(code)
}

// storageSetup is one metadata log and object store pair to serve from.
type storageSetup struct {
	name string
	// open returns the --meta-url and --storage values; it skips the test
	// when the servers it needs are not configured (pgtest, s3test).
	open func(t testing.TB) (metaURL, storage string)
}

var storageSetups = []storageSetup{
	{"SQLite+file", func(t testing.TB) (string, string) {
		dir := t.TempDir()
		return "sqlite:" + filepath.Join(dir, "meta.db"), "-2@file://" + filepath.Join(dir, "objects")
	}},
	{"Postgres+versitygw", func(t testing.TB) (string, string) {
		return pgtest.URL(t), "-2@" + s3test.URL(t)
	}},
}

// startPico serves the Durable Streams protocol on the main listener and
// returns once the node is ready. The long-poll timeout is the suite's
// (§3: two tests block for it under a 5 s test timeout); SSE responses are
// cut short so no reader lingers after a test; the suite's webhook
// receivers listen on 127.0.0.1.
func startPico(t testing.TB, metaURL, storage string) *picoproc.Process {
	t.Helper()
	return startPicoIn(t, picoproc.Env(), metaURL, storage)
}

// startPicoIn is startPico in the environment env.
func startPicoIn(t testing.TB, env []string, metaURL, storage string, extra ...string) *picoproc.Process {
	t.Helper()
	args := []string{"--protocol", "ds",
		"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--long-poll-timeout-sec", "0.5", "--sse-max-duration-sec", "10", "--webhook-allow-loopback",
		"--meta-url", metaURL, "--storage", storage}
	return picoproc.ServeIn(t, env, append(args, extra...)...)
}
