# Sourced by the benchmark scripts: starts a throw-away PostgreSQL with the embedded
# default's settings (src/embedded.rs) on a free loopback port, and removes it on exit.
# Sets: bindir (PostgreSQL's binaries), tmp (a scratch directory, removed with the
# server), url (the server, as the postgres user). Needs initdb/pg_ctl and python3.
bindir=$(dirname "$(readlink -f "$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl | tail -n1)")")
tmp=$(mktemp -d /tmp/claimbench-bench-XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$tmp"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() { as_pg "$bindir/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
as_pg "$bindir/initdb" -D "$tmp/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB \
  -c max_connections=600 -c max_wal_size=4GB -c checkpoint_timeout=30min" start >/dev/null
url="postgres://postgres@127.0.0.1:$port/postgres"
