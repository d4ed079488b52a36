#!/usr/bin/env bash
# Runs the nemesis of tests/nemesis for as long as asked: three pico
# processes on Postgres and S3 under faults drawn from a seed, in rounds,
# each checked by porcupine and by the final state of its streams. Prints
# the seed, each round, and a summary table: operations, acknowledged
# appends, pending ones, the faults injected by kind, records lost and
# violations. It exits non-zero on any violation.
#
# Usage: tests/soak.sh DURATION [SEED]
#   tests/soak.sh 30m            a new seed, printed first
#   tests/soak.sh 5m 1234        the fault schedule of seed 1234 again
# DURATION is Go's duration syntax; a round lasts 30 s of traffic
# (-nemesis.round) plus its checks. Postgres and S3 are started as
# tests/run.sh starts them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration=${1:?usage: tests/soak.sh DURATION [SEED]}
seed=${2:-0}
# -timeout 0: every round bounds its own waits.
exec tests/run.sh -run '^TestNemesis$' -v -timeout 0 ./tests/nemesis \
	-nemesis.duration="$duration" -nemesis.seed="$seed"
