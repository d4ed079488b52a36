package s3store

import (
	"errors"
	"fmt"
	"net"
	"net/http"
)

// explained is an SDK error said in a line an operator can act on; the
// SDK's own error stays below it for errors.Is and errors.As.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// credentialCodes are the S3 error codes of refused credentials.
var credentialCodes = map[string]bool{
	"InvalidAccessKeyId": true, "SignatureDoesNotMatch": true, "AccessDenied": true,
	"InvalidToken": true, "ExpiredToken": true, "InvalidSecurity": true,
}

// explain says what a misconfigured store's error means (a missing bucket,
// refused credentials, an endpoint nobody answers at); other errors pass
// unchanged.
func (s *Store) explain(err error) error {
	code := errorCode(err)
	var netErr *net.OpError
	switch {
	case err == nil:
		return nil
	case code == "NoSuchBucket":
		return &explained{fmt.Sprintf("bucket %q does not exist (create it, or fix the storage URL)", s.bucket), err}
	case credentialCodes[code], code == "" && httpStatus(err) == http.StatusForbidden:
		return &explained{fmt.Sprintf("the store refuses the credentials (%s): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE",
			orStatus(code, err)), err}
	case errors.As(err, &netErr):
		return &explained{fmt.Sprintf("cannot reach the store: %v", netErr), err}
	}
	return err
}

func orStatus(code string, err error) string {
	if code != "" {
		return code
	}
	return fmt.Sprintf("HTTP %d", httpStatus(err))
}
