package picoclient

import (
	"net/http"
	"time"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
)

// Options configure a Client. The zero value speaks HTTP/1.1 without a
// credential.
type Options struct {
	// HTTP2 speaks HTTP/2 only: h2c (prior knowledge) to http:// endpoints,
	// HTTP/2 over TLS to https:// ones.
	HTTP2 bool
	// Timeout bounds each request, long polls included; 0 means 65 s, above
	// the server's longest long poll.
	Timeout time.Duration
	// UserAgent is sent with every request; empty means "pico-client".
	UserAgent string
	// Token is the bearer token ("ID.SECRET", as pico admin tokens issue
	// prints it) sent with every request and on every redirect hop; empty
	// sends none.
	Token string
}

const (
	defaultTimeout   = 65 * time.Second
	defaultUserAgent = "pico-client"
)

// Client talks to one Pico endpoint. It is safe for concurrent use.
type Client struct {
	ep *httpclient.Endpoint
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
	return &Client{httpclient.New(endpoint, httpclient.Options(opts))}
}

// BaseURL is the endpoint's URL, "" when it is invalid.
func (c *Client) BaseURL() string { return c.ep.BaseURL() }

// HTTPClient is the client's *http.Client, for its transport or to wrap
// it; changing its redirect policy stops the credential from following
// redirects.
func (c *Client) HTTPClient() *http.Client { return c.ep.HTTP }
