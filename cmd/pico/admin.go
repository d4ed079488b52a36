package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/picomq/pico/adapters/adminclient"
)

const (
	defaultAdminEndpoint = "http://127.0.0.1:9090"
	adminSynopsis        = "pico admin cluster|nodes|stream NAME|transfer NAME --to-node N [--wait]|set-slots N --slots K|drain N [--wait]|tokens ls|tokens issue ID SCOPE-FLAGS|tokens revoke ID [--admin-endpoint URL] [--token TOKEN] [--json]"
	adminNotes           = `commands:
  cluster            the metadata view: applied index, counts, lease, nodes
  nodes              the registered nodes: epoch, address, slots, streams
  stream NAME        a stream's metadata: owner, epochs, committed offsets
  transfer NAME      move a stream to node N (--to-node N, registered with
                     slots), through any node: the writer records it and
                     lets the stream go, and N opens it then. It returns
                     once the transfer is recorded; --wait also waits (up
                     to 30 s) until N has opened it.
  set-slots N        record node N's slots (--slots K). New streams are
                     not placed by slots yet; a transfer needs a target
                     with slots, and a node's restart sets its --slots
                     again.
  drain N            set node N's slots to 0 and move every stream it is
                     home to onto the other nodes, by their slots, 8 at a
                     time, through any node (the one asked runs it). It
                     returns once started; --wait follows it on stderr
                     until N is home to no stream. Run it again to resume
                     one that stopped: moved streams are skipped.
  tokens ls          the tokens: id, issuer, audiences, operations (groups
                     as stream:read and the like, then fine operations),
                     stream matchers (P* a prefix) and expiry; never a
                     secret. --json prints them with their scopes' JSON.
  tokens issue ID    issue token ID and print it alone on stdout, the one
                     time it is shown (TOKEN=$(pico admin tokens issue ...)).
                     Its scope is --scope JSON (or --scope @FILE), else
                     built from --prefix P and --exact NAME (the streams,
                     each repeatable), --read and --write (the stream
                     groups), --ops a,b (fine operations, e.g. read,head),
                     --audience pico,durable_streams,admin (default
                     pico,durable_streams), --expires 24h and
                     --auto-prefix (names relative to the one --prefix).
                     It may grant nothing your own token lacks (403).
  tokens revoke ID   revoke token ID.

--token (PICO_TOKEN, else the token pico auth login stored for the current
profile: PICO_PROFILE, else the default) is sent with every request. The
stream verbs' other global flags do not apply here.
`
)

// adminCommand is one admin command line: its subcommand's arguments and
// flags.
type adminCommand struct {
	*command
	args     []string
	slots    uint64
	toNode   uint64
	wait     bool
	asJSON   bool
	endpoint string
	issue    issueFlags
	stderr   io.Writer
}

var adminVerbs = map[string]struct {
	args int
	run  func(context.Context, *adminCommand, io.Writer) error
}{
	"cluster":   {0, adminCluster},
	"nodes":     {0, adminNodes},
	"stream":    {1, adminStream},
	"set-slots": {1, adminSetSlots},
	"transfer":  {1, adminTransfer},
	"drain":     {1, adminDrain},
	// "tokens" is a group: its subcommand is the next argument.
	"tokens ls":     {0, adminTokens},
	"tokens issue":  {1, adminIssueToken},
	"tokens revoke": {1, adminRevokeToken},
}

func runAdmin(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c := &adminCommand{command: newCommandWithoutGlobals("admin", adminSynopsis), stderr: stderr}
	c.notes = adminNotes
	c.globals.registerToken(c.fs)
	c.issue.register(c.fs)
	c.fs.StringVar(&c.endpoint, "admin-endpoint", defaultAdminEndpoint, "the node's admin listener")
	c.fs.BoolVar(&c.asJSON, "json", false, "print the admin listener's JSON")
	c.fs.Uint64Var(&c.slots, "slots", 0, "set-slots: the node's slots")
	c.fs.Uint64Var(&c.toNode, "to-node", 0, "transfer: the target node")
	c.fs.BoolVar(&c.wait, "wait", false, "transfer: wait until the target has opened the stream; drain: until the node is home to no stream")
	positional, err := c.parse(args, 1, 3)
	if err != nil {
		return err
	}
	name, rest := positional[0], positional[1:]
	if name == "tokens" && len(rest) > 0 {
		name, rest = name+" "+rest[0], rest[1:]
	}
	sub, ok := adminVerbs[name]
	c.args = rest
	switch {
	case name == "tokens":
		return c.usageError("admin tokens: want ls, issue ID or revoke ID")
	case !ok:
		return c.usageError(unknownIn("admin", name, adminVerbs))
	case len(c.args) != sub.args:
		return c.usageError(fmt.Sprintf("admin %s: wrong number of arguments", name))
	case c.given("slots") != (name == "set-slots"):
		return c.usageError("--slots goes with set-slots, which needs it")
	case c.given("to-node") != (name == "transfer"):
		return c.usageError("--to-node goes with transfer, which needs it")
	case c.given("wait") && name != "transfer" && name != "drain":
		return c.usageError("--wait goes with transfer or drain")
	}
	if err := c.checkIssueFlags(name == "tokens issue"); err != nil {
		return err
	}
	return sub.run(ctx, c, stdout)
}

// client is the admin client for --admin-endpoint, else
// $PICO_ADMIN_ENDPOINT, else the default, sending the resolved token.
func (c *adminCommand) client() (*adminclient.Client, error) {
	endpoint := c.endpoint
	if env := os.Getenv(globalEnv["admin-endpoint"]); env != "" && !c.given("admin-endpoint") {
		endpoint = env
	}
	if err := validateEndpoint(endpoint); err != nil {
		return nil, err
	}
	cred, err := c.credential()
	if err != nil {
		return nil, err
	}
	return adminclient.New(endpoint, "pico-cli", adminclient.WithToken(cred.wire)), nil
}

// print writes v as indented JSON with --json, else calls human.
func (c *adminCommand) print(stdout io.Writer, v any, human func(io.Writer)) error {
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	human(w)
	return w.Flush()
}

func adminCluster(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	client, err := c.client()
	if err != nil {
		return err
	}
	cl, err := client.Cluster(ctx)
	if err != nil {
		return err
	}
	return c.print(stdout, cl, func(w io.Writer) {
		lease := "not held by this node"
		if cl.LeaseHeld {
			lease = fmt.Sprintf("held by this node (epoch %d)", cl.LeaseEpoch)
		}
		fmt.Fprintf(w, "applied index\t%d\nstreams\t%d\ngarbage objects\t%d\nmaintenance lease\t%s\n\n",
			cl.AppliedIndex, cl.Streams, cl.Garbage, lease)
		nodeTable(w, cl.Nodes)
	})
}

func adminNodes(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	client, err := c.client()
	if err != nil {
		return err
	}
	nodes, err := client.Nodes(ctx)
	if err != nil {
		return err
	}
	return c.print(stdout, nodes, func(w io.Writer) { nodeTable(w, nodes) })
}

func nodeTable(w io.Writer, nodes []adminclient.Node) {
	fmt.Fprintln(w, "NODE\tEPOCH\tADDRESS\tSLOTS\tSTREAMS\tSTATE\tHEARTBEAT")
	for _, n := range nodes {
		state, beat := "-", "-"
		if n.State != "" {
			state = n.State
		}
		if n.HeartbeatAgeMs != nil {
			beat = fmt.Sprintf("%.1fs ago", float64(*n.HeartbeatAgeMs)/1000)
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\n", n.ID, n.Epoch, n.Address, n.Slots, n.Assigned, state, beat)
	}
}

func adminStream(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	client, err := c.client()
	if err != nil {
		return err
	}
	st, err := client.Stream(ctx, c.args[0])
	if err != nil {
		return err
	}
	return c.print(stdout, st, func(w io.Writer) { streamRows(w, st) })
}

func adminTransfer(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	if c.toNode == 0 || c.toNode > 1<<32-1 {
		return c.usageError("--to-node: want a node id from 1 to 4294967295")
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	st, err := client.Transfer(ctx, c.args[0], uint32(c.toNode))
	if err == nil && c.wait {
		st, err = awaitOpenOn(ctx, client, c.args[0], uint32(c.toNode))
	}
	if err != nil {
		return err
	}
	return c.print(stdout, st, func(w io.Writer) { streamRows(w, st) })
}

// transferWaitLimit bounds transfer --wait.
var transferWaitLimit = 30 * time.Second

// awaitOpenOn polls stream name until node opens it, which it does as soon
// as the stream's writer has let it go.
func awaitOpenOn(ctx context.Context, client *adminclient.Client, name string, node uint32) (adminclient.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, transferWaitLimit)
	defer cancel()
	for {
		st, err := client.Stream(ctx, name)
		switch {
		case err == nil && st.Owner == node && st.Open:
			return st, nil
		case ctx.Err() != nil:
			return st, fmt.Errorf("node %d has not opened %s within %v: it opens it once the writer lets it go, or at its next request for it", node, name, transferWaitLimit)
		case err != nil:
			return st, err
		}
		pause(ctx, 100*time.Millisecond)
	}
}

func streamRows(w io.Writer, st adminclient.Stream) {
	created := time.UnixMilli(st.CreatedMs).UTC().Format(time.RFC3339)
	fmt.Fprintf(w, "name\t%s\nid\t%d\ncontent type\t%s\ncreated\t%s\n", st.Name, st.ID, st.ContentType, created)
	fmt.Fprintf(w, "owner\tnode %d at epoch %d (open: %t)\nstream epoch\t%d\nclosed\t%t\n", st.Owner, st.OwnerEpoch, st.Open, st.Epoch, st.Sealed)
	fmt.Fprintf(w, "committed\t[%d, %d) in %d objects\n", st.Start, st.CommittedEnd, st.Objects)
	source := st.ForkOf
	if source == "" {
		source = fmt.Sprintf("stream %d (gone)", st.ForkOfID)
	}
	optionalRow(w, "unrecovered writers", st.Unrecovered != 0, strconv.Itoa(st.Unrecovered))
	optionalRow(w, "fork of", st.ForkOfID != 0, fmt.Sprintf("%s at %d", source, st.ForkAt))
	optionalRow(w, "forks", st.Forks != 0, strconv.FormatUint(uint64(st.Forks), 10))
	optionalRow(w, "deleted, kept for its forks", st.SoftDeleted, "true")
	optionalRow(w, "transfer to", st.TransferTo != 0, fmt.Sprintf("node %d", st.TransferTo))
	optionalRow(w, "retention", st.RetentionSec != 0, fmt.Sprintf("%d s", st.RetentionSec))
	optionalRow(w, "idle ttl", st.IdleTTLSec != 0, fmt.Sprintf("%d s", st.IdleTTLSec))
	optionalRow(w, "expires at", st.ExpiresAtMs != 0, time.UnixMilli(st.ExpiresAtMs).UTC().Format(time.RFC3339))
}

func optionalRow(w io.Writer, key string, set bool, value string) {
	if set {
		fmt.Fprintf(w, "%s\t%s\n", key, value)
	}
}

// nodeArg reads the node id argument of set-slots and drain.
func (c *adminCommand) nodeArg() (uint32, error) {
	id, err := strconv.ParseUint(c.args[0], 10, 32)
	if err != nil || id == 0 {
		return 0, c.usageError(fmt.Sprintf("node id %q: want a number from 1", c.args[0]))
	}
	return uint32(id), nil
}

func adminSetSlots(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	id, err := c.nodeArg()
	if err != nil {
		return err
	}
	if c.slots > 1<<32-1 {
		return c.usageError("--slots: want K from 0 to 4294967295")
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	n, err := client.SetSlots(ctx, id, uint32(c.slots))
	if err != nil {
		return err
	}
	return c.print(stdout, n, func(w io.Writer) { nodeTable(w, []adminclient.Node{n}) })
}
