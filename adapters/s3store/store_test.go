package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/ports"
)

// fakeS3 is just enough of an S3 server to script the failures of
// conditional puts: each PUT takes the next action of the script.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	script  []string
	puts    int
	gets    int
	late    []byte // a body stored when the next PUT arrives
}

const (
	actNormal       = ""          // behave like S3
	actStoreThen500 = "store+500" // store, then fail as if the response were lost
	act500          = "500"       // fail without storing
	act409          = "409"       // conflicting conditional write in progress
	actReset        = "reset"     // close the connection without answering
	act403          = "403"       // access denied
	actStoreLate    = "late"      // fail, and store only when the next PUT arrives (a slow server)
)

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := strings.TrimPrefix(r.URL.Path, "/bucket/")
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			s3Error(w, 400, "IncompleteBody")
			return
		}
		if f.late != nil {
			f.objects[key], f.late = f.late, nil
		}
		action := actNormal
		if f.puts < len(f.script) {
			action = f.script[f.puts]
		}
		f.puts++
		switch action {
		case actStoreThen500:
			f.objects[key] = body
			s3Error(w, 500, "InternalError")
		case act500:
			s3Error(w, 500, "InternalError")
		case actStoreLate:
			f.late = body
			s3Error(w, 500, "InternalError")
		case act409:
			s3Error(w, 409, "ConditionalRequestConflict")
		case act403:
			s3Error(w, 403, "AccessDenied")
		case actReset:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			if _, ok := f.objects[key]; ok && r.Header.Get("If-None-Match") == "*" {
				s3Error(w, 412, "PreconditionFailed")
				return
			}
			f.objects[key] = body
			w.Header().Set("ETag", `"etag"`)
		}
	case http.MethodGet:
		f.gets++
		body, ok := f.objects[key]
		if !ok {
			s3Error(w, 404, "NoSuchKey")
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	default:
		s3Error(w, 405, "MethodNotAllowed")
	}
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>scripted</Message></Error>`, code)
}

func openFake(t *testing.T, f *fakeS3) *Store {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "fake")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := Open(context.Background(), "s3://bucket?region=us-east-1&pathStyle=true&endpoint="+srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.backoff = func(int, error) (time.Duration, error) { return 0, nil }
	return s
}

func TestPutIfAbsentResolvesUnknownOutcomes(t *testing.T) {
	mine, theirs := []byte("mine"), []byte("theirs")
	for _, c := range []struct {
		name     string
		script   []string
		stored   []byte // present before the call
		want     error  // nil, ports.ErrPrecondition, or errOther
		wantPuts int
		wantGets int
	}{
		{"first attempt refused", nil, theirs, ports.ErrPrecondition, 1, 0},
		{"stored but the response lost", []string{actStoreThen500}, nil, nil, 1, 1},
		{"failed, then another writer's object", []string{act500}, theirs, ports.ErrPrecondition, 1, 1},
		{"failed, absent, retried", []string{act500}, nil, nil, 2, 1},
		{"connection reset, absent, retried", []string{actReset}, nil, nil, 2, 1},
		{"stored late, so refused by itself", []string{actStoreLate}, nil, nil, 2, 2},
		{"fails every attempt", []string{act500, act500, act500}, nil, errOther, 3, 3},
		{"conflict then success", []string{act409}, nil, nil, 2, 0},
		{"conflicts persist", []string{act409, act409, act409}, nil, ports.ErrPrecondition, 3, 0},
		{"access denied is final", []string{act403}, nil, errOther, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeS3{objects: map[string][]byte{}, script: c.script}
			if c.stored != nil {
				f.objects["k"] = c.stored
			}
			s := openFake(t, f)
			err := s.PutIfAbsent(t.Context(), "k", mine)
			switch {
			case c.want == errOther && (err == nil || errors.Is(err, ports.ErrPrecondition)):
				t.Fatalf("PutIfAbsent = %v, want an error other than ErrPrecondition", err)
			case c.want != errOther && !errors.Is(err, c.want) && !(c.want == nil && err == nil):
				t.Fatalf("PutIfAbsent = %v, want %v", err, c.want)
			}
			if f.puts != c.wantPuts || f.gets != c.wantGets {
				t.Fatalf("%d PUTs and %d GETs, want %d and %d", f.puts, f.gets, c.wantPuts, c.wantGets)
			}
		})
	}
}

var errOther = errors.New("any error but ErrPrecondition")

func TestOpenRejectsBadURLs(t *testing.T) {
	for _, u := range []string{
		"http://bucket", "s3://", "s3:///prefix", "s3://bucket?endpoint=ftp://x",
		"s3://bucket?pathStyle=maybe", "s3://bucket?regoin=us-east-1",
	} {
		if _, err := Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) = nil error", u)
		}
	}
	s, err := Open(context.Background(), "s3://bucket/a/b/?region=eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.bucket != "bucket" || s.prefix != "a/b/" {
		t.Fatalf("bucket %q prefix %q, want bucket and a/b/", s.bucket, s.prefix)
	}
}

// A request body stops reading once its call has returned, so the caller
// may reuse the slice while net/http still holds the reader.
func TestRequestBodyEnds(t *testing.T) {
	b := newRequestBody([]byte("abcdef"))
	p := make([]byte, 3)
	if n, err := b.Read(p); n != 3 || err != nil || string(p) != "abc" {
		t.Fatalf("read: %d %v %q", n, err, p)
	}
	if pos, err := b.Seek(0, io.SeekStart); pos != 0 || err != nil {
		t.Fatalf("seek: %d %v", pos, err)
	}
	var whole bytes.Buffer
	if n, err := b.WriteTo(&whole); n != 6 || err != nil || whole.String() != "abcdef" {
		t.Fatalf("write to: %d %v %q", n, err, whole.String())
	}
	b.end()
	if n, err := b.Read(p); n != 0 || !errors.Is(err, errBodyEnded) {
		t.Fatalf("read after end: %d %v", n, err)
	}
	if _, err := b.Seek(0, io.SeekStart); !errors.Is(err, errBodyEnded) {
		t.Fatalf("seek after end: %v", err)
	}
	if n, err := b.WriteTo(&whole); n != 0 || !errors.Is(err, errBodyEnded) {
		t.Fatalf("write to after end: %d %v", n, err)
	}
}
