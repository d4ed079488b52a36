package livehttp

import (
	"bytes"
	"io"
	"net/http"
)

// ReadBody reads r's body, at most limit bytes of it; a larger body is an
// *http.MaxBytesError. Any other error is the transport's. It reads the
// body whatever ContentLength says, so chunked bodies (length -1) arrive
// whole. w must be the server's own writer, not a wrapper: then net/http
// closes the connection after a 413 instead of draining the rest.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength == 0 {
		return nil, nil
	}
	if r.ContentLength > 0 {
		// The length is known and within the limit: read exactly it.
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
