// Package ports declares the narrow interfaces the node needs from the outside
// world. Each interface documents its ordering, idempotency and sentinel errors;
// every implementation in adapters/ runs the same conformance suite in tests/.
//
// There are two kinds. What the app needs: MetaLog, LogNotifier, Lease,
// Heartbeats, ObjectStore and WebhookSender. What the protocol listeners
// drive: Streams (the name-level stream service), Subscriptions, and
// Authorizer and TokenAdmin.
package ports
