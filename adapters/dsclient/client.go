// Package dsclient is a small HTTP client for the Durable Streams protocol:
// create, append to, close, read, inspect and delete streams. Offsets are
// the server's opaque strings; "-1" is the stream start and "now" its tail.
// It follows the 307 redirects a node answers when another node owns a
// stream, sending its token (Options.Token) on every hop.
package dsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
	"github.com/picomq/pico/domain"
)

// Options configure a Client (see httpclient.Options); an empty UserAgent
// means "ds-client".
type Options = httpclient.Options

// Offsets with a meaning of their own.
const (
	Start = "-1"  // the stream's first byte
	Now   = "now" // the stream's tail
)

const (
	defaultTimeout   = 65 * time.Second
	defaultUserAgent = "ds-client"
	// Response bodies are read whole, so they are capped: the cap only
	// stops a runaway, the server bounds a catch-up response itself.
	maxResponseBytes = 64 << 20
	maxErrorBytes    = 64 << 10
)

// Protocol headers.
const (
	hdrNextOffset = "Stream-Next-Offset"
	hdrUpToDate   = "Stream-Up-To-Date"
	hdrClosed     = "Stream-Closed"
	hdrTTL        = "Stream-TTL"
	hdrExpiresAt  = "Stream-Expires-At"
)

// Client talks to one Durable Streams endpoint. It is safe for concurrent
// use.
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

// Error is a non-2xx answer. Durable Streams error bodies are plain text
// that clients must not parse, so Message is only shown.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(e.Status)), " ", "_")
	if code == "" {
		code = "http_error"
	}
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, code)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, code, e.Message)
}

// NotFound reports whether err is the server saying the stream does not
// exist.
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

func newError(status int, h http.Header, body []byte) *Error {
	msg := ""
	if !strings.Contains(h.Get("Content-Type"), "html") {
		msg = strings.Join(strings.Fields(string(body)), " ")
	}
	if r := []rune(msg); len(r) > 200 {
		msg = string(r[:200]) + "…"
	}
	return &Error{Status: status, Message: msg}
}

// IsJSON reports whether contentType makes a JSON-mode stream, where each
// message is one JSON value (domain.IsJSON, the rule the server uses).
func IsJSON(contentType string) bool { return domain.IsJSON(contentType) }

// ValidOffset reports whether offset is one a read may start at: Start,
// Now, or the digits_digits layout servers mint.
func ValidOffset(offset string) bool {
	if offset == Start || offset == Now {
		return true
	}
	a, b, ok := strings.Cut(offset, "_")
	return ok && digits(a) && digits(b)
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// request is one call before it becomes an *http.Request.
type request struct {
	method string
	name   string
	query  url.Values
	header http.Header
	body   []byte
}

// response is a completed 2xx exchange with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends req and returns its 2xx response; any other status is an *Error.
func (c *Client) do(ctx context.Context, req request) (*response, error) {
	hreq, err := c.NewRequest(ctx, req.method, req.name, req.query, req.header, req.body)
	if err != nil {
		return nil, err
	}
	resp, err := c.HTTP.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := httpclient.ReadCapped(resp.Body, maxErrorBytes)
		return nil, newError(resp.StatusCode, resp.Header, b)
	}
	b, err := httpclient.ReadCapped(resp.Body, maxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.method, httpclient.StreamPath(req.name), err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

func isTrue(h http.Header, name string) bool { return strings.EqualFold(h.Get(name), "true") }

// Info describes a stream, as HEAD reports it.
type Info struct {
	ContentType string
	Next        string // the tail offset
	TTLSec      uint64 // 0: none
	ExpiresAt   string // as the server wrote it; empty: none
	Closed      bool
}

func infoFrom(h http.Header) (Info, error) {
	info := Info{ContentType: h.Get("Content-Type"), Next: h.Get(hdrNextOffset), ExpiresAt: h.Get(hdrExpiresAt),
		Closed: isTrue(h, hdrClosed)}
	if v := h.Get(hdrTTL); v != "" {
		ttl, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return Info{}, fmt.Errorf("bad %s header %q", hdrTTL, v)
		}
		info.TTLSec = ttl
	}
	return info, nil
}

// CreateOptions configure a new stream. TTLSec and ExpiresAt exclude each
// other.
type CreateOptions struct {
	ContentType string // empty: the server's default, application/octet-stream
	TTLSec      uint64
	ExpiresAt   string // RFC 3339
	Closed      bool
	Body        []byte // optional initial data
}

// CreateResult says whether the stream is new (201) or already existed with
// the same configuration (200), and its tail.
type CreateResult struct {
	Created bool
	Next    string
	Closed  bool
}

// Create creates stream name (PUT). A stream that exists with another
// configuration is a 409 *Error.
func (c *Client) Create(ctx context.Context, name string, opts CreateOptions) (CreateResult, error) {
	h := http.Header{}
	if opts.ContentType != "" {
		h.Set("Content-Type", opts.ContentType)
	}
	if opts.TTLSec > 0 {
		h.Set(hdrTTL, strconv.FormatUint(opts.TTLSec, 10))
	}
	if opts.ExpiresAt != "" {
		h.Set(hdrExpiresAt, opts.ExpiresAt)
	}
	if opts.Closed {
		h.Set(hdrClosed, "true")
	}
	resp, err := c.do(ctx, request{method: http.MethodPut, name: name, header: h, body: opts.Body})
	if err != nil {
		return CreateResult{}, err
	}
	return CreateResult{Created: resp.status == http.StatusCreated, Next: resp.header.Get(hdrNextOffset),
		Closed: isTrue(resp.header, hdrClosed)}, nil
}

// AppendResult is the stream's state after an append or a close.
type AppendResult struct {
	Next   string // the tail offset
	Closed bool
}

// Append sends body as one request (POST). A JSON stream takes one JSON
// value as one message, or a JSON array as one message per element.
// contentType must match the stream's.
func (c *Client) Append(ctx context.Context, name, contentType string, body []byte) (AppendResult, error) {
	if len(body) == 0 {
		return AppendResult{}, errors.New("an append needs a body; Close closes without one")
	}
	return c.post(ctx, name, http.Header{"Content-Type": {contentType}}, body)
}

// Close closes the stream with a close-only POST: no more appends.
func (c *Client) Close(ctx context.Context, name string) (AppendResult, error) {
	return c.post(ctx, name, http.Header{hdrClosed: {"true"}}, nil)
}

func (c *Client) post(ctx context.Context, name string, h http.Header, body []byte) (AppendResult, error) {
	resp, err := c.do(ctx, request{method: http.MethodPost, name: name, header: h, body: body})
	if err != nil {
		return AppendResult{}, err
	}
	return AppendResult{Next: resp.header.Get(hdrNextOffset), Closed: isTrue(resp.header, hdrClosed)}, nil
}

// Page is what one read returned.
type Page struct {
	ContentType string
	// Body is the bytes read: for a JSON stream a JSON array of messages.
	Body []byte
	// Messages splits Body into its messages for a JSON stream; nil for
	// other streams, which have no message boundaries.
	Messages [][]byte
	Next     string // offset to read from next
	UpToDate bool   // the read reached the tail
	Closed   bool   // the stream is closed and the read reached the tail
}

// JSON reports whether the page came from a JSON-mode stream.
func (p Page) JSON() bool { return IsJSON(p.ContentType) }

// Read reads from offset (Start, Now or an offset a server returned). With
// longPoll it waits at the tail for new data; a wait that times out returns
// an empty page.
func (c *Client) Read(ctx context.Context, name, offset string, longPoll bool) (Page, error) {
	q := url.Values{"offset": {offset}}
	if longPoll {
		q.Set("live", "long-poll")
	}
	resp, err := c.do(ctx, request{method: http.MethodGet, name: name, query: q})
	if err != nil {
		return Page{}, err
	}
	p := Page{ContentType: resp.header.Get("Content-Type"), Body: resp.body, Next: resp.header.Get(hdrNextOffset),
		UpToDate: isTrue(resp.header, hdrUpToDate), Closed: isTrue(resp.header, hdrClosed)}
	if p.Next == "" && resp.status == http.StatusNoContent {
		p.Next = offset // a long-poll that timed out without saying where the tail is
	}
	if p.Next == "" {
		return Page{}, fmt.Errorf("GET %s: no %s header", httpclient.StreamPath(name), hdrNextOffset)
	}
	if p.JSON() {
		p.Messages = [][]byte{}
		if len(bytes.TrimSpace(resp.body)) > 0 {
			var msgs []json.RawMessage
			if err := json.Unmarshal(resp.body, &msgs); err != nil {
				return Page{}, fmt.Errorf("GET %s: JSON stream body is not a JSON array: %w", httpclient.StreamPath(name), err)
			}
			for _, m := range msgs {
				p.Messages = append(p.Messages, m)
			}
		}
	}
	return p, nil
}

// Head describes stream name.
func (c *Client) Head(ctx context.Context, name string) (Info, error) {
	resp, err := c.do(ctx, request{method: http.MethodHead, name: name})
	if err != nil {
		return Info{}, err
	}
	return infoFrom(resp.header)
}

// Delete deletes stream name.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, name: name})
	return err
}
