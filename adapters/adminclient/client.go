// Package adminclient is the client of a node's admin listener that the
// CLI's admin verbs use: the cluster view, the nodes, a stream's metadata
// and a node's placement weight.
package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/internal/adminwire"
	"github.com/picomq/pico/adapters/internal/httpclient"
)

// The admin JSON, as the admin listener serves it.
type (
	Cluster = adminwire.Cluster
	Node    = adminwire.Node
	Stream  = adminwire.Stream
)

// maxResponseBytes bounds a response: the cluster view, with every node,
// is the largest.
const maxResponseBytes = 16 << 20

// Client talks to one admin listener. It is safe for concurrent use.
type Client struct{ endpoint *httpclient.Endpoint }

// New returns a client of the admin listener at endpoint, such as
// "http://127.0.0.1:9090".
func New(endpoint, userAgent string) *Client {
	return &Client{endpoint: httpclient.New(endpoint, false, 30*time.Second, userAgent)}
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

func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	header := http.Header{}
	if body != nil {
		header.Set("Content-Type", "application/json")
	}
	req, err := c.endpoint.NewRequest(ctx, method, path, nil, header, body)
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
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not admin JSON: %w", method, path, err)
	}
	return nil
}
