package domain

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// genFrameWithWriterSeq is genFrame with a writer sequence half the time.
func genFrameWithWriterSeq() *rapid.Generator[Frame] {
	return rapid.Custom(func(t *rapid.T) Frame {
		f := genFrame().Draw(t, "frame")
		if rapid.Bool().Draw(t, "has writer seq") {
			f.WriterSeq = rapid.StringN(1, 40, -1).Draw(t, "writer seq")
		}
		return f
	})
}

func TestFrameRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFrameWithWriterSeq().Draw(t, "frame")
		b := AppendFrame(nil, &f)
		got, n, err := DecodeFrame(b)
		if err != nil || n != len(b) || !reflect.DeepEqual(got, f) {
			t.Fatalf("round trip: %v (%d of %d bytes)\n got %+v\nwant %+v", err, n, len(b), got, f)
		}
	})
}

// framed wraps a hand-built frame body in its length and CRC.
func framed(body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	return append(b, body...)
}

// TestDecodeOldStyleFrames decodes frames laid out by hand the way they were
// written before writer sequences, when the byte after the offset was a 0/1
// producer flag: WAL bulks and data objects already stored hold them.
func TestDecodeOldStyleFrames(t *testing.T) {
	record := []byte{0x0a, 0x00, 0x01, 'x'} // timestamp 5, no headers, body "x"
	cases := []struct {
		name string
		body []byte
		want Frame
	}{
		{"no producer", append([]byte{7, 2, 100, 0, 1}, record...),
			Frame{Stream: 7, Epoch: 2, Offset: 100, Records: []Record{{TimestampMs: 5, Body: []byte("x")}}}},
		{"producer", append([]byte{7, 2, 100, 1, 1, 'p', 3, 4, 1}, record...),
			Frame{Stream: 7, Epoch: 2, Offset: 100, Producer: &ProducerStamp{ID: "p", Epoch: 3, Seq: 4},
				Records: []Record{{TimestampMs: 5, Body: []byte("x")}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := framed(c.body)
			got, n, err := DecodeFrame(b)
			if err != nil || n != len(b) || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("decoded %+v (%d of %d bytes), %v; want %+v", got, n, len(b), err, c.want)
			}
			if again := AppendFrame(nil, &got); !bytes.Equal(again, b) {
				t.Fatalf("a frame without writer sequence is no longer encoded as before:\n got %x\nwant %x", again, b)
			}
		})
	}
}

func TestFrameWriterSeqLayout(t *testing.T) {
	f := Frame{Stream: 7, Epoch: 2, Offset: 100, WriterSeq: "09", Records: []Record{{TimestampMs: 5, Body: []byte("x")}}}
	want := framed([]byte{7, 2, 100, frameHasWriterSeq, 2, '0', '9', 1, 0x0a, 0x00, 0x01, 'x'})
	if got := AppendFrame(nil, &f); !bytes.Equal(got, want) {
		t.Fatalf("AppendFrame = %x, want %x", got, want)
	}
	f.Producer = &ProducerStamp{ID: "p", Epoch: 3, Seq: 4}
	want = framed([]byte{7, 2, 100, frameHasProducer | frameHasWriterSeq, 1, 'p', 3, 4, 2, '0', '9', 1, 0x0a, 0x00, 0x01, 'x'})
	if got := AppendFrame(nil, &f); !bytes.Equal(got, want) {
		t.Fatalf("with a producer, AppendFrame = %x, want %x", got, want)
	}
	f.Producer, f.WriterSeq, f.Seals = nil, "", true
	want = framed([]byte{7, 2, 100, frameSeals, 1, 0x0a, 0x00, 0x01, 'x'})
	if got := AppendFrame(nil, &f); !bytes.Equal(got, want) {
		t.Fatalf("sealing, AppendFrame = %x, want %x", got, want)
	}
}

func TestDecodeFrameRefusesBadFlags(t *testing.T) {
	cases := map[string][]byte{
		"unknown bit 4":        {7, 2, 100, 16, 0},
		"key past the end":     {7, 2, 100, frameKeyed, 1, 0, 5, 'k', 0, 0},
		"unknown high bit":     {7, 2, 100, 0x80, 0},
		"known and unknown":    {7, 2, 100, 0x43, 1, 'p', 3, 4, 1, 'w', 0},
		"empty writer seq":     {7, 2, 100, frameHasWriterSeq, 0, 0},
		"writer seq too long":  {7, 2, 100, frameHasWriterSeq, 9, 'w', 0},
		"writer seq truncated": {7, 2, 100, frameHasWriterSeq},
	}
	for name, body := range cases {
		if f, _, err := DecodeFrame(framed(body)); !errors.Is(err, ErrDecode) {
			t.Errorf("%s: decoded %+v, %v; want ErrDecode", name, f, err)
		}
	}
}

// Frame goldens: v1 was written by the encoder before writer sequences and
// is never regenerated; v2 adds the writer sequence, v3 the seal flag, v4
// record keys (a keyed record, an empty key, no key, and a header value
// that is not UTF-8).
var (
	frameGoldenV1 = filepath.Join("testdata", "golden", "wire", "frame_v1.hex")
	frameGoldenV2 = filepath.Join("testdata", "golden", "wire", "frame_v2.hex")
	frameGoldenV3 = filepath.Join("testdata", "golden", "wire", "frame_v3.hex")
	frameGoldenV4 = filepath.Join("testdata", "golden", "wire", "frame_v4.hex")
)

var frameGoldenSample = Frame{Stream: 42, Epoch: 5, Offset: 100,
	Producer: &ProducerStamp{ID: "producer-a", Epoch: 3, Seq: 7},
	Records:  []Record{{TimestampMs: 1_700_000_000_123, Headers: []Header{{Key: "k", Value: "v"}}, Body: []byte("hello")}}}

func TestFrameGoldens(t *testing.T) {
	v2 := frameGoldenSample
	v2.WriterSeq = "0000000017"
	v3 := v2
	v3.Seals = true
	v4 := v3
	v4.Records = []Record{{TimestampMs: 7, Key: []byte("order-9"), Headers: []Header{{Key: "raw", Value: "\xff\x00"}}, Body: []byte("a")},
		{TimestampMs: 7, Key: []byte{}}, {TimestampMs: 7, Body: []byte("c")}}
	for path, want := range map[string]Frame{frameGoldenV1: frameGoldenSample, frameGoldenV2: v2, frameGoldenV3: v3, frameGoldenV4: v4} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if path != frameGoldenV1 {
				writeGoldenOnUpdate(t, path, AppendFrame(nil, &want))
			}
			b := readGolden(t, path)
			f, n, err := DecodeFrame(b)
			if err != nil || n != len(b) || !reflect.DeepEqual(f, want) {
				t.Fatalf("golden decodes to %+v (%d of %d bytes), %v; want %+v", f, n, len(b), err, want)
			}
			if got := AppendFrame(nil, &f); !bytes.Equal(got, b) {
				t.Errorf("re-encoding changed the bytes:\n got %x\nwant %x", got, b)
			}
		})
	}
}

// writeGoldenOnUpdate rewrites a golden file from the current encoder when
// the tests run with -update.
func writeGoldenOnUpdate(t *testing.T, path string, b []byte) {
	t.Helper()
	if !*update {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeFrame: whatever decodes re-encodes to a frame that decodes the
// same (the bytes may differ: varints have overlong forms). Each input is
// tried as a whole frame and as a frame body with a valid length and CRC,
// so the fuzzer explores the fields behind the checksum too.
func FuzzDecodeFrame(f *testing.F) {
	body := func(fr Frame) []byte { return AppendFrame(nil, &fr)[8:] }
	f.Add(body(Frame{Stream: 1, Epoch: 1, WriterSeq: "w1",
		Producer: &ProducerStamp{ID: "p", Epoch: 1, Seq: 4}, Records: []Record{{TimestampMs: 1, Body: []byte("x")}}}))
	f.Add(body(Frame{Stream: 1, Epoch: 1, WriterSeq: "w", Records: []Record{{Headers: []Header{{"a", "b"}}}}}))
	f.Add(body(Frame{Stream: 1, Epoch: 1, Offset: 9}))
	f.Add([]byte{7, 2, 100, 1, 1, 'p', 3, 4, 1, 0x0a, 0x00, 0x01, 'x'}) // old style
	f.Add([]byte{7, 2, 100, 6, 0})
	f.Add(body(Frame{Stream: 2, Epoch: 3, Seals: true, Records: []Record{{Body: []byte("z")}}}))
	f.Add(body(Frame{Stream: 2, Records: []Record{{Key: []byte("k"), Body: []byte("z")}, {Key: []byte{}}, {}}}))
	f.Add(AppendFrame(nil, &Frame{Stream: 3, WriterSeq: "z", Records: []Record{{Body: []byte("y")}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFrameReencodes(t, b)
		checkFrameReencodes(t, framed(b))
	})
}

func checkFrameReencodes(t *testing.T, b []byte) {
	fr, n, err := DecodeFrame(b)
	if err != nil {
		return
	}
	if n > len(b) {
		t.Fatalf("decoded %d bytes from %d", n, len(b))
	}
	again := AppendFrame(nil, &fr)
	fr2, n2, err := DecodeFrame(again)
	if err != nil || n2 != len(again) || !reflect.DeepEqual(fr, fr2) {
		t.Fatalf("re-encoding changed the frame: %v\n got %+v\nwant %+v", err, fr2, fr)
	}
}
