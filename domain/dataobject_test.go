package domain

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func TestDataObjectRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		frames := rapid.SliceOfN(genFrame(), 1, 4).Draw(t, "frames")
		var producers [][]ProducerState
		for i := range frames {
			frames[i].Producer = nil // producer tables travel in the index instead
			var ps []ProducerState
			if rapid.Bool().Draw(t, "has producers") {
				ps = []ProducerState{{ID: rapid.String().Draw(t, "id"), Epoch: 1, Seq: rapid.Uint64().Draw(t, "seq"), First: 3, Next: 9}}
			}
			producers = append(producers, ps)
		}
		obj, secs := EncodeDataObject(frames, producers)
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
			if s.Start != frames[i].Offset || s.End != frames[i].End() || !reflect.DeepEqual(s.Producers, producers[i]) {
				t.Fatalf("section %d describes %+v", i, s)
			}
		}
	})
}

func FuzzDecodeDataIndex(f *testing.F) {
	obj, _ := EncodeDataObject([]Frame{{Stream: 1, Epoch: 1, Records: []Record{{Body: []byte("x")}}}},
		[][]ProducerState{{{ID: "p", Epoch: 1, Seq: 2, First: 0, Next: 1}}})
	f.Add(obj)
	f.Add([]byte("PDO1\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		secs, err := DecodeDataIndex(b)
		if err == nil && len(secs) > len(b) {
			t.Fatalf("%d sections from %d bytes", len(secs), len(b))
		}
	})
}
