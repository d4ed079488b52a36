package streamroute

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func TestRedirects(t *testing.T) {
	for routing, want := range map[string]bool{"": true, "redirect": true, "local": false} {
		if got, err := Redirects(routing); err != nil || got != want {
			t.Errorf("Redirects(%q) = %v, %v; want %v", routing, got, err, want)
		}
	}
	if _, err := Redirects("proxy"); err == nil {
		t.Error("an unknown routing mode was accepted")
	}
}

func TestAnswerRedirectKeepsPathAndQuery(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/a%20b?offset=-1&live=sse", nil)
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(req, rec)
	if !AnswerRedirect(&ports.RedirectError{Address: "http://n2:4437/"}, c, domain.ProtocolPico) {
		t.Fatal("redirect not answered")
	}
	if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "http://n2:4437/a%20b?offset=-1&live=sse" ||
		rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("%d %v", rec.Code, rec.Header())
	}
	both := &ports.RedirectError{Address: "http://n2:4437", Listeners: map[string]string{domain.ProtocolPico: "http://n2:4437", domain.ProtocolDS: "http://n2:4438"}}
	rec = httptest.NewRecorder()
	if !AnswerRedirect(both, echo.New().NewContext(req, rec), domain.ProtocolDS) || rec.Header().Get("Location") != "http://n2:4438/a%20b?offset=-1&live=sse" {
		t.Errorf("a Durable Streams client sent to %q, want the owner's Durable Streams listener", rec.Header().Get("Location"))
	}
	noDS := &ports.RedirectError{Address: "http://n2:4437", Listeners: map[string]string{domain.ProtocolPico: "http://n2:4437"}}
	for _, err := range []error{errors.New("other"), &ports.RedirectError{}, noDS} {
		if AnswerRedirect(err, echo.New().NewContext(req, httptest.NewRecorder()), domain.ProtocolDS) {
			t.Errorf("%v answered as a redirect", err)
		}
	}
}
