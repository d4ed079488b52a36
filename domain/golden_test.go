package domain

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite the golden encodings in testdata/golden")

// goldenSamples has one hand-written command per type, every field non-zero.
func goldenSamples() []Command {
	by := Proposer{Node: 2, Epoch: 7}
	return []Command{
		&RegisterNode{Node: 3, Epoch: 9, Address: "10.1.2.3:7070", Slots: 300, NowMs: 1_700_000_000_123},
		&SetSlots{By: by, Node: 4, Slots: 129},
		&CreateStream{By: by, Name: "/streams/orders", Meta: []byte("application/json"), Open: true, NowMs: 1_700_000_000_456},
		&OpenStream{By: by, Stream: 42, Epoch: 5},
		&CloseStream{By: by, Stream: 43, Epoch: 6},
		&SetStreamMeta{By: by, Stream: 44, Epoch: 2, Meta: []byte{0x00, 0xff, 0x10}},
		&TrimStream{By: by, Stream: 45, Epoch: 3, Start: 100_000, KeepLast: true},
		&DeleteStream{By: by, Stream: 46, Epoch: 4},
		&ReserveObjects{By: by, Count: 16, TTLMs: 30_000, NowMs: -5},
		&CommitObjects{By: by, NowMs: 1_700_000_001_000, Objects: []ObjectSpec{
			{ID: 100, Size: 4096, Ranges: []Range{{Stream: 42, Epoch: 5, Start: 10, End: 20}, {Stream: 47, Epoch: 1, Start: 1, End: 300}}},
			{ID: 101, Size: 1 << 40, Ranges: []Range{{Stream: 42, Epoch: 5, Start: 20, End: 25}}},
		}},
		&CompactObjects{By: by, NowMs: 1_700_000_002_000, Replaces: []uint64{100, 101, 1 << 33},
			Object: ObjectSpec{ID: 200, Size: 8192, Ranges: []Range{{Stream: 42, Epoch: 5, Start: 10, End: 25}}}},
		&StartTransfer{By: by, Stream: 48, To: 5},
		&CompleteTransfer{By: by, Stream: 49, Epoch: 8},
		&ExpireReservations{By: by, NowMs: 1_700_000_003_000},
		&DestroyObjects{By: by, IDs: []uint64{7, 300, 70_000}},
		&PutKV{By: by, Space: SpaceRegistry, Key: "/registry/schema", Value: []byte(`{"v":1}`)},
		&PutKVIf{By: by, Space: SpaceTokens, Key: "token-a", Value: []byte("secret"), IfRev: 77},
		&DeleteKV{By: by, Space: SpaceRegistry, Key: "/registry/old"},
		&DeleteKVIf{By: by, Space: SpaceTokens, Key: "token-b", IfRev: 78},
		&FenceNode{By: by, Node: 6, Epoch: 1_700_000_004_000},
		&SealStream{By: by, Stream: 50, Epoch: 9},
		&CreateFork{By: by, Name: "/streams/orders-fork", Meta: []byte("text/plain"), Source: 51, At: 1234, NowMs: 1_700_000_005_000},
		&RecoveredStream{By: by, Stream: 52, Epoch: 10},
		&SealStreamBy{By: by, Stream: 53, Epoch: 11, Closer: &ProducerStamp{ID: "producer-1", Epoch: 3, Seq: 41}},
		&PlaceStream{By: by, Name: "/streams/placed", Meta: []byte("text/plain"), Content: true, NowMs: 1_700_000_006_000},
	}
}

// snake turns a Go type name into a file name: PutKVIf -> put_kv_if.
func snake(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"PutKVIf": "put_kv_if", "DeleteKV": "delete_kv",
		"RegisterNode": "register_node", "SetSlots": "set_slots"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// nonZero reports the path of the first zero field, slice or element.
func nonZero(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer:
		return nonZero(v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			if p := nonZero(v.Field(i), path+"."+v.Type().Field(i).Name); p != "" {
				return p
			}
		}
		return ""
	case reflect.Slice:
		if v.Len() == 0 {
			return path
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "" // bytes are data: a zero byte is fine
		}
		for i := range v.Len() {
			if p := nonZero(v.Index(i), path); p != "" {
				return p
			}
		}
		return ""
	}
	if v.IsZero() {
		return path
	}
	return ""
}

func goldenPath(c Code) string {
	return filepath.Join("testdata", "golden", snake(typeName(c))+".hex")
}

func TestGoldenEncodings(t *testing.T) {
	samples := map[Code]Command{}
	for _, c := range goldenSamples() {
		if samples[c.Code()] != nil {
			t.Fatalf("two samples for %s", typeName(c.Code()))
		}
		if p := nonZero(reflect.ValueOf(c), typeName(c.Code())); p != "" {
			t.Errorf("sample field %s is zero", p)
		}
		samples[c.Code()] = c
	}
	for _, code := range AllCodes() {
		t.Run(typeName(code), func(t *testing.T) {
			sample := samples[code]
			if sample == nil {
				t.Fatalf("no golden sample for %s", typeName(code))
			}
			path := goldenPath(code)
			if *update {
				out := hex.EncodeToString(EncodeCommand(sample)) + "\n"
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("missing golden file (run with -update): %v", err)
			}
			want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			cmds, err := DecodeRow(want)
			if err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if len(cmds) != 1 || !reflect.DeepEqual(cmds[0], sample) {
				t.Fatalf("golden decodes to %v, want %s", cmds, describe(sample))
			}
			if got := EncodeCommand(cmds[0]); !bytes.Equal(got, want) {
				t.Errorf("re-encoding changed the bytes:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// TestGoldenFilesKnown fails on golden files left over for no command type.
func TestGoldenFilesKnown(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range AllCodes() {
		known[goldenPath(c)] = true
	}
	for _, f := range files {
		if !known[f] {
			t.Errorf("golden file %s matches no command type", f)
		}
	}
}

// A TrimStream encoded before KeepLast existed decodes with it false and
// encodes back to the same bytes; KeepLast written as false is refused (it
// would not re-encode the same).
func TestTrimStreamBeforeKeepLast(t *testing.T) {
	v1, _ := hex.DecodeString("0101070702072d03a08d06")
	cmds, err := DecodeRow(v1)
	if err != nil || len(cmds) != 1 {
		t.Fatalf("decode: %v %v", cmds, err)
	}
	want := &TrimStream{By: Proposer{Node: 2, Epoch: 7}, Stream: 45, Epoch: 3, Start: 100_000}
	if !reflect.DeepEqual(cmds[0], want) {
		t.Fatalf("decoded %s, want %s", describe(cmds[0]), describe(want))
	}
	if got := EncodeCommand(cmds[0]); !bytes.Equal(got, v1) {
		t.Fatalf("re-encoded %x, want %x", got, v1)
	}
	falseByte, _ := hex.DecodeString("0101070802072d03a08d0600")
	if _, err := DecodeRow(falseByte); err == nil {
		t.Fatal("KeepLast written as false was accepted")
	}
}
