package httpfault

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseFault: any body is refused or parsed into a fault within its
// bounds that parses back to itself.
func FuzzParseFault(f *testing.F) {
	for _, seed := range []string{
		`{"path":"/s","status":503,"count":2,"retryAfter":1}`,
		`{"path":"/s","delayMs":10,"jitterMs":5,"method":"GET","probability":0.5}`,
		`{"path":"/s","dropConnection":true}`,
		`{"path":"/s","truncateBodyBytes":3,"corruptBody":true}`,
		`{"path":"/s","injectSseEvent":{"eventType":"control","data":"{}"}}`,
		`{"path":"/s","status":null}`, `[`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fault, err := ParseFault(bytes.NewReader(body))
		if err != nil {
			return
		}
		if !strings.HasPrefix(fault.Path, "/") || fault.Count != nil && *fault.Count < 1 {
			t.Fatalf("accepted %q as %+v", body, fault)
		}
		again, err := json.Marshal(fault)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseFault(bytes.NewReader(again))
		if err != nil || !reflect.DeepEqual(back, fault) {
			t.Fatalf("%s parsed back as %+v, %v; want %+v", again, back, err, fault)
		}
	})
}
