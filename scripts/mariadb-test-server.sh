#!/usr/bin/env bash
# A private, throw-away MariaDB server for tests (the locust projection's SQL is loaded
# into it). Uses Debian's packages; installs mariadb-server and mariadb-client with apt
# when they are missing and the script runs as root.
#
#   scripts/mariadb-test-server.sh start DIR   # prints PORT=<port> and PID=<pid>
#   scripts/mariadb-test-server.sh stop DIR
#
# DIR (created if needed) holds the data directory, socket, pid file and log. The server
# listens on 127.0.0.1 on a free port; root has no password (connect with
# `mysql -h 127.0.0.1 -P PORT -u root`). Exit status 2 means the server cannot run here
# (no packages and no way to install them): callers skip their tests then.
set -euo pipefail

action=${1:-}
dir=${2:-}
if [[ -z "$action" || -z "$dir" ]]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 64
fi

find_server() {
    for candidate in mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld; do
        if command -v "$candidate" >/dev/null 2>&1; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

case "$action" in
stop)
    if [[ -f "$dir/server.pid" ]]; then
        pid=$(cat "$dir/server.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        rm -f "$dir/server.pid"
    fi
    exit 0
    ;;
start) ;;
*)
    echo "unknown action $action" >&2
    exit 64
    ;;
esac

if ! server=$(find_server) || ! command -v mariadb-install-db >/dev/null 2>&1 \
    || ! command -v mysql >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        echo "MariaDB is not installed and cannot be installed here (needs root and apt-get)" >&2
        exit 2
    fi
    echo "installing mariadb-server and mariadb-client with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends mariadb-server mariadb-client >&2; then
        apt-get update >&2 || true
        apt-get install -y --no-install-recommends mariadb-server mariadb-client >&2 || {
            echo "apt-get could not install mariadb-server" >&2
            exit 2
        }
    fi
    server=$(find_server) || {
        echo "mariadb-server installed but no server binary found" >&2
        exit 2
    }
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data="$dir/data"
user_args=()
if [[ $(id -u) -eq 0 ]]; then
    user_args=(--user=root)
fi

if [[ ! -d "$data/mysql" ]]; then
    mariadb-install-db --no-defaults "${user_args[@]}" --datadir="$data" \
        --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 || {
        echo "mariadb-install-db failed; see $dir/install.log" >&2
        tail -20 "$dir/install.log" >&2
        exit 2
    }
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --no-defaults "${user_args[@]}" --datadir="$data" --socket="$dir/server.sock" \
    --pid-file="$dir/mariadbd.pid" --bind-address=127.0.0.1 --port="$port" \
    --max-allowed-packet=64M --skip-name-resolve --log-error="$dir/server.log" \
    >/dev/null 2>&1 &
pid=$!
echo "$pid" >"$dir/server.pid"

for _ in $(seq 1 300); do
    if mysqladmin --no-defaults --protocol=tcp -h 127.0.0.1 -P "$port" -u root ping >/dev/null 2>&1; then
        echo "PORT=$port"
        echo "PID=$pid"
        exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
echo "the MariaDB server did not start; see $dir/server.log" >&2
tail -20 "$dir/server.log" >&2 || true
kill "$pid" 2>/dev/null || true
exit 2
