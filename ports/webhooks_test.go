package ports

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCheckWebhookURL(t *testing.T) {
	allowed := []string{
		"https://hooks.example.com/x", "https://93.184.216.34/x", "http://localhost:8080/x", "http://127.0.0.1:9/x",
		"http://127.0.0.200/x", "https://[2606:4700::1111]/x",
	}
	rejected := []string{
		"http://10.0.0.1/hook", "http://example.com/x", "http://127.0.1.1/x", "ftp://example.com/x", "https://10.1.2.3/x",
		"https://172.16.0.1/x", "https://192.168.1.1/x", "https://169.254.169.254/latest", "https://100.100.100.200/x",
		"https://[fd00:ec2::254]/x", "https://[::1]/x", "https://[fe80::1]/x", "https://[::ffff:10.0.0.1]/x",
		"https://localhost/x", "https://metadata.google.internal/x", "https://db.internal/x", "https://2130706433/x",
		"https://0x7f.1/x", "https://user:pw@example.com/x", "/relative", "https://0.0.0.0/x", "not a url",
	}
	dev := WebhookPolicy{AllowLoopback: true}
	for _, u := range allowed {
		if err := dev.Check(u); err != nil {
			t.Errorf("%s rejected: %v", u, err)
		}
	}
	for _, u := range rejected {
		if err := dev.Check(u); !errors.Is(err, ErrWebhookURLRejected) {
			t.Errorf("%s: %v, want a rejection", u, err)
		}
	}
}

func TestWebhooksReachLoopbackOnlyWhenThePolicyAllowsIt(t *testing.T) {
	for _, u := range []string{"http://localhost:8080/x", "http://127.0.0.1:9/x", "http://127.0.0.200/x"} {
		if err := (WebhookPolicy{}).Check(u); !errors.Is(err, ErrWebhookURLRejected) {
			t.Errorf("%s allowed by the default policy: %v", u, err)
		}
		if err := (WebhookPolicy{AllowLoopback: true}).Check(u); err != nil {
			t.Errorf("%s refused with loopback allowed: %v", u, err)
		}
	}
	if err := (WebhookPolicy{}).Check("https://hooks.example.com/x"); err != nil {
		t.Errorf("a public https URL refused by the default policy: %v", err)
	}
	if (WebhookPolicy{}).ReachesLoopback("localhost") || !(WebhookPolicy{AllowLoopback: true}).ReachesLoopback("127.0.0.3") ||
		(WebhookPolicy{AllowLoopback: true}).ReachesLoopback("10.0.0.1") {
		t.Error("ReachesLoopback disagrees with the policy")
	}
}

func TestIsPublicAddress(t *testing.T) {
	for addr, public := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true, "127.0.0.1": false, "10.2.3.4": false, "100.64.0.1": false,
		"169.254.0.1": false, "::ffff:192.168.0.1": false, "64:ff9b::a00:1": false, "224.0.0.1": false,
	} {
		if got := IsPublicAddress(netip.MustParseAddr(addr)); got != public {
			t.Errorf("IsPublicAddress(%s) = %v", addr, got)
		}
	}
}
