package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Create makes a stream, idempotently (see ports.Streams).
func (s *Service) Create(ctx context.Context, name string, cfg domain.StreamConfig, initial []domain.Record, close bool) (ports.StreamInfo, bool, error) {
	if cfg.ContentType == "" {
		cfg.ContentType = domain.DefaultContentType
	}
	if err := ports.Unfit(cfg, ports.AppendRequest{Records: initial}); err != nil {
		return ports.StreamInfo{}, false, err
	}
	if err := s.checkBinding(cfg); err != nil {
		return ports.StreamInfo{}, false, err
	}
	if err := s.schemaUnfit(cfg, initial); err != nil {
		return ports.StreamInfo{}, false, err
	}
	content := len(initial) > 0 || close
	for range 3 { // a lost race for the name is settled by reading the winner
		if st, err := s.touchView(name); err == nil {
			info, created, err := s.createExisting(ctx, st, cfg, initial, close)
			if errors.Is(err, ports.ErrStreamNotFound) {
				// The view showed a stream deleted since: catch up and
				// create it.
				if err := s.cfg.Plane.CatchUp(ctx); err != nil {
					return ports.StreamInfo{}, false, ports.Errorf(ports.ErrUnavailable, "creating %s: %v", name, err)
				}
				continue
			}
			return info, created, err
		} else if !errors.Is(err, ports.ErrStreamNotFound) {
			return ports.StreamInfo{}, false, goneIsConflict(err)
		}
		r, err := s.cfg.Plane.ProposeOne(ctx, s.creation(name, cfg, content))
		if err != nil {
			return ports.StreamInfo{}, false, err
		}
		switch r.Code {
		case domain.ResultOK:
			if info, elsewhere, err := s.placedElsewhere(name, r.Value, content); elsewhere {
				return info, err == nil, err
			}
			info, err := s.populate(ctx, name, r.Value, initial, close)
			return info, err == nil, err
		case domain.ResultExists:
			if err := s.dropExpired(ctx, name); err != nil {
				return ports.StreamInfo{}, false, err
			}
			continue
		default:
			return ports.StreamInfo{}, false, ports.Errorf(ports.ErrBadRequest, "cannot create %s: %s", name, r.Reason)
		}
	}
	return ports.StreamInfo{}, false, ports.Errorf(ports.ErrUnavailable, "stream %s is being created and deleted concurrently", name)
}

// createExisting answers a create of name, found in the view as st: it
// fills a stream placed here but not yet populated, or answers as existing.
func (s *Service) createExisting(ctx context.Context, st stream, cfg domain.StreamConfig, initial []domain.Record, close bool) (ports.StreamInfo, bool, error) {
	if filled, err := s.fillPlaced(ctx, st, cfg, initial, close); filled || err != nil {
		return s.headAfter(ctx, st, err)
	}
	info, err := s.existing(ctx, st, cfg, close)
	if err == nil && st.ForkOf != 0 {
		err = conflict(info, "stream exists as a fork")
	}
	return info, false, err
}

// existing answers a create of a stream that exists: equal config is
// success, anything else a conflict.
func (s *Service) existing(ctx context.Context, st stream, cfg domain.StreamConfig, close bool) (ports.StreamInfo, error) {
	info, err := s.head(ctx, st)
	if err != nil {
		return info, err
	}
	if differs := configDiffers(st.cfg, cfg); differs != "" {
		return info, conflict(info, differs)
	}
	if info.Closed != close {
		return info, conflict(info, fmt.Sprintf("stream exists with closed=%v", info.Closed))
	}
	return info, nil
}

// configDiffers says how a stream's config (has) differs from a create's
// (want), or "" when the create asks for the stream as it is.
func configDiffers(has, want domain.StreamConfig) string {
	switch {
	case !domain.SameContentType(has.ContentType, want.ContentType):
		return "stream exists with content type " + has.ContentType
	case has.TTLSec != want.TTLSec || has.ExpiresAtMs != want.ExpiresAtMs || has.IdleTTLSec != want.IdleTTLSec:
		return "stream exists with a different TTL or expiry"
	case has.Schema != want.Schema || has.SchemaValidate != want.SchemaValidate:
		return fmt.Sprintf("stream exists bound to schema %q (validate=%t)", has.Schema, has.SchemaValidate)
	}
	return ""
}

// conflict is the error of a create that finds the stream (info) made
// otherwise.
func conflict(info ports.StreamInfo, msg string) error {
	return &ports.StreamError{Kind: ports.ErrStreamConflict, Message: msg, Next: info.Next, HasNext: true, Closed: info.Closed}
}

// populate opens a stream this node just created and writes its initial
// records (and seal).
//
// Its expiry is not checked: a stream made already expired (Stream-TTL 0,
// an Expires-At in the past) is reported to its creator as made, as the
// reference server does, and is gone for every request after.
func (s *Service) populate(ctx context.Context, name string, id uint64, initial []domain.Record, close bool) (ports.StreamInfo, error) {
	st, err := s.created(name, id)
	if err != nil {
		return ports.StreamInfo{}, err
	}
	err = s.openAnd(ctx, st, func(h engine.Handle) error {
		if len(initial) == 0 && !close {
			return nil
		}
		_, err := h.Append(ctx, ports.AppendRequest{Records: initial, Close: close})
		return err
	})
	if err != nil {
		return ports.StreamInfo{}, err
	}
	if st, err = s.created(name, id); err != nil {
		return ports.StreamInfo{}, err
	}
	return s.head(ctx, st)
}

// created looks up stream id, which this call created as name, with its
// config, whether or not it has expired since.
func (s *Service) created(name string, id uint64) (stream, error) {
	v := s.cfg.Plane.View()
	st, ok := v.StreamByName(name)
	switch {
	case !ok:
		return stream{}, ports.Errorf(ports.ErrStreamNotFound, "no such stream: %s", name)
	case st.ID != id:
		return stream{}, ports.Errorf(ports.ErrUnavailable, "stream %s was replaced while being created", name)
	}
	cfg, err := domain.DecodeStreamConfig(st.Meta)
	return stream{st, cfg}, err
}

// Append writes records; see ports.Streams.
func (s *Service) Append(ctx context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	var res ports.AppendResult
	err := s.named(ctx, name, s.touch, func(st stream) error {
		unfit := ports.Unfit(st.cfg, req)
		if unfit == nil {
			unfit = s.schemaUnfit(st.cfg, req.Records)
		}
		return s.openAnd(ctx, st, func(h engine.Handle) (err error) {
			if unfit != nil {
				return h.Refuse(req, unfit)
			}
			res, err = h.Append(ctx, req)
			return err
		})
	})
	return res, err
}

// Trim drops records below seq; see ports.Streams.
func (s *Service) Trim(ctx context.Context, name string, seq uint64) (uint64, error) {
	var start uint64
	err := s.named(ctx, name, s.touch, func(st stream) error {
		return s.openAnd(ctx, st, func(h engine.Handle) (err error) {
			start, err = h.Trim(ctx, seq)
			return err
		})
	})
	return start, err
}

// Delete removes a stream; see ports.Streams.
func (s *Service) Delete(ctx context.Context, name string) error {
	return s.named(ctx, name, s.lookup, func(st stream) error { return s.delete(ctx, st) })
}

func (s *Service) delete(ctx context.Context, st stream) error {
	s.awaitLetGo(ctx, st)
	if err := s.cfg.Engine.Delete(ctx, st.ID); err != nil {
		return s.engineError(st, err)
	}
	s.access.forget(st.ID)
	return nil
}

// dropExpired deletes name if it exists and has expired, so its name can
// be created again.
func (s *Service) dropExpired(ctx context.Context, name string) error {
	v := s.cfg.Plane.View()
	st, ok := v.StreamByName(name)
	if !ok {
		return nil
	}
	cfg, err := domain.DecodeStreamConfig(st.Meta)
	if err != nil || !s.expired(st, cfg) {
		return err
	}
	err = s.delete(ctx, stream{st, cfg})
	if errors.Is(err, ports.ErrStreamNotFound) {
		return nil
	}
	return err
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
