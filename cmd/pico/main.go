// Command pico is PicoMQ's single binary: server, client, admin CLI and
// benchmark. Data goes to stdout, everything else to stderr.
package main

import (
	"fmt"
	"os"
)

const usage = `usage: pico <command> [flags]

commands:
  serve    run a node (see pico serve -h)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Fprint(os.Stderr, usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "pico: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pico %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
