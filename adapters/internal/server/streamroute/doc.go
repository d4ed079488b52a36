// Package streamroute holds the request plumbing both stream listeners
// share ahead of their protocols: every path names a stream and one handler
// serves them all, the name is the path as the client sent it, and a stream
// another node owns is answered with a 307 to the same target there.
//
// Since every path names a stream, no router runs: one handler chain,
// built once (common headers, then the method check, then the auth gate,
// then the protocol's serve), runs on a pooled echo context, and the
// errors it returns become the protocol's answers.
package streamroute
