package subscriptions

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/picomq/pico/ports"
)

// keyPrefix reserves the metadata registry keys of subscriptions: a key is
// the prefix, the stream root and the id ("ds-sub//v1/stream/orders"). Ids
// hold no "/", so no two (root, id) pairs share a key.
const keyPrefix = "ds-sub/"

func recordKey(ref ports.SubscriptionRef) string { return keyPrefix + ref.Root + ref.ID }

// record is a subscription's durable state: one registry entry, replaced
// whole with a compare-and-set on the entry's revision, so two updates
// (two nodes, a request and the delivery loop) never both win.
type record struct {
	Root        string                 `json:"root"`
	ID          string                 `json:"id"`
	Type        ports.SubscriptionType `json:"type"`
	Pattern     string                 `json:"pattern,omitempty"`
	WebhookURL  string                 `json:"webhook_url,omitempty"`
	WakeStream  string                 `json:"wake_stream,omitempty"`
	LeaseTTLMs  int64                  `json:"lease_ttl_ms"`
	Description string                 `json:"description,omitempty"`
	ConfigHash  string                 `json:"config_hash"`
	ControlURL  string                 `json:"control_url,omitempty"`
	CreatedMs   int64                  `json:"created_ms"`
	// DeletedMs marks a tombstone. It keeps the generation, so a subscription
	// re-created under the same id never reuses a fenced generation.
	DeletedMs int64 `json:"deleted_ms,omitempty"`
	// Failed: the last webhook attempt got no 2xx answer.
	Failed bool   `json:"failed,omitempty"`
	Links  []link `json:"links,omitempty"`
	// ScanFrom is the first stream id the pattern has not been matched
	// against: streams at or above it were created after the last scan.
	ScanFrom   uint64 `json:"scan_from,omitempty"`
	Generation uint64 `json:"generation"`
	Wake       *wake  `json:"wake,omitempty"`
	// Tokens are the newest issued tokens, as SHA-256 hashes only.
	Tokens []issuedToken `json:"tokens,omitempty"`
}

// link is one followed stream. The cursor belongs to one incarnation of
// the name (StreamID, 0 before the stream was seen): a stream deleted and
// created again starts unacknowledged.
type link struct {
	Path     string `json:"path"`
	Glob     bool   `json:"glob,omitempty"`
	Explicit bool   `json:"explicit,omitempty"`
	StreamID uint64 `json:"stream_id,omitempty"`
	Acked    uint64 `json:"acked"`
}

// wake is the wake in progress, at record.Generation.
type wake struct {
	ID string `json:"id"`
	// Stream is the first stream with pending work (named in wake records).
	Stream   string `json:"stream,omitempty"`
	Snapshot []tail `json:"snapshot,omitempty"`
	// Holder is the pull-wake worker that claimed it.
	Holder string `json:"holder,omitempty"`
	// LeaseUntilMs ends the worker's lease. Past it, the wake is dropped
	// and, with work pending, a new one starts. 0: no worker has it yet
	// (an undelivered webhook, an unclaimed pull-wake), and it waits for
	// one however long that takes.
	LeaseUntilMs int64 `json:"lease_until_ms,omitempty"`
	// Delivered: the webhook answered 2xx (or called back), or the wake
	// record was appended.
	Delivered bool `json:"delivered,omitempty"`
	// Attempts and NextAttemptMs are the persisted retry schedule.
	Attempts      int   `json:"attempts,omitempty"`
	NextAttemptMs int64 `json:"next_attempt_ms,omitempty"`
}

// tail is a linked stream's tail when a wake was sent.
type tail struct {
	Path     string `json:"path"`
	StreamID uint64 `json:"stream_id,omitempty"`
	Tail     uint64 `json:"tail"`
}

type issuedToken struct {
	Hash       string `json:"hash"`
	Generation uint64 `json:"generation"`
}

func (r *record) deleted() bool { return r.DeletedMs != 0 }

func (r *record) link(path string) *link {
	i, found := slices.BinarySearchFunc(r.Links, path, func(l link, p string) int { return strings.Compare(l.Path, p) })
	if !found {
		return nil
	}
	return &r.Links[i]
}

// addLink inserts a link in path order and returns it.
func (r *record) addLink(l link) *link {
	i, _ := slices.BinarySearchFunc(r.Links, l.Path, func(l link, p string) int { return strings.Compare(l.Path, p) })
	r.Links = slices.Insert(r.Links, i, l)
	return &r.Links[i]
}

func (r *record) removeLink(path string) {
	r.Links = slices.DeleteFunc(r.Links, func(l link) bool { return l.Path == path })
}

func encodeRecord(r *record) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic("subscriptions: encode record: " + err.Error()) // plain data: cannot fail
	}
	return b
}

func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
