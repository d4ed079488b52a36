package picoclient

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
)

func ackAppend(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(hdrStartSeq, "3")
	w.Header().Set(hdrNextSeq, "4")
	w.Header().Set(hdrTimestamp, "1700000000000")
}

func TestAppendOneRecordSendsRawBody(t *testing.T) {
	c, seen := serve(t, ackAppend)
	match := uint64(3)
	got, err := c.Append(t.Context(), "/s", []Record{{Body: []byte("hello")}}, AppendOptions{
		ContentType: "text/plain", MatchSeq: &match, Close: true,
		Producer: &ProducerStamp{ID: "w1", Epoch: 2, Seq: 9},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := seen.header
	if seen.method != http.MethodPost || string(seen.body) != "hello" || h.Get("Content-Type") != "text/plain" ||
		h.Get(hdrMatchSeq) != "3" || h.Get(hdrClosed) != "true" || h.Get(hdrProducerID) != "w1" ||
		h.Get(hdrProducerEpoch) != "2" || h.Get(hdrProducerSeq) != "9" {
		t.Fatalf("request %s %q %v", seen.method, seen.body, h)
	}
	want := AppendResult{Start: 3, Next: 4, Timestamp: time.UnixMilli(1700000000000), Applied: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestAppendBatchesWhenARecordIsNotPlain(t *testing.T) {
	for name, records := range map[string][]Record{
		"many":      {{Body: []byte("a")}, {Body: []byte("b")}},
		"headers":   {{Headers: []Header{{Key: "k", Value: "v"}}, Body: []byte("a")}},
		"empty":     {{}},
		"key":       {{Key: []byte("order-9"), Body: []byte("a")}},
		"empty key": {{Key: []byte{}, Headers: []Header{{Key: "raw", Value: "\xff"}}, Body: []byte("a")}},
	} {
		c, seen := serve(t, ackAppend)
		if _, err := c.Append(t.Context(), "/s", records, AppendOptions{ContentType: "text/plain"}); err != nil {
			t.Fatal(name, err)
		}
		if seen.header.Get("Content-Type") != picowire.BatchContentType {
			t.Fatalf("%s: content type %q", name, seen.header.Get("Content-Type"))
		}
		decoded, err := picowire.DecodeBatch(seen.body, picowire.BatchLimits{MaxRecords: 10, MaxHeaders: 10})
		if err != nil || len(decoded) != len(records) {
			t.Fatalf("%s: decoded %v %v", name, decoded, err)
		}
		for i := range records {
			if string(decoded[i].Body) != string(records[i].Body) || !reflect.DeepEqual(decoded[i].Headers, wireRecords(records)[i].Headers) ||
				!reflect.DeepEqual(decoded[i].Key, records[i].Key) {
				t.Fatalf("%s: record %d = %+v", name, i, decoded[i])
			}
		}
	}
}

func TestAppendWithoutRecordsIsRefused(t *testing.T) {
	c, seen := serve(t, ackAppend)
	if _, err := c.Append(t.Context(), "/s", nil, AppendOptions{}); err == nil || seen.method != "" {
		t.Fatalf("err %v, request %q", err, seen.method)
	}
}

func TestCloseSendsEmptyClosingPost(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hdrNextSeq, "8")
		w.Header().Set(hdrClosed, "true")
	})
	got, err := c.CloseStream(t.Context(), "/s")
	if err != nil {
		t.Fatal(err)
	}
	if seen.method != http.MethodPost || len(seen.body) != 0 || seen.header.Get(hdrClosed) != "true" ||
		seen.header.Get("Content-Type") != "" {
		t.Fatalf("request %+v", seen)
	}
	if got != (AppendResult{Next: 8, Closed: true}) {
		t.Fatalf("got %+v", got)
	}
}

func TestAppendMatchFailureCarriesTail(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPreconditionFailed)
		fmt.Fprint(w, `{"error":"match_failed","message":"match failed: expected tail 1, actual 5","next_seq":5}`)
	})
	match := uint64(1)
	_, err := c.Append(t.Context(), "/s", []Record{{Body: []byte("x")}}, AppendOptions{MatchSeq: &match})
	api, ok := err.(*APIError)
	if !ok || api.Status != 412 || api.Code != "match_failed" || api.NextSeq == nil || *api.NextSeq != 5 {
		t.Fatalf("err %#v", err)
	}
}

func TestTrimSendsSeqAndReadsStart(t *testing.T) {
	c, seen := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Header().Set(hdrStartSeq, "4") })
	start, err := c.Trim(t.Context(), "/s", 6)
	if err != nil || start != 4 {
		t.Fatalf("start %d err %v", start, err)
	}
	if seen.method != http.MethodPost || seen.header.Get(hdrTrimSeq) != "6" || len(seen.body) != 0 {
		t.Fatalf("request %+v", seen)
	}
}

func TestTrimWithoutStartIsAnError(t *testing.T) {
	c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	if _, err := c.Trim(t.Context(), "/s", 6); err == nil {
		t.Fatal("a trim answer without Pico-Start-Seq was accepted")
	}
}
