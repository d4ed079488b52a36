#!/usr/bin/env bash
# The project's test command: vets and tests the module against a real
# Postgres server.
#
# Usage: tests/run.sh [go test flags] [packages]
#   tests/run.sh                           vet and test ./...
#   tests/run.sh -run Lease ./tests/...    vet and test only ./tests/...
# Arguments go to `go test` unchanged. Those that start with "./", "../" or the
# module path, or are ".", are taken as packages and are also what `go vet`
# checks; without any, both use ./... .
#
# Unless PICOMQ_PG_URL is already set, a throwaway Postgres server is started
# on a free loopback port and removed on exit. Exported to the tests:
#   PICOMQ_PG_URL      admin URL (database "postgres", user "postgres")
#   PICOMQ_PG_RESTART  shell command restarting the server in immediate mode
#   PICOMQ_PG_PID_FILE the server's postmaster.pid, for tests that pause it
#   PICOMQ_REQUIRE_PG  1, so that Postgres tests fail rather than skip
#
# Unless PICOMQ_S3_ENDPOINT is already set (with PICOMQ_S3_ACCESS_KEY and
# PICOMQ_S3_SECRET_KEY), a throwaway S3 server, versitygw on a temporary
# directory, is started on a free loopback port and removed on exit. Its
# binary is built once with `go install` (a few minutes) into a cache:
# $PICOMQ_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/picomq. Exported:
#   PICOMQ_S3_ENDPOINT, PICOMQ_S3_ACCESS_KEY, PICOMQ_S3_SECRET_KEY
#   PICOMQ_S3_PID      the server's process, for benchmarks' CPU figures (ours only)
#   PICOMQ_REQUIRE_S3  1, so that S3 tests fail rather than skip
#
# The npm packages of tests/dsconformance are installed with `npm ci` (Node.js
# 20 or later with npm must be present). Exported:
#   PICOMQ_REQUIRE_NODE  1, so that the Durable Streams checks fail rather than skip
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
module=$(go list -m)

log() { printf 'run.sh: %s\n' "$*" >&2; }

# pg_bindir prints the directory of initdb and pg_ctl, newest version first.
pg_bindir() {
	local dir
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -rn); do
		if [[ -x $dir/initdb && -x $dir/pg_ctl ]]; then
			echo "$dir"
			return
		fi
	done
	if command -v pg_config >/dev/null; then
		dir=$(pg_config --bindir)
		if [[ -x $dir/initdb && -x $dir/pg_ctl ]]; then
			echo "$dir"
			return
		fi
	fi
	return 1
}

install_postgres() {
	if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
		log "no Postgres server binaries found; install PostgreSQL or set PICOMQ_PG_URL"
		exit 1
	fi
	log "installing PostgreSQL with apt-get"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
}

free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
		return
	fi
	local port
	while :; do
		port=$((20000 + RANDOM % 40000))
		if ! ss -Hltn "sport = :$port" | grep -q .; then
			echo "$port"
			return
		fi
	done
}

start_postgres() {
	local bindir port
	bindir=$(pg_bindir) || { install_postgres; bindir=$(pg_bindir); }
	pg_dir=$(mktemp -d)
	port=$(free_port)
	# initdb refuses to run as root, so the server runs as the postgres user.
	as_pg=()
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$pg_dir"
		as_pg=(runuser -u postgres --)
	fi
	pg_ctl_cmd=("${as_pg[@]}" "$bindir/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log")
	log "starting $("$bindir/postgres" --version) in $pg_dir on 127.0.0.1:$port"
	# The server user may not be able to read the caller's working directory.
	(cd "$pg_dir" && "${as_pg[@]}" "$bindir/initdb" -D "$pg_dir/data" -A trust -U postgres >"$pg_dir/initdb.log") ||
		{ cat "$pg_dir/initdb.log" >&2; exit 1; }
	mkdir -p "$pg_dir/sock"
	[[ ${#as_pg[@]} -eq 0 ]] || chown postgres: "$pg_dir/sock"
	local opts="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$pg_dir/sock -c fsync=on -c max_connections=200"
	(cd "$pg_dir" && "${pg_ctl_cmd[@]}" -w -o "$opts" start >&2) ||
		{ cat "$pg_dir/server.log" >&2; exit 1; }
	export PICOMQ_PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	# pg_ctl restart reuses the options the server was started with.
	export PICOMQ_PG_RESTART="cd $(printf '%q' "$pg_dir") && $(printf '%q ' "${pg_ctl_cmd[@]}") -m immediate -w restart >/dev/null"
	export PICOMQ_PG_PID_FILE="$pg_dir/data/postmaster.pid"
	log "Postgres ready at $PICOMQ_PG_URL"
}

stop_postgres() {
	log "stopping Postgres"
	(cd "$pg_dir" && "${pg_ctl_cmd[@]}" -m immediate stop >/dev/null 2>&1) || true
	rm -rf "$pg_dir"
}

versitygw_version=v1.8.0

# versitygw_bin prints the path of the versitygw binary, building it into the
# cache first if it is not there.
versitygw_bin() {
	local cache=${PICOMQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/picomq}
	local dir="$cache/versitygw-$versitygw_version"
	if [[ ! -x $dir/bin/versitygw ]]; then
		log "building versitygw $versitygw_version into $dir (the first time takes a few minutes)"
		mkdir -p "$dir"
		# Into a fresh directory first, so an interrupted build leaves no
		# binary that later runs would trust.
		local tmp
		tmp=$(mktemp -d "$dir/build.XXXXXX")
		GOBIN="$tmp" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version" >&2 ||
			{ rm -rf "$tmp"; log "building versitygw failed"; exit 1; }
		mkdir -p "$dir/bin"
		mv "$tmp/versitygw" "$dir/bin/versitygw"
		rm -rf "$tmp"
	fi
	echo "$dir/bin/versitygw"
}

start_versitygw() {
	local bin port
	bin=$(versitygw_bin)
	s3_dir=$(mktemp -d)
	mkdir "$s3_dir/data"
	port=$(free_port)
	local access=picomq-test secret=picomq-test-secret
	log "starting versitygw $versitygw_version in $s3_dir on 127.0.0.1:$port"
	ROOT_ACCESS_KEY=$access ROOT_SECRET_KEY=$secret \
		"$bin" --port "127.0.0.1:$port" --keep-alive --quiet posix "$s3_dir/data" \
		>"$s3_dir/server.log" 2>&1 &
	s3_pid=$!
	local tries=0
	until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
		if ! kill -0 "$s3_pid" 2>/dev/null || ((++tries > 300)); then
			log "versitygw did not start:"
			cat "$s3_dir/server.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	export PICOMQ_S3_ENDPOINT="http://127.0.0.1:$port"
	export PICOMQ_S3_ACCESS_KEY=$access PICOMQ_S3_SECRET_KEY=$secret
	export PICOMQ_S3_PID=$s3_pid # benchmarks measure its CPU time
	log "versitygw ready at $PICOMQ_S3_ENDPOINT"
}

stop_versitygw() {
	log "stopping versitygw"
	kill "$s3_pid" 2>/dev/null || true
	wait "$s3_pid" 2>/dev/null || true
	rm -rf "$s3_dir"
}

# cleanup stops whatever servers this script started, keeping the exit status.
cleanup() {
	local status=$?
	[[ -z ${s3_pid:-} ]] || stop_versitygw
	[[ -z ${pg_dir:-} ]] || stop_postgres
	exit "$status"
}
trap cleanup EXIT

if [[ -z ${PICOMQ_PG_URL:-} ]]; then
	start_postgres
else
	log "using the Postgres server in PICOMQ_PG_URL"
fi
export PICOMQ_REQUIRE_PG=1

if [[ -z ${PICOMQ_S3_ENDPOINT:-} ]]; then
	start_versitygw
else
	log "using the S3 server in PICOMQ_S3_ENDPOINT"
fi
export PICOMQ_REQUIRE_S3=1

# The Durable Streams checks (tests/dsconformance) run the protocol's own npm
# packages, pinned by a lock file: install exactly those, quietly.
install_ds_packages() {
	local dir=tests/dsconformance out
	[[ -f $dir/package-lock.json ]] || return 0
	command -v npm >/dev/null || { log "npm not found; $dir needs Node.js 20 or later with npm"; exit 1; }
	log "npm ci in $dir"
	out=$(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error 2>&1) ||
		{ printf '%s\n' "$out" >&2; log "npm ci in $dir failed"; exit 1; }
}
install_ds_packages
export PICOMQ_REQUIRE_NODE=1

packages=()
vet_flags=() # build tags reach go vet too
value_next=false # the previous argument was a flag that takes a separate value
for arg in "$@"; do
	if $value_next; then
		value_next=false
		[[ $prev == -tags ]] && vet_flags+=(-tags "$arg")
		continue
	fi
	prev=$arg
	case $arg in
	-tags=*) vet_flags+=("$arg") ;;
	-run | -bench | -benchtime | -count | -timeout | -fuzz | -fuzztime | -cpu | -parallel | -skip | -tags | -p)
		value_next=true ;;
	. | ./* | ../* | "$module" | "$module"/*) packages+=("$arg") ;;
	esac
done
test_args=("$@")
if [[ ${#packages[@]} -eq 0 ]]; then
	packages=(./...)
	test_args+=(./...)
fi

log "go vet ${packages[*]}"
go vet "${vet_flags[@]}" "${packages[@]}"
# -p 1: some tests restart the shared Postgres server, which would break the
# Postgres tests of any package running at the same time.
log "go test -count=1 -timeout 20m -p 1 ${test_args[*]}"
go test -count=1 -timeout 20m -p 1 "${test_args[@]}"
log "all tests passed"
