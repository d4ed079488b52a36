package e2e

import (
	"net/url"
	"testing"

	"github.com/picomq/pico/tests/netfault"
)

// throughProxy is storeURL (from s3test.URL) with its endpoint replaced by
// a link to it, which a test drops (every connection, open or new, is
// closed) and heals: a store, or the network to it, that fails and comes
// back.
func throughProxy(t *testing.T, storeURL string) (string, *netfault.Link) {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	endpoint, err := url.Parse(q.Get("endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	link, err := netfault.Start(endpoint.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { link.Close() })
	endpoint.Host = link.Addr
	q.Set("endpoint", endpoint.String())
	u.RawQuery = q.Encode()
	return u.String(), link
}
