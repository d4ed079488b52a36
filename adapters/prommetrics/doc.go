// Package prommetrics is the Prometheus adapter: the series a node exposes
// on the admin listener's /metrics, and the decorators that feed them.
//
// It measures at the ports, not inside the app, so that the app stays free
// of the vendor library: Handler wraps a protocol listener's http.Handler
// (requests by protocol, operation and status class, their duration, live
// readers), Streams wraps ports.Streams (append records, bytes, batch
// sizes, ack latency, producer rejections) and Store wraps
// ports.ObjectStore (requests by operation and result, their duration).
// Histograms the app fills itself (WAL uploads, metadata proposals) are
// exported fields the binary hands to the app as plain Observe(float64)
// hooks.
//
// Labels are small fixed sets; a stream name, a path or a token never
// becomes a label value. Every child series on a request path is resolved
// once (at New, or on its first use), so a request costs atomic adds and
// no allocation.
//
// Live reads (long-poll, SSE) are counted as op "live_read" and not timed:
// their duration is the time they waited for data, which says nothing
// about the server. pico_live_readers counts those in progress.
package prommetrics
