package httpclient

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

const testToken = "c3ZjL2luZ2VzdA.AQEBAQEBAQEBAQEBAQEBAQ"

// hop is what one server saw of a request.
type hop struct{ method, path, authorization, body string }

// recorder is a server that records each request and answers with reply.
type recorder struct {
	mu   sync.Mutex
	hops []hop
	srv  *httptest.Server
}

func newRecorder(t *testing.T, tlsServer bool, reply http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hops = append(r.hops, hop{req.Method, req.URL.Path, req.Header.Get("Authorization"), string(body)})
		r.mu.Unlock()
		reply(w, req)
	})
	if tlsServer {
		r.srv = httptest.NewTLSServer(h)
	} else {
		r.srv = httptest.NewServer(h)
	}
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) seen() []hop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hop(nil), r.hops...)
}

// otherHost names srv by the host name "owner.test" and makes e's dialer
// reach it there. net/http compares host names, not ports, when it decides
// whether a redirect keeps Authorization, so an owner at 127.0.0.1 on
// another port would keep it even without the endpoint's help.
func otherHost(t *testing.T, e *Endpoint, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	addr := u.Host
	transport := e.HTTP.Transport.(*http.Transport)
	dial := transport.DialContext
	transport.DialContext = func(ctx context.Context, network, target string) (net.Conn, error) {
		if strings.HasPrefix(target, "owner.test:") {
			target = addr
		}
		return dial(ctx, network, target)
	}
	return u.Scheme + "://owner.test:" + u.Port()
}

func send(t *testing.T, e *Endpoint, method, name, body string) (int, error) {
	t.Helper()
	req, err := e.NewRequest(t.Context(), method, name, nil, nil, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestTheTokenGoesWithEveryRedirectHop(t *testing.T) {
	owner := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	var ownerURL string
	front := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ownerURL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	e := New(front.srv.URL, Options{Token: testToken, UserAgent: "test"})
	ownerURL = otherHost(t, e, owner.srv)
	status, err := send(t, e, http.MethodPost, "/orders", "a record")
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("status %d, err %v: the owner refused the request", status, err)
	}
	want := hop{http.MethodPost, "/orders", "Bearer " + testToken, "a record"}
	if got := front.seen(); len(got) != 1 || got[0] != want {
		t.Fatalf("the front saw %+v, want %+v", got, want)
	}
	if got := owner.seen(); len(got) != 1 || got[0] != want {
		t.Fatalf("the owner saw %+v, want %+v", got, want)
	}
}

func TestNoTokenSendsNoAuthorization(t *testing.T) {
	owner := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	front := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, owner.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	if _, err := send(t, New(front.srv.URL, Options{}), http.MethodGet, "/s", ""); err != nil {
		t.Fatal(err)
	}
	for _, h := range append(front.seen(), owner.seen()...) {
		if h.authorization != "" {
			t.Fatalf("a request without a token carried Authorization %q", h.authorization)
		}
	}
	if len(owner.seen()) != 1 {
		t.Fatalf("the owner saw %d requests", len(owner.seen()))
	}
}

func TestTheTokenIsNotSentInTheClearAfterHTTPS(t *testing.T) {
	plain := newRecorder(t, false, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	front := newRecorder(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	e := New(front.srv.URL, Options{Token: testToken})
	e.HTTP.Transport.(*http.Transport).TLSClientConfig = front.srv.Client().Transport.(*http.Transport).TLSClientConfig
	_, err := send(t, e, http.MethodGet, "/s", "")
	if err == nil || !strings.Contains(err.Error(), "not sent in the clear") {
		t.Fatalf("err %v, want the redirect to http refused", err)
	}
	if len(front.seen()) != 1 || len(plain.seen()) != 0 {
		t.Fatalf("the https front saw %d requests, the http server %d: want 1 and 0", len(front.seen()), len(plain.seen()))
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("the error shows the token: %v", err)
	}
}

func TestNewEscapedRequestKeepsTheEscapes(t *testing.T) {
	var uri string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri = r.RequestURI
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := New(srv.URL+"/base", Options{})
	req, err := e.NewEscapedRequest(t.Context(), http.MethodDelete, "/admin/tokens/"+url.PathEscape("svc/a b"), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if uri != "/base/admin/tokens/svc%2Fa%20b" {
		t.Fatalf("the server saw %q", uri)
	}
	if _, err := e.NewEscapedRequest(t.Context(), http.MethodGet, "/bad%zz", nil, nil, nil); err == nil {
		t.Fatal("a malformed escape was sent")
	}
}
