package streams

import (
	"context"
	"errors"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Fork creates a stream forked from another; see ports.Streams.
func (s *Service) Fork(ctx context.Context, name string, req ports.ForkRequest) (ports.StreamInfo, bool, error) {
	src, err := s.forkSource(ctx, req.Source)
	if err != nil {
		return ports.StreamInfo{}, false, err
	}
	cfg, err := forkConfig(src, req)
	if err == nil {
		err = ports.Unfit(cfg, ports.AppendRequest{Records: req.Initial})
	}
	if err != nil {
		return ports.StreamInfo{}, false, err
	}
	for range 3 { // a lost race for the name is settled by reading the winner
		if st, err := s.touchView(name); err == nil {
			info, err := s.existingFork(ctx, st, src, cfg, req.Close)
			return info, false, err
		} else if !errors.Is(err, ports.ErrStreamNotFound) {
			return ports.StreamInfo{}, false, goneIsConflict(err)
		}
		info, created, err := s.createFork(ctx, name, src, cfg, req)
		if err == nil || !errors.Is(err, errNameTaken) {
			return info, created, err
		}
	}
	return ports.StreamInfo{}, false, ports.Errorf(ports.ErrUnavailable, "stream %s is being created and deleted concurrently", name)
}

var errNameTaken = errors.New("name taken")

// forkSource finds the stream to fork: missing or expired is not found, a
// soft-deleted one a conflict.
func (s *Service) forkSource(ctx context.Context, name string) (stream, error) {
	src, err := s.lookup(ctx, name)
	switch {
	case errors.Is(err, ports.ErrStreamGone):
		return stream{}, ports.Errorf(ports.ErrStreamConflict, "fork source %s is deleted", name)
	case err != nil:
		return stream{}, ports.Errorf(ports.ErrStreamNotFound, "fork source %s does not exist", name)
	}
	return src, nil
}

// forkConfig completes the fork's config from its source: the content type
// (which must match when given) and, when the fork sets no expiry of its
// own, the source's.
func forkConfig(src stream, req ports.ForkRequest) (domain.StreamConfig, error) {
	cfg := req.Config
	switch {
	case cfg.ContentType == "":
		cfg.ContentType = src.cfg.ContentType
	case !domain.SameContentType(cfg.ContentType, src.cfg.ContentType):
		return cfg, ports.Errorf(ports.ErrStreamConflict, "fork content type %s differs from the source's %s", cfg.ContentType, src.cfg.ContentType)
	}
	if cfg.TTLSec == 0 && cfg.IdleTTLSec == 0 && cfg.ExpiresAtMs == 0 {
		cfg.TTLSec, cfg.IdleTTLSec, cfg.ExpiresAtMs = src.cfg.TTLSec, src.cfg.IdleTTLSec, src.cfg.ExpiresAtMs
	}
	cfg.ForkAtGiven, cfg.ForkSub = req.At != nil, req.SubOffset
	if req.At != nil {
		cfg.ForkAt = *req.At
	}
	return cfg, nil
}

// existingFork answers a fork request for a name that exists: the same
// source, fork point and config is success, anything else a conflict.
func (s *Service) existingFork(ctx context.Context, st stream, src stream, cfg domain.StreamConfig, close bool) (ports.StreamInfo, error) {
	info, err := s.existing(ctx, st, cfg, close)
	if err != nil {
		return info, err
	}
	if st.ForkOf != src.ID || st.cfg.ForkSub != cfg.ForkSub || !sameForkPoint(st, cfg) {
		return info, conflict(info, "stream exists, forked elsewhere or not at all")
	}
	return info, nil
}

// sameForkPoint reports whether a fork request's point (cfg) is the fork
// st's: any, when the request gives none; else the one st was asked for,
// or, when st was asked for none, the one it resolved to (the source's
// tail then, which a sub-offset cannot have moved: it needs an offset).
func sameForkPoint(st stream, cfg domain.StreamConfig) bool {
	switch {
	case !cfg.ForkAtGiven:
		return true
	case st.cfg.ForkAtGiven:
		return st.cfg.ForkAt == cfg.ForkAt
	}
	return st.ForkAt == cfg.ForkAt
}

// createFork pins the fork point in the source's committed records, creates
// the fork there and writes its first records: the materialised part of a
// record cut by a sub-offset, then the initial records.
func (s *Service) createFork(ctx context.Context, name string, src stream, cfg domain.StreamConfig, req ports.ForkRequest) (ports.StreamInfo, bool, error) {
	var at uint64
	var prefix []domain.Record
	err := s.openAnd(ctx, src, func(h engine.Handle) (err error) {
		if at, prefix, err = s.forkPoint(ctx, h, src, req); err != nil {
			return err
		}
		return h.CommitThrough(ctx, at)
	})
	if err != nil {
		return ports.StreamInfo{}, false, err
	}
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.CreateFork{By: s.cfg.By, Name: name, Meta: domain.EncodeStreamConfig(cfg),
		Source: src.ID, At: at, NowMs: s.cfg.Now().UnixMilli()})
	switch {
	case err != nil:
		return ports.StreamInfo{}, false, err
	case r.Code == domain.ResultExists:
		// Taken by a live stream (the caller's next try reads it) or by an
		// expired one, which goes first, as for a create.
		if err := s.dropExpired(ctx, name); err != nil {
			return ports.StreamInfo{}, false, err
		}
		return ports.StreamInfo{}, false, errNameTaken
	case r.Code == domain.ResultConflict:
		return ports.StreamInfo{}, false, ports.Errorf(ports.ErrStreamConflict, "fork source %s is deleted", src.Name)
	case r.Code == domain.ResultNotFound:
		return ports.StreamInfo{}, false, ports.Errorf(ports.ErrStreamNotFound, "fork source %s does not exist", src.Name)
	case !r.OK():
		return ports.StreamInfo{}, false, ports.Errorf(ports.ErrBadRequest, "cannot fork %s at %d: %s", src.Name, at, r.Reason)
	}
	info, err := s.populate(ctx, name, r.Value, append(prefix, req.Initial...), req.Close)
	return info, err == nil, err
}

// forkPoint resolves where the fork starts and the record prefix it
// materialises. At defaults to the source's tail and must not pass it.
// Engine errors are returned as they are, for openAnd.
func (s *Service) forkPoint(ctx context.Context, h engine.Handle, src stream, req ports.ForkRequest) (uint64, []domain.Record, error) {
	tail, err := h.Tail()
	if err != nil {
		return 0, nil, err
	}
	at := tail
	if req.At != nil {
		at = *req.At
	}
	switch {
	case at > tail:
		return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork offset %d is beyond the source's tail %d", at, tail)
	case at < s.cfg.Engine.ReadStart(src.ID):
		return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork offset %d is below the source's first record", at)
	case req.SubOffset == 0:
		return at, nil, nil
	case domain.IsJSON(src.cfg.ContentType):
		if at+req.SubOffset > tail {
			return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork sub-offset %d passes the source's %d messages after the fork offset", req.SubOffset, tail-at)
		}
		return at + req.SubOffset, nil, nil
	}
	return s.cutRecord(ctx, h, at, tail, req.SubOffset)
}

// cutRecord returns the first n bytes of the source's record at offset at,
// as the fork's first own record.
func (s *Service) cutRecord(ctx context.Context, h engine.Handle, at, tail, n uint64) (uint64, []domain.Record, error) {
	if at >= tail {
		return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork sub-offset %d with no record after the fork offset", n)
	}
	page, err := h.Read(ctx, at, 1)
	if err != nil {
		return 0, nil, err
	}
	if len(page.Records) == 0 || page.From != at {
		return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork offset %d has no record to cut", at)
	}
	rec := page.Records[0]
	if n > uint64(len(rec.Body)) {
		return 0, nil, ports.Errorf(ports.ErrBadRequest, "fork sub-offset %d is past the %d bytes of the record at %d", n, len(rec.Body), at)
	}
	return at, []domain.Record{{Headers: rec.Headers, Body: rec.Body[:n:n]}}, nil
}

// goneIsConflict: creating over a soft-deleted name is a conflict.
func goneIsConflict(err error) error {
	if errors.Is(err, ports.ErrStreamGone) {
		return ports.Errorf(ports.ErrStreamConflict, "the name belongs to a deleted stream kept for its forks")
	}
	return err
}
