package domain

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestDataObjectRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		frames := rapid.SliceOfN(genFrame(), 1, 4).Draw(t, "frames")
		var states []SectionState
		for i := range frames {
			frames[i].Producer = nil // producer tables travel in the index instead
			var st SectionState
			if rapid.Bool().Draw(t, "has producers") {
				st.Producers = []ProducerState{{ID: rapid.String().Draw(t, "id"), Epoch: 1, Seq: rapid.Uint64().Draw(t, "seq"), First: 3, Next: 9}}
			}
			st.WriterSeq = rapid.String().Draw(t, "writer seq")
			states = append(states, st)
		}
		obj, secs := EncodeDataObject(frames, states)
		// Appended to a used buffer, the object is the same bytes.
		junk := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "junk")
		reused := append(slices.Clone(junk), bytes.Repeat([]byte{0xEE}, 100)...)
		appended, appendedSecs := AppendDataObject(reused[:len(junk)], frames, states)
		if !bytes.Equal(appended[:len(junk)], junk) || !bytes.Equal(appended[len(junk):], obj) || !reflect.DeepEqual(appendedSecs, secs) {
			t.Fatalf("AppendDataObject after %d bytes differs from EncodeDataObject", len(junk))
		}
		n, err := DataIndexLength(obj[:DataHeaderSize])
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeDataIndex(obj[:DataHeaderSize+n])
		if err != nil || !reflect.DeepEqual(got, secs) {
			t.Fatalf("index: %v\n got %+v\nwant %+v", err, got, secs)
		}
		for i, s := range got {
			f, used, err := DecodeFrame(obj[s.Offset : s.Offset+s.Length])
			if err != nil || used != int(s.Length) || !reflect.DeepEqual(f, frames[i]) {
				t.Fatalf("section %d: %v", i, err)
			}
			if s.Start != frames[i].Offset || s.End != frames[i].End() || !reflect.DeepEqual(s.Producers, states[i].Producers) ||
				s.WriterSeq != states[i].WriterSeq {
				t.Fatalf("section %d describes %+v", i, s)
			}
		}
	})
}

// Data object goldens: v1 (PDO1) was written by the encoder before writer
// sequences and is never regenerated; v2 is what EncodeDataObject writes.
var (
	dataGoldenV1 = filepath.Join("testdata", "golden", "wire", "data_object_v1.hex")
	dataGoldenV2 = filepath.Join("testdata", "golden", "wire", "data_object_v2.hex")
)

// dataGoldenFrames are the frames of both goldens: two streams, one with a
// producer table (and, in v2, a writer sequence), one without.
var dataGoldenFrames = []Frame{
	{Stream: 42, Epoch: 5, Offset: 100, Records: []Record{{TimestampMs: 1_700_000_000_123, Body: []byte("a")},
		{TimestampMs: 1_700_000_000_124, Body: []byte("b")}}},
	{Stream: 47, Epoch: 1, Offset: 0, Records: []Record{{TimestampMs: 1_700_000_000_200,
		Headers: []Header{{Key: "k", Value: "v"}}, Body: []byte("c")}}},
}

var dataGoldenProducers = []ProducerState{{ID: "producer-a", Epoch: 3, Seq: 7, First: 100, Next: 102}}

// decodeDataObject decodes an object's index and every section's frame.
func decodeDataObject(t *testing.T, obj []byte) ([]Section, []Frame) {
	t.Helper()
	n, err := DataIndexLength(obj[:DataHeaderSize])
	if err != nil {
		t.Fatal(err)
	}
	secs, err := DecodeDataIndex(obj[:DataHeaderSize+n])
	if err != nil {
		t.Fatal(err)
	}
	var frames []Frame
	for _, s := range secs {
		f, used, err := DecodeFrame(obj[s.Offset : s.Offset+s.Length])
		if err != nil || used != int(s.Length) {
			t.Fatalf("section of stream %d: %v", s.Stream, err)
		}
		frames = append(frames, f)
	}
	return secs, frames
}

func TestDataObjectGoldenV1(t *testing.T) {
	obj := readGolden(t, dataGoldenV1)
	if string(obj[:4]) != "PDO1" {
		t.Fatalf("v1 golden starts with %q", obj[:4])
	}
	secs, frames := decodeDataObject(t, obj)
	if !reflect.DeepEqual(frames, dataGoldenFrames) {
		t.Fatalf("frames %+v, want %+v", frames, dataGoldenFrames)
	}
	if len(secs) != 2 || !reflect.DeepEqual(secs[0].Producers, dataGoldenProducers) || secs[1].Producers != nil {
		t.Fatalf("sections %+v", secs)
	}
	for _, s := range secs {
		if s.WriterSeq != "" {
			t.Fatalf("a PDO1 section has writer sequence %q", s.WriterSeq)
		}
	}
}

func TestDataObjectGoldenV2(t *testing.T) {
	states := []SectionState{{Producers: dataGoldenProducers, WriterSeq: "0000000017"}, {}}
	want, wantSecs := EncodeDataObject(dataGoldenFrames, states)
	writeGoldenOnUpdate(t, dataGoldenV2, want)
	obj := readGolden(t, dataGoldenV2)
	if string(obj[:4]) != "PDO2" {
		t.Fatalf("v2 golden starts with %q", obj[:4])
	}
	secs, frames := decodeDataObject(t, obj)
	if !reflect.DeepEqual(frames, dataGoldenFrames) || !reflect.DeepEqual(secs, wantSecs) {
		t.Fatalf("golden decodes to %+v %+v, want %+v", secs, frames, wantSecs)
	}
	if secs[0].WriterSeq != "0000000017" || secs[1].WriterSeq != "" {
		t.Fatalf("writer sequences %q %q", secs[0].WriterSeq, secs[1].WriterSeq)
	}
	if !bytes.Equal(want, obj) {
		t.Errorf("re-encoding changed the bytes:\n got %x\nwant %x", want, obj)
	}
}

// TestDataIndexLayoutV2 pins where the writer sequence goes: after the
// section's producer table.
func TestDataIndexLayoutV2(t *testing.T) {
	secs := []Section{{Stream: 1, Epoch: 2, Start: 3, End: 4, Offset: 5, Length: 6,
		Producers: []ProducerState{{ID: "p", Epoch: 7, Seq: 8, First: 9, Next: 10}}, WriterSeq: "ws"}}
	want := []byte{1, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 'p', 7, 8, 9, 10, 2, 'w', 's'}
	if got := encodeIndex(secs); !bytes.Equal(got, want) {
		t.Fatalf("encodeIndex = %x, want %x", got, want)
	}
}

// dataObjectWithIndex is a data object header and index (no frames) under
// magic.
func dataObjectWithIndex(magic string, index []byte) []byte {
	b := append([]byte(magic), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(index)))
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(index, castagnoli))
	return append(b, index...)
}

func TestDataIndexVersions(t *testing.T) {
	index := []byte{1, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0} // one section, no producers
	v1 := dataObjectWithIndex("PDO1", index)
	if n, err := DataIndexLength(v1); err != nil || n != len(index) {
		t.Fatalf("PDO1 index length %d, %v", n, err)
	}
	if secs, err := DecodeDataIndex(v1); err != nil || len(secs) != 1 || secs[0].WriterSeq != "" || secs[0].Length != 6 {
		t.Fatalf("PDO1 index: %+v %v", secs, err)
	}
	// The same index is one byte short as PDO2, and reads the writer
	// sequence when it is there.
	if _, err := DecodeDataIndex(dataObjectWithIndex("PDO2", index)); !errors.Is(err, ErrDecode) {
		t.Fatalf("PDO2 index without its writer sequence: %v", err)
	}
	v2 := dataObjectWithIndex("PDO2", append(index, 2, 'w', 's'))
	if n, err := DataIndexLength(v2); err != nil || n != len(index)+3 {
		t.Fatalf("PDO2 index length %d, %v", n, err)
	}
	if secs, err := DecodeDataIndex(v2); err != nil || len(secs) != 1 || secs[0].WriterSeq != "ws" {
		t.Fatalf("PDO2 index: %+v %v", secs, err)
	}
	for _, magic := range []string{"PDO0", "PDO3", "PWB1", "pdo2"} {
		if _, err := DataIndexLength(dataObjectWithIndex(magic, index)); !errors.Is(err, ErrDecode) {
			t.Errorf("magic %q: %v, want ErrDecode", magic, err)
		}
	}
}

func FuzzDecodeDataIndex(f *testing.F) {
	obj, _ := EncodeDataObject([]Frame{{Stream: 1, Epoch: 1, Records: []Record{{Body: []byte("x")}}}},
		[]SectionState{{Producers: []ProducerState{{ID: "p", Epoch: 1, Seq: 2, First: 0, Next: 1}}, WriterSeq: "w7"}})
	f.Add(obj)
	obj, _ = EncodeDataObject([]Frame{{Stream: 1, Epoch: 1}, {Stream: 2, Epoch: 3, Offset: 4}},
		[]SectionState{{WriterSeq: "a"}, {}})
	f.Add(obj)
	f.Add([]byte("PDO1\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add([]byte("PDO2\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add(dataObjectWithIndex("PDO1", []byte{1, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 1, 1, 'p', 7, 8, 9, 10}))
	f.Add(dataObjectWithIndex("PDO2", []byte{1, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 2, 'w', 's'}))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDataIndexReencodes(t, b)
		if len(b) >= DataHeaderSize {
			// The same index with a valid length and CRC, so the fuzzer
			// explores the sections behind the checksum too.
			checkDataIndexReencodes(t, dataObjectWithIndex(string(b[:4]), b[DataHeaderSize:]))
		}
	})
}

// checkDataIndexReencodes: whatever decodes, PDO1 or PDO2, is kept whole by
// the current format, and a PDO1 index yields no writer sequence.
func checkDataIndexReencodes(t *testing.T, b []byte) {
	secs, err := DecodeDataIndex(b)
	if err != nil {
		return
	}
	if len(secs) > len(b) {
		t.Fatalf("%d sections from %d bytes", len(secs), len(b))
	}
	for _, s := range secs {
		if string(b[:4]) == "PDO1" && s.WriterSeq != "" {
			t.Fatalf("a PDO1 section has writer sequence %q", s.WriterSeq)
		}
	}
	again, err := DecodeDataIndex(dataObjectWithIndex("PDO2", encodeIndex(secs)))
	if err != nil || !reflect.DeepEqual(again, secs) {
		t.Fatalf("re-encoded as PDO2: %v\n got %+v\nwant %+v", err, again, secs)
	}
}
