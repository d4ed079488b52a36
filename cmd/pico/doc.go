// Command pico is PicoMQ's single binary: server, client, admin CLI and
// benchmark. Data goes to stdout, everything else to stderr.
//
// It reads flags and env and wires adapters into the app (serve.go,
// storage.go, listeners.go), and stops on SIGTERM (shutdown.go: with
// --shutdown-transfer the node first moves its streams to the others,
// node.DrainSelf); metrics.go names the node's Stats as metrics
// for the admin listener, beside adapters/prommetrics' series, which
// serve.go wires around the listeners, the stream service and the object
// stores. deploy/ holds a Grafana dashboard and example alert rules. The client verbs (client_*.go) are built on
// adapters/picoclient and adapters/dsclient, and profile*.go are the saved
// profiles. admin.go is pico admin, over adapters/adminclient; its
// set-slots is node.SetSlots, and admin_drain.go's drain is node.DrainNode
// on the node asked, which --wait follows through its progress.
// exit.go maps failures to exit codes and says what to do about the
// common ones (a server not running); client_mismatch.go names a listener
// of the other protocol; suggest.go finds the nearest command or flag
// for a typo; version.go is pico version, from the build info.
// bench.go is pico bench: writers on the same
// protocol clients as the verbs, and one HDR histogram of append latency
// for all of them.
package main
