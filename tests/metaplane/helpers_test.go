// Package metaplane tests the metadata plane against the real SQL logs:
// several processes on one Postgres, Postgres restarts, and benchmarks.
package metaplane

import (
	"context"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/sqllog"
	"github.com/picomq/pico/app/meta"
	"github.com/picomq/pico/domain"
)

func openLog(t testing.TB, url string) *sqllog.Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, err := sqllog.Open(ctx, url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}

func openPlane(t testing.TB, log *sqllog.Log, cfg meta.Config) *meta.Plane {
	t.Helper()
	cfg.Log = log
	p, err := meta.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open plane: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func register(t testing.TB, p *meta.Plane, node domain.NodeID, epoch uint64) domain.Proposer {
	t.Helper()
	r, err := p.ProposeOne(context.Background(), &domain.RegisterNode{Node: node, Epoch: epoch, Address: "x", Slots: 1})
	if err != nil || !r.OK() {
		t.Fatalf("register node %d: %v %v", node, r, err)
	}
	return domain.Proposer{Node: node, Epoch: epoch}
}
