package dshttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// maxProducerIDBytes bounds a producer id, which every append of the
// producer stores; the Pico protocol has the same bound.
const maxProducerIDBytes = 256

// maxWriterSeqBytes bounds Stream-Seq, which the stream keeps with its
// records and in every data object section.
const maxWriterSeqBytes = 1024

// maxSafeInteger is 2^53-1, the largest integer JavaScript clients hold
// exactly: producer epochs and sequences stay within it.
const maxSafeInteger = 1<<53 - 1

// The headers a request reads one value of (see headerval.Once), each
// checked where the request reads it, so that the protocol's order of
// errors holds.
var (
	appendOnce      = headerval.OnceHeaders(headerProducerID, headerProducerEpoch, headerProducerSeq, headerClosed)
	contentTypeOnce = headerval.OnceHeaders(echo.HeaderContentType)
	writerSeqOnce   = headerval.OnceHeaders(headerSeq)
	createOnce      = headerval.OnceHeaders(echo.HeaderContentType, headerTTL, headerExpiresAt, headerClosed,
		headerForkedFrom, headerForkOffset, headerForkSubOffset, headerSchema, headerSchemaCheck)
)

// append handles POST: an append, an append that closes the stream, or a
// close without data. One service call does it: the records are decoded by
// the request's Content-Type, which the service checks against the
// stream's. A request refused here is explained by looking the stream up
// (explain), so that errors keep the protocol's order: missing stream,
// producer headers, body, closed, content type, then the service's own
// checks (producer, Stream-Seq).
func (s *server) append(c echo.Context, name string) error {
	defer livehttp.Foreground(s.cfg.Reads)()
	r := c.Request()
	if err := appendOnce.Check(r.Header); err != nil {
		return s.explain(c, name, badRequest("%v", err))
	}
	producer, err := producerStamp(r.Header)
	if err != nil {
		return s.explain(c, name, err)
	}
	body, err := s.readBody(c)
	if err != nil {
		return s.explain(c, name, err)
	}
	req := ports.AppendRequest{Producer: producer, Close: closedHeader(r.Header)}
	if len(body) == 0 {
		if !req.Close {
			return s.explain(c, name, badRequest("empty body: an append needs data, or %s: true to close", headerClosed))
		}
		// A close carries no data, so its content type is not checked.
		return s.writeAppend(c, name, req)
	}
	if err := contentTypeOnce.Check(r.Header); err != nil {
		return s.explain(c, name, badRequest("%v", err))
	}
	if req.ContentType, _ = first(r.Header[keyContentType]); req.ContentType == "" {
		return s.explain(c, name, badRequest("an append with a body needs a Content-Type"))
	}
	if req.Records, err = bodyRecords(req.ContentType, body, false); err != nil {
		return s.explainBody(c, name, req.ContentType, err)
	}
	if err := writerSeqOnce.Check(r.Header); err != nil {
		return s.explainBody(c, name, req.ContentType, badRequest("%v", err))
	}
	if req.WriterSeq, _ = first(r.Header[keySeq]); len(req.WriterSeq) > maxWriterSeqBytes {
		return s.explainBody(c, name, req.ContentType, badRequest("%s is %d bytes; the limit is %d", headerSeq, len(req.WriterSeq), maxWriterSeqBytes))
	}
	return s.writeAppend(c, name, req)
}

// explain returns the error a missing stream gives, which comes first, or
// else err.
func (s *server) explain(c echo.Context, name string, err error) error {
	if _, herr := s.streams.Head(c.Request().Context(), name); herr != nil {
		return herr
	}
	return err
}

// explainBody explains a refused append with a body of contentType: a
// missing or closed stream, or one of another content type, comes before
// the fault of the body or of the headers checked after it.
func (s *server) explainBody(c echo.Context, name, contentType string, err error) error {
	info, ferr := s.missingOrClosed(c, name)
	switch {
	case ferr != nil:
		return ferr
	case !domain.SameContentType(contentType, contentTypeOf(info.Config)):
		return statusError(http.StatusConflict, "Content-Type %s does not match the stream's %s", headerval.Clip(contentType), headerval.Clip(contentTypeOf(info.Config)))
	}
	return err
}

// writeAppend appends and answers: 200 when a producer wrote new data,
// else 204 (a plain append, a duplicate, a close). The answer has no
// content, so it carries no Content-Type, and a response to POST is never
// stored by a cache without explicit freshness (RFC 9111), so no
// Cache-Control either: each header an append's answer carries costs the
// server and the client about a microsecond.
func (s *server) writeAppend(c echo.Context, name string, req ports.AppendRequest) error {
	res, err := s.streams.Append(c.Request().Context(), name, req)
	if err = closedFirst(res, err); err != nil {
		return err
	}
	h := c.Response().Header()
	headerval.Put(h, keyNextOffset, formatOffset(res.Next))
	if res.Closed {
		h[keyClosed] = closedTrue
	}
	if p := req.Producer; p != nil {
		headerval.Put(h, keyProducerEpoch, strconv.FormatUint(p.Epoch, 10))
		headerval.Put(h, keyProducerSeq, strconv.FormatUint(acceptedSeq(p, res), 10))
	}
	if req.Producer != nil && !res.Duplicate && len(req.Records) > 0 {
		return c.NoContent(http.StatusOK)
	}
	return c.NoContent(http.StatusNoContent)
}

var closedTrue = headerval.Shared("true")

// closedFirst is the answer to a producer's request on a closed stream:
// the protocol refuses any request on a closed stream but the retry of the
// one that closed it, before it judges the producer's stamp (§5.2.1), where
// the write rules judge the stamp first. Otherwise it is err.
func closedFirst(res ports.AppendResult, err error) error {
	if err == nil {
		if res.Duplicate && res.Closed && !res.RepeatsClose {
			return closedError(res.Tail)
		}
		return nil
	}
	var se *ports.StreamError // declared here, so that only a refusal allocates it
	if errors.As(err, &se) && se.Verdict().Closed {
		return closedError(se.Verdict().Tail)
	}
	return err
}

// missingOrClosed looks up the stream of a refused request: if it is
// missing or closed, that is the answer, before any fault of the request.
func (s *server) missingOrClosed(c echo.Context, name string) (ports.StreamInfo, error) {
	info, err := s.streams.Head(c.Request().Context(), name)
	if err == nil && info.Closed {
		err = closedError(info.Next)
	}
	return info, err
}

// acceptedSeq is the producer's last accepted sequence after res: the
// request's own when it was accepted, the earlier one on a duplicate.
func acceptedSeq(p *domain.ProducerStamp, res ports.AppendResult) uint64 {
	if res.Duplicate {
		return res.ProducerSeq
	}
	return p.Seq
}

// producerStamp reads the idempotent-producer headers: all three or none.
func producerStamp(h http.Header) (*domain.ProducerStamp, error) {
	id, hasID := first(h[keyProducerID])
	epochText, hasEpoch := first(h[keyProducerEpoch])
	seqText, hasSeq := first(h[keyProducerSeq])
	switch {
	case !hasID && !hasEpoch && !hasSeq:
		return nil, nil
	case !hasID || !hasEpoch || !hasSeq:
		return nil, badRequest("an idempotent append needs all of %s, %s and %s", headerProducerID, headerProducerEpoch, headerProducerSeq)
	case id == "":
		return nil, badRequest("%s is empty", headerProducerID)
	case len(id) > maxProducerIDBytes:
		return nil, badRequest("%s is %d bytes; the limit is %d", headerProducerID, len(id), maxProducerIDBytes)
	}
	epoch, err := producerNumber(headerProducerEpoch, epochText)
	if err != nil {
		return nil, err
	}
	seq, err := producerNumber(headerProducerSeq, seqText)
	if err != nil {
		return nil, err
	}
	return &domain.ProducerStamp{ID: id, Epoch: epoch, Seq: seq}, nil
}

// producerNumber parses a producer epoch or sequence: digits, at most
// 2^53-1.
func producerNumber(field, v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if !headerval.IsDigits(v) || err != nil || n > maxSafeInteger {
		return 0, badRequest("%s must be an integer from 0 to %d, got %s", field, uint64(maxSafeInteger), headerval.Clip(v))
	}
	return n, nil
}
