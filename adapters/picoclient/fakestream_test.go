package picoclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picowire"
	"github.com/picomq/pico/domain"
)

// fault is what fakeStream does to one append.
type fault int

const (
	faultNone      fault = iota
	faultRefuse          // 503 before judging: nothing written
	faultLoseReply       // judged and written, then the connection drops
)

// fakeStream is one stream behind a Pico endpoint that judges appends by
// the server's own write rules (domain.WriteState), so that a producer's
// stamps meet real dedup, gap and fencing decisions; faults and delays
// come from the test.
type fakeStream struct {
	mu      sync.Mutex
	state   domain.WriteState
	records []Record
	next    func() (fault, time.Duration) // nil: no faults
}

func newFakeStream(t *testing.T, next func() (fault, time.Duration)) (*fakeStream, *Client) {
	f := &fakeStream{next: next}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, New(srv.URL, Options{Timeout: 5 * time.Second})
}

func (f *fakeStream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	flt, delay := faultNone, time.Duration(0)
	if f.next != nil {
		f.mu.Lock()
		flt, delay = f.next()
		f.mu.Unlock()
	}
	time.Sleep(delay)
	if flt == faultRefuse {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	req, err := fakeRequest(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status, h, answer := f.judge(req)
	if flt == faultLoseReply {
		panic(http.ErrAbortHandler) // written, but the client never learns it
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	w.Write(answer)
}

func fakeRequest(r *http.Request, body []byte) (domain.WriteRequest, error) {
	req := domain.WriteRequest{Close: r.Header.Get(hdrClosed) == "true"}
	if id := r.Header.Get(hdrProducerID); id != "" {
		epoch, err1 := strconv.ParseUint(r.Header.Get(hdrProducerEpoch), 10, 64)
		seq, err2 := strconv.ParseUint(r.Header.Get(hdrProducerSeq), 10, 64)
		if err1 != nil || err2 != nil {
			return req, fmt.Errorf("bad stamp")
		}
		req.Producer = &domain.ProducerStamp{ID: id, Epoch: epoch, Seq: seq}
	}
	switch {
	case r.Header.Get("Content-Type") == picowire.BatchContentType:
		records, err := picowire.DecodeBatch(body, picowire.BatchLimits{MaxRecords: 1 << 16, MaxHeaders: 1 << 10})
		if err != nil {
			return req, err
		}
		req.Records = records
	case len(body) > 0:
		req.Records = []domain.Record{{Body: body}}
	}
	return req, nil
}

// judge decides req as a node would and returns the answer's status,
// headers and body.
func (f *fakeStream) judge(req domain.WriteRequest) (int, http.Header, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.state.Decide(req, false, time.Now().UnixMilli())
	f.state.Accept(req, v)
	h := http.Header{}
	h.Set(hdrNextSeq, formatUint(v.Next))
	if req.Producer != nil {
		h.Set(hdrProducerSeq, formatUint(v.ProducerSeq))
	}
	refuse := func(status int, code string) (int, http.Header, []byte) {
		b, _ := json.Marshal(errorBody{Error: code, Message: v.Outcome.String()})
		return status, h, b
	}
	switch v.Outcome {
	case domain.Accepted:
		for i, r := range req.Records {
			f.records = append(f.records, Record{Seq: v.First + uint64(i), Key: r.Key, Body: r.Body})
		}
		if len(req.Records) > 0 {
			h.Set(hdrStartSeq, formatUint(v.First))
		}
		return http.StatusOK, h, nil
	case domain.Duplicate:
		return http.StatusOK, h, nil
	case domain.ProducerGap:
		h.Set(hdrExpectedSeq, formatUint(v.Expected))
		h.Set(hdrReceivedSeq, formatUint(v.Received))
		return refuse(http.StatusConflict, "sequence_gap")
	case domain.StaleEpoch:
		h.Set(hdrProducerEpoch, formatUint(v.Epoch))
		return refuse(http.StatusForbidden, "fenced")
	case domain.StreamClosed:
		return refuse(http.StatusConflict, "closed")
	}
	return refuse(http.StatusBadRequest, "bad_request")
}

// bodies is the stream's records' bodies, in seq order.
func (f *fakeStream) bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.records))
	for i, r := range f.records {
		out[i] = string(r.Body)
	}
	return out
}

// seal closes the stream to further appends.
func (f *fakeStream) seal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state.Sealed = true
}
