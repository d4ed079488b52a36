package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"
)

// defaultProbeURL is /ready on the admin listener's default port.
const defaultProbeURL = "http://127.0.0.1:9090/ready"

func probeHelp() string {
	return fmt.Sprintf("usage: pico probe [URL]\n\nexit 0 when URL (default %s) answers 200, else 1; for container healthchecks\n", defaultProbeURL)
}

// probe is `pico probe [URL]`: exit 0 when URL (default /ready on the
// admin listener) answers 200. The container image has no shell, curl or
// wget, so its healthchecks run the binary itself.
func probe(args []string) int {
	url := defaultProbeURL
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Print(probeHelp())
		return 0
	case len(args) == 1:
		url = args[0]
	case len(args) > 1:
		fmt.Fprintln(os.Stderr, "usage: pico probe [URL]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pico probe: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pico probe: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "pico probe: %s answered %s\n", url, resp.Status)
		return 1
	}
	return 0
}
