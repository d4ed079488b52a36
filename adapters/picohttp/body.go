package picohttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// readBody reads the request body, at most cfg.MaxBodyBytes of it; a larger
// body is an *http.MaxBytesError (413).
func (s *server) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	// The unwrapped writer lets net/http close the connection after a 413
	// instead of draining the rest of the body.
	body := http.MaxBytesReader(c.Response().Writer, r.Body, limit)
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, bodyError(err)
	}
	return buf.Bytes(), nil
}

// bodyIsEmpty reports whether the request has no body, reading at most one
// byte of it.
func (s *server) bodyIsEmpty(c echo.Context) (bool, error) {
	r := c.Request()
	if r.ContentLength > 0 {
		return false, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return true, nil
	}
	var one [1]byte
	n, err := io.ReadFull(r.Body, one[:])
	if n > 0 {
		return false, nil
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, bodyError(err)
	}
	return true, nil
}

func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	return badRequest("cannot read the request body: %v", err)
}
