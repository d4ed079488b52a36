package prommetrics

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Buckets in seconds: from a fast local PUT (a few ms) to a stalled store.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Metrics holds every series of this adapter, registered on one registry.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	live     [numModes]prometheus.Gauge
	http     [numProtocols][numOps]atomic.Pointer[opSeries]
	conns    prometheus.Gauge

	appendRecords prometheus.Counter
	appendBytes   prometheus.Counter
	appendBatch   prometheus.Histogram
	appendAck     prometheus.Histogram
	rejections    [numReasons]prometheus.Counter

	store    [numStoreOps][numResults]prometheus.Counter
	storeDur [numStoreOps]prometheus.Observer

	// WALUploadSeconds and WALUploadBytes observe each WAL bulk the app
	// stores: its PUT's duration (retries included) and its size.
	WALUploadSeconds prometheus.Histogram
	WALUploadBytes   prometheus.Histogram
	// ProposeSeconds observes each metadata proposal, queue to applied.
	ProposeSeconds prometheus.Histogram
}

// New makes the series, with pico_build_info and the Go runtime's and the
// process's collectors (open and maximum file descriptors among them).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	r := m.reg
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	version, goVersion := buildVersion()
	must(r, prometheus.NewGauge(prometheus.GaugeOpts{Name: "pico_build_info", Help: "1, labelled with this binary's version and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "go_version": goVersion}})).Set(1)

	m.requests = must(r, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pico_http_requests_total",
		Help: "HTTP requests answered, by protocol, operation and status class."}, []string{"protocol", "op", "code"}))
	m.duration = must(r, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pico_http_request_duration_seconds",
		Help: "Time to answer an HTTP request, live reads excluded (they wait for data).", Buckets: latencyBuckets}, []string{"protocol", "op"}))
	lv := must(r, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pico_live_readers", Help: "Live reads in progress, by mode."}, []string{"mode"}))
	for mode := range numModes {
		m.live[mode] = lv.WithLabelValues(modeNames[mode])
	}
	m.conns = must(r, prometheus.NewGauge(prometheus.GaugeOpts{Name: "pico_http_open_connections", Help: "Open client connections of the protocol listeners."}))

	m.appendRecords = must(r, prometheus.NewCounter(prometheus.CounterOpts{Name: "pico_append_records_total", Help: "Records appended (duplicates not counted)."}))
	m.appendBytes = must(r, prometheus.NewCounter(prometheus.CounterOpts{Name: "pico_append_bytes_total", Help: "Record body bytes appended."}))
	m.appendBatch = must(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pico_append_batch_records", Help: "Records per append.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 8)}))
	m.appendAck = must(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pico_append_ack_latency_seconds",
		Help: "Time from an append reaching the stream service to its durable acknowledgement.", Buckets: latencyBuckets}))
	rv := must(r, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pico_producer_rejections_total",
		Help: "Appends refused or answered without writing, by reason."}, []string{"reason"}))
	for r := range numReasons {
		m.rejections[r] = rv.WithLabelValues(reasonNames[r])
	}

	sv := must(r, prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pico_object_store_requests_total",
		Help: "Object-store requests, by operation and result."}, []string{"op", "result"}))
	sd := must(r, prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pico_object_store_request_duration_seconds",
		Help: "Time of an object-store request, by operation.", Buckets: latencyBuckets}, []string{"op"}))
	for op := range numStoreOps {
		for res := range numResults {
			m.store[op][res] = sv.WithLabelValues(storeOpNames[op], resultNames[res])
		}
		m.storeDur[op] = sd.WithLabelValues(storeOpNames[op])
	}

	m.WALUploadSeconds = must(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pico_wal_upload_duration_seconds",
		Help: "Time to store one WAL bulk, retries included.", Buckets: latencyBuckets}))
	m.WALUploadBytes = must(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pico_wal_upload_bytes",
		Help: "Size of one stored WAL bulk.", Buckets: prometheus.ExponentialBuckets(256, 4, 10)}))
	m.ProposeSeconds = must(r, prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pico_meta_propose_duration_seconds",
		Help: "Time from proposing metadata commands to their row being applied.", Buckets: latencyBuckets}))
	return m
}

// Registry is where the binary adds the node's own collectors, and what
// the /metrics handler gathers.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// buildVersion is the main module's version ("(devel)" for a source build)
// and the Go version, from the binary's build info.
func buildVersion() (version, goVersion string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", "unknown"
	}
	version = bi.Main.Version
	if version == "" {
		version = "unknown"
	}
	return version, bi.GoVersion
}

// must registers c on reg and returns it, so a series is made and
// registered in one expression.
func must[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	reg.MustRegister(c)
	return c
}
