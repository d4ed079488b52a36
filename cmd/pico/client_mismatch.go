package main

import (
	"fmt"
	"net/http"
	"strings"
)

// protocolCheck fails a successful answer that is in the other protocol
// than the client speaks, naming the mismatch: without it a Durable
// Streams client on a Pico listener fails on a missing Stream-* header,
// which does not say what is wrong.
type protocolCheck struct {
	next     http.RoundTripper
	protocol string // the client's: "pico" or "ds"
}

// checkProtocol makes hc fail answers in the protocol other than
// protocol's.
func checkProtocol(hc *http.Client, protocol string) {
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = protocolCheck{next: next, protocol: protocol}
}

func (p protocolCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	if spoken := answerProtocol(resp.Header); spoken != "" && spoken != p.protocol {
		resp.Body.Close()
		return nil, &protocolMismatch{server: req.URL.Scheme + "://" + req.URL.Host, client: p.protocol, spoken: spoken}
	}
	return resp, nil
}

// answerProtocol is the protocol whose headers an answer carries, ""
// when it carries neither's (or both's).
func answerProtocol(h http.Header) string {
	var pico, ds bool
	for name := range h {
		pico = pico || strings.HasPrefix(name, "Pico-")
		ds = ds || strings.HasPrefix(name, "Stream-")
	}
	switch {
	case pico && !ds:
		return "pico"
	case ds && !pico:
		return "ds"
	}
	return ""
}

// protocolMismatch is a server answering in the other protocol.
type protocolMismatch struct{ server, client, spoken string }

func (e *protocolMismatch) Error() string {
	return fmt.Sprintf("%s speaks the %s protocol, not %s: use --protocol %s (or PICO_PROTOCOL), or point --endpoint at a %s listener",
		e.server, protocolName(e.spoken), protocolName(e.client), e.spoken, protocolName(e.client))
}

func protocolName(p string) string {
	if p == "ds" {
		return "Durable Streams"
	}
	return "Pico"
}
