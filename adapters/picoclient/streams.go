package picoclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Info describes a stream.
type Info struct {
	Name        string
	ContentType string
	Start, Next uint64 // first retained seq; seq the next append gets
	// TTLSec is the stream's idle lifetime (Pico-TTL): it expires this long
	// after its last read or write. 0: none.
	TTLSec uint64
	// RetentionSec is record retention (Pico-Retention): older records are
	// trimmed. 0: none.
	RetentionSec uint64
	ExpiresAt    string // as the server wrote it; empty: none
	Closed       bool
}

// CreateOptions configure a new stream. TTLSec and ExpiresAt, the two
// lifetimes of a stream, exclude each other; RetentionSec goes with either.
type CreateOptions struct {
	ContentType  string // empty: the server's default, application/octet-stream
	TTLSec       uint64
	RetentionSec uint64
	ExpiresAt    string // RFC 3339 or unix milliseconds
	Closed       bool
	Body         []byte // optional first record
}

// CreateResult says whether the stream is new (201) or already existed with
// the same configuration (200).
type CreateResult struct {
	Created bool
	Info
}

// Create creates stream name. A stream that exists with another
// configuration is a 409 *APIError.
func (c *Client) Create(ctx context.Context, name string, opts CreateOptions) (CreateResult, error) {
	h := http.Header{}
	if opts.ContentType != "" {
		h.Set("Content-Type", opts.ContentType)
	}
	if opts.TTLSec > 0 {
		h.Set(hdrTTL, formatUint(opts.TTLSec))
	}
	if opts.RetentionSec > 0 {
		h.Set(hdrRetention, formatUint(opts.RetentionSec))
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
	// The answer carries no TTL or expiry headers: a 200 or 201 means the
	// stream has the ones asked for.
	info := Info{Name: name, ContentType: resp.header.Get("Content-Type"), TTLSec: opts.TTLSec,
		RetentionSec: opts.RetentionSec, ExpiresAt: opts.ExpiresAt, Closed: headerTrue(resp.header, hdrClosed)}
	if info.ContentType == "" {
		info.ContentType = opts.ContentType
	}
	if info.Next, _, err = headerUint(resp.header, hdrNextSeq); err != nil {
		return CreateResult{}, err
	}
	return CreateResult{Created: resp.status == http.StatusCreated, Info: info}, nil
}

// Head returns the stream's configuration and offsets.
func (c *Client) Head(ctx context.Context, name string) (Info, error) {
	resp, err := c.do(ctx, request{method: http.MethodHead, name: name})
	if err != nil {
		return Info{}, err
	}
	info := Info{Name: name, ContentType: resp.header.Get("Content-Type"),
		ExpiresAt: resp.header.Get(hdrExpiresAt), Closed: headerTrue(resp.header, hdrClosed)}
	for hdr, field := range map[string]*uint64{hdrStartSeq: &info.Start, hdrNextSeq: &info.Next, hdrTTL: &info.TTLSec,
		hdrRetention: &info.RetentionSec} {
		if *field, _, err = headerUint(resp.header, hdr); err != nil {
			return Info{}, err
		}
	}
	return info, nil
}

// Delete removes the stream; a missing one is a 404 *APIError.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, name: name})
	return err
}

// ListPage is one page of the stream listing, in name order.
type ListPage struct {
	Streams []Info
	HasMore bool // pass the last name as startAfter for the next page
}

type listBody struct {
	Streams []struct {
		Name        string          `json:"name"`
		ContentType string          `json:"content_type"`
		StartSeq    uint64          `json:"start_seq"`
		NextSeq     uint64          `json:"next_seq"`
		Closed      bool            `json:"closed"`
		TTL         uint64          `json:"ttl"`
		Retention   uint64          `json:"retention"`
		ExpiresAt   json.RawMessage `json:"expires_at"`
	} `json:"streams"`
	HasMore bool `json:"has_more"`
}

// List returns streams whose names start with prefix and sort after
// startAfter. Empty prefix and startAfter, and limit 0, take the server's
// defaults.
func (c *Client) List(ctx context.Context, prefix, startAfter string, limit int) (ListPage, error) {
	q := url.Values{}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if startAfter != "" {
		q.Set("start_after", startAfter)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	resp, err := c.do(ctx, request{method: http.MethodGet, query: q})
	if err != nil {
		return ListPage{}, err
	}
	var b listBody
	if err := json.Unmarshal(resp.body, &b); err != nil {
		return ListPage{}, fmt.Errorf("list response: %w", err)
	}
	page := ListPage{HasMore: b.HasMore, Streams: make([]Info, len(b.Streams))}
	for i, s := range b.Streams {
		page.Streams[i] = Info{Name: s.Name, ContentType: s.ContentType, Start: s.StartSeq, Next: s.NextSeq,
			Closed: s.Closed, TTLSec: s.TTL, RetentionSec: s.Retention, ExpiresAt: jsonText(s.ExpiresAt)}
	}
	return page, nil
}

// jsonText is a JSON string's value, or any other value's JSON text: the
// expiry may come as RFC 3339 text or as unix milliseconds.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}
