package headerval

import (
	"net/http"
	"testing"
)

func TestOnceCheck(t *testing.T) {
	once := OnceHeaders("Pico-Match-Seq", "Pico-TTL")
	for _, h := range []http.Header{
		{},
		{"Pico-Match-Seq": {"0"}},
		{"Pico-Match-Seq": {"5", "5"}}, // a repeat says nothing new
		{"Pico-Ttl": {"1"}, "Other": {"a", "b"}},
	} {
		if err := once.Check(h); err != nil {
			t.Errorf("Check(%v): %v", h, err)
		}
	}
	for h, want := range map[*http.Header]string{
		{"Pico-Match-Seq": {"0", "5"}}:      `header Pico-Match-Seq given twice with different values ("0", "5")`,
		{"Pico-Match-Seq": {"0", "0", "1"}}: `header Pico-Match-Seq given twice with different values ("0", "1")`,
		{"Pico-Ttl": {"", "1"}}:             `header Pico-TTL given twice with different values ("", "1")`,
	} {
		if err := once.Check(*h); err == nil || err.Error() != want {
			t.Errorf("Check(%v) = %v, want %s", *h, err, want)
		}
	}
}

// FuzzOnceCheck: Check refuses exactly the headers with two different
// values.
func FuzzOnceCheck(f *testing.F) {
	f.Add("0", "5", true)
	f.Add("a", "a", true)
	f.Add("x", "", false)
	f.Fuzz(func(t *testing.T, a, b string, twice bool) {
		h := http.Header{"Stream-Seq": {a}}
		if twice {
			h["Stream-Seq"] = append(h["Stream-Seq"], b)
		}
		err := OnceHeaders("Stream-Seq").Check(h)
		if refused := twice && a != b; (err != nil) != refused {
			t.Fatalf("Check(%q) = %v", h["Stream-Seq"], err)
		}
		// Clip shows at most 64 bytes of each, \x escapes quadrupling them.
		if err != nil && len(err.Error()) > 2*4*64+100 {
			t.Fatalf("message of %d bytes", len(err.Error()))
		}
	})
}
