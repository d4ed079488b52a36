package main

import (
	"github.com/picomq/pico/adapters/adminhttp"
)

// Metrics names the node's stats as Prometheus samples.
func (a adminNode) Metrics() []adminhttp.Metric {
	s := a.Stats()
	return []adminhttp.Metric{
		{Name: "wal_puts_total", Help: "WAL bulks this process stored, one object-store PUT each.", Counter: true, Value: float64(s.WALPuts)},
		{Name: "wal_put_seconds_total", Help: "Time the WAL's PUTs took, retries included: divided by wal_puts_total, the mean PUT latency.", Counter: true, Value: s.WALPutTime.Seconds()},
		{Name: "wal_submissions_total", Help: "Appends in the WAL bulks this process stored.", Counter: true, Value: float64(s.WALSubmissions)},
		{Name: "streams_written", Help: "Streams this process writes.", Value: float64(s.StreamsWritten)},
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
