package domain

import (
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func genFrame() *rapid.Generator[Frame] {
	return rapid.Custom(func(t *rapid.T) Frame {
		f := Frame{Stream: rapid.Uint64().Draw(t, "stream"), Epoch: rapid.Uint64Range(0, 1<<40).Draw(t, "epoch"),
			Offset: rapid.Uint64Range(0, 1<<50).Draw(t, "offset")}
		if rapid.Bool().Draw(t, "producer") {
			f.Producer = &ProducerStamp{ID: rapid.String().Draw(t, "pid"), Epoch: rapid.Uint64().Draw(t, "pepoch"),
				Seq: rapid.Uint64().Draw(t, "pseq")}
		}
		n := rapid.IntRange(0, 5).Draw(t, "records")
		for i := 0; i < n; i++ {
			r := Record{TimestampMs: rapid.Int64().Draw(t, "ts")}
			if rapid.Bool().Draw(t, "keyed") {
				r.Key = append([]byte{}, rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "key")...)
			}
			for j := rapid.IntRange(0, 2).Draw(t, "headers"); j > 0; j-- {
				value := string(rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "v")) // any bytes
				r.Headers = append(r.Headers, Header{Key: rapid.String().Draw(t, "k"), Value: value})
			}
			if b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "body"); len(b) > 0 {
				r.Body = b
			}
			f.Records = append(f.Records, r)
		}
		return f
	})
}

func TestBulkRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := BulkHeader{Node: NodeID(rapid.Uint32().Draw(t, "node")), Epoch: rapid.Uint64().Draw(t, "epoch"),
			Seq: rapid.Uint64().Draw(t, "seq")}
		frames := rapid.SliceOfN(genFrame(), 0, 4).Draw(t, "frames")
		b := AppendBulkHeader(nil, h)
		for i := range frames {
			b = AppendFrame(b, &frames[i])
		}
		gotH, got, err := DecodeBulk(b)
		if err != nil {
			t.Fatal(err)
		}
		if gotH != h || !reflect.DeepEqual(got, nilIfEmpty(frames)) {
			t.Fatalf("round trip differs:\n got %+v %+v\nwant %+v %+v", gotH, got, h, frames)
		}
	})
}

func nilIfEmpty(f []Frame) []Frame {
	if len(f) == 0 {
		return nil
	}
	return f
}

func TestBulkDetectsCorruptionAndTruncation(t *testing.T) {
	f := Frame{Stream: 7, Epoch: 2, Offset: 100, Records: []Record{{TimestampMs: 5, Body: []byte("hello")}}}
	b := AppendFrame(AppendBulkHeader(nil, BulkHeader{Node: 1, Epoch: 9, Seq: 3}), &f)
	for i := len(bulkMagic); i < len(b); i++ {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x40
		if _, _, err := DecodeBulk(bad); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, frames, err := DecodeBulk(b[:n]); err == nil && len(frames) > 0 {
			t.Fatalf("a %d-byte prefix decoded a frame", n)
		}
	}
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)-1] ^= 1
	if _, _, err := DecodeBulk(flipped); !errors.Is(err, ErrChecksum) {
		t.Fatalf("body corruption: %v, want ErrChecksum", err)
	}
}

func TestFenceIsNotABulk(t *testing.T) {
	fence := EncodeFence(Proposer{Node: 2, Epoch: 5})
	if !IsFence(fence) {
		t.Fatal("fence not recognised")
	}
	if _, _, err := DecodeBulk(fence); err == nil {
		t.Fatal("a fence decoded as a bulk")
	}
	if IsFence(AppendBulkHeader(nil, BulkHeader{Node: 1, Epoch: 1, Seq: 1})) {
		t.Fatal("a bulk taken for a fence")
	}
}

func FuzzDecodeBulk(f *testing.F) {
	fr := Frame{Stream: 1, Epoch: 1, Offset: 0, Producer: &ProducerStamp{ID: "p", Epoch: 1, Seq: 4},
		Records: []Record{{TimestampMs: 1, Headers: []Header{{"a", "b"}}, Body: []byte("x")}}}
	f.Add(AppendFrame(AppendBulkHeader(nil, BulkHeader{Node: 1, Epoch: 1, Seq: 1}), &fr))
	f.Add([]byte("PWB1\x03\x00\x00\x00\x00\x01\x01\x01\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, frames, err := DecodeBulk(b)
		if err != nil {
			return
		}
		again := AppendBulkHeader(nil, h)
		for i := range frames {
			again = AppendFrame(again, &frames[i])
		}
		h2, frames2, err := DecodeBulk(again)
		if err != nil || h2 != h || !reflect.DeepEqual(frames, frames2) {
			t.Fatalf("re-encoding changed the bulk: %v", err)
		}
	})
}

func TestParseWALKey(t *testing.T) {
	p := Proposer{Node: 7, Epoch: 1796037536756}
	got, seq, ok := ParseWALKey(WALKey(p.Node, p.Epoch, 42))
	if !ok || got != p || seq != 42 {
		t.Fatalf("ParseWALKey(WALKey) = %+v %d %v", got, seq, ok)
	}
	if len(fenceMagic) != FenceProbeBytes || !IsFence(EncodeFence(p)[:FenceProbeBytes]) {
		t.Fatal("FenceProbeBytes does not cover the fence magic")
	}
	for _, bad := range []string{"", "wal/", WALPrefix(7, 1), "data/00000000000000000001",
		"wal/000000000x/00000000000000000001/00000000000000000001",
		"wal/0000000001/00000000000000000001/0000000000000000001",
		"wal/9999999999/00000000000000000001/00000000000000000001"} {
		if _, _, ok := ParseWALKey(bad); ok {
			t.Errorf("ParseWALKey(%q) accepted", bad)
		}
	}
}
