package metaplane

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/pgtest"
)

// Environment of a child process started by TestTwoProcessesConverge.
const (
	envChildURL  = "PICO_TEST_CHILD_URL"
	envChildNode = "PICO_TEST_CHILD_NODE"
)

// TestTwoProcessesConverge runs two OS processes that propose concurrently to
// one Postgres database; both must end with byte-identical states, equal to
// a third, fresh replica's.
func TestTwoProcessesConverge(t *testing.T) {
	url := pgtest.URL(t)
	openLog(t, url) // create the schema once, before the children race
	var wg sync.WaitGroup
	hashes := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hashes[i] = runChild(t, url, i+1)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("processes diverged:\n%s\n%s", hashes[0], hashes[1])
	}
	p := openPlane(t, openLog(t, url), meta.Config{})
	v := p.View()
	if got := fmt.Sprintf("%d %x", v.Index, v.Hash()); got != hashes[0] {
		t.Fatalf("fresh replica %s, processes %s", got, hashes[0])
	}
	count := 0
	v.KVFrom(domain.SpaceRegistry, "", func(string, domain.KVEntry) bool { count++; return true })
	if want := 2*childWriters*childPuts + 2; count != want {
		t.Fatalf("%d keys, want %d", count, want)
	}
}

func runChild(t *testing.T, url string, node int) string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProposer$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChildURL+"="+url, envChildNode+"="+strconv.Itoa(node))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("child %d: %v\n%s\n%s", node, err, out, stderr.String())
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), "STATE "); ok {
			return h
		}
	}
	t.Errorf("child %d printed no state:\n%s", node, out)
	return ""
}

const (
	childWriters = 16
	childPuts    = 40
)

// TestChildProposer is the body of a child process; it does nothing when run
// as an ordinary test.
func TestChildProposer(t *testing.T) {
	url := os.Getenv(envChildURL)
	if url == "" {
		t.Skip("only runs as a child of TestTwoProcessesConverge")
	}
	node, _ := strconv.Atoi(os.Getenv(envChildNode))
	p := openPlane(t, openLog(t, url), meta.Config{SnapshotEvery: 64})
	by := register(t, p, domain.NodeID(node), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range childWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range childPuts {
				key := fmt.Sprintf("n%d/w%02d/%03d", node, w, i)
				r, err := p.ProposeOne(ctx, &domain.PutKV{By: by, Space: domain.SpaceRegistry, Key: key, Value: []byte(key)})
				if err != nil || r.Code != domain.ResultOK {
					t.Errorf("put %s: %v %v", key, r, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	done := fmt.Sprintf("done/%d", node)
	if _, err := p.ProposeOne(ctx, &domain.PutKV{By: by, Space: domain.SpaceRegistry, Key: done, Value: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	// Wait for the other process's last write, then report the state at the
	// log's final index, which no one appends past.
	for {
		v := p.View()
		_, a := v.KV(domain.SpaceRegistry, "done/1")
		_, b := v.KV(domain.SpaceRegistry, "done/2")
		if a && b {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the other process never finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	log := openLog(t, url)
	last, err := log.LastIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(ctx, last); err != nil {
		t.Fatal(err)
	}
	v := p.View()
	if err := v.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("STATE %d %s\n", v.Index, hex.EncodeToString(hashOf(v)))
}

func hashOf(v domain.State) []byte { h := v.Hash(); return h[:] }
