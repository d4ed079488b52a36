package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/app/node"
)

// Metrics names the node's stats as Prometheus samples.
func (a adminNode) Metrics() []adminhttp.Metric {
	s := a.Stats()
	return []adminhttp.Metric{
		{Name: "wal_puts_total", Help: "WAL bulks this process stored, one object-store PUT each.", Counter: true, Value: float64(s.WALPuts)},
		{Name: "wal_put_seconds_total", Help: "Time the WAL's PUTs took, retries included: divided by wal_puts_total, the mean PUT latency.", Counter: true, Value: s.WALPutTime.Seconds()},
		{Name: "wal_submissions_total", Help: "Appends in the WAL bulks this process stored.", Counter: true, Value: float64(s.WALSubmissions)},
		{Name: "streams_written", Help: "Streams this process writes.", Value: float64(s.StreamsWritten)},
		{Name: "streams_in_memory", Help: "Streams this process writes and holds in memory; the others were released while idle (--idle-release-sec).", Value: float64(s.StreamsInMemory)},
		{Name: "streams", Help: "Streams in the cluster.", Value: float64(s.Streams)},
		{Name: "meta_applied_index", Help: "The metadata log row this process applied last.", Value: float64(s.AppliedIndex)},
		{Name: "lease_held", Help: "1 while this process holds the maintenance lease.", Value: oneIf(s.LeaseHeld)},
		{Name: "heartbeat_failing", Help: "1 while this process's heartbeats are not recorded (the cluster fences it after --failover-after-sec).", Value: oneIf(s.BeatFailing)},
		{Name: "heartbeat_readings_unusable", Help: "1 while this process's readings of the heartbeats do not count: it counts no node's silence.", Value: oneIf(s.ReadingsUnusable)},
		{Name: "dead_wal_takeovers_total", Help: "Streams this process took over, as lease holder, to commit records a gone process had only in its WAL.", Counter: true, Value: float64(s.DeadWALTakeovers)},
		{Name: "nodes_fenced_total", Help: "Nodes this process fenced because their heartbeat stopped.", Counter: true, Value: float64(s.NodesFenced)},
	}
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// statsCollector exposes the node's gauges and counters that have labels
// or new names, reading Stats once per scrape.
type statsCollector struct {
	n                         *node.Node
	owned, unflushed, ready   *prometheus.Desc
	fenced, transfers         *prometheus.Desc
	cacheBytes, cacheRequests *prometheus.Desc
	gcPending, gcDeleted      *prometheus.Desc
}

func nodeCollectors(n *node.Node) []prometheus.Collector {
	return []prometheus.Collector{&statsCollector{n: n,
		owned:     prometheus.NewDesc("pico_streams_owned", "Streams this process owns and writes.", nil, nil),
		unflushed: prometheus.NewDesc("pico_wal_unflushed_bytes", "Bytes appended and not yet durable in the WAL: the backlog --wal-cache-size bounds.", nil, nil),
		ready:     prometheus.NewDesc("pico_ready", "1 while /ready answers 200.", nil, nil),
		fenced: prometheus.NewDesc("pico_fenced_total", "Fences this process brought about, by kind: node (a silent node fenced), stream (a gone process's stream taken over).",
			[]string{"kind"}, nil),
		transfers:     prometheus.NewDesc("pico_stream_transfers_total", "Transfers asked of this process (an operator's or its own drain), by result: ok (recorded) or failed.", []string{"result"}, nil),
		cacheBytes:    prometheus.NewDesc("pico_cache_bytes", "Bytes held by a read cache.", []string{"cache"}, nil),
		gcPending:     prometheus.NewDesc("pico_gc_pending_objects", "Objects marked as garbage in the cluster, bytes not yet deleted.", nil, nil),
		gcDeleted:     prometheus.NewDesc("pico_gc_deleted_objects_total", "Objects this process's garbage collection (as lease holder) deleted.", nil, nil),
		cacheRequests: prometheus.NewDesc("pico_cache_requests_total", "Lookups in a read cache, by result: hit (no fetch of its own) or miss (one object-store GET).", []string{"cache", "result"}, nil),
	}}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.owned
	ch <- c.unflushed
	ch <- c.ready
	ch <- c.fenced
	ch <- c.transfers
	ch <- c.cacheBytes
	ch <- c.cacheRequests
	ch <- c.gcPending
	ch <- c.gcDeleted
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.n.Stats()
	ch <- prometheus.MustNewConstMetric(c.owned, prometheus.GaugeValue, float64(s.StreamsWritten))
	ch <- prometheus.MustNewConstMetric(c.unflushed, prometheus.GaugeValue, float64(s.WALBuffered))
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, oneIf(c.n.Ready() == nil))
	ch <- prometheus.MustNewConstMetric(c.fenced, prometheus.CounterValue, float64(s.NodesFenced), "node")
	ch <- prometheus.MustNewConstMetric(c.fenced, prometheus.CounterValue, float64(s.DeadWALTakeovers), "stream")
	ch <- prometheus.MustNewConstMetric(c.transfers, prometheus.CounterValue, float64(s.TransfersOK), "ok")
	ch <- prometheus.MustNewConstMetric(c.transfers, prometheus.CounterValue, float64(s.TransfersFailed), "failed")
	ch <- prometheus.MustNewConstMetric(c.cacheBytes, prometheus.GaugeValue, float64(s.BlockCache.Bytes), "block")
	ch <- prometheus.MustNewConstMetric(c.cacheRequests, prometheus.CounterValue, float64(s.BlockCache.Hits), "block", "hit")
	ch <- prometheus.MustNewConstMetric(c.cacheRequests, prometheus.CounterValue, float64(s.BlockCache.Misses), "block", "miss")
	ch <- prometheus.MustNewConstMetric(c.gcPending, prometheus.GaugeValue, float64(s.GarbagePending))
	ch <- prometheus.MustNewConstMetric(c.gcDeleted, prometheus.CounterValue, float64(s.GarbageDestroyed))
}
