package picoclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/picowire"
)

// ProducerStamp makes an append idempotent: the server applies each (ID,
// Epoch, Seq) once. Seq counts requests, not records, from 0 in each epoch;
// a higher epoch fences the lower ones. A Producer keeps the stamps for you.
type ProducerStamp struct {
	ID    string
	Epoch uint64
	Seq   uint64
}

// AppendOptions qualify an append.
type AppendOptions struct {
	// ContentType goes with a single record sent as a raw body; batches
	// carry their own media type.
	ContentType string
	// Producer makes the append idempotent: the server applies each
	// (id, epoch, seq) once.
	Producer *ProducerStamp
	// MatchSeq applies the append only if the stream's tail is this seq
	// (else a 412 *APIError).
	MatchSeq *uint64
	// Close closes the stream after the records; with no records it only
	// closes.
	Close bool
}

// AppendResult is the server's acknowledgement.
type AppendResult struct {
	Start, Next uint64    // seqs of the first appended record and of the tail after it
	Timestamp   time.Time // the server's timestamp of the appended records; zero if none
	Applied     bool      // false when nothing was written: a duplicate or a close only
	Closed      bool
	// ProducerSeq is, for a stamped append, the producer's last accepted
	// seq: the stamp's own, or a later one when the stamp is a duplicate.
	ProducerSeq uint64
}

// Append appends records as one atomic request: all or none are written,
// with consecutive seqs. Only Key, Headers and Body of each record are
// sent. A single record without a key or headers travels as the raw body;
// anything else as a binary batch. Append does not retry: a retry without a producer stamp
// could write the records twice (see Producer).
func (c *Client) Append(ctx context.Context, name string, records []Record, opts AppendOptions) (AppendResult, error) {
	if len(records) == 0 && !opts.Close {
		return AppendResult{}, errors.New("append: no records")
	}
	req := request{method: http.MethodPost, name: name, header: appendHeader(opts)}
	switch {
	case len(records) == 0:
	case isRawRecord(records):
		req.body = records[0].Body
		if opts.ContentType != "" {
			req.header.Set("Content-Type", opts.ContentType)
		}
	default:
		req.body = picowire.EncodeBatch(wireRecords(records))
		req.header.Set("Content-Type", picowire.BatchContentType)
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return AppendResult{}, err
	}
	return appendResult(resp.header)
}

// isRawRecord reports whether records can go as a plain body: one record,
// no key or headers, and not empty (an empty body would read as "close
// only").
func isRawRecord(records []Record) bool {
	if len(records) != 1 {
		return false
	}
	r := &records[0]
	return r.Key == nil && len(r.Headers) == 0 && len(r.Body) > 0
}

func appendHeader(opts AppendOptions) http.Header {
	h := http.Header{}
	if p := opts.Producer; p != nil {
		h.Set(hdrProducerID, p.ID)
		h.Set(hdrProducerEpoch, formatUint(p.Epoch))
		h.Set(hdrProducerSeq, formatUint(p.Seq))
	}
	if opts.MatchSeq != nil {
		h.Set(hdrMatchSeq, formatUint(*opts.MatchSeq))
	}
	if opts.Close {
		h.Set(hdrClosed, "true")
	}
	return h
}

func appendResult(h http.Header) (AppendResult, error) {
	r := AppendResult{Closed: headerTrue(h, hdrClosed)}
	var err error
	if r.Start, r.Applied, err = headerUint(h, hdrStartSeq); err != nil {
		return AppendResult{}, err
	}
	if r.Next, _, err = headerUint(h, hdrNextSeq); err != nil {
		return AppendResult{}, err
	}
	if v := h.Get(hdrTimestamp); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return AppendResult{}, errors.New("response header " + hdrTimestamp + ": not a number")
		}
		r.Timestamp = time.UnixMilli(ms)
	}
	if r.ProducerSeq, _, err = headerUint(h, hdrProducerSeq); err != nil {
		return AppendResult{}, err
	}
	return r, nil
}

// CloseStream closes the stream to appends; closing a closed stream
// succeeds.
func (c *Client) CloseStream(ctx context.Context, name string) (AppendResult, error) {
	return c.Append(ctx, name, nil, AppendOptions{Close: true})
}

// Trim drops the records before seq and returns the stream's new start,
// which the server may clamp (it never trims records not yet committed).
func (c *Client) Trim(ctx context.Context, name string, seq uint64) (uint64, error) {
	h := http.Header{}
	h.Set(hdrTrimSeq, formatUint(seq))
	resp, err := c.do(ctx, request{method: http.MethodPost, name: name, header: h})
	if err != nil {
		return 0, err
	}
	start, ok, err := headerUint(resp.header, hdrStartSeq)
	if err == nil && !ok {
		err = errors.New("trim response has no " + hdrStartSeq)
	}
	return start, err
}
