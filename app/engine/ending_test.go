package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/memlog"
	"github.com/picomq/pico/adapters/memstore"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// lateAnswerLog writes the rows holding a command that only selects, and
// then keeps the writer waiting for its answer until release is closed:
// other readers of the log see the row at once.
type lateAnswerLog struct {
	ports.MetaLog
	only    func(domain.Command) bool
	written chan struct{}
	release chan struct{}
}

func (l *lateAnswerLog) Append(ctx context.Context, index uint64, payload []byte) error {
	err := l.MetaLog.Append(ctx, index, payload)
	cmds, _ := domain.DecodeRow(payload)
	for _, c := range cmds {
		if err == nil && l.only(c) {
			close(l.written)
			<-l.release
		}
	}
	return err
}

// TestAStreamBeingEndedAnswersNoReaderUntilTheOutcomeIsKnown: once this
// process's delete or close of a stream is in the log, others find the
// stream gone or closed; until the process learns the outcome, a head or a
// read of it here waits rather than report the stream as it was, and then
// answers as the outcome left it.
func TestAStreamBeingEndedAnswersNoReaderUntilTheOutcomeIsKnown(t *testing.T) {
	for name, c := range map[string]struct {
		only   func(domain.Command) bool
		end    func(*process, uint64) error
		wantAs error
	}{
		"delete": {func(c domain.Command) bool { _, ok := c.(*domain.DeleteStream); return ok },
			func(p *process, id uint64) error { return p.engine.Delete(context.Background(), id) }, ErrNotFound},
		"close": {func(c domain.Command) bool { _, ok := c.(*domain.CloseStream); return ok },
			func(p *process, id uint64) error { return p.engine.CloseAll(context.Background()) }, ErrNotLocal},
	} {
		t.Run(name, func(t *testing.T) {
			log := &lateAnswerLog{MetaLog: memlog.New(), only: c.only, written: make(chan struct{}), release: make(chan struct{})}
			p := startProcess(t, log, memstore.New(), 1, 1)
			id := p.create(t, "/ending")
			p.appendFirst(t, id, "a")
			h := p.engine.byID(id)
			if err := h.CommitThrough(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() { ended <- c.end(p, id) }()
			<-log.written
			if tail, _, err := h.End(); !errors.Is(err, ErrEnding) {
				t.Errorf("End while the %s's answer is on its way: tail %d, %v; want ErrEnding", name, tail, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			page, err := h.Read(ctx, 0, 10)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Read while the %s's answer is on its way: %d records, %v; want it to wait", name, len(page.Records), err)
			}
			close(log.release)
			if err := <-ended; err != nil {
				t.Fatal(err)
			}
			if _, _, err := h.End(); !errors.Is(err, c.wantAs) {
				t.Errorf("End once the %s is known: %v, want %v", name, err, c.wantAs)
			}
		})
	}
}
