package streamsfake

import (
	"context"
	"sort"
	"strings"

	"github.com/picomq/pico/ports"
)

func (f *Streams) Route(name string) (*ports.RedirectError, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.routeErr != nil {
		return nil, f.routeErr
	}
	if addr := f.owners[name]; addr != "" {
		return &ports.RedirectError{Address: addr}, nil
	}
	return nil, nil
}

func (f *Streams) Read(_ context.Context, name string, from uint64, lim ports.ReadLimits) (ports.ReadResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.ReadResult{}, err
	}
	if from > st.next() {
		return ports.ReadResult{}, ports.Errorf(ports.ErrBadRequest, "offset %d is beyond the tail %d", from, st.next())
	}
	from = max(from, st.start)
	res := ports.ReadResult{From: from, Next: from, Tail: st.next(), Config: st.cfg, ID: st.id, Changed: st.changed}
	size := 0
	for i := from; i < st.next(); i++ {
		r := st.records[i]
		if len(res.Records) > 0 && ((lim.Count > 0 && len(res.Records) >= lim.Count) || (lim.Bytes > 0 && size+len(r.Body) > lim.Bytes)) {
			break
		}
		res.Records = append(res.Records, r)
		size += len(r.Body)
		res.Next = i + 1
	}
	res.UpToDate = res.Next == res.Tail
	res.Closed = res.UpToDate && st.write.Sealed
	return res, nil
}

func (f *Streams) ReadTail(_ context.Context, name string) (ports.ReadResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.access(name)
	if err != nil {
		return ports.ReadResult{}, err
	}
	tail := st.next()
	return ports.ReadResult{From: tail, Next: tail, Tail: tail, UpToDate: true, Closed: st.write.Sealed,
		Config: st.cfg, ID: st.id, Changed: st.changed}, nil
}

func (f *Streams) Head(_ context.Context, name string) (ports.StreamInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.lookup(name)
	if err != nil {
		return ports.StreamInfo{}, err
	}
	return st.info(name), nil
}

func (f *Streams) List(_ context.Context, prefix, startAfter string, limit int) (ports.ListPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return ports.ListPage{}, f.fail
	}
	var names []string
	for name := range f.streams {
		if strings.HasPrefix(name, prefix) && name > startAfter {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var page ports.ListPage
	if len(names) > limit {
		names, page.HasMore = names[:limit], true
	}
	for _, name := range names {
		page.Streams = append(page.Streams, f.streams[name].info(name))
	}
	return page, nil
}
