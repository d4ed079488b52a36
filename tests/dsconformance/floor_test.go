package dsconformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/tests/floor"
)

// The floor (package floor) runs in its own process, the test binary
// started again with floorBucketEnv set, so that its CPU time is its own.
// BenchmarkVersusReference runs it beside pico: what the floor cannot
// reach, no server built on net/http and this object store can.
const floorBucketEnv = "DSBENCH_FLOOR_BUCKET"

// floorMain serves the floor when this process was started as one: it
// prints its URL and runs until its standard input closes.
func floorMain() {
	bucket := os.Getenv(floorBucketEnv)
	if bucket == "" {
		return
	}
	if err := serveFloor(bucket); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveFloor(bucket string) error {
	store, err := s3store.Open(context.Background(), bucket)
	if err != nil {
		return err
	}
	log := wal.Open(wal.Config{Store: store, Node: 1, Epoch: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("floor on http://%s\n", ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	return http.Serve(ln, floor.Handler(log))
}

var floorLine = regexp.MustCompile(`^floor on (http://\S+)`)

// startFloor starts a floor storing in bucket, with env added to this
// process's environment.
func startFloor(b *testing.B, bucket string, env ...string) target {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), floorBucketEnv+"="+bucket), env...)
	return target{name: "floor", url: startServer(b, cmd, floorLine), pid: cmd.Process.Pid, usesStore: true}
}
