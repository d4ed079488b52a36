package streams

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/ports"
)

// An append that found its stream open here just before a dead-WAL takeover
// closed it (the takeover lets the streams it recovers go at once) is
// served, not refused: the engine refused it before any effect, so the
// stream opens again and the append runs again, once.
func TestAppendRacingATakeoverCloseIsServed(t *testing.T) {
	store := &hookedStore{Store: memstore.New()}
	p := start(t, memlog.New(), store, 1, newClock())
	mustCreate(t, p, "/s")
	mustAppend(t, p, "/s", "a")
	v := p.plane.View()
	st, _ := v.StreamByName("/s")

	// The close holds the stream's gate while it uploads "a".
	uploading, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	store.mu.Lock()
	store.onPut = func(key string) {
		if !strings.HasPrefix(key, "wal/") {
			once.Do(func() { close(uploading); <-release })
		}
	}
	store.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- p.engine.Close(context.Background(), st.ID) }()
	<-uploading
	appended := make(chan error, 1)
	go func() {
		_, err := p.svc.Append(context.Background(), "/s", ports.AppendRequest{Records: recs("b")})
		appended <- err
	}()
	time.Sleep(100 * time.Millisecond) // the append found the stream open and waits for its gate
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := <-appended; err != nil {
		t.Fatalf("append racing the close: %v", err)
	}
	page, err := p.svc.Read(context.Background(), "/s", 0, ports.ReadLimits{})
	if want := []string{"a", "b"}; err != nil || !slices.Equal(bodies(page.Records), want) {
		t.Fatalf("read %v, %v; want %v", bodies(page.Records), err, want)
	}
}
