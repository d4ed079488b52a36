package domain

import "testing"

func TestListenerAddressIsTheRegisteredProcesssDeclaration(t *testing.T) {
	s := cluster(t, 1, 1)
	if addr, declared := s.ListenerAddress(1, ProtocolDS); addr != "" || declared {
		t.Fatalf("a node that declared nothing: %q, %v; want nothing declared", addr, declared)
	}
	for _, c := range []*PutKV{DeclareListener(by(1), ProtocolPico, "http://a:1"), DeclareListener(by(1), ProtocolDS, "http://a:2"),
		DeclareListener(by(2), ProtocolPico, "http://b:1")} {
		if r := s.Apply(c); !r.OK() {
			t.Fatal(r)
		}
	}
	for _, c := range []struct {
		node     NodeID
		protocol string
		want     string
	}{{1, ProtocolPico, "http://a:1"}, {1, ProtocolDS, "http://a:2"}, {2, ProtocolPico, "http://b:1"}, {2, ProtocolDS, ""}} {
		if addr, declared := s.ListenerAddress(c.node, c.protocol); addr != c.want || !declared {
			t.Errorf("node %d %s: %q, %v; want %q, declared", c.node, c.protocol, addr, declared, c.want)
		}
	}
	if r := s.Apply(&RegisterNode{Node: 1, Epoch: 99, Slots: 1}); !r.OK() {
		t.Fatal(r)
	}
	if addr, declared := s.ListenerAddress(1, ProtocolDS); addr != "" || declared {
		t.Errorf("node 1 restarted without declaring: %q, %v; want its old process's listeners forgotten", addr, declared)
	}
}
