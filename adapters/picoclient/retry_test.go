package picoclient

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
)

func TestTransientTellsPassingFailuresFromLastingOnes(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://n/s", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"503", &APIError{Status: 503}, true},
		{"500", &APIError{Status: 500}, true},
		{"429", &APIError{Status: 429}, true},
		{"404", &APIError{Status: 404, Code: "not_found"}, false},
		{"409 gap", &APIError{Status: 409, Code: "sequence_gap"}, false},
		{"connection refused", wrap(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"reset mid-body", fmt.Errorf("GET /s: %w", syscall.ECONNRESET), true},
		{"truncated body", fmt.Errorf("GET /s: %w", io.ErrUnexpectedEOF), true},
		{"server closed", wrap(io.EOF), true},
		{"server closed idle connection", wrap(errors.New("http: server closed idle connection")), true},
		{"client timeout", wrap(context.DeadlineExceeded), true},
		{"bad certificate", wrap(x509.UnknownAuthorityError{}), false},
		{"redirect refused", wrap(errors.New("redirect from https to http://n: the credential is not sent in the clear")), false},
		{"bad endpoint", errors.New(`endpoint "http://%zz": invalid URL escape`), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient %v, want %v", tc.name, got, tc.want)
		}
	}
}
