package engine

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// keyedRecords are records with a key, the empty key and none, and a header
// value that is not text.
func keyedRecords() []domain.Record {
	return []domain.Record{
		{Key: []byte("order-9"), Headers: []domain.Header{{Key: "raw", Value: "\xff\x00"}}, Body: []byte("a")},
		{Key: []byte{}, Body: []byte("b")},
		{Body: []byte("c")},
	}
}

// Keys and byte-valued headers survive the WAL, an upload and a takeover
// that reads them back from the data object.
func TestKeysSurviveTheWALAndDataObjects(t *testing.T) {
	ctx := context.Background()
	log, store := memlog.New(), memstore.New()
	old := startProcess(t, log, store, 1, 1)
	id := old.create(t, "/keys")
	if _, err := old.engine.byID(id).Append(ctx, ports.AppendRequest{Records: keyedRecords()}); err != nil {
		t.Fatal(err)
	}
	wantKeyed(t, old.engine.byID(id), "from the tail")
	if _, err := old.engine.Upload(ctx); err != nil {
		t.Fatal(err)
	}
	successor := takeOver(t, log, store, 1, 2, old)
	successor.mustOpen(t, id)
	wantKeyed(t, successor.engine.byID(id), "after a takeover")
}

func wantKeyed(t *testing.T, h Handle, when string) {
	t.Helper()
	page, err := h.Read(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := keyedRecords()
	for i := range page.Records {
		page.Records[i].TimestampMs = 0
	}
	if !reflect.DeepEqual(page.Records, want) {
		t.Fatalf("%s: read %+v, want %+v", when, page.Records, want)
	}
}

// While a node of the cluster cannot read keyed frames, an append with
// keys is a 503 to retry, and one without keys goes on.
func TestKeysWaitForTheClusterLevel(t *testing.T) {
	ctx := context.Background()
	p := startProcess(t, memlog.New(), memstore.New(), 1, 1)
	declareLevel(t, p, domain.LevelSealFrames)
	id := p.create(t, "/keys")
	h := p.engine.byID(id)
	_, err := h.Append(ctx, ports.AppendRequest{Records: keyedRecords()})
	if !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("keyed append below LevelRecordKeys: %v, want ports.ErrUnavailable", err)
	}
	if _, err := h.Append(ctx, ports.AppendRequest{Records: records("plain")}); err != nil {
		t.Fatalf("an append without keys: %v", err)
	}
	wantPage(t, h, 1, []string{"plain"}, false)
}
