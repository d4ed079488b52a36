package domain

import "testing"

func TestListenersAreTheRegisteredProcesssDeclarations(t *testing.T) {
	s := cluster(t, 1, 1)
	if l := s.Listeners(1); l != nil {
		t.Fatalf("a node that declared nothing: %v; want none", l)
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
		if l := s.Listeners(c.node); l == nil || l[c.protocol] != c.want {
			t.Errorf("node %d %s: %v; want %q", c.node, c.protocol, l, c.want)
		}
	}
	if r := s.Apply(&RegisterNode{Node: 1, Epoch: 99, Slots: 1}); !r.OK() {
		t.Fatal(r)
	}
	if l := s.Listeners(1); l != nil {
		t.Errorf("node 1 restarted without declaring: %v; want its old process's listeners forgotten", l)
	}
}
