package domain

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// sameCommands compares command lists, treating nil and empty lists alike.
func sameCommands(a, b []Command) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestCommandRoundTrip(t *testing.T) {
	for _, code := range AllCodes() {
		t.Run(typeName(code), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				c := commandGen(code).Draw(t, "cmd")
				got, err := DecodeRow(EncodeCommand(c))
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if len(got) != 1 || !reflect.DeepEqual(got[0], c) {
					t.Fatalf("got %v, want %s", got, describe(c))
				}
			})
		})
	}
}

func TestRowRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cmds := rapid.SliceOfN(anyCommandGen(), 0, 20).Draw(t, "row")
		enc := EncodeRow(cmds)
		got, err := DecodeRow(enc)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !sameCommands(got, cmds) {
			t.Fatalf("round trip changed the row:\n got %v\nwant %v", got, cmds)
		}
		if again := EncodeRow(got); !bytes.Equal(again, enc) {
			t.Fatalf("re-encoding differs")
		}
		// Every proper prefix is truncated, so it must fail cleanly.
		for n := range len(enc) {
			if _, err := DecodeRow(enc[:n]); !errors.Is(err, ErrDecode) {
				t.Fatalf("prefix of %d/%d bytes: err %v", n, len(enc), err)
			}
		}
		if _, err := DecodeRow(append(enc, 0)); !errors.Is(err, ErrDecode) {
			t.Fatalf("trailing byte accepted: %v", err)
		}
	})
}

func TestDecodeRowRejects(t *testing.T) {
	valid := EncodeCommand(&DeleteKV{By: Proposer{1, 1}, Space: SpaceTokens, Key: "k"})
	badBool := EncodeCommand(&CreateStream{By: Proposer{1, 1}, Name: "x", Open: true})
	badBool[len(badBool)-2] = 2 // the Open byte, before NowMs
	tests := []struct {
		name string
		row  []byte
	}{
		{"empty", nil},
		{"unknown version", append([]byte{2}, valid[1:]...)},
		{"unknown code", []byte{RowVersion, 1, 99, 0}},
		{"code zero", []byte{RowVersion, 1, 0, 0}},
		{"count beyond bytes", []byte{RowVersion, 5, 18, 0}},
		{"too many commands", append([]byte{RowVersion, 0x81, 0x20}, make([]byte, 2*4097)...)},
		{"body too short", []byte{RowVersion, 1, 4, 1, 1}},
		{"bad bool", badBool},
		{"node id over 32 bits", []byte{RowVersion, 1, 2, 8, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 1, 1}},
		{"overlong uvarint", []byte{RowVersion, 1, 16, 11, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if cmds, err := DecodeRow(tc.row); !errors.Is(err, ErrDecode) {
				t.Errorf("DecodeRow(%x) = %v, %v; want ErrDecode", tc.row, cmds, err)
			} else {
				t.Log(err)
			}
		})
	}
}

func TestDecodedBytesDoNotAlias(t *testing.T) {
	row := EncodeCommand(&PutKV{By: Proposer{1, 1}, Space: SpaceRegistry, Key: "k", Value: []byte("value")})
	cmds, err := DecodeRow(row)
	if err != nil {
		t.Fatal(err)
	}
	for i := range row {
		row[i] = 0
	}
	if v := cmds[0].(*PutKV).Value; string(v) != "value" {
		t.Errorf("decoded value aliases the row buffer: %q", v)
	}
}
