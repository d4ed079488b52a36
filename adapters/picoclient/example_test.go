package picoclient_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/tests/picoproc"
)

// endpoint is the node the examples talk to: in your program, your node's
// URL, such as "http://127.0.0.1:4437". TestMain starts a real one.
var endpoint string

func Example() {
	ctx := context.Background()
	c := picoclient.New(endpoint, picoclient.Options{})
	if _, err := c.Create(ctx, "/examples/orders", picoclient.CreateOptions{ContentType: "text/plain"}); err != nil {
		log.Fatal(err)
	}
	res, err := c.Append(ctx, "/examples/orders", []picoclient.Record{
		{Body: []byte("order 1 placed")},
		{Body: []byte("order 1 paid"), Headers: []picoclient.Header{{Key: "by", Value: "card"}}},
	}, picoclient.AppendOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("appended seqs", res.Start, "to", res.Next-1)
	for rec, err := range c.Read(ctx, "/examples/orders", 0) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.Seq, string(rec.Body), rec.Headers)
	}
	// Output:
	// appended seqs 0 to 1
	// 0 order 1 placed []
	// 1 order 1 paid [{by card}]
}

func ExampleClient_Subscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := picoclient.New(endpoint, picoclient.Options{})
	if _, err := c.Create(ctx, "/examples/chat", picoclient.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	go func() {
		for _, line := range []string{"hello", "are you there?", "bye"} {
			time.Sleep(10 * time.Millisecond)
			if _, err := c.Append(ctx, "/examples/chat", []picoclient.Record{{Body: []byte(line)}}, picoclient.AppendOptions{}); err != nil {
				log.Print(err)
			}
		}
		c.CloseStream(ctx, "/examples/chat")
	}()
	// Follows the stream live from its start; ends once it is closed.
	for rec, err := range c.Subscribe(ctx, "/examples/chat", picoclient.SubscribeOptions{Seq: 0}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%d: %s\n", rec.Seq, rec.Body)
	}
	fmt.Println("closed")
	// Output:
	// 0: hello
	// 1: are you there?
	// 2: bye
	// closed
}

func ExampleProducer() {
	ctx := context.Background()
	c := picoclient.New(endpoint, picoclient.Options{})
	if _, err := c.Create(ctx, "/examples/events", picoclient.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	// A stable id: a restarted writer fences the one before it.
	p := c.NewProducer("/examples/events", picoclient.ProducerOptions{ID: "events-writer"})
	var last *picoclient.Ack
	for i := range 1000 {
		ack, err := p.Append(ctx, picoclient.Record{Body: fmt.Appendf(nil, "event %d", i)})
		if err != nil {
			log.Fatal(err)
		}
		last = ack
	}
	if err := p.Close(ctx); err != nil { // flushes: every record is durable
		log.Fatal(err)
	}
	seq, _ := last.Seq()
	info, err := c.Head(ctx, "/examples/events")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last record at seq", seq, "of", info.Next)
	// Output:
	// last record at seq 999 of 1000
}

func ExampleAPIError() {
	ctx := context.Background()
	c := picoclient.New(endpoint, picoclient.Options{})
	_, err := c.Head(ctx, "/examples/missing")
	fmt.Println(errors.Is(err, picoclient.ErrNotFound))

	c.Create(ctx, "/examples/done", picoclient.CreateOptions{Closed: true})
	_, err = c.Append(ctx, "/examples/done", []picoclient.Record{{Body: []byte("late")}}, picoclient.AppendOptions{})
	var api *picoclient.APIError
	if errors.As(err, &api) {
		fmt.Println(api.Status, errors.Is(err, picoclient.ErrClosed))
	}
	// Output:
	// true
	// 409 true
}

// TestMain runs the examples against a real node on a throwaway directory.
func TestMain(m *testing.M) {
	os.Exit(runWithNode(m))
}

func runWithNode(m *testing.M) int {
	dir, err := os.MkdirTemp("", "picoclient-examples-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	defer picoproc.RemoveBinary()
	node, err := picoproc.Start(picoproc.Env(), "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--meta-url", "sqlite:"+filepath.Join(dir, "meta.db"), "--storage", "file://"+filepath.Join(dir, "objects"))
	if err != nil {
		log.Fatal(err)
	}
	defer node.Kill()
	endpoint = node.URL
	return m.Run()
}
