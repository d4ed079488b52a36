package picoclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Response bodies are read whole, so they are capped: a read page is bounded
// by the server (4 MiB at most by default), the cap only stops a runaway.
const (
	maxResponseBytes = 64 << 20
	maxErrorBytes    = 64 << 10
)

// request is one Pico call before it becomes an *http.Request.
type request struct {
	method string
	name   string // stream name; empty for the list endpoint
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

// do sends req and returns its 2xx response; any other status is an
// *APIError.
func (c *Client) do(ctx context.Context, req request) (*response, error) {
	hreq, err := c.newRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := readCapped(resp.Body, maxErrorBytes)
		return nil, newAPIError(resp.StatusCode, resp.Header, body)
	}
	body, err := readCapped(resp.Body, maxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.method, req.name, err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

func (c *Client) newRequest(ctx context.Context, req request) (*http.Request, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	u := *c.base
	u.Path = c.base.Path + streamPath(req.name)
	u.RawPath = ""
	u.RawQuery = req.query.Encode()
	var body io.Reader
	if len(req.body) > 0 {
		// A *bytes.Reader gives the request a GetBody, which a 307 needs.
		body = bytes.NewReader(req.body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range req.header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("User-Agent", c.userAgent)
	return hreq, nil
}

// streamPath makes a stream name a URL path: names are paths, and "orders"
// means "/orders".
func streamPath(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + name
}

// readCapped reads r whole, failing when it holds more than limit bytes.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response body over %d bytes", limit)
	}
	return b, nil
}
