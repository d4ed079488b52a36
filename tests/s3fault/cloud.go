package s3fault

import (
	"net/url"
	"testing"

	"github.com/picomq/pico/tests/s3test"
)

// CloudURL is a fresh versitygw bucket's store URL (s3test.URL) reached
// through a proxy that adds profile's latency to every request, as a cloud
// store would. The proxy stops when the test ends.
func CloudURL(tb testing.TB, profile Latency) string {
	u, err := url.Parse(s3test.URL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	proxy, err := Start(q.Get("endpoint"), 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { proxy.Close() })
	proxy.Set(Faults{Latency: profile})
	q.Set("endpoint", proxy.URL)
	u.RawQuery = q.Encode()
	return u.String()
}

// Profiles are the cloud latency profiles benchmarks run on, by name.
var Profiles = []struct {
	Name    string
	Latency Latency
}{{"s3-standard", S3Standard}, {"s3-express", S3Express}}
