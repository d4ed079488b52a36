package streams

import (
	"testing"

	"github.com/picomq/pico/domain"
)

func TestConfigCacheFollowsTheMetaSlice(t *testing.T) {
	var c configCache
	a := domain.EncodeStreamConfig(domain.StreamConfig{ContentType: "text/plain", TTLSec: 5})
	got, err := c.decode(3, a)
	if err != nil || got.ContentType != "text/plain" || got.TTLSec != 5 {
		t.Fatalf("decode = %+v, %v", got, err)
	}
	if got, _ := c.decode(3, a); got.ContentType != "text/plain" {
		t.Fatalf("cached decode = %+v", got)
	}
	// A new configuration is a new slice, even of the same length.
	b := domain.EncodeStreamConfig(domain.StreamConfig{ContentType: "text/plaim", TTLSec: 5})
	if got, _ := c.decode(3, b); got.ContentType != "text/plaim" {
		t.Errorf("after a change: %+v", got)
	}
	// Another stream in the same slot is decoded for itself.
	if got, _ := c.decode(3+configSlots, a); got.ContentType != "text/plain" {
		t.Errorf("another stream: %+v", got)
	}
	if _, err := c.decode(4, []byte{0xff}); err == nil {
		t.Error("a malformed config decoded")
	}
	if got, err := c.decode(5, nil); err != nil || got.ContentType != domain.DefaultContentType {
		t.Errorf("empty meta: %+v, %v", got, err)
	}
}
