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
	"sync/atomic"
	"testing"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
)

// The floor is the least an append server on net/http can do and still
// acknowledge an append only once it is durable in the object store: read
// the body, hand it to pico's WAL (the same group commit, linger and S3
// adapter), wait, answer 204. It keeps no streams, offsets, metadata or
// data objects and speaks no protocol beyond that. BenchmarkVersusReference
// runs it beside pico so that its figures tell pico's own costs from those
// of net/http, the S3 server and the machine: what the floor cannot reach,
// no server built this way can.
//
// It runs in its own process, the test binary started again with
// floorBucketEnv set, so that its CPU time is its own.
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
	wal := engine.OpenWAL(engine.WALConfig{Store: store, Node: 1, Epoch: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("floor on http://%s\n", ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	var offset atomic.Uint64
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodPut { // create: nothing to keep
			w.WriteHeader(http.StatusCreated)
			return
		}
		f := &domain.Frame{Stream: 1, Epoch: 1, Offset: offset.Add(1), Records: []domain.Record{{Body: body}}}
		done := make(chan error, 1)
		err = wal.Submit(f, func(err error) { done <- err })
		if err == nil {
			err = <-done // the durability point: the bulk holding f is stored
		}
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
}

var floorLine = regexp.MustCompile(`^floor on (http://\S+)`)

// startFloor starts a floor storing in bucket.
func startFloor(b *testing.B, bucket string) target {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floorBucketEnv+"="+bucket)
	return target{name: "floor", url: startServer(b, cmd, floorLine), pid: cmd.Process.Pid}
}
