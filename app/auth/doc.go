// Package auth decides every request's credential and scope from the
// applied metadata state, and issues, revokes and bootstraps tokens.
//
// A token record lives in the tokens key space under its id: the SHA-256
// of its secret, its scope, its issuer. Authorize reads the view the node
// has applied, never SQL, so a request costs a map lookup and one hash,
// and a revocation holds on a node as soon as the node has applied its row
// (the revoking node before it answers; the others on the row's
// notification): there is no cache to wait out. The decoded records kept
// here are keyed by the record's revision, so a changed record is never
// served from them.
//
// Issuing writes the record with a put that succeeds only if the id is
// free (or holds an expired record, whose revision it names); revoking
// deletes with the revision the caller saw, so a revoke cannot delete a
// token reissued under the same id meanwhile. Live reads hold their grant
// (Hold): a watcher ends them within HoldCheckEvery (250 ms) of a
// revocation or expiry. The maintenance-lease holder deletes expired
// records.
package auth
