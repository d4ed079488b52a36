// Package adminclient is the client of a node's admin listener that the
// CLI's admin verbs use: the cluster view, the nodes, a stream's metadata,
// a node's placement weight, drains and the tokens.
package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
	"github.com/picomq/pico/adapters/internal/wire/adminwire"
	"github.com/picomq/pico/domain"
)

// The admin JSON, as the admin listener serves it.
type (
	Cluster     = adminwire.Cluster
	Node        = adminwire.Node
	Stream      = adminwire.Stream
	Drain       = adminwire.Drain
	Token       = adminwire.Token
	Tokens      = adminwire.Tokens
	IssuedToken = adminwire.IssuedToken
)

// maxResponseBytes bounds a response: the cluster view, with every node,
// is the largest.
const maxResponseBytes = 16 << 20

// Client talks to one admin listener. It is safe for concurrent use.
type Client struct{ endpoint *httpclient.Endpoint }

// Option configures a Client.
type Option func(*options)

type options struct{ token string }

// WithToken sends the wire token (domain.FormatToken) as "Authorization:
// Bearer TOKEN" with every call; an empty one sends none.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// New returns a client of the admin listener at endpoint, such as
// "http://127.0.0.1:9090".
func New(endpoint, userAgent string, opts ...Option) *Client {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return &Client{endpoint: httpclient.New(endpoint, httpclient.Options{Timeout: 30 * time.Second, UserAgent: userAgent, Token: o.token})}
}

// Error is a response other than 2xx, with the listener's message.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	status := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	if e.Message == "" {
		return status
	}
	return status + ": " + e.Message
}

// Cluster returns the metadata view as the node applied it.
func (c *Client) Cluster(ctx context.Context) (Cluster, error) {
	var out Cluster
	return out, c.call(ctx, http.MethodGet, "/admin/cluster", nil, &out)
}

// Nodes returns the registered nodes.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	var out []Node
	return out, c.call(ctx, http.MethodGet, "/admin/nodes", nil, &out)
}

// Stream returns stream name's metadata ("orders" means "/orders").
func (c *Client) Stream(ctx context.Context, name string) (Stream, error) {
	var out Stream
	return out, c.call(ctx, http.MethodGet, "/admin/streams"+httpclient.StreamPath(name), nil, &out)
}

// SetSlots sets node id's placement weight and returns the node as the
// answering node's view holds it afterwards.
func (c *Client) SetSlots(ctx context.Context, id uint32, slots uint32) (Node, error) {
	body, err := json.Marshal(adminwire.SetSlots{Slots: &slots})
	if err != nil {
		return Node{}, err
	}
	var out Node
	return out, c.call(ctx, http.MethodPost, "/admin/nodes/"+strconv.FormatUint(uint64(id), 10), body, &out)
}

// Transfer moves stream name to node to and returns the stream as the
// answering node's view holds it once that node has let go of it.
func (c *Client) Transfer(ctx context.Context, name string, to uint32) (Stream, error) {
	body, err := json.Marshal(adminwire.Transfer{Stream: httpclient.StreamPath(name), ToNode: &to})
	if err != nil {
		return Stream{}, err
	}
	var out Stream
	return out, c.call(ctx, http.MethodPost, "/admin/transfer", body, &out)
}

// DrainNode starts the drain of node id on the answering node, or
// continues it, and returns its progress then.
func (c *Client) DrainNode(ctx context.Context, id uint32) (Drain, error) {
	var out Drain
	return out, c.call(ctx, http.MethodPost, drainPath(id), nil, &out)
}

// DrainProgress returns the progress of node id's drain as the answering
// node sees it.
func (c *Client) DrainProgress(ctx context.Context, id uint32) (Drain, error) {
	var out Drain
	return out, c.call(ctx, http.MethodGet, drainPath(id), nil, &out)
}

func drainPath(id uint32) string {
	return "/admin/nodes/" + strconv.FormatUint(uint64(id), 10) + "/drain"
}

// Tokens lists the tokens the caller may see, in id order: never their
// secrets.
func (c *Client) Tokens(ctx context.Context) (Tokens, error) {
	var out Tokens
	return out, c.call(ctx, http.MethodGet, "/admin/tokens", nil, &out)
}

// IssueToken issues token id with scope. The answer's Wire is the token,
// which the listener shows this once. A scope wider than the caller's is a
// 403 *Error, a taken id a 409.
func (c *Client) IssueToken(ctx context.Context, id string, scope domain.Scope) (IssuedToken, error) {
	scopeJSON, err := scope.MarshalJSON()
	if err != nil {
		return IssuedToken{}, err
	}
	body, err := json.Marshal(adminwire.IssueToken{ID: id, Scope: scopeJSON})
	if err != nil {
		return IssuedToken{}, err
	}
	var out IssuedToken
	return out, c.call(ctx, http.MethodPost, "/admin/tokens", body, &out)
}

// RevokeToken revokes token id; an unknown one is a 404 *Error.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	// Ids may hold "/", so the id is one escaped path segment.
	return c.callEscaped(ctx, http.MethodDelete, "/admin/tokens/"+url.PathEscape(id), nil, nil)
}

// call sends a request to path and decodes a 2xx answer's JSON into out.
func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	return c.callEscaped(ctx, method, (&url.URL{Path: path}).EscapedPath(), body, out)
}

// callEscaped is call for a path escaped already; a nil out reads no
// answer body.
func (c *Client) callEscaped(ctx context.Context, method, path string, body []byte, out any) error {
	header := http.Header{}
	if body != nil {
		header.Set("Content-Type", "application/json")
	}
	req, err := c.endpoint.NewEscapedRequest(ctx, method, path, nil, header, body)
	if err != nil {
		return err
	}
	resp, err := c.endpoint.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := httpclient.ReadCapped(resp.Body, maxResponseBytes)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e adminwire.Error
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = string(bytes.TrimSpace(b))
		}
		return &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not admin JSON: %w", method, path, err)
	}
	return nil
}
