// Package crash kills a real process appending to a stream, many times, and
// checks that every acknowledged record survives exactly once, in order.
package crash

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/filestore"
	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Environment of a child process.
const (
	envDir   = "PICO_CRASH_DIR"
	envMode  = "PICO_CRASH_MODE" // "write" or "dump"
	envRound = "PICO_CRASH_ROUND"
	envNode  = "PICO_CRASH_NODE" // node id, default 1
	envMeta  = "PICO_CRASH_META" // metadata URL, default SQLite in the directory
)

const (
	streamName = "/crash"
	writers    = 16
)

// TestChild is the body of a child process; as an ordinary test it skips.
func TestChild(t *testing.T) {
	dir := os.Getenv(envDir)
	if dir == "" {
		t.Skip("only runs as a child of TestCrashRecovery")
	}
	ctx := context.Background()
	metaURL := os.Getenv(envMeta)
	if metaURL == "" {
		metaURL = "sqlite:" + filepath.Join(dir, "meta.db")
	}
	log, err := sqllog.Open(ctx, metaURL)
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	nodeID, _ := strconv.Atoi(os.Getenv(envNode))
	n, err := node.Start(ctx, node.Config{ID: domain.NodeID(max(nodeID, 1)), Address: "x", Slots: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	w := wal.Open(wal.Config{Store: store, Node: n.Proposer().Node, Epoch: n.Epoch()})
	eng := engine.New(engine.Config{Plane: n.Plane(), By: n.Proposer(), Store: store, WAL: w})
	h := openStream(t, n, eng)
	switch os.Getenv(envMode) {
	case "dump":
		dumpRecords(t, h, bufio.NewWriter(os.Stdout))
	case "takeover":
		appendN(t, h, os.Getenv(envRound), 200)
	default:
		go uploadEvery(eng, 50*time.Millisecond)
		write(t, h, os.Getenv(envRound))
	}
}

// uploadEvery moves records to data objects while writers run, so crashes
// land before, during and after uploads and WAL deletions.
func uploadEvery(eng *engine.Engine, every time.Duration) {
	for range time.Tick(every) {
		eng.Upload(context.Background())
	}
}

// appendN appends n single records from one writer, printing ACK lines.
func appendN(t *testing.T, h engine.Handle, round string, n int) {
	for i := range n {
		body := fmt.Sprintf("%s-0-%d-0", round, i)
		r, err := h.Append(context.Background(), ports.AppendRequest{Records: []domain.Record{{Body: []byte(body)}}})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		os.Stdout.WriteString(fmt.Sprintf("ACK %s-0-%d 1 %d\n", round, i, r.First))
	}
}

func openStream(t *testing.T, n *node.Node, eng *engine.Engine) engine.Handle {
	ctx := context.Background()
	v := n.View()
	if st, ok := v.StreamByName(streamName); ok {
		if owner, alive := v.Node(st.Owner); v.IsOpen(st) && alive && owner.ID != n.Proposer().Node {
			// Open on another process (perhaps paused): retire it, as a
			// failure detector would.
			r, err := n.Plane().ProposeOne(ctx, &domain.FenceNode{By: n.Proposer(), Node: owner.ID, Epoch: owner.Epoch})
			if err != nil || !r.OK() {
				t.Fatalf("fence node %d: %v %v", owner.ID, r, err)
			}
		}
		h, err := eng.Open(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	r, err := n.Plane().ProposeOne(ctx, &domain.CreateStream{By: n.Proposer(), Name: streamName, Open: true})
	if err != nil || r.Code != domain.ResultOK {
		t.Fatalf("create: %v %v", r, err)
	}
	h, err := eng.Open(ctx, r.Value)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// write appends forever from several writers, printing one ACK line per
// acknowledged append (written with a single unbuffered write).
func write(t *testing.T, h engine.Handle, round string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				count := 1 + n%3
				recs := make([]domain.Record, count)
				for k := range recs {
					recs[k] = domain.Record{Body: []byte(fmt.Sprintf("%s-%d-%d-%d", round, w, n, k))}
				}
				r, err := h.Append(context.Background(), ports.AppendRequest{Records: recs})
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				line := fmt.Sprintf("ACK %s-%d-%d %d %d\n", round, w, n, count, r.First)
				mu.Lock()
				os.Stdout.WriteString(line)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func dumpRecords(t *testing.T, h engine.Handle, out *bufio.Writer) {
	defer out.Flush()
	for off := uint64(0); ; {
		r, err := h.Read(context.Background(), off, 1000)
		recs := r.Records
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			fmt.Fprintf(out, "REC %d %s\n", off, r.Body)
			off++
		}
	}
	fmt.Fprintln(out, "END")
}
