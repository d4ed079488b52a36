package streamsfake

import (
	"context"
	"errors"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// The fake must answer as the service does, or listener tests would state
// behaviour production does not have.
func TestProducerRulesMatchTheService(t *testing.T) {
	ctx := context.Background()
	f := New()
	if _, _, err := f.Create(ctx, "/s", domain.StreamConfig{}, nil, false); err != nil {
		t.Fatal(err)
	}
	app := func(epoch, seq uint64) (ports.AppendResult, error) {
		return f.Append(ctx, "/s", ports.AppendRequest{Records: []domain.Record{{Body: []byte("x")}},
			Producer: &domain.ProducerStamp{ID: "p", Epoch: epoch, Seq: seq}})
	}
	var se *ports.StreamError
	if _, err := app(1, 3); !errors.As(err, &se) || !errors.Is(se.Kind, ports.ErrProducerGap) || se.Write.NewEpoch {
		t.Fatalf("unknown producer starting at 3: %v", err)
	}
	if _, err := app(1, 0); err != nil {
		t.Fatal(err)
	}
	if res, err := app(1, 0); err != nil || !res.Duplicate {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if _, err := app(2, 1); !errors.As(err, &se) || !se.Write.NewEpoch {
		t.Fatalf("new epoch at 1: %v", err)
	}
	if _, err := app(0, 0); !errors.As(err, &se) || !errors.Is(se.Kind, ports.ErrProducerFenced) || se.Write.Epoch != 1 {
		t.Fatalf("stale epoch: %v", err)
	}
	if n := len(f.Records("/s")); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}

func TestReadAfterTrimAndWake(t *testing.T) {
	ctx := context.Background()
	f := New()
	recs := []domain.Record{{Body: []byte("a")}, {Body: []byte("b")}, {Body: []byte("c")}}
	if _, _, err := f.Create(ctx, "/s", domain.StreamConfig{}, recs, false); err != nil {
		t.Fatal(err)
	}
	if start, err := f.Trim(ctx, "/s", 1); err != nil || start != 1 {
		t.Fatalf("trim: %d %v", start, err)
	}
	res, err := f.Read(ctx, "/s", 0, ports.ReadLimits{Count: 1, Bytes: 10})
	if err != nil || res.From != 1 || res.Next != 2 || res.UpToDate || len(res.Records) != 1 {
		t.Fatalf("read %+v %v", res, err)
	}
	tail, _ := f.Read(ctx, "/s", 3, ports.ReadLimits{Bytes: 10})
	match := uint64(3)
	if _, err := f.Append(ctx, "/s", ports.AppendRequest{Records: recs[:1], MatchNext: &match}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tail.Changed:
	default:
		t.Fatal("an append did not wake a reader at the tail")
	}
	if f.AccessCount("/s") != 5 {
		t.Errorf("%d accesses, want 5 (create, trim, two reads, append)", f.AccessCount("/s"))
	}
}
