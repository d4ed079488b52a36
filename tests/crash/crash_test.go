package crash

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCrashRecovery SIGKILLs an appending child process 20 times at random
// moments. After every restart, every acknowledged record must be readable
// exactly once at the offset it was acknowledged with, in each writer's
// order; records never acknowledged may be missing but never damaged or
// duplicated.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 20 processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	acked := map[string]ack{}
	const rounds = 20
	for round := range rounds {
		got := runAndKill(t, dir, round, time.Duration(50+rng.IntN(400))*time.Millisecond)
		if len(got) == 0 {
			t.Fatalf("round %d acknowledged nothing", round)
		}
		for k, v := range got {
			acked[k] = v
		}
	}
	verify(t, dump(t, dir), acked)
	t.Logf("%d rounds, %d acknowledged appends verified", rounds, len(acked))
}

type ack struct {
	count int
	first uint64
}

func child(dir, mode string, round int, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), envDir+"="+dir, envMode+"="+mode, envRound+"="+strconv.Itoa(round))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = io.Discard
	return cmd
}

// runAndKill starts a writer, lets it acknowledge for a while after its
// first acknowledgement, kills it, and returns the complete ACK lines.
func runAndKill(t *testing.T, dir string, round int, after time.Duration) map[string]ack {
	cmd := child(dir, "write", round)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acks := map[string]ack{}
	first := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var key string
			var a ack
			if n, _ := fmt.Sscanf(sc.Text(), "ACK %s %d %d", &key, &a.count, &a.first); n == 3 {
				acks[key] = a
				once.Do(func() { close(first) })
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("round %d: no acknowledgement within 60 s", round)
	}
	time.Sleep(after)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	cmd.Wait()
	return acks
}

func dump(t *testing.T, dir string, env ...string) []string {
	out, err := child(dir, "dump", -1, env...).Output()
	if err != nil {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	var recs []string
	for _, line := range strings.Split(string(out), "\n") {
		if line == "END" {
			return recs
		}
		if strings.HasPrefix(line, "REC ") {
			recs = append(recs, line)
		}
	}
	t.Fatalf("dump did not finish after %d records", len(recs))
	return nil
}

func verify(t *testing.T, lines []string, acked map[string]ack) {
	at := map[string]uint64{} // body -> offset
	lastOff := map[string]uint64{}
	for i, line := range lines {
		var off uint64
		var body string
		if n, _ := fmt.Sscanf(line, "REC %d %s", &off, &body); n != 2 || off != uint64(i) {
			t.Fatalf("line %d is damaged or out of place: %q", i, line)
		}
		if _, dup := at[body]; dup {
			t.Fatalf("record %s stored twice", body)
		}
		at[body] = off
		parts := strings.Split(body, "-")
		if len(parts) != 4 {
			t.Fatalf("damaged record %q", body)
		}
		writer := parts[0] + "-" + parts[1]
		if prev, seen := lastOff[writer]; seen && off < prev {
			t.Fatalf("writer %s out of order at %d", writer, off)
		}
		lastOff[writer] = off
	}
	for key, a := range acked {
		for k := range a.count {
			body := fmt.Sprintf("%s-%d", key, k)
			off, ok := at[body]
			if !ok {
				t.Fatalf("acknowledged record %s is missing", body)
			}
			if off != a.first+uint64(k) {
				t.Fatalf("record %s at %d, acknowledged at %d", body, off, a.first+uint64(k))
			}
		}
	}
}
