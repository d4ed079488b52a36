package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/picomq/pico/adapters/dsclient"
)

// dsStreams speaks Durable Streams. Offsets replace seqs; only
// application/json streams have record (message) boundaries.
type dsStreams struct{ c *dsclient.Client }

func (dsStreams) protocol() string { return "ds" }

func (d dsStreams) create(ctx context.Context, name string, opts createOptions) (bool, string, error) {
	if opts.retentionSec > 0 {
		return false, "", errors.New("--retention: Durable Streams has no record retention; use --protocol pico")
	}
	got, err := d.c.Create(ctx, name, dsclient.CreateOptions{ContentType: opts.contentType, TTLSec: opts.ttlSec,
		ExpiresAt: opts.expiresAt, Closed: opts.closed})
	return got.Created, got.Next, err
}

func (d dsStreams) head(ctx context.Context, name string) (streamInfo, error) {
	info, err := d.c.Head(ctx, name)
	if err != nil {
		return streamInfo{}, err
	}
	return streamInfo{next: info.Next, contentType: info.ContentType, expiresAt: info.ExpiresAt,
		ttlSec: info.TTLSec, closed: info.Closed}, nil
}

// errDSKeys is a --key-separator on Durable Streams, whose records have no
// key.
var errDSKeys = errors.New("Durable Streams records have no key: --key-separator is for the Pico protocol")

// errDSBatch is a --batch above 1 on a stream without message boundaries.
var errDSBatch = errors.New("Durable Streams appends one body per request: use --batch 1")

// appender sends each line as one message. On a JSON stream a batch goes
// as one JSON array of its lines; any other stream takes one line a
// request, and the stream's bytes are the lines run together.
func (d dsStreams) appender(ctx context.Context, name string, o appendOptions) (appendFunc, error) {
	contentType, batch := o.contentType, o.batch
	if o.keySeparator != "" {
		return nil, errDSKeys
	}
	if contentType == "" {
		info, err := d.c.Head(ctx, name)
		if err != nil {
			return nil, err
		}
		contentType = info.ContentType
	}
	isJSON := dsclient.IsJSON(contentType)
	if !isJSON && batch > 1 {
		return nil, errDSBatch
	}
	return func(ctx context.Context, lines [][]byte) (appended, error) {
		body, err := dsBody(lines, isJSON)
		if err != nil || body == nil {
			return appended{}, err
		}
		got, err := d.c.Append(ctx, name, contentType, body)
		return appended{next: got.Next}, err
	}, nil
}

// dsBody is the request body for lines: a JSON array of them for a JSON
// stream (so a line holding an array stays one message), the line as is
// otherwise. An empty line of a raw stream appends nothing: nil.
func dsBody(lines [][]byte, isJSON bool) ([]byte, error) {
	if !isJSON {
		if len(lines) != 1 {
			return nil, errDSBatch
		}
		if len(lines[0]) == 0 {
			return nil, nil
		}
		return lines[0], nil
	}
	for _, line := range lines {
		if !json.Valid(line) {
			return nil, fmt.Errorf("not valid JSON, which a JSON stream needs: %q", clip(line))
		}
	}
	body := []byte{'['}
	body = append(body, bytes.Join(lines, []byte{','})...)
	return append(body, ']'), nil
}

func clip(b []byte) string {
	if r := []rune(string(b)); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return string(b)
}

func (d dsStreams) read(ctx context.Context, name, from string, _ int, longPoll bool) (page, error) {
	if from == "" {
		from = dsclient.Start
	}
	got, err := d.c.Read(ctx, name, from, longPoll)
	if err != nil {
		return page{}, err
	}
	out := page{framed: got.JSON(), next: got.Next, upToDate: got.UpToDate, closed: got.Closed}
	switch {
	case out.framed:
		for _, m := range got.Messages {
			out.records = append(out.records, printRecord{body: m})
		}
	case len(got.Body) > 0:
		out.records = []printRecord{{body: got.Body}}
	}
	return out, nil
}

// tailStart is the stream's start: offsets cannot count back n messages,
// so the verbs read everything and keep the last n.
func (dsStreams) tailStart(context.Context, string, uint64) (string, error) {
	return dsclient.Start, nil
}

func (dsStreams) validPosition(pos string) bool { return dsclient.ValidOffset(pos) }

func (d dsStreams) close(ctx context.Context, name string) (string, error) {
	got, err := d.c.Close(ctx, name)
	return got.Next, err
}

func (d dsStreams) delete(ctx context.Context, name string) error { return d.c.Delete(ctx, name) }
