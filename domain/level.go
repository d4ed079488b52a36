package domain

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Level is a feature level of the metadata log: the command codes and the
// snapshot version a build of pico reads. A release that adds a command or
// a snapshot version adds a level; a node writes what a level adds only
// once every node of the cluster reads it (State.ClusterLevel), so a
// cluster upgrades one node at a time.
type Level uint32

// Feature levels.
const (
	// LevelBase reads commands 1–24 and snapshots up to version 5. A node
	// that declares no level is at this one.
	LevelBase Level = 1
	// LevelPlacement adds PlaceStream and snapshot version 6
	// (Stream.AwaitsCreate, Node.Left). Its nodes also beat every 0.5 s:
	// a node that declares no level is judged by its release's longer
	// failover window.
	LevelPlacement Level = 2
	// LevelSealFrames adds the seal flag of WAL frames (Frame.Seals): an
	// append that closes the stream says so in its frame, which older
	// nodes refuse to decode. No command or snapshot version.
	LevelSealFrames Level = 3
	// LevelRecordKeys adds record keys to WAL frames and data objects (the
	// keyed flag of a frame): older nodes refuse frames that carry it. No
	// command or snapshot version.
	LevelRecordKeys Level = 4
	// LevelCurrent is the highest level this build reads.
	LevelCurrent = LevelRecordKeys
)

// CommandLevel is the level that introduced command code c: a node below it
// cannot read the command.
func CommandLevel(c Code) Level {
	if c == CodePlaceStream {
		return LevelPlacement
	}
	return LevelBase
}

// SnapshotVersionAt is the newest snapshot version every node at level l
// reads.
func SnapshotVersionAt(l Level) uint8 {
	if l >= LevelPlacement {
		return 6
	}
	return 5
}

// SnapshotLevel is the level a snapshot version needs, read from the
// snapshot's first byte (0 for an empty one).
func SnapshotLevel(snapshot []byte) Level {
	if len(snapshot) > 0 && snapshot[0] >= 6 {
		return LevelPlacement
	}
	return LevelBase
}

// levelKeyPrefix starts the registry key under which each node declares its
// level: a key-value write, which every level reads.
const levelKeyPrefix = "pico/node-level/"

// DeclareLevel is the command by which process p says it reads up to l.
func DeclareLevel(p Proposer, l Level) *PutKV {
	return &PutKV{By: p, Space: SpaceRegistry, Key: levelKeyPrefix + strconv.FormatUint(uint64(p.Node), 10),
		Value: []byte(fmt.Sprintf("%d@%d", l, p.Epoch))}
}

// NodeLevel is the level node id's registered process declared, and false
// when it declared none at its registered epoch.
func (s *State) NodeLevel(id NodeID) (Level, bool) {
	n, known := s.Node(id)
	if !known {
		return 0, false
	}
	e, ok := s.KV(SpaceRegistry, levelKeyPrefix+strconv.FormatUint(uint64(id), 10))
	if !ok {
		return 0, false
	}
	level, epoch, found := strings.Cut(string(e.Value), "@")
	l, err1 := strconv.ParseUint(level, 10, 32)
	ep, err2 := strconv.ParseUint(epoch, 10, 64)
	if !found || err1 != nil || err2 != nil || ep != n.Epoch || l == 0 {
		return 0, false
	}
	return Level(l), true
}

// ClusterLevel is the highest level every node of the cluster reads: the
// lowest level declared by a registered process, where a process that
// declared none counts as LevelBase. A registration without a declaration
// at its epoch and without slots is left out: a fence's leftover (no
// process runs it) or a node that takes no placements. An old build among
// the latter halts at the first command it cannot read, with a message that
// says to upgrade it; the README says to upgrade such nodes first.
func (s *State) ClusterLevel() Level {
	level := LevelCurrent
	s.Nodes(func(n *Node) bool {
		l, declared := s.NodeLevel(n.ID)
		switch {
		case declared:
			level = min(level, l)
		case n.Slots > 0:
			level = min(level, LevelBase)
		}
		return true
	})
	return level
}

// ErrNewerLevel: the log holds a command or snapshot of a feature level
// above this node's.
var ErrNewerLevel = errors.New("domain: the metadata log is past this build's feature level")

// Unreadable names a command or snapshot a node at level l cannot read, and
// what it needs.
func Unreadable(what string, needs, l Level) error {
	return fmt.Errorf("%w: %s needs feature level %d, and this build of pico reads up to level %d: upgrade this node",
		ErrNewerLevel, what, needs, l)
}
