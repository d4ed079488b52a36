package dsconformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3test"
)

// BenchmarkVersusReference measures, side by side in one run, 1 KiB appends
// over the Durable Streams protocol to pico (on versitygw) and to the Node
// reference server (its file store, which fsyncs every append), for 1 and
// 64 concurrent appenders, each on its own stream: appends/s, per-request
// p50/p99, the server process's CPU time per append, the ratio of the
// throughputs and, for pico, appends per WAL PUT and a WAL PUT's mean
// latency; for pico and the floor also the object store's CPU time per
// append, when the test script started it (PICOMQ_S3_PID). An op is a
// millisecond of load on each server (-benchtime 5000x: 5 s each, in five
// turns taken in rotation). All servers are driven by the
// same Go loop, so the client costs the same on every side; it uses
// fasthttp, whose client needs about half the CPU of net/http's (reported
// as client-cpu-µs/append), leaving more of the machine to the servers.
//
// Between the two it runs the floor (floor_test.go): net/http and pico's
// WAL on the same versitygw, with no protocol, streams or metadata.
// x-floor-appends/s is pico's share of what that can do on this machine,
// and floor-x-ref-appends/s the floor's multiple of the reference: the
// most that any server built on net/http and this object store could show
// against it here, in this run.
//
// With one appender it also alternates, for as long again, lone appends with
// raw 1 KiB PUTs to the same bucket, one of each in turn, so both see the
// same background load: a lone append should cost about one PUT.
//
// pico and the floor run with the Go processors serverProcs gives them, one
// by default (see serverProcs).
func BenchmarkVersusReference(b *testing.B) {
	requireNode(b)
	bucket := s3test.URL(b)
	procs := serverProcs(b)
	picoProc := startPicoIn(b, picoproc.Env(procs...), "sqlite:"+filepath.Join(b.TempDir(), "meta.db"), "-2@"+bucket)
	pico := target{name: "pico", url: picoProc.URL, pid: picoProc.Cmd.Process.Pid, proc: picoProc, usesStore: true}
	floor := startFloor(b, s3test.URL(b), procs...)
	refProc := startRefServer(b)
	ref := target{name: "ref", url: refProc.url, pid: refProc.pid}
	store, err := s3store.Open(context.Background(), bucket)
	if err != nil {
		b.Fatal(err)
	}
	for _, appenders := range []int{1, 64} {
		b.Run(fmt.Sprintf("appenders=%d", appenders), func(b *testing.B) {
			// Each server gets the same share of the machine's time:
			// spanSlices slices each, in turn, with a pause after each
			// slice so that no server works in another's (uploads,
			// flushes). Taking turns, they all see the machine in the
			// same states, however its other tenants load it.
			span := time.Duration(b.N) * time.Millisecond
			runs := []*loadRun{pico.prepare(b, appenders), floor.prepare(b, appenders), ref.prepare(b, appenders)}
			for range spanSlices {
				for _, r := range runs {
					r.run(b, span/spanSlices)
					settle(b)
				}
			}
			ours, least, theirs := runs[0].result(), runs[1].result(), runs[2].result()
			b.ReportMetric(0, "ns/op") // an op is an append on each server: not a useful figure
			ours.report(b, pico.name)
			least.report(b, floor.name)
			theirs.report(b, ref.name)
			b.ReportMetric(ours.perSec/theirs.perSec, "x-ref-appends/s")
			b.ReportMetric(ours.perSec/least.perSec, "x-floor-appends/s")
			// Whether any server built this way could reach a given
			// multiple of the reference on this machine, in this run.
			b.ReportMetric(least.perSec/theirs.perSec, "floor-x-ref-appends/s")
			if appenders == 1 {
				appendP50, putP50 := pico.alternate(b, store, span)
				b.ReportMetric(float64(appendP50.Microseconds()), "alternating-append-p50-µs")
				b.ReportMetric(float64(putP50.Microseconds()), "alternating-raw-put-p50-µs")
				b.ReportMetric(float64(appendP50)/float64(putP50), "x-raw-put-p50")
			}
		})
	}
}

// serverProcsEnv sets the Go processors (GOMAXPROCS) of pico and the floor
// in BenchmarkVersusReference: a number, or 0 for the Go runtime's default
// (one per CPU). It is 1 when unset.
//
// On a machine of two CPUs, the servers share them with the object store
// and the load generator (and the Node reference server runs its
// JavaScript on one thread). Given both, a Go server wakes its second
// thread to look for work whenever one goroutine wakes another, several
// times per request: at two, strace counted about 4 futex and 2-3
// nanosleep calls per lone append beyond its reads and writes, which on
// two CPUs compete with the object store's PUT that the append waits for.
// Measured on a journaled ext4 (tests/journaled-fs.sh), three rounds
// each, one run after the other: a lone append took 1.31-1.34 raw PUTs at
// the default and 1.20-1.21 at one; 64 appenders made 13,900-16,600
// appends/s at the default and 13,500-16,500 at one (20-25x and 20-23x
// the reference). GOMAXPROCS=1 is what a deployment on such a machine
// would set (README).
const serverProcsEnv = "PICOMQ_BENCH_SERVER_PROCS"

// serverProcs is the environment that gives a server the Go processors
// serverProcsEnv asks for: nothing for the runtime's default.
func serverProcs(b *testing.B) []string {
	v := os.Getenv(serverProcsEnv)
	if v == "" {
		v = "1"
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a number of processors, or 0 for the Go runtime's default", serverProcsEnv, v)
	}
	b.Logf("pico and the floor run with GOMAXPROCS=%s (0: the runtime's default; set %s to change it)", v, serverProcsEnv)
	if n == 0 {
		return nil
	}
	return []string{"GOMAXPROCS=" + v}
}

// alternate makes lone appends to one stream of t and raw PUTs of the same
// size to store, one of each in turn, for span, and returns both p50s.
func (t target) alternate(b *testing.B, store ports.ObjectStore, span time.Duration) (appendP50, putP50 time.Duration) {
	b.StopTimer()
	defer b.StartTimer()
	client := t.client(1)
	defer client.CloseIdleConnections()
	run := benchRun.Add(1)
	stream := fmt.Sprintf("%s/v1/stream/bench/alternate-%d-%d", t.url, time.Now().UnixNano(), run)
	if status, err := t.send(client, http.MethodPut, stream, nil); err != nil || status != http.StatusCreated {
		b.Fatalf("%s: create %s: status %d, %v", t.name, stream, status, err)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	var appends, puts []time.Duration
	for start, i := time.Now(), 0; time.Since(start) < span; i++ {
		t0 := time.Now()
		if err := t.appendOnce(client, stream, body); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := store.Put(context.Background(), fmt.Sprintf("raw/%d/%d", run, i), body); err != nil {
			b.Fatal(err)
		}
		appends, puts = append(appends, t1.Sub(t0)), append(puts, time.Since(t1))
	}
	slices.Sort(appends)
	slices.Sort(puts)
	return appends[len(appends)/2], puts[len(puts)/2]
}

// target is one server under load.
type target struct {
	name string
	url  string            // DS base URL
	pid  int               // its process, whose CPU time is measured
	proc *picoproc.Process // pico's, whose WAL counters are read; nil for the reference
	// usesStore: it writes to the test object store, whose CPU time is
	// then measured too, if the test script says which process it is.
	usesStore bool
	token     string // a bearer token sent with every request, if any
}

// storePID is the object store's process, as the test script exports it
// (PICOMQ_S3_PID), or 0.
func storePID() int {
	pid, _ := strconv.Atoi(os.Getenv("PICOMQ_S3_PID"))
	return pid
}

// loadResult is one server's side of a run.
type loadResult struct {
	perSec    float64
	cpu       time.Duration   // the server process's, per append (0: unknown)
	perPut    float64         // appends per WAL PUT (0: unknown)
	putTime   time.Duration   // a WAL PUT's mean latency (0: unknown)
	clientCPU time.Duration   // this process's (the load generator), per append
	storeCPU  time.Duration   // the object store's, per append (0: unknown or not used)
	latency   []time.Duration // of every append, sorted
}

func (r loadResult) report(b *testing.B, who string) {
	b.ReportMetric(r.perSec, who+"-appends/s")
	if r.cpu > 0 {
		b.ReportMetric(float64(r.cpu.Nanoseconds())/1000, who+"-server-cpu-µs/append")
	}
	if r.clientCPU > 0 {
		b.ReportMetric(float64(r.clientCPU.Nanoseconds())/1000, who+"-client-cpu-µs/append")
	}
	if r.storeCPU > 0 {
		b.ReportMetric(float64(r.storeCPU.Nanoseconds())/1000, who+"-store-cpu-µs/append")
	}
	if r.perPut > 0 {
		b.ReportMetric(r.perPut, who+"-appends/WAL-PUT")
		b.ReportMetric(float64(r.putTime.Microseconds()), who+"-WAL-PUT-µs")
	}
	if len(r.latency) == 0 {
		return
	}
	q := func(p float64) float64 {
		return float64(r.latency[int(p*float64(len(r.latency)-1))].Microseconds())
	}
	b.ReportMetric(q(0.50), who+"-p50-µs")
	b.ReportMetric(q(0.99), who+"-p99-µs")
}

var benchRun atomic.Int64 // makes stream names unique across runs

// spanSlices is how many turns each server's span is cut into.
const spanSlices = 5

// settle pauses between two servers' turns: longer than pico's upload
// interval, so that its uploads do not fall into another server's turn.
func settle(b *testing.B) {
	b.StopTimer()
	time.Sleep(1500 * time.Millisecond)
	b.StartTimer()
}

// loadRun is one server's side of a sub-benchmark: its client and streams,
// set up once, and what its slices have measured so far.
type loadRun struct {
	t       target
	client  *fasthttp.HostClient
	streams []string
	body    []byte

	appends int
	elapsed time.Duration
	// CPU time of the server, of this process (the load generator), and of
	// the object store when the server writes to it and its process is
	// known.
	cpu, clientCPU, storeCPU cpuMeter
	wal                      [3]float64 // WAL counters' growth (walCounters)
	latency                  []time.Duration
}

// cpuMeter adds up a process's CPU time over the slices of a run.
type cpuMeter struct {
	pid     int // 0: not measured
	before  time.Duration
	total   time.Duration
	unknown bool // a reading failed
}

func (m *cpuMeter) start() {
	if m.pid != 0 {
		var ok bool
		m.before, ok = processCPU(m.pid)
		m.unknown = m.unknown || !ok
	}
}

func (m *cpuMeter) stop() {
	if m.pid != 0 {
		after, ok := processCPU(m.pid)
		m.total += after - m.before
		m.unknown = m.unknown || !ok
	}
}

// perAppend is the time per append of n, or 0 when it is not known.
func (m *cpuMeter) perAppend(n int) time.Duration {
	if m.pid == 0 || m.unknown || n == 0 {
		return 0
	}
	return m.total / time.Duration(n)
}

// prepare creates one stream per appender on t and appends to each once.
// Those appends are not measured.
func (t target) prepare(b *testing.B, appenders int) *loadRun {
	b.StopTimer()
	defer b.StartTimer()
	r := &loadRun{t: t, client: t.client(appenders), body: bytes.Repeat([]byte("x"), 1024),
		cpu: cpuMeter{pid: t.pid}, clientCPU: cpuMeter{pid: os.Getpid()}}
	if t.usesStore {
		r.storeCPU.pid = storePID()
	}
	b.Cleanup(r.client.CloseIdleConnections)
	run := benchRun.Add(1)
	r.streams = make([]string, appenders)
	for w := range r.streams {
		r.streams[w] = fmt.Sprintf("%s/v1/stream/bench/%d-%d-%d", t.url, time.Now().UnixNano(), run, w)
		if status, err := r.t.send(r.client, http.MethodPut, r.streams[w], nil); err != nil || status != http.StatusCreated {
			b.Fatalf("%s: create %s: status %d, %v", t.name, r.streams[w], status, err)
		}
		// The first append to a stream may set the stream up. The
		// reference file store also needs it: when the first appends to
		// new streams arrive together, it answers some of them, and
		// their retries, 404 "Stream not found".
		if err := t.appendOnce(r.client, r.streams[w], r.body); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

// run has the appenders post 1 KiB appends for span, each waiting for its
// acknowledgement before the next, and adds what it measured to r.
func (r *loadRun) run(b *testing.B, span time.Duration) {
	r.reconnect(b)
	latency := make([][]time.Duration, len(r.streams))
	var wg sync.WaitGroup
	walBefore := r.t.walCounters(b)
	meters := []*cpuMeter{&r.cpu, &r.clientCPU, &r.storeCPU}
	for _, m := range meters {
		m.start()
	}
	start := time.Now()
	for w, stream := range r.streams {
		wg.Go(func() {
			for time.Since(start) < span {
				t0 := time.Now()
				if err := r.t.appendOnce(r.client, stream, r.body); err != nil {
					b.Error(err)
					return
				}
				latency[w] = append(latency[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r.elapsed += time.Since(start)
	for _, m := range meters {
		m.stop()
	}
	walAfter := r.t.walCounters(b)
	for _, l := range latency {
		r.appends += len(l)
		r.latency = append(r.latency, l...)
	}
	for i := range r.wal {
		r.wal[i] += walAfter[i] - walBefore[i]
	}
}

// reconnect has every appender make one append, untimed, all at once:
// between two turns the client drops its idle connections (see client),
// and opening them again is no part of what a turn measures.
func (r *loadRun) reconnect(b *testing.B) {
	b.StopTimer()
	defer b.StartTimer()
	var wg sync.WaitGroup
	for _, stream := range r.streams {
		wg.Go(func() {
			if err := r.t.appendOnce(r.client, stream, r.body); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
}

// result sums up r's slices.
func (r *loadRun) result() loadResult {
	slices.Sort(r.latency)
	res := loadResult{perSec: float64(r.appends) / r.elapsed.Seconds(), latency: r.latency,
		cpu: r.cpu.perAppend(r.appends), clientCPU: r.clientCPU.perAppend(r.appends), storeCPU: r.storeCPU.perAppend(r.appends)}
	if puts := r.wal[0]; puts > 0 {
		res.perPut = r.wal[1] / puts
		res.putTime = time.Duration(r.wal[2] / puts * float64(time.Second))
	}
	return res
}

// walCounters reads pico's WAL PUTs, the appends in them and the seconds
// they took so far (zeros for the reference server).
func (t target) walCounters(b *testing.B) [3]float64 {
	if t.proc == nil {
		return [3]float64{}
	}
	m, err := t.proc.Metrics()
	if err != nil {
		b.Fatal(err)
	}
	return [3]float64{m["pico_wal_puts_total"], m["pico_wal_submissions_total"], m["pico_wal_put_seconds_total"]}
}

// processCPU is the user and system CPU time process pid has used, read
// from /proc (Linux, at the usual 100 clock ticks a second).
func processCPU(pid int) (time.Duration, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name may hold spaces: the fields that follow start
	// after its closing parenthesis; utime and stime are the 12th and
	// 13th of them.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// client is a load generator's connection pool to t, for appenders
// concurrent requests. It drops a connection idle for a second, well before
// a server would (Node closes them after 5 s): a POST on a connection the
// server has just closed fails and is not retried, and between two turns
// (BenchmarkVersusReference) a server's connections sit idle for longer.
func (t target) client(appenders int) *fasthttp.HostClient {
	u, err := url.Parse(t.url)
	if err != nil {
		panic(fmt.Sprintf("%s: base URL %q: %v", t.name, t.url, err))
	}
	return &fasthttp.HostClient{Addr: u.Host, MaxConns: appenders, MaxIdleConnDuration: time.Second}
}

// appendOnce posts body to stream. A plain append is answered 204; 200 is
// allowed for servers that answer it the way they answer producer appends.
func (t target) appendOnce(client *fasthttp.HostClient, stream string, body []byte) error {
	status, err := t.send(client, http.MethodPost, stream, body)
	if err == nil && status != http.StatusNoContent && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	if err != nil {
		return fmt.Errorf("%s: append to %s: %w", t.name, stream, err)
	}
	return nil
}

// send makes one request with an application/octet-stream body, and t's
// bearer token if it has one, and returns its status.
func (t target) send(client *fasthttp.HostClient, method, url string, body []byte) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(method)
	req.Header.SetContentType("application/octet-stream")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	req.SetBodyRaw(body)
	if err := client.Do(req, resp); err != nil {
		return 0, err
	}
	return resp.StatusCode(), nil
}
