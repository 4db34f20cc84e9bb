#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the storage tests' PostgreSQL half (scripts/test.sh runs it):
#   bash scripts/postgres.sh          start it (or find it running) and print its URL on stdout
#   bash scripts/postgres.sh stop     stop it (its files stay in .pg/ for the next start)
# Debian's `postgresql` package is installed with apt-get when the server programs are missing and
# this runs as root (it says so first). The cluster lives in .pg/ (or $FARKLECAM_PG_DIR), listens on
# 127.0.0.1 at a free port and on a unix socket in .pg/run, trusts local connections and keeps no
# secret: it is for tests, never for games anyone wants to keep. PostgreSQL refuses to run as root,
# so as root the cluster belongs to the `postgres` user the package creates.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${FARKLECAM_PG_DIR:-$PWD/.pg}"
say() { echo "scripts/postgres.sh: $*" >&2; }

find_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$found" ] && [ -x "$found/initdb" ]; then
        echo "$found"
    elif command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    fi
}

bin=$(find_bin)
if [ -z "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing postgresql with apt-get for the storage tests' PostgreSQL half"
    (apt-get install -y -qq postgresql >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; }) \
        || say "could not install postgresql"
    bin=$(find_bin)
fi
if [ -z "$bin" ]; then
    say "no PostgreSQL server programs (initdb, pg_ctl) found; install Debian's postgresql package"
    exit 1
fi

# As root, run the server programs as `postgres`; otherwise as whoever runs this.
as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        say "running as root, and there is no postgres user to run the server as"
        exit 1
    fi
    as_owner() { runuser -u postgres -- "$@"; }
fi

# A checkout out of the postgres user's reach (under /root, say) keeps its cluster in /tmp instead.
if [ "$(id -u)" = 0 ] && [ -z "${FARKLECAM_PG_DIR:-}" ] && ! as_owner test -x "$PWD"; then
    dir="/tmp/farklecam-pg.$(printf %s "$PWD" | md5sum | cut -c1-12)"
fi
data="$dir/data"
if [ "${1:-start}" = stop ]; then
    if [ -f "$data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
        say "stopped the cluster in $dir"
    fi
    exit 0
fi

mkdir -p "$dir/run"
if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$dir"
fi

if [ ! -f "$data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --no-locale >/dev/null
fi

if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "$port" >"$dir/port"
    as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir/run -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null \
        || { say "the server did not start; its log:"; tail -n 20 "$dir/server.log" >&2; exit 1; }
fi

echo "postgresql://postgres@127.0.0.1:$(cat "$dir/port")/postgres"
