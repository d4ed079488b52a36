package handlertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// FuzzRequest builds from fuzz input a request a real server could deliver
// to host, or nil: net/http itself refuses the rest before any handler.
// headers holds "Name: value" lines; chunked sends the body without a
// length.
func FuzzRequest(host, method, target, headers string, body []byte, chunked bool) *http.Request {
	if !isToken(method) {
		return nil
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil
	}
	h := http.Header{}
	for line := range strings.SplitSeq(headers, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) || strings.ContainsAny(value, "\r\n\x00") {
			continue
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	req := &http.Request{Method: method, URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: host, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	if chunked {
		req.ContentLength = -1
	}
	return req.WithContext(context.Background())
}

// isToken reports whether s is an HTTP token (RFC 9110), as a method or
// header name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
