package livehttp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// TestAwaitRecordsRereadsOnChange: a change that brings nothing for this
// reader (a trim, say) does not end the wait.
func TestAwaitRecordsRereadsOnChange(t *testing.T) {
	reads := 0
	read := func() (ports.ReadResult, error) {
		reads++
		ch := make(chan struct{})
		if reads < 3 {
			close(ch) // changed at once, but still empty
		}
		return ports.ReadResult{UpToDate: reads < 3, Changed: ch}, nil
	}
	res, err := AwaitRecords(context.Background(), nil, time.Hour, nil, read)
	if err != nil || reads != 3 || res.UpToDate {
		t.Fatalf("reads %d, res %+v, err %v", reads, res, err)
	}
}

func TestAwaitRecordsAnswersAtOnce(t *testing.T) {
	for name, page := range map[string]ports.ReadResult{
		"records":         {UpToDate: true, Records: []domain.Record{{Body: []byte("x")}}},
		"closed":          {UpToDate: true, Closed: true},
		"behind the tail": {UpToDate: false},
	} {
		reads := 0
		res, err := AwaitRecords(context.Background(), nil, time.Hour, nil, func() (ports.ReadResult, error) {
			reads++
			return page, nil
		})
		if err != nil || reads != 1 || res.Closed != page.Closed || len(res.Records) != len(page.Records) {
			t.Errorf("%s: reads %d, res %+v, err %v", name, reads, res, err)
		}
	}
	boom := errors.New("boom")
	if _, err := AwaitRecords(context.Background(), nil, time.Hour, nil, func() (ports.ReadResult, error) {
		return ports.ReadResult{}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("err %v, want boom", err)
	}
}

// TestAwaitRecordsEnds: the timeout and stop read a last time; the client
// leaving returns the page in hand.
func TestAwaitRecordsEnds(t *testing.T) {
	idle := func(reads *int) func() (ports.ReadResult, error) {
		return func() (ports.ReadResult, error) {
			*reads++
			return ports.ReadResult{UpToDate: true, Changed: make(chan struct{})}, nil
		}
	}
	var reads int
	if _, err := AwaitRecords(context.Background(), nil, 10*time.Millisecond, nil, idle(&reads)); err != nil || reads != 2 {
		t.Errorf("timeout: reads %d, err %v", reads, err)
	}
	reads = 0
	stop := make(chan struct{})
	close(stop)
	if _, err := AwaitRecords(context.Background(), stop, time.Hour, nil, idle(&reads)); err != nil || reads != 2 {
		t.Errorf("stop: reads %d, err %v", reads, err)
	}
	reads = 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AwaitRecords(ctx, nil, time.Hour, nil, idle(&reads)); err != nil || reads != 1 {
		t.Errorf("client left: reads %d, err %v", reads, err)
	}
}

type fullParking struct{ parks, leaves int }

func (p *fullParking) Park() bool { p.parks++; return p.parks == 1 }
func (p *fullParking) Leave()     { p.leaves++ }

// TestAwaitRecordsParks: a wait takes a place and gives it back; a wait
// with none left is ErrTooManyLiveReaders; an answer at once takes none.
func TestAwaitRecordsParks(t *testing.T) {
	p := &fullParking{}
	idle := func() (ports.ReadResult, error) {
		return ports.ReadResult{UpToDate: true, Changed: make(chan struct{})}, nil
	}
	if _, err := AwaitRecords(context.Background(), nil, time.Millisecond, p, idle); err != nil || p.leaves != 1 {
		t.Fatalf("first wait: err %v, leaves %d", err, p.leaves)
	}
	if _, err := AwaitRecords(context.Background(), nil, time.Millisecond, p, idle); !errors.Is(err, ErrTooManyLiveReaders) || !errors.Is(err, ports.ErrUnavailable) {
		t.Fatalf("over the bound: err %v", err)
	}
	ready := func() (ports.ReadResult, error) { return ports.ReadResult{UpToDate: false}, nil }
	if _, err := AwaitRecords(context.Background(), nil, time.Hour, p, ready); err != nil || p.parks != 2 {
		t.Fatalf("answered at once: err %v, parks %d", err, p.parks)
	}
}
