package main

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picomq/pico/adapters/httpguard"
)

// connGuard is what the listeners share of connection hygiene: one
// connection cap, one live-reader cap and one catch-up read scheduler for
// the node, and the body and idle limits of every server.
type connGuard struct {
	conns  *httpguard.Conns
	live   *httpguard.LiveReaders
	reads  *httpguard.CatchUp
	bodies httpguard.BodyLimits
	idle   time.Duration
}

// newConnGuard raises the open-file limit first, so that the caps derive
// from the limit the process runs with.
func (f *serveFlags) newConnGuard(logger *slog.Logger) connGuard {
	limit, err := raiseFileLimit()
	if err != nil {
		logger.Warn("cannot raise the open-file limit to its hard limit", "err", err, "limit", limit)
	}
	conns, live := f.caps(limit)
	logger.Debug("connection caps", "open_files", limit, "max_connections", conns, "max_live_readers", live)
	return connGuard{conns: httpguard.NewConns(conns), live: httpguard.NewLiveReaders(live), reads: httpguard.NewCatchUp(f.catchUpLimits()),
		bodies: f.bodyLimits(), idle: f.idleTimeout}
}

// collector exposes the caps beside what they bound; open descriptors and
// their limit are the process collector's process_open_fds and
// process_max_fds, and open connections are pico_http_open_connections.
func (g connGuard) collector() prometheus.Collector {
	return &guardCollector{g: g,
		maxConns:      prometheus.NewDesc("pico_http_max_connections", "Cap on open connections of the protocol listeners (--max-connections; 0: none).", nil, nil),
		refused:       prometheus.NewDesc("pico_http_refused_connections_total", "Connections answered 503 because the protocol listeners were at --max-connections.", nil, nil),
		parked:        prometheus.NewDesc("pico_live_readers_parked", "Long-polls waiting and event streams open, both protocols: what --max-live-readers bounds.", nil, nil),
		maxLive:       prometheus.NewDesc("pico_live_readers_max", "Cap on parked live readers (--max-live-readers; 0: none).", nil, nil),
		catchUpServed: prometheus.NewDesc("pico_catchup_turns_total", "Catch-up read pages (short of their stream's tail) served, both protocols.", nil, nil),
		catchUpWaited: prometheus.NewDesc("pico_catchup_waits_total", "Catch-up read pages that waited for a turn behind appends (--catchup-share).", nil, nil),
		catchUpTurns:  prometheus.NewDesc("pico_catchup_turns", "Catch-up read pages being served now.", nil, nil),
	}
}

type guardCollector struct {
	g                                  connGuard
	maxConns, refused, parked, maxLive *prometheus.Desc

	catchUpServed, catchUpWaited, catchUpTurns *prometheus.Desc
}

func (c *guardCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.maxConns
	ch <- c.refused
	ch <- c.parked
	ch <- c.maxLive
	ch <- c.catchUpServed
	ch <- c.catchUpWaited
	ch <- c.catchUpTurns
}

func (c *guardCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.maxConns, prometheus.GaugeValue, float64(c.g.conns.Max()))
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(c.g.conns.Refused()))
	ch <- prometheus.MustNewConstMetric(c.parked, prometheus.GaugeValue, float64(c.g.live.Parked()))
	ch <- prometheus.MustNewConstMetric(c.maxLive, prometheus.GaugeValue, float64(c.g.live.Max()))
	s := c.g.reads.Stats()
	ch <- prometheus.MustNewConstMetric(c.catchUpServed, prometheus.CounterValue, float64(s.Served))
	ch <- prometheus.MustNewConstMetric(c.catchUpWaited, prometheus.CounterValue, float64(s.Waited))
	ch <- prometheus.MustNewConstMetric(c.catchUpTurns, prometheus.GaugeValue, float64(s.Turns))
}
