// Package picoclient is an HTTP client for the Pico protocol: create, append,
// read, inspect, trim and delete streams on a PicoMQ node. It follows the
// 307 redirects a node answers when another node owns a stream, sending
// its token (Options.Token) on every hop.
package picoclient

import (
	"time"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
)

// Options configure a Client (see httpclient.Options); an empty UserAgent
// means "pico-client".
type Options = httpclient.Options

const (
	defaultTimeout   = 65 * time.Second
	defaultUserAgent = "pico-client"
)

// Client talks to one Pico endpoint. It is safe for concurrent use.
type Client struct {
	*httpclient.Endpoint
}

// New returns a client for endpoint, e.g. "http://127.0.0.1:4437". An
// invalid endpoint is reported by every call.
func New(endpoint string, opts Options) *Client {
	if opts.UserAgent == "" {
		opts.UserAgent = defaultUserAgent
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultTimeout
	}
	return &Client{httpclient.New(endpoint, opts)}
}
