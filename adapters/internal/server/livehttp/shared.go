package livehttp

import "sync/atomic"

// Shared keeps the most recent encodings of stream pages (event stream
// events, response bodies), so that the live readers of one stream at one
// position encode what they send once between them, rather than once each,
// when an append wakes them all together. A page of durable records never
// changes, so an encoding is named by what it encodes and is never stale.
// It is safe for concurrent use; the zero Shared is empty, and a nil one
// keeps nothing.
type Shared struct {
	slots [sharedSlots]atomic.Pointer[sharedPage]
}

// sharedSlots bounds what a Shared holds: a slot keeps one encoding, and a
// newer one of another page whose key falls in it replaces it.
const sharedSlots = 64

// MaxSharedBytes is the largest encoding a Shared keeps: live readers'
// pages are small, and a catch-up page is rarely read twice at once.
const MaxSharedBytes = 64 << 10

// PageKey names an encoding: the records [From, Next) of the stream with
// ID (an incarnation of the stream: one deleted and made again under its
// name has another ID), encoded in one of the caller's forms (Form).
type PageKey struct {
	ID, From, Next uint64
	Form           uint8
}

type sharedPage struct {
	key PageKey
	b   []byte
}

func (k PageKey) slot() int {
	h := k.ID*0x9e3779b97f4a7c15 ^ k.From*0xbf58476d1ce4e5b9 ^ k.Next ^ uint64(k.Form)<<56
	return int((h ^ h>>29) % sharedSlots)
}

// Load returns the encoding stored for k, which the caller must not
// modify. A key whose ID is 0 names no incarnation and is never kept.
func (s *Shared) Load(k PageKey) ([]byte, bool) {
	if s == nil || k.ID == 0 {
		return nil, false
	}
	p := s.slots[k.slot()].Load()
	if p == nil || p.key != k {
		return nil, false
	}
	return p.b, true
}

// Store keeps b as the encoding of k; b must not be modified after.
func (s *Shared) Store(k PageKey, b []byte) {
	if s == nil || k.ID == 0 || len(b) > MaxSharedBytes {
		return
	}
	s.slots[k.slot()].Store(&sharedPage{key: k, b: b})
}
