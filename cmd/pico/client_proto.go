package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/picomq/pico/adapters/dsclient"
	"github.com/picomq/pico/adapters/picoclient"
)

// streamClient is what the verbs need of a wire protocol. Positions in a
// stream are strings: a seq for Pico, an offset for Durable Streams.
type streamClient interface {
	protocol() string
	create(ctx context.Context, name string, opts createOptions) (created bool, next string, err error)
	head(ctx context.Context, name string) (streamInfo, error)
	// appender returns a function that sends one batch of lines.
	appender(ctx context.Context, name string, opts appendOptions) (appendFunc, error)
	// read reads from position from; "" means the stream's start. limit > 0
	// caps the records when the protocol can.
	read(ctx context.Context, name, from string, limit int, longPoll bool) (page, error)
	// tailStart is where to read to see the last n records; the verbs keep
	// only the last n of what they read from there.
	tailStart(ctx context.Context, name string, n uint64) (string, error)
	validPosition(pos string) bool
	close(ctx context.Context, name string) (next string, err error)
	delete(ctx context.Context, name string) error
}

// appendOptions say how lines become records: the content type of a
// record sent alone, the lines a request, and the separator of a key
// before each line's body ("" for none).
type appendOptions struct {
	contentType, keySeparator string
	batch                     int
}

type createOptions struct {
	contentType, expiresAt string
	ttlSec, retentionSec   uint64
	closed                 bool
}

// streamInfo describes a stream; start is empty when the protocol has none.
type streamInfo struct {
	start, next, contentType, expiresAt string
	ttlSec, retentionSec                uint64
	closed                              bool
}

// appended is the outcome of one append request; next is empty when
// nothing was sent, start when the protocol does not report it.
type appended struct{ start, next string }

type appendFunc func(ctx context.Context, lines [][]byte) (appended, error)

// page is one read. framed pages hold records, each printed on its own
// line; other pages hold raw bytes without record boundaries.
type page struct {
	records  []printRecord
	framed   bool
	next     string
	upToDate bool
	closed   bool
}

type printRecord struct {
	seq  string // empty when the protocol gives records no seq
	body []byte
}

// picoStreams speaks the Pico protocol.
type picoStreams struct{ c *picoclient.Client }

func (picoStreams) protocol() string { return "pico" }

func (p picoStreams) create(ctx context.Context, name string, opts createOptions) (bool, string, error) {
	got, err := p.c.Create(ctx, name, picoclient.CreateOptions{ContentType: opts.contentType, TTLSec: opts.ttlSec,
		RetentionSec: opts.retentionSec, ExpiresAt: opts.expiresAt, Closed: opts.closed})
	return got.Created, seqText(got.Next), err
}

func (p picoStreams) head(ctx context.Context, name string) (streamInfo, error) {
	info, err := p.c.Head(ctx, name)
	if err != nil {
		return streamInfo{}, err
	}
	return streamInfo{start: seqText(info.Start), next: seqText(info.Next), contentType: info.ContentType,
		expiresAt: info.ExpiresAt, ttlSec: info.TTLSec, retentionSec: info.RetentionSec, closed: info.Closed}, nil
}

func (p picoStreams) appender(_ context.Context, name string, o appendOptions) (appendFunc, error) {
	opts := picoclient.AppendOptions{ContentType: o.contentType}
	return func(ctx context.Context, lines [][]byte) (appended, error) {
		records := make([]picoclient.Record, len(lines))
		for i, line := range lines {
			records[i].Body = line
			if o.keySeparator == "" {
				continue
			}
			key, body, ok := bytes.Cut(line, []byte(o.keySeparator))
			if !ok {
				return appended{}, fmt.Errorf("a line has no key separator %q: %q", o.keySeparator, clip(line))
			}
			records[i].Key, records[i].Body = key, body
		}
		got, err := p.c.Append(ctx, name, records, opts)
		return appended{start: seqText(got.Start), next: seqText(got.Next)}, err
	}, nil
}

func (p picoStreams) read(ctx context.Context, name, from string, limit int, longPoll bool) (page, error) {
	var seq uint64
	if from == "" {
		// Start at the retained start: below it a read fails once trimmed.
		info, err := p.c.Head(ctx, name)
		if err != nil {
			return page{}, err
		}
		seq = info.Start
	} else {
		var err error
		if seq, err = strconv.ParseUint(from, 10, 64); err != nil {
			return page{}, fmt.Errorf("position %q: want a seq", from)
		}
	}
	got, err := p.c.ReadPage(ctx, name, picoclient.ReadOptions{Seq: seq, Count: limit, LongPoll: longPoll})
	if err != nil {
		return page{}, err
	}
	out := page{framed: true, next: seqText(got.Next), upToDate: got.UpToDate, closed: got.Closed}
	for _, r := range got.Records {
		out.records = append(out.records, printRecord{seq: seqText(r.Seq), body: r.Body})
	}
	return out, nil
}

func (p picoStreams) tailStart(ctx context.Context, name string, n uint64) (string, error) {
	info, err := p.c.Head(ctx, name)
	if err != nil {
		return "", err
	}
	from := info.Start
	if info.Next-info.Start > n {
		from = info.Next - n
	}
	return seqText(from), nil
}

func (picoStreams) validPosition(pos string) bool {
	_, err := strconv.ParseUint(pos, 10, 64)
	return err == nil
}

func (p picoStreams) close(ctx context.Context, name string) (string, error) {
	got, err := p.c.CloseStream(ctx, name)
	return seqText(got.Next), err
}

func (p picoStreams) delete(ctx context.Context, name string) error { return p.c.Delete(ctx, name) }

func seqText(seq uint64) string { return strconv.FormatUint(seq, 10) }

// notFound reports a missing stream in either protocol.
func notFound(err error) bool { return picoclient.NotFound(err) || dsclient.NotFound(err) }
