package headerval

import (
	"fmt"
	"net/http"
)

// Once names request headers that carry one value each. A header sent on
// two lines reaches the handler as two values, and reading the first one
// alone would settle silently what the client contradicted (Pico-Closed:
// false, then true), so Check refuses them.
//
// Repeats of one value are accepted: they say nothing contradictory, and
// a proxy or a client library that sets a header it was also given sends
// just that; RFC 9110 (§5.3) lets a recipient combine field lines, and
// for a singleton field identical lines combine to the one value.
type Once []onceHeader

type onceHeader struct{ key, name string }

// OnceHeaders returns the headers names, as they are spelled in errors,
// looked up by their canonical keys, computed once here and not per
// request.
func OnceHeaders(names ...string) Once {
	o := make(Once, len(names))
	for i, name := range names {
		o[i] = onceHeader{key: http.CanonicalHeaderKey(name), name: name}
	}
	return o
}

// Check returns an error naming the first header of o that h carries with
// two different values, quoting both, or nil. The error is plain, with no
// sentinel: each listener answers it with a 400 in its own form.
func (o Once) Check(h http.Header) error {
	for _, one := range o {
		values := h[one.key]
		for _, v := range values[min(1, len(values)):] {
			if v != values[0] {
				return fmt.Errorf("header %s given twice with different values (%s, %s)", one.name, Clip(values[0]), Clip(v))
			}
		}
	}
	return nil
}
