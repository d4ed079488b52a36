// Package httpguard keeps a node's listeners well under hostile load: it
// bounds what a client may hold of the node's connections, file
// descriptors and time, so that slow or idle clients cannot starve honest
// ones.
//
// Bodies wraps a handler so that a request body arriving slower than a
// minimum rate (averaged after a grace, as Kestrel's
// MinRequestBodyDataRate does), or delivering nothing for an idle timeout,
// ends in a read error that wraps os.ErrDeadlineExceeded; the listeners
// answer it 408. It extends the connection's read deadline as bytes
// arrive, through http.ResponseController, so an upload at any honest
// speed has no whole-request deadline.
//
// An HTTP/2 body shares its connection's bandwidth and flow-control
// window with the other streams, so it may wait while the client sends
// theirs: its limits count the bytes the whole connection delivered
// while it waited (Conns counts them; ConnContext hands the count to the
// request), and a timer checks them during each read.
//
// Conns caps the open connections of the listeners it wraps, answering
// those over the cap 503 with Retry-After. LiveReaders caps the live reads
// (long-poll, SSE) parked at once, across both protocols.
//
// CatchUp puts catch-up pages (those short of their stream's tail) behind
// appends: while appends run, such pages are served a share of the CPUs
// at a time, in arrival order; otherwise they take every CPU. A turn lasts
// while its page is encoded and written, and ends by itself after a short
// while, so a client that stops reading holds no one up.
package httpguard
