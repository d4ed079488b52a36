package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/picomq/pico/domain"
)

// gcBatch bounds the objects deleted per pass.
const gcBatch = 1000

// CollectGarbage deletes the bytes of objects marked as garbage (by trim,
// delete, compaction or expired reservations), then proposes DestroyObjects
// so the catalog forgets them. Bytes go first: a crash in between leaves a
// mark whose bytes are already gone, and deleting an absent key is not an
// error, so the next pass simply finishes the job. It returns the number of
// objects destroyed.
func (e *Engine) CollectGarbage(ctx context.Context) (int, error) {
	v := e.cfg.Plane.View()
	var ids []uint64
	v.GarbageFrom(0, func(id uint64, _ domain.Garbage) bool {
		ids = append(ids, id)
		return len(ids) < gcBatch
	})
	if len(ids) == 0 {
		return 0, nil
	}
	for _, id := range ids {
		if err := e.cfg.Store.Delete(ctx, domain.DataKey(id)); err != nil {
			return 0, fmt.Errorf("engine: delete object %d: %w", id, err)
		}
		e.indexes.forget(id)
	}
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.DestroyObjects{By: e.cfg.By, IDs: ids})
	if err != nil || !r.OK() {
		return 0, fmt.Errorf("engine: destroy objects: %v %v", r, err)
	}
	e.destroyed.Add(int64(r.Value))
	return int(r.Value), nil
}

// Destroyed counts the objects this process's garbage collection
// destroyed.
func (e *Engine) Destroyed() int64 { return e.destroyed.Load() }

// ExpireReservations marks object ids reserved longer ago than their TTL
// as garbage: an upload that crashed after its PUT left bytes behind. It
// proposes only when the view holds such ids, so that an idle cluster
// writes no log rows.
func (e *Engine) ExpireReservations(ctx context.Context) error {
	now, v := e.cfg.Now().UnixMilli(), e.cfg.Plane.View()
	if len(v.ExpiredReservations(now)) == 0 {
		return nil
	}
	_, err := e.cfg.Plane.ProposeOne(ctx, &domain.ExpireReservations{By: e.cfg.By, NowMs: now})
	return err
}

// LeaseHolder reports whether this node holds the maintenance lease.
type LeaseHolder interface {
	Held() (epoch uint64, held bool)
}

// RunMaintenance uploads every uploadEvery (and at once when appends wait
// for room), compacts and releases idle streams every maintainEvery and,
// while lease says this node holds the maintenance lease, runs the lease
// holder's chores every maintainEvery too (however long uploadEvery is),
// until ctx ends. Errors are logged and retried on the next tick: every
// step is idempotent.
func (e *Engine) RunMaintenance(ctx context.Context, lease LeaseHolder, uploadEvery, maintainEvery time.Duration) {
	upload, maintain := time.NewTicker(uploadEvery), time.NewTicker(maintainEvery)
	defer upload.Stop()
	defer maintain.Stop()
	defer e.deadWALs.passes.Wait()
	uploadFailing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-maintain.C:
			e.compactAll(ctx)
			if n := e.releaseIdle(); e.cfg.Released != nil {
				e.cfg.Released(n)
			}
			e.maintain(ctx, lease)
			continue
		case <-upload.C:
		case <-e.kick:
		}
		_, err := e.Upload(ctx)
		uploadFailing = e.logUpload(ctx, uploadFailing, err)
	}
}

// logUpload logs a change of the periodic upload's state, not every
// failed round while the object store is down, and says whether it fails.
func (e *Engine) logUpload(ctx context.Context, failing bool, err error) bool {
	switch {
	case ctx.Err() != nil:
	case err != nil && !failing:
		e.cfg.Logger.Warn("upload to data objects failing; retried every round", "err", err)
	case err != nil:
		e.cfg.Logger.Debug("upload to data objects failed", "err", err)
	case failing:
		e.cfg.Logger.Info("upload to data objects succeeds again")
	}
	return err != nil && ctx.Err() == nil
}

// maintain runs the lease holder's chores: reservation expiry, garbage
// collection and the dead-WAL passes.
func (e *Engine) maintain(ctx context.Context, lease LeaseHolder) {
	if _, held := lease.Held(); !held {
		return
	}
	if err := e.ExpireReservations(ctx); err != nil && ctx.Err() == nil {
		e.cfg.Logger.Warn("reservation expiry failed", "err", err)
	}
	if _, err := e.CollectGarbage(ctx); err != nil && ctx.Err() == nil {
		e.cfg.Logger.Warn("garbage collection failed", "err", err)
	}
	e.startDeadWALPass(ctx)
}

// startDeadWALPass runs a due dead-WAL pass beside the maintenance loop,
// one pass at a time: its takeovers may take a while, and the loop must go
// on uploading (appends waiting for room depend on it).
func (e *Engine) startDeadWALPass(ctx context.Context) {
	d := &e.deadWALs
	if !d.running.CompareAndSwap(false, true) {
		return
	}
	if !e.deadWALPassDue() {
		d.running.Store(false)
		return
	}
	d.passes.Go(func() {
		defer d.running.Store(false)
		e.runDeadWALPass(ctx)
	})
}

// deadWALPassDue reports whether a dead-WAL pass is due, and if so counts
// it as started: every deadWALsEvery, at once when a node registered or was
// fenced (a process may have just gone), and on the next tick while a pass
// leaves work.
func (e *Engine) deadWALPassDue() bool {
	v := e.cfg.Plane.View()
	now, nodes := e.cfg.Now(), nodesFingerprint(&v)
	d := &e.deadWALs
	if now.Sub(d.at) < deadWALsEvery && !d.again && nodes == d.nodes {
		return false
	}
	d.at, d.nodes = now, nodes
	return true
}

// runDeadWALPass takes over what gone processes left in their WALs, then
// deletes the bulks no takeover needs.
func (e *Engine) runDeadWALPass(ctx context.Context) {
	d := &e.deadWALs
	budget, cancel := context.WithTimeout(ctx, deadWALPassBudget)
	defer cancel()
	var err error
	if _, d.again, err = e.RecoverDeadWALs(ctx, budget); err != nil && ctx.Err() == nil {
		e.cfg.Logger.Warn("taking over streams gone processes left records of failed", "err", err)
	}
	if _, err := e.CollectDeadWALs(budget); err != nil && budget.Err() == nil {
		e.cfg.Logger.Warn("collecting dead WALs failed", "err", err)
	}
}
