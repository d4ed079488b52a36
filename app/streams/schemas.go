package streams

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

var _ ports.Schemas = (*Service)(nil)

// validators keeps the compiled schemas, by name, for the revision of the
// registry entry they were compiled from: a schema is compiled once per
// registration, not once per append.
type validators struct {
	mu     sync.Mutex
	byName map[string]compiledSchema
}

type compiledSchema struct {
	rev uint64
	v   ports.RecordValidator
}

// PutSchema stores schema name once it compiles; see ports.Schemas.
func (s *Service) PutSchema(ctx context.Context, name string, sc domain.Schema) (bool, error) {
	if err := domain.CheckSchemaName(name); err != nil {
		return false, ports.Errorf(ports.ErrBadRequest, "%v", err)
	}
	if _, err := s.compile(sc); err != nil {
		return false, ports.Errorf(ports.ErrBadRequest, "schema %s: %v", name, err)
	}
	v := s.cfg.Plane.View()
	_, existed := v.KV(domain.SpaceRegistry, domain.SchemaKey(name))
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKV{By: s.cfg.By, Space: domain.SpaceRegistry,
		Key: domain.SchemaKey(name), Value: domain.EncodeSchema(sc)})
	if err != nil {
		return false, err
	}
	if !r.OK() {
		return false, ports.Errorf(ports.ErrBadRequest, "schema %s: %s", name, r.Reason)
	}
	return !existed, nil
}

// GetSchema returns schema name; see ports.Schemas.
func (s *Service) GetSchema(_ context.Context, name string) (domain.Schema, error) {
	sc, _, err := s.registered(name)
	return sc, err
}

// DeleteSchema removes schema name; see ports.Schemas.
func (s *Service) DeleteSchema(ctx context.Context, name string) error {
	if _, _, err := s.registered(name); err != nil {
		return err
	}
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.DeleteKV{By: s.cfg.By, Space: domain.SpaceRegistry, Key: domain.SchemaKey(name)})
	switch {
	case err != nil:
		return err
	case r.Code == domain.ResultRedundant:
		return schemaNotFound(name)
	case !r.OK():
		return ports.Errorf(ports.ErrBadRequest, "schema %s: %s", name, r.Reason)
	}
	return nil
}

// SetStreamSchema rebinds stream name, on its owner; see ports.Schemas.
func (s *Service) SetStreamSchema(ctx context.Context, name, schema string, validate bool) (ports.StreamInfo, error) {
	var info ports.StreamInfo
	err := s.named(ctx, name, s.lookup, func(st stream) error {
		cfg := st.cfg
		cfg.Schema, cfg.SchemaValidate = schema, validate
		if err := s.checkBinding(cfg); err != nil {
			return err
		}
		return s.openAnd(ctx, st, func(engine.Handle) error {
			v := s.cfg.Plane.View()
			cur, ok := v.Stream(st.ID)
			if !ok {
				return ports.ErrStreamNotFound
			}
			r, err := s.cfg.Plane.ProposeOne(ctx, &domain.SetStreamMeta{By: s.cfg.By, Stream: st.ID, Epoch: cur.Epoch,
				Meta: domain.EncodeStreamConfig(cfg)})
			if err != nil {
				return err
			}
			if !r.OK() {
				return ports.Errorf(ports.ErrUnavailable, "rebinding %s: %s; retry", name, r.Reason)
			}
			info, err = s.head(ctx, stream{Stream: cur, cfg: cfg})
			info.Config = cfg
			return err
		})
	})
	return info, err
}

// registered returns schema name as the view holds it, with the revision
// of its entry.
func (s *Service) registered(name string) (domain.Schema, uint64, error) {
	if err := domain.CheckSchemaName(name); err != nil {
		return domain.Schema{}, 0, ports.Errorf(ports.ErrBadRequest, "%v", err)
	}
	v := s.cfg.Plane.View()
	e, ok := v.KV(domain.SpaceRegistry, domain.SchemaKey(name))
	if !ok {
		return domain.Schema{}, 0, schemaNotFound(name)
	}
	sc, err := domain.DecodeSchema(e.Value)
	if err != nil {
		return domain.Schema{}, 0, fmt.Errorf("schema %s: %w", name, err)
	}
	return sc, e.Rev, nil
}

func schemaNotFound(name string) error {
	return ports.Errorf(ports.ErrSchemaNotFound, "no schema named %s is registered", name)
}

// checkBinding refuses a configuration whose schema binding cannot hold:
// a validation without a schema, or a schema that is not registered.
func (s *Service) checkBinding(cfg domain.StreamConfig) error {
	switch {
	case cfg.Schema == "" && cfg.SchemaValidate:
		return ports.Errorf(ports.ErrBadRequest, "schema validation needs a schema to validate against")
	case cfg.Schema == "":
		return nil
	}
	if _, _, err := s.registered(cfg.Schema); err != nil {
		if errors.Is(err, ports.ErrSchemaNotFound) {
			return ports.Errorf(ports.ErrBadRequest, "%v: register it first", err)
		}
		return err
	}
	return nil
}

// schemaUnfit is the fault of records a validating stream of cfg cannot
// take: the first whose body its schema refuses, or any record when the
// schema is gone.
func (s *Service) schemaUnfit(cfg domain.StreamConfig, records []domain.Record) error {
	if !cfg.SchemaValidate || len(records) == 0 {
		return nil
	}
	v, err := s.validator(cfg.Schema)
	if err != nil {
		return ports.Errorf(ports.ErrBadRequest, "the stream validates against schema %s: %v", cfg.Schema, err)
	}
	for i := range records {
		if err := v.Validate(records[i].Body); err != nil {
			return ports.Errorf(ports.ErrBadRequest, "record %d does not match schema %s: %v", i, cfg.Schema, err)
		}
	}
	return nil
}

// validator is schema name compiled, from the cache when its registry
// entry has not changed.
func (s *Service) validator(name string) (ports.RecordValidator, error) {
	sc, rev, err := s.registered(name)
	if err != nil {
		return nil, err
	}
	s.schemas.mu.Lock()
	c, ok := s.schemas.byName[name]
	s.schemas.mu.Unlock()
	if ok && c.rev == rev {
		return c.v, nil
	}
	v, err := s.compile(sc)
	if err != nil {
		return nil, err
	}
	s.schemas.mu.Lock()
	if s.schemas.byName == nil {
		s.schemas.byName = map[string]compiledSchema{}
	}
	s.schemas.byName[name] = compiledSchema{rev: rev, v: v}
	s.schemas.mu.Unlock()
	return v, nil
}

func (s *Service) compile(sc domain.Schema) (ports.RecordValidator, error) {
	if s.cfg.Schemas == nil {
		return nil, errors.New("this node has no schema compiler")
	}
	return s.cfg.Schemas.Compile(sc)
}
