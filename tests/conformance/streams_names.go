package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

func streamsNameCases(t *testing.T, open StreamsOpener) {
	t.Run("UnknownStreamIsNotFound", func(t *testing.T) { testNotFound(t, open) })
	t.Run("DeleteRemovesTheStreamAndFreesItsName", func(t *testing.T) { testDelete(t, open) })
	t.Run("ListByPrefixAfterANameUpToALimit", func(t *testing.T) { testList(t, open) })
	t.Run("RouteServesEveryStreamHere", func(t *testing.T) { testRoute(t, open) })
}

// expectGone checks every method on a stream answers not found.
func expectGone(ctx context.Context, t *testing.T, s ports.Streams, name string) {
	t.Helper()
	_, err := s.Head(ctx, name)
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Head("+name+")")
	_, err = s.Read(ctx, name, 0, ports.ReadLimits{})
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Read("+name+")")
	_, err = s.ReadTail(ctx, name)
	expectErrorIs(t, err, ports.ErrStreamNotFound, "ReadTail("+name+")")
	_, err = s.Append(ctx, name, ports.AppendRequest{Records: records("x")})
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Append("+name+")")
	_, err = s.Trim(ctx, name, 1)
	expectErrorIs(t, err, ports.ErrStreamNotFound, "Trim("+name+")")
	expectErrorIs(t, s.Delete(ctx, name), ports.ErrStreamNotFound, "Delete("+name+")")
}

func testNotFound(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	mustCreateStream(ctx, t, s, "/s", textPlain)
	expectGone(ctx, t, s, "/missing")
	expectGone(ctx, t, s, "/s/")
}

// After a delete the name is free at once, for a new incarnation with a
// new ID and any config.
func testDelete(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	old := mustCreateStream(ctx, t, s, "/s", textPlain, "a", "b")
	mustCreateStream(ctx, t, s, "/t", textPlain)
	if err := s.Delete(ctx, "/s"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	expectGone(ctx, t, s, "/s")
	if page := mustListStreams(ctx, t, s, "", "", 10); streamNames(page) != "/t" {
		t.Fatalf("List after Delete = %q, want /t", streamNames(page))
	}
	info := mustCreateStream(ctx, t, s, "/s", domain.StreamConfig{ContentType: "application/json"})
	if info.ID == old.ID || info.Next != 0 || info.Start != 0 || info.Config.ContentType != "application/json" {
		t.Fatalf("Create after Delete = %+v, want a new empty JSON stream (the old one was %d)", info, old.ID)
	}
	expectBodies(ctx, t, s, "/s")
	expectBodies(ctx, t, s, "/t")
}

func mustListStreams(ctx context.Context, t *testing.T, s ports.Streams, prefix, after string, limit int) ports.ListPage {
	t.Helper()
	page, err := s.List(ctx, prefix, after, limit)
	if err != nil {
		t.Fatalf("List(%q, %q, %d): %v", prefix, after, limit, err)
	}
	return page
}

// streamNames lists a page's names, space-separated.
func streamNames(page ports.ListPage) string {
	names := make([]string, len(page.Streams))
	for i, info := range page.Streams {
		names[i] = info.Name
	}
	return strings.Join(names, " ")
}

func testList(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	for _, name := range []string{"/b/1", "/a/3", "/a/1", "/a", "/a/2"} {
		mustCreateStream(ctx, t, s, name, textPlain)
	}
	mustAppendBodies(ctx, t, s, "/a/2", "x", "y")
	for _, c := range []struct {
		prefix, after string
		limit         int
		want          string
		more          bool
	}{
		{"/a/", "", 10, "/a/1 /a/2 /a/3", false},
		{"/a/", "/a/1", 1, "/a/2", true},
		{"/a/", "/a/2", 10, "/a/3", false},
		{"/a/", "/a/15", 10, "/a/2 /a/3", false},
		{"/a/", "/a/3", 10, "", false},
		{"/a/", "", 3, "/a/1 /a/2 /a/3", false},
		{"", "", 2, "/a /a/1", true},
		{"", "/a/3", 10, "/b/1", false},
		{"/c", "", 10, "", false},
	} {
		page := mustListStreams(ctx, t, s, c.prefix, c.after, c.limit)
		if got := streamNames(page); got != c.want || page.HasMore != c.more {
			t.Fatalf("List(%q, %q, %d) = %q more=%v, want %q more=%v", c.prefix, c.after, c.limit, got, page.HasMore, c.want, c.more)
		}
	}
	page := mustListStreams(ctx, t, s, "/a/2", "", 1)
	if len(page.Streams) != 1 || page.Streams[0].Next != 2 || page.Streams[0].Config.ContentType != "text/plain" {
		t.Fatalf("List(/a/2) = %+v, want /a/2 text/plain at next 2", page.Streams)
	}
}

func testRoute(t *testing.T, open StreamsOpener) {
	ctx, s := testContext(t), openStreams(t, open)
	expectRoutedHere(t, s, "/s")
	mustCreateStream(ctx, t, s, "/s", textPlain)
	expectRoutedHere(t, s, "/s")
}

func expectRoutedHere(t *testing.T, s ports.Streams, name string) {
	t.Helper()
	if r, err := s.Route(name); err != nil || r != nil {
		t.Fatalf("Route(%s) = %v, %v; want it served here", name, r, err)
	}
}
