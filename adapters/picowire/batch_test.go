package picowire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/picomq/pico/domain"
	"pgregory.net/rapid"
)

// wireBytes concatenates the parts of a hand-made binary batch: a uint32
// is written big-endian, a uint64 too, a string or []byte as is.
func wireBytes(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case byte:
			b = append(b, p)
		case uint32:
			b = binary.BigEndian.AppendUint32(b, p)
		case uint64:
			b = binary.BigEndian.AppendUint64(b, p)
		case string:
			b = append(b, p...)
		case []byte:
			b = append(b, p...)
		default:
			panic("wireBytes: unsupported part")
		}
	}
	return b
}

var testLimits = BatchLimits{MaxRecords: 4, MaxHeaders: 2}

// nk is the key length of a record without a key (i32 -1).
const nk = uint32(math.MaxUint32)

func TestEncodeBatchLayout(t *testing.T) {
	got := EncodeBatch([]domain.Record{
		{TimestampMs: 99, Headers: []domain.Header{{Key: "k", Value: "v"}, {Key: "k", Value: "w"}}, Body: []byte("hi")},
		{},
		{Key: []byte("id"), Headers: []domain.Header{{Key: "raw", Value: "\xff"}}},
		{Key: []byte{}},
	})
	want := wireBytes(byte(1), uint32(4),
		nk, uint32(2), uint32(1), "k", uint32(1), "v", uint32(1), "k", uint32(1), "w", uint32(2), "hi",
		nk, uint32(0), uint32(0),
		uint32(2), "id", uint32(1), uint32(3), "raw", uint32(1), []byte{0xff}, uint32(0),
		uint32(0), uint32(0), uint32(0))
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeBatch:\n got %x\nwant %x", got, want)
	}
	recs, err := DecodeBatch(got, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	wantRecs := []domain.Record{{Headers: []domain.Header{{Key: "k", Value: "v"}, {Key: "k", Value: "w"}}, Body: []byte("hi")}, {},
		{Key: []byte("id"), Headers: []domain.Header{{Key: "raw", Value: "\xff"}}}, {Key: []byte{}}}
	if !reflect.DeepEqual(recs, wantRecs) {
		t.Fatalf("decoded %+v, want %+v (duplicate header names kept in order, no timestamp, the empty key kept)", recs, wantRecs)
	}
}

func TestEncodeBatchResponseLayout(t *testing.T) {
	got := EncodeBatchResponse([]SeqRecord{{Seq: 5, Record: domain.Record{TimestampMs: -2, Headers: []domain.Header{{Key: "a", Value: ""}}, Body: []byte{0xff}}}})
	want := wireBytes(byte(1), uint32(1), uint64(5), uint64(math.MaxUint64-1),
		nk, uint32(1), uint32(1), "a", uint32(0), uint32(1), []byte{0xff})
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeBatchResponse:\n got %x\nwant %x", got, want)
	}
	if got := EncodeBatchResponse(nil); !bytes.Equal(got, []byte{1, 0, 0, 0, 0}) {
		t.Fatalf("empty response = %x", got)
	}
}

func TestDecodeBatchRejects(t *testing.T) {
	record := wireBytes(nk, uint32(1), uint32(1), "k", uint32(1), "v", uint32(2), "hi")
	for _, tc := range []struct {
		name string
		in   []byte
		want []string
	}{
		{"empty input", nil, []string{"no version byte"}},
		{"unknown version", []byte{2, 0, 0, 0, 1}, []string{"version 2"}},
		{"version 0", []byte{0}, []string{"version 0"}},
		{"no count", []byte{1}, []string{"record count truncated"}},
		{"short count", []byte{1, 0, 0, 0}, []string{"record count truncated"}},
		{"zero count", wireBytes(byte(1), uint32(0)), []string{"empty batch"}},
		{"count over limit", wireBytes(byte(1), uint32(5)), []string{"5 records", "limit is 4"}},
		{"huge count", []byte{1, 0xff, 0xff, 0xff, 0xff}, []string{"4294967295 records"}},
		{"no key length", wireBytes(byte(1), uint32(1)), []string{"record 0: key length truncated"}},
		{"key length below -1", wireBytes(byte(1), uint32(1), uint32(math.MaxUint32-1)), []string{"record 0: key length -2"}},
		{"key past end", wireBytes(byte(1), uint32(1), uint32(4), "ab"), []string{"record 0: key length 4 past the end of the batch (2 bytes left)"}},
		{"no header count", wireBytes(byte(1), uint32(1), uint32(1), "k"), []string{"record 0: header count truncated"}},
		{"headers over limit", wireBytes(byte(1), uint32(1), nk, uint32(3)), []string{"record 0: 3 headers", "limit is 2"}},
		{"header name past end", wireBytes(byte(1), uint32(1), nk, uint32(1), uint32(5), "a"),
			[]string{"record 0: header 0 name length 5 past the end of the batch (1 bytes left)"}},
		{"header name length short", wireBytes(byte(1), uint32(1), nk, uint32(1), []byte{0, 0}),
			[]string{"record 0: header 0 name length truncated"}},
		{"header name not UTF-8", wireBytes(byte(1), uint32(1), nk, uint32(1), uint32(1), []byte{0xc3}, uint32(0), uint32(0)),
			[]string{"record 0: header 0 name is not valid UTF-8"}},
		{"header value missing", wireBytes(byte(1), uint32(1), nk, uint32(1), uint32(1), "a"),
			[]string{"record 0: header 0 value length truncated"}},
		{"no body length", wireBytes(byte(1), uint32(1), nk, uint32(0)), []string{"record 0: body length truncated"}},
		{"body past end", wireBytes(byte(1), uint32(1), nk, uint32(0), uint32(900), "abc"),
			[]string{"record 0: body length 900 past the end of the batch (3 bytes left)"}},
		{"second record missing", wireBytes(byte(1), uint32(2), record), []string{"record 1: key length truncated"}},
		{"third record cut", wireBytes(byte(1), uint32(3), record, record, record[:len(record)-1]),
			[]string{"record 2: body length 2 past the end"}},
		{"trailing bytes", wireBytes(byte(1), uint32(1), record, []byte{0, 0}), []string{"2 trailing bytes after the last record"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := DecodeBatch(tc.in, testLimits)
			if recs != nil {
				t.Errorf("records %v returned with an error", recs)
			}
			wantMalformed(t, err, tc.want...)
		})
	}
}

func TestDecodeBatchZeroLimitsAdmitNothing(t *testing.T) {
	one := EncodeBatch([]domain.Record{{Body: []byte("x")}})
	_, err := DecodeBatch(one, BatchLimits{})
	wantMalformed(t, err, "1 records, the limit is 0")
	_, err = DecodeBatch(one, BatchLimits{MaxRecords: -5})
	wantMalformed(t, err, "the limit is 0")
	withHeader := EncodeBatch([]domain.Record{{Headers: []domain.Header{{Key: "a", Value: "b"}}}})
	_, err = DecodeBatch(withHeader, BatchLimits{MaxRecords: 1})
	wantMalformed(t, err, "1 headers, the limit is 0")
}

func TestDecodeBatchResponseRejects(t *testing.T) {
	record := wireBytes(uint64(7), uint64(1), nk, uint32(0), uint32(1), "x")
	for _, tc := range []struct {
		name string
		in   []byte
		want []string
	}{
		{"empty input", nil, []string{"empty response: no version byte"}},
		{"unknown version", []byte{9}, []string{"unknown response version 9"}},
		{"count over limit", wireBytes(byte(1), uint32(5)), []string{"response of 5 records"}},
		{"no seq", wireBytes(byte(1), uint32(1), []byte{0, 0, 0}), []string{"record 0: seq truncated"}},
		{"no timestamp", wireBytes(byte(1), uint32(1), uint64(7), []byte{0}), []string{"record 0: timestamp truncated"}},
		{"headers over limit", wireBytes(byte(1), uint32(1), uint64(7), uint64(1), nk, uint32(3)), []string{"record 0: 3 headers"}},
		{"body past end", wireBytes(byte(1), uint32(1), uint64(7), uint64(1), uint32(0), uint32(0), uint32(2), "x"),
			[]string{"record 0: body length 2 past the end of the response (1 bytes left)"}},
		{"second record missing", wireBytes(byte(1), uint32(2), record), []string{"record 1: seq truncated"}},
		{"trailing bytes", wireBytes(byte(1), uint32(1), record, "z"), []string{"1 trailing bytes"}},
		{"trailing after empty page", wireBytes(byte(1), uint32(0), "z"), []string{"1 trailing bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := DecodeBatchResponse(tc.in, testLimits)
			if recs != nil {
				t.Errorf("records %v returned with an error", recs)
			}
			wantMalformed(t, err, tc.want...)
		})
	}
}

func TestDecodeBatchResponseEmptyPage(t *testing.T) {
	recs, err := DecodeBatchResponse(EncodeBatchResponse(nil), testLimits)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty page decodes to %v, %v", recs, err)
	}
}

func TestDecodeBatchBodiesAliasInput(t *testing.T) {
	b := EncodeBatch([]domain.Record{{Body: []byte("abc")}, {Body: []byte("def")}})
	recs, err := DecodeBatch(b, testLimits)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] = 'X'
	if string(recs[1].Body) != "deX" {
		t.Fatalf("body %q does not alias the input", recs[1].Body)
	}
	if cap(recs[0].Body) != len(recs[0].Body) {
		t.Fatal("an aliased body has spare capacity: appending to it would overwrite the next record")
	}
}

// TestDecodeBatchHugeCountsAreBounded feeds counts of 2^32-1 with no limit
// to stop them: the decoders must pre-size by the bytes present.
func TestDecodeBatchHugeCountsAreBounded(t *testing.T) {
	unlimited := BatchLimits{MaxRecords: math.MaxInt, MaxHeaders: math.MaxInt}
	decoders := map[string]func([]byte) error{
		"DecodeBatch": func(b []byte) error { _, err := DecodeBatch(b, unlimited); return err },
		"DecodeBatchResponse": func(b []byte) error {
			_, err := DecodeBatchResponse(b, unlimited)
			return err
		},
	}
	inputs := [][]byte{
		{1, 0xff, 0xff, 0xff, 0xff},
		wireBytes(byte(1), uint32(1), nk, uint32(math.MaxUint32)),
		wireBytes(byte(1), uint32(1), uint64(0), uint64(0), nk, uint32(math.MaxUint32)),
		wireBytes(byte(1), uint32(1), nk, uint32(0), uint32(math.MaxUint32)),
		wireBytes(byte(1), uint32(1), uint32(math.MaxInt32)),
	}
	for name, decode := range decoders {
		for _, in := range inputs {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := decode(in)
			runtime.ReadMemStats(&after)
			wantMalformed(t, err)
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("%s(%x) allocated %d bytes", name, in, n)
			}
		}
	}
}

func TestBatchRoundTrip(t *testing.T) {
	lim := BatchLimits{MaxRecords: 20, MaxHeaders: 5}
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(wireRecordGen(), 1, 20).Draw(t, "records")
		b := EncodeBatch(recs)
		if cap(b) != len(b) {
			t.Fatalf("encoding of %d bytes pre-sized to %d", len(b), cap(b))
		}
		got, err := DecodeBatch(b, lim)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, recs) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, recs)
		}
	})
}

func TestBatchResponseRoundTrip(t *testing.T) {
	lim := BatchLimits{MaxRecords: 20, MaxHeaders: 5}
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(seqRecordGen(), 0, 20).Draw(t, "records")
		b := EncodeBatchResponse(recs)
		if cap(b) != len(b) {
			t.Fatalf("encoding of %d bytes pre-sized to %d", len(b), cap(b))
		}
		got, err := DecodeBatchResponse(b, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			recs = []SeqRecord{} // an empty page decodes to an empty, non-nil slice
		}
		if !reflect.DeepEqual(got, recs) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, recs)
		}
	})
}

// TestBatchTruncationAlwaysRejected cuts valid encodings at every length.
func TestBatchTruncationAlwaysRejected(t *testing.T) {
	lim := BatchLimits{MaxRecords: 20, MaxHeaders: 5}
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(seqRecordGen(), 1, 4).Draw(t, "records")
		resp := EncodeBatchResponse(recs)
		plain := make([]domain.Record, len(recs))
		for i := range recs {
			plain[i] = recs[i].Record
		}
		batch := EncodeBatch(plain)
		for n := range len(resp) {
			if _, err := DecodeBatchResponse(resp[:n], lim); err == nil {
				t.Fatalf("response cut to %d of %d bytes accepted", n, len(resp))
			}
		}
		for n := range len(batch) {
			if _, err := DecodeBatch(batch[:n], lim); err == nil {
				t.Fatalf("batch cut to %d of %d bytes accepted", n, len(batch))
			}
		}
	})
}

// The keyed layout's goldens hold the bytes of the original's layout: a
// keyed record, the empty key, no key, and a header value that is not
// text. They are written by hand-checked encoders once and never
// regenerated: a change that alters them breaks every client.
var (
	batchGolden    = filepath.Join("testdata", "golden", "batch_keyed.hex")
	responseGolden = filepath.Join("testdata", "golden", "response_keyed.hex")
	goldenRecords  = []domain.Record{
		{Key: []byte("order-9"), Headers: []domain.Header{{Key: "h", Value: "v"}, {Key: "raw", Value: "\xff\x00"}}, Body: []byte("one")},
		{Key: []byte{}, Body: []byte{0xfe}},
		{},
	}
)

func TestKeyedBatchGoldens(t *testing.T) {
	resp := make([]SeqRecord, len(goldenRecords))
	for i, r := range goldenRecords {
		r.TimestampMs = 1_700_000_000_000
		resp[i] = SeqRecord{Seq: 40 + uint64(i), Record: r}
	}
	b := readHexGolden(t, batchGolden)
	if got, err := DecodeBatch(b, testLimits); err != nil || !reflect.DeepEqual(got, goldenRecords) {
		t.Fatalf("golden batch decodes to %+v, %v; want %+v", got, err, goldenRecords)
	}
	if got := EncodeBatch(goldenRecords); !bytes.Equal(got, b) {
		t.Errorf("EncodeBatch differs from the golden:\n got %x\nwant %x", got, b)
	}
	r := readHexGolden(t, responseGolden)
	if got, err := DecodeBatchResponse(r, testLimits); err != nil || !reflect.DeepEqual(got, resp) {
		t.Fatalf("golden response decodes to %+v, %v; want %+v", got, err, resp)
	}
	if got := EncodeBatchResponse(resp); !bytes.Equal(got, r) {
		t.Errorf("EncodeBatchResponse differs from the golden:\n got %x\nwant %x", got, r)
	}
}

func readHexGolden(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// TestAppendBatchResponseIsTheEncoding: appending a page after other bytes
// gives those bytes and then EncodeBatchResponse's encoding.
func TestAppendBatchResponseIsTheEncoding(t *testing.T) {
	recs := []domain.Record{{TimestampMs: 7, Key: []byte("k"), Body: []byte("one")}, {TimestampMs: 8, Body: []byte("two")}}
	want := EncodeBatchResponse([]SeqRecord{{Seq: 41, Record: recs[0]}, {Seq: 42, Record: recs[1]}})
	got := AppendBatchResponse([]byte("x"), 41, recs)
	if !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("AppendBatchResponse:\n got %x\nwant x%x", got, want)
	}
}
