// Package sqllog implements ports.MetaLog, ports.LogNotifier, ports.Lease
// and ports.Heartbeats on one SQL database: Postgres for a cluster, SQLite
// for a single node. The queries are shared; dialect.go holds the few
// differences.
//
// It keeps five tables: meta_log(idx, payload), meta_snapshot (one row),
// meta_truncation (one row: the truncation point), meta_lease (one row)
// and meta_heartbeat (a row per node id). Postgres uses pgx through
// database/sql under bun; an append is one statement that inserts and
// pg_notifys. SQLite uses the pure-Go modernc.org/sqlite driver in WAL
// mode with synchronous=FULL. Package memlog is the in-memory
// implementation; all of them pass the same suites in tests/conformance.
package sqllog
