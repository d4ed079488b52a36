package prommetrics

import (
	"context"
	"errors"
	"time"

	"github.com/picomq/pico/ports"
)

const (
	reasonDuplicate = iota
	reasonStaleEpoch
	reasonGap
	reasonWriterSeq
	reasonMatchFailed
	reasonClosed
	numReasons
)

var reasonNames = [numReasons]string{"duplicate", "stale_epoch", "gap", "writer_seq", "match_failed", "closed"}

// Streams wraps the stream service both protocols drive with the append
// series.
func (m *Metrics) Streams(s ports.Streams) ports.Streams { return &streams{s, m} }

type streams struct {
	ports.Streams
	m *Metrics
}

func (s *streams) Append(ctx context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	start := time.Now()
	res, err := s.Streams.Append(ctx, name, req)
	m := s.m
	switch {
	case err == nil && res.Duplicate:
		m.rejections[reasonDuplicate].Inc()
	case err == nil:
		m.appendAck.Observe(time.Since(start).Seconds())
		if n := len(req.Records); n > 0 {
			bytes := 0
			for i := range req.Records {
				bytes += len(req.Records[i].Body)
			}
			m.appendRecords.Add(float64(n))
			m.appendBytes.Add(float64(bytes))
			m.appendBatch.Observe(float64(n))
		}
	case errors.Is(err, ports.ErrProducerFenced):
		m.rejections[reasonStaleEpoch].Inc()
	case errors.Is(err, ports.ErrProducerGap):
		m.rejections[reasonGap].Inc()
	case errors.Is(err, ports.ErrWriterSeq):
		m.rejections[reasonWriterSeq].Inc()
	case errors.Is(err, ports.ErrMatchFailed):
		m.rejections[reasonMatchFailed].Inc()
	case errors.Is(err, ports.ErrStreamClosed):
		m.rejections[reasonClosed].Inc()
	}
	return res, err
}
