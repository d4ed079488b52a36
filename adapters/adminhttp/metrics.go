package adminhttp

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric is one sample /metrics exposes, named pico_<Name>: a counter,
// which only grows over a process's life, or a gauge.
type Metric struct {
	Name    string
	Help    string
	Counter bool
	Value   float64
}

// nodeCollector reads the node's samples at each scrape. It describes
// nothing up front (an unchecked collector): the node names its samples.
type nodeCollector struct{ n Node }

func (nodeCollector) Describe(chan<- *prometheus.Desc) {}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.n.Metrics() {
		kind := prometheus.GaugeValue
		if m.Counter {
			kind = prometheus.CounterValue
		}
		desc := prometheus.NewDesc("pico_"+m.Name, m.Help, nil, nil)
		ch <- prometheus.MustNewConstMetric(desc, kind, m.Value)
	}
}

// Gatherer is what a Node also implements when it keeps series of its
// own (request, append and store series): /metrics serves them beside
// the node's samples, and the Go runtime and process collectors are then
// its to register.
type Gatherer interface {
	Gatherer() prometheus.Gatherer
}

// metricsHandler serves the node's samples with the Go runtime's and the
// process's, in the Prometheus text format.
func metricsHandler(n Node) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(nodeCollector{n})
	var g prometheus.Gatherer = reg
	if more, ok := n.(Gatherer); ok {
		g = prometheus.Gatherers{reg, more.Gatherer()}
	} else {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
