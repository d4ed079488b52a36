package picohttp

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
)

// readBody reads the request body, at most cfg.MaxBodyBytes of it; a larger
// body is an *http.MaxBytesError (413).
func (s *server) readBody(c echo.Context) ([]byte, error) {
	body, err := livehttp.ReadBody(c.Response().Writer, c.Request(), s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, bodyError(err)
	}
	return body, nil
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
	if livehttp.BodyTimedOut(err) {
		return &protocolError{status: http.StatusRequestTimeout, code: codeTimeout, message: err.Error()}
	}
	return badRequest("cannot read the request body: %v", err)
}
