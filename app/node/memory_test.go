package node

import (
	"testing"
	"time"
)

// TestMemoryReturnWaitsForManyReleases: releases add up to a return, and
// a return is not repeated within returnEvery.
func TestMemoryReturnWaitsForManyReleases(t *testing.T) {
	var m memoryReturn
	started := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.running || !m.last.IsZero()
	}
	m.released(returnAfter - 1)
	if started() {
		t.Fatal("returned memory before enough streams were released")
	}
	m.released(1)
	if !started() {
		t.Fatal("no return once enough streams were released")
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		m.mu.Lock()
		done := !m.running
		m.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the return did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	m.released(10 * returnAfter)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running || m.pending != 10*returnAfter {
		t.Fatalf("a second return within %v (running %v, pending %d)", returnEvery, m.running, m.pending)
	}
}

// TestMemoryReturnAfterALargeLoad: a start with a view of many streams
// returns the heap its decoding freed; a small one does not bother.
func TestMemoryReturnAfterALargeLoad(t *testing.T) {
	var small, large memoryReturn
	small.loaded(loadedReturnAfter - 1)
	large.loaded(loadedReturnAfter)
	small.mu.Lock()
	large.mu.Lock()
	defer small.mu.Unlock()
	defer large.mu.Unlock()
	if small.running || !small.last.IsZero() {
		t.Fatal("a small view started a return")
	}
	if !large.running && large.last.IsZero() {
		t.Fatal("a large view started no return")
	}
}

// TestMemoryReturnAfterTheWave: releases left pending when a return ran
// are returned by a later round that releases nothing, once returnEvery
// has passed.
func TestMemoryReturnAfterTheWave(t *testing.T) {
	var m memoryReturn
	m.mu.Lock()
	m.pending, m.last = returnAfter, time.Now().Add(-2*returnEvery) // a wave's tail, the last return long ago
	m.mu.Unlock()
	m.released(0)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running && m.last.Before(time.Now().Add(-returnEvery)) {
		t.Fatal("a quiet round did not return what the wave left")
	}
}
