package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/picomq/pico/adapters/picowire"
)

const personSchema = `{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}`

// testSchemas: the schema registry, a stream bound to a schema at create,
// appends it refuses with a 400 that names where they fail, rebinding
// through /_streams/, and a validating stream whose schema is deleted.
func testSchemas(t *testing.T, base string) {
	root := rootURL(base)
	schemaCT := hdr("Content-Type", "application/schema+json")
	send(t, "PUT", root+"/_schemas/person", schemaCT, []byte(personSchema)).wantStatus(t, 201)
	send(t, "PUT", root+"/_schemas/person", schemaCT, []byte(personSchema)).wantStatus(t, 204)
	send(t, "GET", root+"/_schemas/person", nil, nil).wantStatus(t, 200).
		wantHeaders(t, "Content-Type", "application/schema+json").wantBody(t, personSchema)
	wantMessage(t, send(t, "PUT", root+"/_schemas/broken", schemaCT, []byte(`{"type":"nope"}`)), 400, "does not compile")
	wantMessage(t, send(t, "PUT", root+"/_schemas/plain", nil, []byte(`{}`)), 400, "schema format unknown")
	send(t, "PUT", root+"/_schemas/plain.json", nil, []byte(`{}`)).wantStatus(t, 201)
	wantMessage(t, send(t, "PUT", root+"/_schemas/a%20b", schemaCT, []byte(`{}`)), 400, "schema name")
	send(t, "GET", root+"/_schemas/absent", nil, nil).wantError(t, 404, "not_found")

	u := base + "/s"
	bind := hdr("Content-Type", "application/json", "Pico-Schema", "person", "Pico-Schema-Validate", "true")
	send(t, "PUT", u, bind, nil).wantStatus(t, 201)
	send(t, "PUT", u, bind, nil).wantStatus(t, 200)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Schema", "person", "Pico-Schema-Validate", "true")
	wantMessage(t, send(t, "PUT", base+"/unbound", hdr("Pico-Schema", "absent"), nil), 400, "register it first")

	mustAppend(t, u, "application/json", []byte(`{"name":"ada","age":36}`))
	wantMessage(t, send(t, "POST", u, hdr("Content-Type", "application/json"), []byte(`{"age":3}`)), 400,
		"record 0 does not match schema person: at /:")
	batch := []byte(`{"records":[{"body":"{\"name\":\"a\"}"},{"body":"{\"name\":\"b\",\"age\":-1}"}]}`)
	wantMessage(t, send(t, "POST", u, hdr("Content-Type", picowire.BatchJSONContentType), batch), 400,
		"record 1 does not match schema person: at /age")
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Next-Seq", "1") // the refused batch wrote nothing

	cfg := root + "/_streams" + strings.TrimPrefix(u, root)
	send(t, "GET", cfg, nil, nil).wantStatus(t, 200).wantBody(t, `{"schema":"person","schemaValidate":true}`)
	send(t, "PATCH", cfg, nil, []byte(`{"schemaValidate":false}`)).wantStatus(t, 200).
		wantBody(t, `{"schema":"person","schemaValidate":false}`)
	mustAppend(t, u, "application/json", []byte(`{"age":3}`)) // bound, not validated
	send(t, "PATCH", cfg, nil, []byte(`{"schema":null}`)).wantStatus(t, 200).wantBody(t, `{"schema":null,"schemaValidate":false}`)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Pico-Schema", "")
	wantMessage(t, send(t, "PATCH", cfg, nil, []byte(`{"schema":"absent"}`)), 400, "register it first")
	wantMessage(t, send(t, "PATCH", cfg, nil, []byte(`{"validate":true}`)), 400, "is not part of")
	send(t, "PATCH", u, nil, []byte(`{}`)).wantStatus(t, http.StatusMethodNotAllowed)
	send(t, "GET", root+"/_streams"+strings.TrimPrefix(base, root)+"/absent", nil, nil).wantError(t, 404, "not_found")

	send(t, "PATCH", cfg, nil, []byte(`{"schema":"person","schemaValidate":true}`)).wantStatus(t, 200)
	send(t, "DELETE", root+"/_schemas/person", nil, nil).wantStatus(t, 204)
	send(t, "DELETE", root+"/_schemas/person", nil, nil).wantError(t, 404, "not_found")
	wantMessage(t, send(t, "POST", u, hdr("Content-Type", "application/json"), []byte(`{"name":"ada"}`)), 400,
		"no schema named person is registered")
	send(t, "PUT", root+"/_schemas/person", schemaCT, []byte(personSchema)).wantStatus(t, 201)
	mustAppend(t, u, "application/json", []byte(`{"name":"ada"}`))
}

// wantMessage checks an error answer's status and that its message says
// what it should.
func wantMessage(t *testing.T, r reply, status int, want string) {
	t.Helper()
	e := r.wantError(t, status, "bad_request")
	if !strings.Contains(e.Message, want) {
		t.Errorf("%s: message %q does not say %q", r.what, e.Message, want)
	}
}

// TestDSSchemaBinding: a Durable Streams create binds with the original's
// Stream-Schema extension, and its appends are validated alike.
func TestDSSchemaBinding(t *testing.T) {
	pico, ds := startBothProtocols(t)
	send(t, "PUT", pico+"/_schemas/person", hdr("Content-Type", "application/schema+json"), []byte(personSchema)).wantStatus(t, 201)
	u := ds + "/v1/stream/people"
	send(t, "PUT", u, hdr("Content-Type", "application/json", "Stream-Schema", "person", "Stream-Schema-Validate", "true"), nil).
		wantStatus(t, 201)
	send(t, "HEAD", u, nil, nil).wantStatus(t, 200).wantHeaders(t, "Stream-Schema", "person", "Stream-Schema-Validate", "true")
	send(t, "POST", u, hdr("Content-Type", "application/json"), []byte(`[{"name":"ada"}]`)).wantStatus(t, 204)
	r := send(t, "POST", u, hdr("Content-Type", "application/json"), []byte(`[{"name":"bo"},{"age":3}]`)).wantStatus(t, 400)
	if !strings.Contains(string(r.body), "record 1 does not match schema person") {
		t.Errorf("refusal %q does not name the record and the schema", r.body)
	}
	send(t, "PUT", ds+"/v1/stream/nobody", hdr("Stream-Schema", "absent"), nil).wantStatus(t, 400)
}
