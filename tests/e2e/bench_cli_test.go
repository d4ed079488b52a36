package e2e

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchSummary is the part of pico bench --json that the test checks.
type benchSummary struct {
	Appends   int64              `json:"appends"`
	Records   int64              `json:"records"`
	LatencyMs map[string]float64 `json:"latency_ms"`
	Streams   []string           `json:"streams"`
	InFlight  int                `json:"in_flight"`
	Warmup    int64              `json:"warmup_appends"`
	Verified  int64              `json:"records_verified"`
	CatchUp   int                `json:"catchup_readers"`
	CatchUpMB float64            `json:"catchup_mib_per_sec"`
	Cost      *struct {
		Puts    float64 `json:"puts"`
		WALPuts float64 `json:"wal_puts"`
	} `json:"cost"`
}

// TestCLIBench: pico bench appends through either protocol, reports what it
// appended (every record it counts is in a stream, none more), and deletes
// its streams unless told to keep them; its catch-up readers replay the
// streams meanwhile.
func TestCLIBench(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		batch    string
		next     func(r reply) int64 // records in a stream, from its HEAD
	}{
		{"pico", "3", func(r reply) int64 { n, _ := strconv.ParseInt(r.header.Get("Pico-Next-Seq"), 10, 64); return n }},
		{"ds", "4", func(r reply) int64 {
			off := r.header.Get("Stream-Next-Offset")
			n, _ := strconv.ParseInt(off[strings.IndexByte(off, '_')+1:], 10, 64)
			return n
		}},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--protocol", tc.protocol}})
			env := append(clientEnv(t, n.URL), "PICO_PROTOCOL="+tc.protocol)
			run := runPico(t, env, "", "bench", "-d", "1", "--warmup", "200ms", "-w", "4", "-b", tc.batch, "--streams", "3",
				"--connections", "2", "--record-size", "200", "--keep", "--json", "--metrics", n.AdminURL+"/metrics", "--readers", "1",
				"--catchup-readers", "2")
			if run.code != 0 {
				t.Fatalf("%s: exit %d\nstderr: %s", run.args, run.code, run.stderr)
			}
			var got benchSummary
			if err := json.Unmarshal([]byte(run.stdout), &got); err != nil {
				t.Fatalf("%s: summary %q: %v", run.args, run.stdout, err)
			}
			batch, _ := strconv.ParseInt(tc.batch, 10, 64)
			if got.Appends == 0 || got.Records != got.Appends*batch || got.LatencyMs["p50"] <= 0 || len(got.Streams) != 3 ||
				got.InFlight != 4 || got.Cost == nil || got.Cost.WALPuts == 0 || got.Cost.Puts < got.Cost.WALPuts {
				t.Fatalf("%s: summary %+v", run.args, got)
			}
			if got.CatchUp != 2 || got.CatchUpMB <= 0 {
				t.Fatalf("%s: %d catch-up readers read %.2f MiB/s", run.args, got.CatchUp, got.CatchUpMB)
			}
			var stored int64
			for _, name := range got.Streams {
				stored += tc.next(send(t, "HEAD", n.URL+name, nil, nil).wantStatus(t, 200))
			}
			if stored != got.Records+got.Warmup*batch || got.Verified != stored {
				t.Fatalf("the kept streams hold %d records; bench counted %d and %d appends of the warmup, its reader checked %d",
					stored, got.Records, got.Warmup, got.Verified)
			}
			run = runPico(t, env, "", "bench", "-d", "300ms", "-w", "2", "--streams", "2", "--json")
			var unkept benchSummary
			if err := json.Unmarshal([]byte(run.stdout), &unkept); run.code != 0 || err != nil || unkept.Appends == 0 || len(unkept.Streams) != 0 {
				t.Fatalf("%s: exit %d, summary %q (%v)\nstderr: %s", run.args, run.code, run.stdout, err, run.stderr)
			}
			if tc.protocol == "pico" { // listing is Pico's: only the kept streams are left
				if ls := runPico(t, env, "", "ls", "--prefix", "/bench/"); strings.Count(ls.stdout, "/bench/") != 3 {
					t.Fatalf("streams under /bench/ after a run without --keep:\n%s", ls.stdout)
				}
			}
		})
	}
}

// TestCLIBenchProducer: pico bench --producer appends through the Go
// client's Producer, and every record it counts is in a stream once.
func TestCLIBenchProducer(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	env := clientEnv(t, n.URL)
	run := runPico(t, env, "", "bench", "--producer", "-d", "1s", "-w", "2", "-b", "50", "--streams", "2",
		"--record-size", "100", "--keep", "--json")
	if run.code != 0 {
		t.Fatalf("%s: exit %d\nstderr: %s", run.args, run.code, run.stderr)
	}
	var got benchSummary
	if err := json.Unmarshal([]byte(run.stdout), &got); err != nil {
		t.Fatalf("%s: summary %q: %v", run.args, run.stdout, err)
	}
	if got.Records == 0 || got.Records != got.Appends || got.LatencyMs["p50"] <= 0 || len(got.Streams) != 2 {
		t.Fatalf("%s: summary %+v", run.args, got)
	}
	var stored int64
	for _, name := range got.Streams {
		n, _ := strconv.ParseInt(send(t, "HEAD", n.URL+name, nil, nil).wantStatus(t, 200).header.Get("Pico-Next-Seq"), 10, 64)
		stored += n
	}
	if stored != got.Records {
		t.Fatalf("the kept streams hold %d records; bench counted %d acknowledged", stored, got.Records)
	}
	t.Logf("%d records in 1 s through two producers", got.Records)
	if ds := runPico(t, append(env, "PICO_PROTOCOL=ds"), "", "bench", "--producer", "-d", "1s"); ds.code != 2 || !strings.Contains(ds.stderr, "--producer needs --protocol pico") {
		t.Fatalf("bench --producer --protocol ds: exit %d, stderr %q", ds.code, ds.stderr)
	}
}

// TestCLIBenchRateAndSeries: with --rate the run offers that many records a
// second and no more, and --output and --plot write the run second by
// second.
func TestCLIBenchRateAndSeries(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir()})
	dir := t.TempDir()
	csvPath, svgPath := filepath.Join(dir, "run.csv"), filepath.Join(dir, "run.svg")
	run := runPico(t, clientEnv(t, n.URL), "", "bench", "-d", "2", "--rate", "200", "-b", "2", "-w", "4",
		"--output", csvPath, "--plot", svgPath, "--json")
	if run.code != 0 {
		t.Fatalf("%s: exit %d\nstderr: %s", run.args, run.code, run.stderr)
	}
	var got struct {
		Records int64   `json:"records"`
		Offered float64 `json:"offered_records_per_sec"`
	}
	if err := json.Unmarshal([]byte(run.stdout), &got); err != nil || got.Offered != 200 {
		t.Fatalf("%s: summary %q: %v", run.args, run.stdout, err)
	}
	if got.Records > 400 || got.Records < 200 {
		t.Fatalf("%d records in 2 s at 200 a second offered, want at most 400 and most of them", got.Records)
	}
	rows, err := csv.NewReader(bytes.NewReader(readFile(t, csvPath))).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "second" || rows[0][2] != "records_per_sec" {
		t.Fatalf("CSV %q: %v", rows, err)
	}
	if rate, _ := strconv.ParseFloat(rows[1][2], 64); rate > 260 {
		t.Fatalf("the first second ran at %v records/s, offered 200", rate)
	}
	if svg := string(readFile(t, svgPath)); !strings.Contains(svg, "<svg") {
		t.Fatalf("--plot wrote %.100q", svg)
	}
	if !strings.Contains(run.stderr, "in flight, p50 ") {
		t.Fatalf("no progress line with the appends in flight and the latency:\n%s", run.stderr)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
