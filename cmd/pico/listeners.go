package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/picomq/pico/adapters/adminhttp"
	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/httpfault"
	"github.com/picomq/pico/adapters/httpguard"
	"github.com/picomq/pico/adapters/picohttp"
	"github.com/picomq/pico/adapters/prommetrics"
	"github.com/picomq/pico/app/node"
)

// protocolListener is one bound protocol port and the server on it.
type protocolListener struct {
	protocol string // "pico" or "ds"
	ln       net.Listener
	srv      *http.Server
}

type protocolListeners []*protocolListener

// bindListeners binds --listen (speaking --protocol) and, if given,
// --ds-listen (speaking Durable Streams).
func (f *serveFlags) bindListeners() (protocolListeners, error) {
	ls := protocolListeners{{protocol: f.protocol}}
	if f.dsListen != "" {
		ls = append(ls, &protocolListener{protocol: "ds"})
	}
	for i, addr := range []string{f.listen, f.dsListen}[:len(ls)] {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			ls.closeAll()
			return nil, fmt.Errorf("listener %s: %w", addr, err)
		}
		ls[i].ln = ln
	}
	return ls, nil
}

// advertisedListeners maps each listener's protocol to the URL it is
// reached at: the main one's is the node's address, one beside it
// --ds-http-address or its bound address. The main listener wins a tie.
func (f *serveFlags) advertisedListeners(ls protocolListeners, address string, logger *slog.Logger) map[string]string {
	out := map[string]string{}
	for _, l := range ls[1:] {
		addr := f.dsHTTPAddress
		if addr == "" {
			addr = "http://" + l.ln.Addr().String()
			warnUnreachableAddress(addr, l.ln.Addr(), "--ds-http-address", logger)
		}
		out[l.protocol] = addr
	}
	out[ls[0].protocol] = address
	return out
}

func (ls protocolListeners) closeAll() {
	for _, l := range ls {
		if l.ln != nil {
			l.ln.Close()
		}
	}
}

// serve serves h on l, its connections counted against the node's cap,
// and with faults (if not nil) injected at its edge.
func (l *protocolListener) serve(h http.Handler, faults *httpfault.Table, metrics *prommetrics.Metrics, guard connGuard, logger *slog.Logger) {
	protocol := prommetrics.ProtocolPico
	if l.protocol == "ds" {
		protocol = prommetrics.ProtocolDS
	}
	if faults != nil {
		h = httpfault.Wrap(h, faults)
	}
	l.srv = &http.Server{Handler: metrics.Handler(protocol, httpguard.Bodies(h, guard.bodies)), ConnState: metrics.ConnState,
		ConnContext:       httpguard.ConnContext,
		ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: guard.idle, Protocols: serverProtocols()}
	go serveOn(l.srv, guard.conns.Limit(l.ln), l.protocol, logger)
}

// readHeaderTimeout bounds a request's head; its body is httpguard's.
const readHeaderTimeout = 10 * time.Second

// protocolHandler is the handler of one protocol; both drive the node's
// one stream service, so a stream written with one reads with the other,
// through metrics' append series.
func (f *serveFlags) protocolHandler(protocol string, n *node.Node, metrics *prommetrics.Metrics, guard connGuard,
	done <-chan struct{}, logger *slog.Logger) http.Handler {
	streams := metrics.Streams(n.Streams())
	longPoll := time.Duration(f.longPollSec * float64(time.Second))
	sseMax := time.Duration(f.sseMaxSec * float64(time.Second))
	if protocol == "ds" {
		cfg := dshttp.Config{Streams: streams, Auth: n.Auth(), Routing: f.routing, LongPollTimeout: longPoll,
			SSEMaxDuration: sseMax, MaxBodyBytes: int64(f.maxBody), MaxChunkBytes: int(f.maxChunk), LiveReaders: guard.live, Reads: guard.reads,
			Done: done, Logger: logger}
		if subs := n.Subscriptions(); subs != nil { // a nil *Service must not become a non-nil interface
			cfg.Subscriptions = subs
		}
		return dshttp.New(cfg)
	}
	cfg := picohttp.Config{Streams: streams, Auth: n.Auth(), Routing: f.routing, LongPollTimeout: longPoll,
		SSEMaxDuration: sseMax, MaxBodyBytes: int64(f.maxBody), MaxChunkBytes: int(f.maxChunk), LiveReaders: guard.live, Reads: guard.reads,
		Done: done, Logger: logger,
		Schemas: n.Streams()}
	if g := n.Groups(); g != nil { // a nil *Service must not become a non-nil interface
		cfg.Groups = g
	}
	return picohttp.New(cfg)
}

// serverProtocols serves HTTP/1.1 and, on the same port, HTTP/2 without TLS
// (h2c with prior knowledge).
func serverProtocols() *http.Protocols {
	p := &http.Protocols{}
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

func serveOn(srv *http.Server, ln net.Listener, what string, logger *slog.Logger) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error(what+" listener stopped", "err", err)
	}
}

// listenAdmin serves the admin listener outside the connection cap, so
// that probes and /metrics still answer when clients hold every place;
// it binds a private address, and its bodies are bounded like the rest.
func listenAdmin(addr string, n *node.Node, metrics *prommetrics.Metrics, guard connGuard, logger *slog.Logger) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("admin listener: %w", err)
	}
	h := adminhttp.New(adminNode{n, metrics.Registry(), logger}, picohttp.OpenAPI)
	srv := &http.Server{Handler: metrics.Handler(prommetrics.ProtocolAdmin, httpguard.Bodies(h, guard.bodies)),
		ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: guard.idle}
	go serveOn(srv, ln, "admin", logger)
	return srv, "http://" + ln.Addr().String(), nil
}

// faultTable is the fault table of listener l under --test-fault-injection,
// nil without it; each listener has its own.
func (f *serveFlags) faultTable(l *protocolListener, logger *slog.Logger) *httpfault.Table {
	if !f.faultInjection {
		return nil
	}
	logger.Warn("fault injection is on: any client may make this listener fail requests; for testing only",
		"hook", "http://"+l.ln.Addr().String()+httpfault.HookPath)
	return httpfault.NewTable(nil)
}
