package picohttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/streamroute"
	"github.com/picomq/pico/adapters/internal/wire/headerval"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Reserved path prefixes of the schema registry: no stream lives under
// them.
const (
	schemasPrefix = "/_schemas/"
	streamsPrefix = "/_streams/"
)

// maxSchemaBytes bounds a registered schema: a value of the metadata log.
const maxSchemaBytes = 1 << 20

// serveSchema handles PUT, GET and DELETE /_schemas/{name}.
func (s *server) serveSchema(c echo.Context, name string) error {
	if s.cfg.Schemas == nil {
		return ports.Errorf(ports.ErrSchemaNotFound, "this node serves no schema registry")
	}
	ctx := c.Request().Context()
	switch c.Request().Method {
	case http.MethodPut:
		return s.putSchema(c, name)
	case http.MethodGet, http.MethodHead:
		sc, err := s.cfg.Schemas.GetSchema(ctx, name)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
		return c.Blob(http.StatusOK, schemaContentType(sc.Format), sc.Body)
	case http.MethodDelete:
		if err := s.cfg.Schemas.DeleteSchema(ctx, name); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
	return echo.ErrMethodNotAllowed
}

func (s *server) putSchema(c echo.Context, name string) error {
	r := c.Request()
	format, ok := domain.SchemaFormatOf(r.Header.Get(echo.HeaderContentType), name)
	if !ok {
		return badRequest("schema format unknown: send Content-Type application/schema+json, or name it NAME.json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxSchemaBytes))
	if err != nil {
		return badRequest("schema body: %v (at most %d bytes)", err, maxSchemaBytes)
	}
	created, err := s.cfg.Schemas.PutSchema(r.Context(), name, domain.Schema{Format: format, Body: body})
	if err != nil {
		return err
	}
	if created {
		return c.NoContent(http.StatusCreated)
	}
	return c.NoContent(http.StatusNoContent)
}

func schemaContentType(format string) string {
	for ct, f := range domain.SchemaContentTypes {
		if f == format {
			return ct
		}
	}
	return domain.DefaultContentType
}

// streamSchema is the body of GET and PATCH /_streams/{name}.
type streamSchema struct {
	Schema         *string `json:"schema"`
	SchemaValidate *bool   `json:"schemaValidate,omitempty"`
}

// serveStreamSchema handles GET and PATCH /_streams/{name}: a stream's
// schema binding.
func (s *server) serveStreamSchema(c echo.Context, name string) error {
	if s.cfg.Schemas == nil {
		return ports.Errorf(ports.ErrSchemaNotFound, "this node serves no schema registry")
	}
	r := c.Request()
	if s.redirect {
		if err := streamroute.ToOwner(s.streams, name); err != nil {
			return err
		}
	}
	switch r.Method {
	case http.MethodGet:
		info, err := s.streams.Head(r.Context(), name)
		if err != nil {
			return err
		}
		return writeStreamSchema(c, info.Config)
	case http.MethodPatch:
		info, err := s.streams.Head(r.Context(), name)
		if err != nil {
			return err
		}
		schema, validate, err := patchedBinding(r, info.Config)
		if err != nil {
			return err
		}
		if info, err = s.cfg.Schemas.SetStreamSchema(r.Context(), name, schema, validate); err != nil {
			return err
		}
		return writeStreamSchema(c, info.Config)
	}
	return echo.ErrMethodNotAllowed
}

// patchedBinding applies a PATCH body to the binding of cfg: absent keys
// keep their value, "schema": null unbinds and turns validation off.
func patchedBinding(r *http.Request, cfg domain.StreamConfig) (string, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil || len(body) > 64<<10 {
		return "", false, badRequest("the body must be a JSON object of at most 64 KiB")
	}
	var members map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&members); err != nil || members == nil || dec.More() {
		return "", false, badRequest(`the body must be a JSON object: {"schema": NAME or null, "schemaValidate": BOOL}`)
	}
	schema, validate := cfg.Schema, cfg.SchemaValidate
	for key, raw := range members {
		switch key {
		case "schema":
			if bytes.Equal(raw, []byte("null")) {
				schema, validate = "", false
			} else if json.Unmarshal(raw, &schema) != nil {
				return "", false, badRequest("schema must be a string or null")
			}
		case "schemaValidate":
			if json.Unmarshal(raw, &validate) != nil {
				return "", false, badRequest("schemaValidate must be true or false")
			}
		default:
			return "", false, badRequest("member %s is not part of a stream's schema binding (schema, schemaValidate)", headerval.Clip(key))
		}
	}
	if _, ok := members["schemaValidate"]; ok && schema == "" && validate {
		return "", false, badRequest("schemaValidate needs a schema")
	}
	return schema, validate, nil
}

func writeStreamSchema(c echo.Context, cfg domain.StreamConfig) error {
	out := streamSchema{SchemaValidate: &cfg.SchemaValidate}
	if cfg.Schema != "" {
		out.Schema = &cfg.Schema
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cacheNoStore)
	return c.JSONBlob(http.StatusOK, b)
}
