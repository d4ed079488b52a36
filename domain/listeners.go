package domain

import (
	"strconv"
	"strings"
)

// The wire protocols a node's listeners speak.
const (
	ProtocolPico = "pico"
	ProtocolDS   = "ds"
)

// protocols lists every protocol a listener may speak.
var protocols = [...]string{ProtocolPico, ProtocolDS}

// listenerKeyPrefix starts the registry keys under which a process
// declares the address of each of its listeners.
const listenerKeyPrefix = "pico/node-listener/"

func listenerKey(id NodeID, protocol string) string {
	return listenerKeyPrefix + strconv.FormatUint(uint64(id), 10) + "/" + protocol
}

// DeclareListener is the command by which process p says that clients
// reach its listener speaking protocol at address. A node's Address is
// its main listener's; a node that serves both protocols declares both,
// so that a redirect keeps a client on the protocol it speaks.
func DeclareListener(p Proposer, protocol, address string) *PutKV {
	return &PutKV{By: p, Space: SpaceRegistry, Key: listenerKey(p.Node, protocol),
		Value: []byte(strconv.FormatUint(p.Epoch, 10) + " " + address)}
}

// Listeners maps each protocol node id's registered process serves to the
// address it declared for it; nil when it declared none (a release before
// declarations): then only its Address is known.
func (s *State) Listeners(id NodeID) map[string]string {
	n, known := s.Node(id)
	if !known {
		return nil
	}
	var out map[string]string
	for _, p := range protocols {
		if addr, ok := s.listenerAt(id, p, n.Epoch); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[p] = addr
		}
	}
	return out
}

// listenerAt is node id's declared address for protocol at epoch.
func (s *State) listenerAt(id NodeID, protocol string, epoch uint64) (string, bool) {
	e, ok := s.KV(SpaceRegistry, listenerKey(id, protocol))
	if !ok {
		return "", false
	}
	at, addr, found := strings.Cut(string(e.Value), " ")
	ep, err := strconv.ParseUint(at, 10, 64)
	if !found || err != nil || ep != epoch || addr == "" {
		return "", false
	}
	return addr, true
}
