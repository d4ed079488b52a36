package picoclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
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
	resp, err := c.ep.HTTP.Do(hreq)
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
	return c.ep.NewRequest(ctx, req.method, req.name, req.query, req.header, req.body)
}

func readCapped(r io.Reader, limit int64) ([]byte, error) { return httpclient.ReadCapped(r, limit) }
