package picoclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/picomq/pico/adapters/internal/client/httpclient"
	"github.com/picomq/pico/adapters/picowire"
)

// captured is what a fake server saw of one request.
type captured struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         []byte
	protoMajor   int
}

// serve starts a fake server that records each request and answers with
// reply, and returns a client for it and the last request seen.
func serve(t *testing.T, reply http.HandlerFunc) (*Client, *captured) {
	t.Helper()
	seen := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*seen = captured{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(),
			body: body, protoMajor: r.ProtoMajor}
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, Options{}), seen
}

func TestHTTP2OptionNegotiatesH2C(t *testing.T) {
	var proto atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.Protocols = &http.Protocols{}
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	for _, h2 := range []bool{true, false} {
		if err := New(srv.URL, Options{HTTP2: h2}).Delete(t.Context(), "/s"); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int32{true: 2, false: 1}[h2]; proto.Load() != want {
			t.Fatalf("HTTP2=%v: server saw HTTP/%d, want HTTP/%d", h2, proto.Load(), want)
		}
	}
}

func TestRedirect307ResendsMethodHeadersAndBody(t *testing.T) {
	owner, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hdrStartSeq, "4")
		w.Header().Set(hdrNextSeq, "6")
	})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, owner.BaseURL()+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	records := []Record{{Body: []byte("a")}, {Body: []byte("b")}}
	got, err := New(front.URL, Options{}).Append(t.Context(), "/orders", records,
		AppendOptions{Producer: &ProducerStamp{ID: "p", Epoch: 1, Seq: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Start != 4 || got.Next != 6 {
		t.Fatalf("result %+v", got)
	}
	if seen.method != http.MethodPost || seen.path != "/orders" || seen.header.Get(hdrProducerID) != "p" ||
		seen.header.Get("Content-Type") != picowire.BatchContentType || string(seen.body) != string(picowire.EncodeBatch(wireRecords(records))) {
		t.Fatalf("the owner saw %s %s %v body %q", seen.method, seen.path, seen.header, seen.body)
	}
}

func TestRedirectsAreCapped(t *testing.T) {
	var hits atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	_, err := New(srv.URL, Options{}).Head(t.Context(), "/loop")
	if err == nil || !strings.Contains(err.Error(), "too many redirects") {
		t.Fatalf("err %v, want too many redirects", err)
	}
	if hits.Load() != 1+httpclient.MaxRedirects {
		t.Fatalf("%d requests, want the first plus %d redirects", hits.Load(), httpclient.MaxRedirects)
	}
}

func TestNamesArePathsAndUserAgentIsSent(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	if err := c.Delete(t.Context(), "chat/a b"); err != nil {
		t.Fatal(err)
	}
	if seen.path != "/chat/a b" || seen.header.Get("User-Agent") != defaultUserAgent {
		t.Fatalf("path %q user agent %q", seen.path, seen.header.Get("User-Agent"))
	}
}

func TestInvalidEndpointFailsEachCall(t *testing.T) {
	for _, endpoint := range []string{"127.0.0.1:4437", "ftp://h", "http://", "http://h?x=1"} {
		if _, err := New(endpoint, Options{}).Head(t.Context(), "/s"); err == nil || !strings.Contains(err.Error(), "endpoint") {
			t.Fatalf("endpoint %q: err %v", endpoint, err)
		}
	}
}

func TestResponseBodiesAreCapped(t *testing.T) {
	if _, err := readCapped(strings.NewReader("12345"), 4); err == nil {
		t.Fatal("a body over the cap was read")
	}
	if b, err := readCapped(strings.NewReader("1234"), 4); err != nil || string(b) != "1234" {
		t.Fatalf("%q %v", b, err)
	}
}
