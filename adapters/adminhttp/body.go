package adminhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/adapters/internal/server/livehttp"
)

// maxBody bounds the body of every admin POST.
const maxBody = 1 << 10

// errBadBody: the body is not one JSON object of the request's fields.
var errBadBody = errors.New("not one JSON object of the request's fields")

// decodeBody reads a POST's body into out: one JSON object with none but
// out's fields, nothing after it, at most maxBody bytes (413 beyond).
func decodeBody(c echo.Context, out any) error { return decodeBodyUpTo(c, out, maxBody) }

// decodeBodyUpTo is decodeBody with a limit of its own.
func decodeBodyUpTo(c echo.Context, out any, limit int64) error {
	body, err := livehttp.ReadBody(c.Response().Writer, c.Request(), limit)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", limit))
	case livehttp.BodyTimedOut(err):
		return echo.NewHTTPError(http.StatusRequestTimeout, err.Error())
	case err != nil:
		return echo.NewHTTPError(http.StatusBadRequest, "reading the body: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		return errBadBody
	}
	return nil
}

// orUsage is a 400 with usage for a body decodeBody refused or that lacks
// a field, and decodeBody's own answer for a body it could not read.
func orUsage(err error, usage string) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return err
	}
	return echo.NewHTTPError(http.StatusBadRequest, usage)
}
