package livehttp

import "sync"

// maxPooledPage is the largest page buffer kept for reuse.
const maxPooledPage = 8 << 20

var pageBuffers = sync.Pool{New: func() any { return new([]byte) }}

// WithPageBuffer calls write with the bytes encode appends to a pooled
// buffer, and then puts the buffer back: a catch-up page, too large to
// share (MaxSharedBytes) and read once, costs no allocation of its size.
// write must not keep the bytes.
func WithPageBuffer(encode func([]byte) []byte, write func([]byte) error) error {
	p := pageBuffers.Get().(*[]byte)
	b := encode((*p)[:0])
	err := write(b)
	if cap(b) <= maxPooledPage {
		*p = b[:0]
		pageBuffers.Put(p)
	}
	return err
}
