package picobench

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/app/node"
	"github.com/picomq/pico/domain"
)

// BenchmarkDSAppendPathAuth is BenchmarkDSAppendPath's pico side with
// auth off and with auth required and a root token on every request, one
// after the other in one run: the difference in CPU µs and allocations
// per append is what the gate costs an append.
func BenchmarkDSAppendPathAuth(b *testing.B) {
	token := domain.FormatToken(domain.Credential{ID: "bench/root", Secret: []byte("0123456789abcdef0123456789abcdef")})
	for _, side := range []struct {
		name  string
		token string
	}{{"off", ""}, {"auth", token}} {
		b.Run(side.name, func(b *testing.B) {
			log := memlog.New()
			n, err := node.Start(context.Background(), node.Config{ID: 1, Address: "http://bench", Slots: 1, Log: log,
				Lease: log.Lease(), Store: pausingStore{memstore.New()}, AuthRequired: side.token != "", AuthBootstrap: side.token,
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { n.Close() })
			h := dshttp.New(dshttp.Config{Streams: n.Streams(), Auth: n.Auth()})
			if side.token != "" && serveWith(h, http.MethodHead, streamPath(0), "", nil, "") != http.StatusUnauthorized {
				b.Fatal("auth is not on")
			}
			measureAppends(b, h, 64, side.token)
		})
	}
}
