// Package picoclient is an HTTP client for the Pico protocol: create, append,
// read, inspect, trim and delete streams on a PicoMQ node. It follows the
// 307 redirects a node answers when another node owns a stream.
package picoclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Client. The zero value speaks HTTP/1.1 with the
// default timeout.
type Options struct {
	// HTTP2 speaks HTTP/2 only: h2c (prior knowledge) to http:// endpoints,
	// HTTP/2 over TLS to https:// ones.
	HTTP2 bool
	// Timeout bounds each request, long-polls included; 0 means 65 s, above
	// the server's default 25 s long-poll.
	Timeout time.Duration
	// UserAgent is sent with every request; empty means "pico-client".
	UserAgent string
}

const (
	defaultTimeout   = 65 * time.Second
	defaultUserAgent = "pico-client"
	// maxRedirects caps the 307 hops to an owner node; one is normal, more
	// than a few means ownership is moving or the nodes disagree.
	maxRedirects = 5
)

// Client talks to one Pico endpoint. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	baseErr   error
	http      *http.Client
	userAgent string
}

// New returns a client for endpoint, e.g. "http://127.0.0.1:4437". An
// invalid endpoint is reported by every call.
func New(endpoint string, opts Options) *Client {
	c := &Client{http: newHTTPClient(opts), userAgent: opts.UserAgent}
	if c.userAgent == "" {
		c.userAgent = defaultUserAgent
	}
	c.base, c.baseErr = parseEndpoint(endpoint)
	return c
}

func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST", endpoint)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("endpoint %q: a query or fragment is not allowed", endpoint)
	}
	return u, nil
}

func newHTTPClient(opts Options) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	if opts.HTTP2 {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		transport.Protocols = &p
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	return &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: checkRedirect}
}

// checkRedirect caps redirects. Requests carry GetBody, so net/http re-sends
// the method, headers and body on a 307.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errors.New("too many redirects")
	}
	return nil
}
