package picohttp

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// batchLimits bound a decoded request batch.
var batchLimits = picowire.BatchLimits{MaxRecords: 65536, MaxHeaders: 64}

const maxProducerIDBytes = 256

// The headers a request reads one value of (see headerval.Once).
var (
	appendOnce      = headerval.OnceHeaders(headerMatchSeq, headerClosed, headerProducerID, headerProducerEpoch, headerProducerSeq)
	trimOnce        = headerval.OnceHeaders(headerTrimSeq)
	contentTypeOnce = headerval.OnceHeaders(echo.HeaderContentType)
	createOnce      = headerval.OnceHeaders(echo.HeaderContentType, headerTTL, headerRetention, headerExpiresAt, headerClosed,
		headerSchema, headerSchemaCheck)
)

// post handles POST /name: a trim when Pico-Trim-Seq is present, else an
// append.
func (s *server) post(c echo.Context, name string) error {
	if err := trimOnce.Check(c.Request().Header); err != nil {
		return badRequest("%v", err)
	}
	if v := c.Request().Header.Get(headerTrimSeq); v != "" {
		return s.trim(c, name, v)
	}
	return s.append(c, name)
}

func (s *server) trim(c echo.Context, name, value string) error {
	seq, _, err := optionalUint(headerTrimSeq, value)
	if err != nil {
		return err
	}
	empty, err := s.bodyIsEmpty(c)
	if err != nil {
		return err
	}
	if !empty {
		return badRequest("trim takes no body")
	}
	start, err := s.streams.Trim(c.Request().Context(), name, seq)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	headerval.SetUint(h, headerStartSeq, start)
	h.Set(echo.HeaderCacheControl, cacheNoStore)
	return c.NoContent(http.StatusOK)
}

func (s *server) append(c echo.Context, name string) error {
	defer livehttp.Foreground(s.cfg.Reads)()
	req, err := appendHeaders(c.Request())
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	if len(body) == 0 && !req.Close {
		return badRequest("empty body")
	}
	if len(body) > 0 {
		// The content type matters only when there is a body to decode.
		if err := contentTypeOnce.Check(c.Request().Header); err != nil {
			return badRequest("%v", err)
		}
		if req.Records, err = decodeRecords(c.Request().Header.Get(echo.HeaderContentType), body); err != nil {
			return err
		}
	}
	res, err := s.streams.Append(c.Request().Context(), name, req)
	if err != nil {
		return err
	}
	writeAppendHeaders(c.Response().Header(), req, res)
	return c.NoContent(http.StatusOK)
}

// appendHeaders reads an append's producer, match and close headers.
func appendHeaders(r *http.Request) (ports.AppendRequest, error) {
	var req ports.AppendRequest
	if err := appendOnce.Check(r.Header); err != nil {
		return req, badRequest("%v", err)
	}
	var err error
	if req.Producer, err = producerStamp(r); err != nil {
		return req, err
	}
	match, present, err := optionalUint(headerMatchSeq, r.Header.Get(headerMatchSeq))
	if err != nil {
		return req, err
	}
	if present {
		req.MatchNext = &match
	}
	req.Close, err = boolHeader(r, headerClosed)
	return req, err
}

// producerStamp reads the idempotent-producer headers: all three or none.
func producerStamp(r *http.Request) (*domain.ProducerStamp, error) {
	id := r.Header.Get(headerProducerID)
	epochText, seqText := r.Header.Get(headerProducerEpoch), r.Header.Get(headerProducerSeq)
	if id == "" && epochText == "" && seqText == "" {
		return nil, nil
	}
	for _, h := range [][2]string{{headerProducerID, id}, {headerProducerEpoch, epochText}, {headerProducerSeq, seqText}} {
		if h[1] == "" {
			return nil, badRequest("%s is missing: an idempotent append needs %s, %s and %s",
				h[0], headerProducerID, headerProducerEpoch, headerProducerSeq)
		}
	}
	if len(id) > maxProducerIDBytes {
		return nil, badRequest("%s is %d bytes; the limit is %d", headerProducerID, len(id), maxProducerIDBytes)
	}
	epoch, _, err := optionalUint(headerProducerEpoch, epochText)
	if err != nil {
		return nil, err
	}
	seq, _, err := optionalUint(headerProducerSeq, seqText)
	if err != nil {
		return nil, err
	}
	return &domain.ProducerStamp{ID: id, Epoch: epoch, Seq: seq}, nil
}

// decodeRecords turns a non-empty body into records by its content type: a
// Pico batch, or else one record holding the body as is.
func decodeRecords(contentType string, body []byte) ([]domain.Record, error) {
	var records []domain.Record
	var err error
	switch {
	case domain.SameContentType(contentType, picowire.BatchJSONContentType):
		records, err = picowire.DecodeJSONBatch(body, batchLimits)
	case domain.SameContentType(contentType, picowire.BatchContentType):
		records, err = picowire.DecodeBatch(body, batchLimits)
	default:
		return []domain.Record{{Body: body}}, nil
	}
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return records, nil
}

func writeAppendHeaders(h http.Header, req ports.AppendRequest, res ports.AppendResult) {
	headerval.SetUint(h, headerNextSeq, res.Next)
	if !res.Duplicate && res.Next > res.First {
		headerval.SetUint(h, headerStartSeq, res.First)
		h.Set(headerTimestamp, strconv.FormatInt(res.TimestampMs, 10))
	}
	if p := req.Producer; p != nil {
		h.Set(headerProducerID, p.ID)
		headerval.SetUint(h, headerProducerEpoch, p.Epoch)
		headerval.SetUint(h, headerProducerSeq, res.ProducerSeq)
	}
	if res.Closed {
		h.Set(headerClosed, "true")
	}
	h.Set(echo.HeaderCacheControl, cacheNoStore)
}
