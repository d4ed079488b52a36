package picoclient

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

var page = []picowire.SeqRecord{
	{Seq: 5, Record: domain.Record{TimestampMs: 100, Body: []byte("a")}},
	{Seq: 6, Record: domain.Record{TimestampMs: 101, Headers: []domain.Header{{Key: "k", Value: "v"}}, Body: []byte("b")}},
}

func TestReadAsksForBinaryAndDecodesIt(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", picowire.BatchContentType)
		w.Header().Set(hdrNextSeq, "7")
		w.Header().Set(hdrUpToDate, "true")
		w.Write(picowire.EncodeBatchResponse(page))
	})
	got, err := c.ReadPage(t.Context(), "/s", ReadOptions{Seq: 5, Count: 2, Bytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"seq": {"5"}, "count": {"2"}, "bytes": {"1024"}, "format": {"binary"}}
	if seen.method != http.MethodGet || !reflect.DeepEqual(seen.query, want) {
		t.Fatalf("request %s %v", seen.method, seen.query)
	}
	if got.Next != 7 || !got.UpToDate || got.Closed || !samePage(got.Records, page) {
		t.Fatalf("page %+v", got)
	}
}

func TestReadUnderstandsJSONPages(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(picowire.EncodeJSONRecords(page))
	})
	got, err := c.ReadPage(t.Context(), "/s", ReadOptions{})
	if err != nil || !samePage(got.Records, page) {
		t.Fatalf("page %+v err %v", got, err)
	}
}

func TestLongPollTimeoutIsAnEmptyUpToDatePage(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hdrNextSeq, "9")
		w.Header().Set(hdrUpToDate, "true")
		w.WriteHeader(http.StatusNoContent)
	})
	got, err := c.ReadPage(t.Context(), "/s", ReadOptions{Now: true, LongPoll: true})
	if err != nil {
		t.Fatal(err)
	}
	if seen.query["seq"][0] != "now" || seen.query["live"][0] != "long-poll" {
		t.Fatalf("query %v", seen.query)
	}
	if len(got.Records) != 0 || got.Next != 9 || !got.UpToDate {
		t.Fatalf("page %+v", got)
	}
}

func TestReadRejectsAMalformedPage(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{1, 0, 0, 0, 9}) })
	if _, err := c.ReadPage(t.Context(), "/s", ReadOptions{}); err == nil {
		t.Fatal("a truncated page was accepted")
	}
}

func samePage(a []Record, b []picowire.SeqRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].Timestamp.UnixMilli() != b[i].TimestampMs || string(a[i].Body) != string(b[i].Body) ||
			len(a[i].Headers) != len(b[i].Headers) || (len(a[i].Headers) > 0 && !reflect.DeepEqual(wireRecords(a[i : i+1])[0].Headers, b[i].Headers)) {
			return false
		}
	}
	return true
}
