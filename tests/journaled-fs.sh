#!/usr/bin/env bash
# Runs a command with its temporary files on a fresh ext4 file system that
# has a journal, the kind a server's disk usually has. Needs root: the file
# system is made in a sparse image file and loop-mounted for the run.
#
# Usage: tests/journaled-fs.sh command [args...]
#   tests/journaled-fs.sh tests/run.sh -run '^$' -bench VersusReference \
#       -benchtime 5000x -count 3 ./tests/dsconformance
# TMPDIR points into the mount while the command runs, so everything
# tests/run.sh and the tests keep in temporary directories lands there:
# versitygw's objects, the Node reference server's file store, Postgres.
# PICOMQ_FS_SIZE sets the image's size (default 16G; only what is written
# takes disk space). The mount and the image are removed on exit.
#
# Why: a machine's root file system may be ext4 without a journal, which
# servers' disks seldom are, and it changes both sides of a benchmark.
# - The Node reference server, which fsyncs every append, made 1,200-1,430
#   appends/s on such a root and 730-1,040/s on a journaled ext4 of the
#   same machine (BenchmarkVersusReference, 64 appenders).
# - Each new file costs a pass over the inodes freed in the last minutes,
#   one by one. versitygw keeps one file per object and pico deletes its WAL
#   objects as fast as it writes them, so every PUT pays for the deletions
#   before it (14.5% of versitygw's CPU, sampled during a pico bench).
#   Raw PUTs took 1,250-1,400 us there and 730-1,040 us on the journaled
#   disk, where a lone append measured 1.31-1.35 raw PUTs against
#   0.98-1.06 on the root.
# On one journaled file system, both servers' stores meet the disk a
# deployment would give them. Plain tests/run.sh uses the machine's own
# temporary directory, whatever it is.
set -euo pipefail

log() { printf 'journaled-fs.sh: %s\n' "$*" >&2; }

if [[ $# -eq 0 ]]; then
	log "usage: tests/journaled-fs.sh command [args...]"
	exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
	log "needs root to loop-mount a file system"
	exit 1
fi

work=$(mktemp -d)
chmod 755 "$work" # Postgres runs as its own user and must reach its directory
mnt=$work/mnt
cleanup() {
	if mountpoint -q "$mnt"; then
		umount "$mnt" || umount -l "$mnt" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

mkdir "$mnt"
truncate -s "${PICOMQ_FS_SIZE:-16G}" "$work/fs.img"
mkfs.ext4 -q -F -O has_journal "$work/fs.img"
mount -o loop "$work/fs.img" "$mnt" ||
	{ log "cannot loop-mount an image here (no loop devices, or not allowed)"; exit 1; }
mkdir "$mnt/tmp"
chmod 1777 "$mnt/tmp"
log "running on a fresh journaled ext4 ($(findmnt -no SOURCE "$mnt"))"
TMPDIR=$mnt/tmp "$@"
