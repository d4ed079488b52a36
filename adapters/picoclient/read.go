package picoclient

import (
	"context"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/picomq/pico/adapters/picowire"
)

// ReadOptions choose where a page starts and how much it holds.
type ReadOptions struct {
	Seq      uint64 // first seq to read
	Now      bool   // start at the tail instead of Seq
	Count    int    // record cap; 0: none
	Bytes    int    // byte cap; 0: the server's default
	LongPoll bool   // wait for records when at the tail
}

// Page is one read's records and where the next read starts.
type Page struct {
	Records  []Record
	Next     uint64 // seq to read from next
	UpToDate bool   // the page reached the tail
	Closed   bool   // the stream is closed and the page reached the tail
}

// readLimits bound a decoded page. The body cap bounds it already; these
// keep a hostile count from sizing allocations.
var readLimits = picowire.BatchLimits{MaxRecords: maxResponseBytes / 24, MaxHeaders: 1 << 16}

// Read iterates over the stream's records from seq from to its tail as the
// last page finds it, a page of the server's size at a time. It yields an
// error at most once, and then stops; it does not retry (Subscribe does).
// Records below the stream's start (trimmed or expired) are skipped.
func (c *Client) Read(ctx context.Context, name string, from uint64) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			page, err := c.ReadPage(ctx, name, ReadOptions{Seq: from})
			if err != nil {
				yield(Record{}, err)
				return
			}
			for _, r := range page.Records {
				if !yield(r, nil) {
					return
				}
			}
			if page.UpToDate {
				return
			}
			if page.Next <= from {
				yield(Record{}, fmt.Errorf("read %s: the page from seq %d is neither up to date nor past it", name, from))
				return
			}
			from = page.Next
		}
	}
}

// ReadPage returns one page of records. A long-poll that times out returns
// an empty page that is up to date.
func (c *Client) ReadPage(ctx context.Context, name string, opts ReadOptions) (Page, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, name: name, query: readQuery(opts)})
	if err != nil {
		return Page{}, err
	}
	page := Page{UpToDate: headerTrue(resp.header, hdrUpToDate), Closed: headerTrue(resp.header, hdrClosed)}
	if page.Next, _, err = headerUint(resp.header, hdrNextSeq); err != nil {
		return Page{}, err
	}
	if resp.status == http.StatusNoContent || len(resp.body) == 0 {
		return page, nil
	}
	records, err := decodePage(resp)
	if err != nil {
		return Page{}, fmt.Errorf("read %s: %w", name, err)
	}
	page.Records = readRecords(records)
	if n := len(page.Records); n > 0 && page.Records[n-1].Seq >= page.Next {
		page.Next = page.Records[n-1].Seq + 1 // never behind what it holds
	}
	return page, nil
}

func readQuery(opts ReadOptions) url.Values {
	q := url.Values{"format": {"binary"}}
	if opts.Now {
		q.Set("seq", "now")
	} else {
		q.Set("seq", formatUint(opts.Seq))
	}
	if opts.Count > 0 {
		q.Set("count", strconv.Itoa(opts.Count))
	}
	if opts.Bytes > 0 {
		q.Set("bytes", strconv.Itoa(opts.Bytes))
	}
	if opts.LongPoll {
		q.Set("live", "long-poll")
	}
	return q
}

// decodePage decodes the binary page asked for; a server that answers JSON
// anyway is understood too.
func decodePage(resp *response) ([]picowire.SeqRecord, error) {
	mt, _, _ := mime.ParseMediaType(resp.header.Get("Content-Type"))
	if mt == "application/json" {
		return picowire.DecodeJSONRecords(resp.body, readLimits)
	}
	return picowire.DecodeBatchResponse(resp.body, readLimits)
}
