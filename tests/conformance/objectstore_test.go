package conformance_test

import (
	"context"
	"testing"

	"github.com/picomq/pico/adapters/filestore"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
	"github.com/picomq/pico/tests/s3test"
)

func TestObjectStore(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		conformance.ObjectStore(t, func(*testing.T) ports.ObjectStore { return memstore.New() })
	})
	t.Run("filestore", func(t *testing.T) {
		conformance.ObjectStore(t, func(t *testing.T) ports.ObjectStore {
			s, err := filestore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("filestore-url", func(t *testing.T) {
		s, err := filestore.Open("file://" + t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(t.Context(), "a/b", []byte("x")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("s3store", func(t *testing.T) {
		conformance.ObjectStore(t, func(t *testing.T) ports.ObjectStore {
			s, err := s3store.Open(context.Background(), s3test.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("s3store-prefix", func(t *testing.T) {
		conformance.ObjectStore(t, func(t *testing.T) ports.ObjectStore {
			url := s3test.URL(t)
			whole, err := s3store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			// Objects outside the prefix, which the store must not see.
			for _, key := range []string{"a", "some/prefix-other/x", "some/prefiy", "zzz"} {
				if err := whole.Put(t.Context(), key, []byte("outside")); err != nil {
					t.Fatal(err)
				}
			}
			s, err := s3store.Open(context.Background(), s3test.WithPrefix(t, url, "some/prefix"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}
