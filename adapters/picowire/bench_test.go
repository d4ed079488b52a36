package picowire

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkDecodeJSONBatch decodes a batch of 100 records of about 1 KiB:
// plain text takes the fast path; text with escapes (a JSON document in a
// body, say) takes the careful path, which checks each string as text.
func BenchmarkDecodeJSONBatch(b *testing.B) {
	for name, text := range map[string]string{
		"plain":   strings.Repeat("lorem ipsum ", 85),
		"escaped": strings.Repeat(`{"k": "v\n"} `, 85),
	} {
		b.Run(name, func(b *testing.B) {
			body := benchBatch(100, text)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeJSONBatch(body, BatchLimits{MaxRecords: 1000, MaxHeaders: 64}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchBatch(n int, text string) []byte {
	type rec struct {
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
	}
	recs := make([]rec, n)
	for i := range recs {
		recs[i] = rec{Body: text, Headers: map[string]string{"kind": "bench", "trace": "0af7651916cd43dd"}}
	}
	out, err := json.Marshal(map[string]any{"records": recs})
	if err != nil {
		panic(err)
	}
	return out
}
