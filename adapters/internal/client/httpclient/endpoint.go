// Package httpclient is the HTTP plumbing the clients share: one endpoint,
// a transport with optional h2c, capped redirects, requests that can be
// re-sent on a 307 with their credential, and bounded response bodies.
package httpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxRedirects caps the 307 hops to an owner node; one is normal, more than
// a few means ownership is moving or the nodes disagree.
const MaxRedirects = 5

// Options configure a client. The zero value speaks HTTP/1.1 with no
// timeout; clients fill in their defaults.
type Options struct {
	// HTTP2 speaks HTTP/2 only: h2c (prior knowledge) to http:// endpoints,
	// HTTP/2 over TLS to https:// ones.
	HTTP2 bool
	// Timeout bounds each request, long-polls included.
	Timeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Token is a wire token (domain.FormatToken), sent as "Authorization:
	// Bearer TOKEN" with every request and on every redirect hop; empty
	// sends no credential.
	Token string
}

// Endpoint sends requests for stream names to one server. It is safe for
// concurrent use.
type Endpoint struct {
	base          *url.URL
	baseErr       error
	HTTP          *http.Client
	userAgent     string
	authorization string // the Authorization header's value; "" for none
}

// New returns an endpoint for a base URL such as "http://127.0.0.1:4437";
// an invalid one is reported by every request.
func New(endpoint string, opts Options) *Endpoint {
	e := &Endpoint{HTTP: newHTTPClient(opts.HTTP2, opts.Timeout), userAgent: opts.UserAgent}
	if opts.Token != "" {
		e.authorization = "Bearer " + opts.Token
	}
	e.base, e.baseErr = parseEndpoint(endpoint)
	return e
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

func newHTTPClient(http2 bool, timeout time.Duration) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	if http2 {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		transport.Protocols = &p
	}
	return &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: checkRedirect}
}

// checkRedirect caps redirects and carries the credential on every hop.
// Requests carry GetBody, so net/http re-sends the method, headers and body
// on a 307, but it drops Authorization when the hop goes to another host,
// and an ownership redirect always goes to another node. The credential is
// never sent in the clear after an https hop.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return errors.New("too many redirects")
	}
	auth := via[0].Header.Get("Authorization")
	if auth == "" {
		return nil
	}
	for _, hop := range via {
		if hop.URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s://%s: the credential is not sent in the clear", req.URL.Scheme, req.URL.Host)
		}
	}
	req.Header.Set("Authorization", auth)
	return nil
}

// NewRequest builds a request for stream name (a path; "orders" means
// "/orders") with a query, headers and a body that a 307 can re-send.
func (e *Endpoint) NewRequest(ctx context.Context, method, name string, query url.Values, header http.Header, body []byte) (*http.Request, error) {
	if e.baseErr != nil {
		return nil, e.baseErr
	}
	u := *e.base
	u.Path = e.base.Path + StreamPath(name)
	u.RawPath = ""
	u.RawQuery = query.Encode()
	return e.newRequest(ctx, method, &u, header, body)
}

// NewEscapedRequest is NewRequest for a path whose escapes must reach the
// server as they are, such as "/admin/tokens/svc%2Fingest" for the id
// "svc/ingest".
func (e *Endpoint) NewEscapedRequest(ctx context.Context, method, escapedPath string, query url.Values, header http.Header, body []byte) (*http.Request, error) {
	if e.baseErr != nil {
		return nil, e.baseErr
	}
	path, err := url.PathUnescape(escapedPath)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", escapedPath, err)
	}
	u := *e.base
	u.RawPath = e.base.EscapedPath() + StreamPath(escapedPath)
	u.Path = e.base.Path + StreamPath(path)
	u.RawQuery = query.Encode()
	return e.newRequest(ctx, method, &u, header, body)
}

func (e *Endpoint) newRequest(ctx context.Context, method string, u *url.URL, header http.Header, body []byte) (*http.Request, error) {
	var r io.Reader
	if len(body) > 0 {
		r = bytes.NewReader(body) // a *bytes.Reader gives the request a GetBody
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", e.userAgent)
	if e.authorization != "" {
		req.Header.Set("Authorization", e.authorization)
	}
	return req, nil
}

// StreamPath makes a stream name a URL path: names are paths, and "orders"
// means "/orders".
func StreamPath(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// ReadCapped reads r whole, failing when it holds more than limit bytes.
func ReadCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response body over %d bytes", limit)
	}
	return b, nil
}

// BaseURL is the endpoint's base URL ("" when it is invalid).
func (e *Endpoint) BaseURL() string {
	if e.base == nil {
		return ""
	}
	return e.base.String()
}
