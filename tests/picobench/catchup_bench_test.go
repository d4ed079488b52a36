package picobench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkCatchUpRead replays a 64 MiB stream of 1 KiB records from its
// start in pages of up to 1 MiB, each format in turn, through an
// in-process node on versitygw (warm caches after the first pass), and
// reports the MiB/s served and the bytes this process allocated per MiB
// served (node and client).
func BenchmarkCatchUpRead(b *testing.B) {
	s := startServer(b)
	s.create(b, "/replay")
	batch := bytes.Repeat(append(bytes.Repeat([]byte("r"), 1023), '\n'), 1024)
	for range 64 {
		s.do(b, http.MethodPost, "/replay", "application/octet-stream", batch, http.StatusOK)
	}
	for _, format := range []string{"binary", "raw", "json"} {
		b.Run("format="+format, func(b *testing.B) {
			replay(b, s, format) // warm the caches
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			served := int64(0)
			for range b.N {
				served += replay(b, s, format)
			}
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			mib := float64(served) / (1 << 20)
			b.ReportMetric(mib/b.Elapsed().Seconds(), "MiB/s")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/mib, "alloc-B/MiB")
		})
	}
}

// replay reads /replay from its start to its end and returns the bytes of
// the responses.
func replay(b *testing.B, s *server, format string) int64 {
	var total int64
	for seq := "0"; ; {
		resp, err := s.client.Get(s.url + "/replay?bytes=1048576&format=" + format + "&seq=" + seq)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(fmt.Errorf("read at %s: %d %v", seq, resp.StatusCode, err))
		}
		total += n
		if resp.Header.Get("Pico-Up-To-Date") == "true" {
			return total
		}
		if _, err := strconv.ParseUint(resp.Header.Get("Pico-Next-Seq"), 10, 64); err != nil {
			b.Fatal(err)
		}
		seq = resp.Header.Get("Pico-Next-Seq")
	}
}
