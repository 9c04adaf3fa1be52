#!/usr/bin/env bash
# Benchmarks `sediment serve` against pywb's CDX server on the same captures, in the same
# run, on 127.0.0.1 only.
#
# Usage: scripts/bench-serve.sh [DATA_DIR] [COPIES]        (defaults: /work/bench-data, 3)
#
# - Captures: bench-000 .. bench-(COPIES-1).warc.gz from scripts/make-bench-warc.sh (a wget
#   crawl of Debian's documentation; made when missing), imported into a fresh store; pywb
#   reads a CDXJ of the same WARCs (`sediment cdx --cdxj`, identical to cdxj-indexer's).
# - pywb: run as its documentation recommends for production ("Deployment" in its manual:
#   uWSGI with the gevent loop engine, scaled to several processes, as its uwsgi.ini does):
#   uWSGI, one worker process per core, gevent 100, one collection whose index is that CDXJ,
#   queried at /bench/cdx (pywb 2.10's `cdx-server` script names a function the package no
#   longer has; the collection endpoint runs the same index code). uWSGI is installed with
#   pip into the project's virtual environment (or the python3 on PATH) when missing.
# - Checked before any load (scripts/bench-lib.sh; status 1 otherwise): both servers give
#   the same whole answer to every query of both lists (all exact and all prefix queries),
#   each line normalised only where the formats legitimately differ: the JSON block is
#   compared as parsed JSON (key order and spacing aside), and a field that one server adds
#   and the other does not have is left out (pywb adds "source" and "source-coll", naming
#   its collection). Line order is compared as it is, except among captures of one URL key
#   in the same second, whose order the CDX server API leaves open (pywb gives its index
#   file's order, Sediment its store's): such a run is compared as a set.
#   BENCH_CORRUPT=serve alters Sediment's answers on purpose, to show the check failing;
#   CHECK_ONLY=1 stops after the check (no load generator needed).
# - Load: oha from crates.io (installed with `cargo install` into $TOOLS when missing),
#   each run bounded in requests (-n) and in time (timeout), over a file of query URLs:
#   exact queries (one URL each, every capture of it) and prefix queries (a directory,
#   `limit=100`), both with output=cdxj, at 1 and 64 concurrent connections.
# - Memory: RSS of `sediment serve` sampled every second over RSS_QUERIES (1,000,000)
#   exact queries at 64 connections.
# Environment: REQUESTS (sediment, per run; default 20000), PYWB_REQUESTS (default 2000),
# RSS_QUERIES (default 1000000), RUN_TIMEOUT (seconds per run, default 300), REPEAT (runs
# per server and row, the best kept; default 3), TOOLS, SEDIMENT_VENV (the virtual
# environment whose Python runs pywb; default $HOME/.cache/sediment-venv, else python3).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
. scripts/env.sh
. scripts/bench-lib.sh

data="${1:-/work/bench-data}"
copies="${2:-3}"
requests="${REQUESTS:-20000}"
pywb_requests="${PYWB_REQUESTS:-2000}"
rss_queries="${RSS_QUERIES:-1000000}"
run_timeout="${RUN_TIMEOUT:-300}"
repeat="${REPEAT:-3}"
tools="${TOOLS:-$HOME/.cache/bench-serve-tools}"
oha="$tools/bin/oha"

if [[ -z "${CHECK_ONLY:-}" && ! -x "$oha" ]]; then
    echo "installing oha (load generator) into $tools"
    # native-tls: oha needs one TLS backend to build; Debian's libssl-dev is enough.
    cargo install oha --locked --no-default-features --features native-tls --root "$tools"
fi
python=$(bench_python)
"$python" -c 'import pywb' 2>/dev/null || { echo "pywb is missing: scripts/setup.sh installs it" >&2; exit 1; }
uwsgi="$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/uwsgi"
if [[ ! -x "$uwsgi" ]]; then
    echo "installing uWSGI (pywb's production server) for $python"
    "$python" -m pip install -q --disable-pip-version-check uwsgi >&2 || {
        echo "pip could not build uWSGI (it compiles against Python's headers: apt-get install python3-dev gcc)" >&2
        exit 1
    }
fi
workers=$(nproc)

warcs=()
for ((i = 0; i < copies; i++)); do
    warcs+=("$data/$(printf 'bench-%03d' "$i").warc.gz")
done
if [[ ! -f "${warcs[-1]}" ]]; then
    scripts/make-bench-warc.sh "$data" $((copies * 51))
fi

cargo build --release --quiet
work="$(mktemp -d /tmp/sediment-bench-serve.XXXXXX)"
serve_pid=""
pywb_pid=""
cleanup() {
    [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null || true
    [[ -n "$pywb_pid" ]] && kill "$pywb_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "importing ${#warcs[@]} WARCs"
"$SEDIMENT_BIN" --store "$work/store" import-warc "${warcs[@]}" 2>"$work/import.log"
"$SEDIMENT_BIN" cdx --cdxj "${warcs[@]}" >"$work/index.cdxj"
captures=$(wc -l <"$work/index.cdxj")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$SEDIMENT_BIN" --store "$work/store" serve --bind 127.0.0.1:0 --access-log "$work/access.log" \
    --max-connections 1024 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do
    grep -q 'listening on' "$work/serve.err" 2>/dev/null && break
    sleep 0.1
done
sediment_port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$work/serve.err" | grep -o '[0-9]*$')

pywb_port=$(free_port)
mkdir -p "$work/pywb"
printf 'collections:\n  bench:\n    index: %s\n' "$work/index.cdxj" >"$work/pywb/config.yaml"
(cd "$work/pywb" && exec "$uwsgi" --http-socket "127.0.0.1:$pywb_port" --master --processes "$workers" \
    --gevent 100 --buffer-size 65536 --die-on-term --disable-logging --need-app \
    --env GEVENT_MONKEY_PATCH=1 --env PYWB_CONFIG_FILE=config.yaml --wsgi pywb.apps.wayback \
    >/dev/null 2>"$work/pywb.err") &
pywb_pid=$!
for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$pywb_port/bench/cdx?url=example.com" >/dev/null 2>&1 && break
    sleep 0.2
done

# Query URLs: every captured URL (exact) and their directories (prefix), shuffled with a
# fixed seed; the same list for both servers.
python3 - "$work" "$sediment_port" "$pywb_port" <<'EOF'
import json, random, sys, urllib.parse
work, sp, pp = sys.argv[1], sys.argv[2], sys.argv[3]
urls = []
for line in open(f"{work}/index.cdxj"):
    key, ts, blob = line.split(" ", 2)
    url = json.loads(blob).get("url", "")
    if url.startswith("http"):
        urls.append(url)
urls = sorted(set(urls))
dirs = sorted({u.rsplit("/", 1)[0] + "/*" for u in urls if u.count("/") > 3})
rng = random.Random(42)
rng.shuffle(urls)
rng.shuffle(dirs)
def write(name, base, items, extra):
    with open(f"{work}/{name}", "w") as f:
        for u in items:
            f.write(f"{base}?url={urllib.parse.quote(u, safe='')}&output=cdxj{extra}\n")
for server, base in (("sediment", f"http://127.0.0.1:{sp}/cdx"), ("pywb", f"http://127.0.0.1:{pp}/bench/cdx")):
    write(f"{server}-exact.txt", base, urls[:5000], "")
    write(f"{server}-prefix.txt", base, dirs[:2000], "&limit=100")
print(f"{len(urls)} URLs, {len(dirs)} directories", file=sys.stderr)
EOF

# Both servers give the same whole answer to every query of both lists.
for kind in exact prefix; do
    "$python" - "$work/sediment-$kind.txt" "$work/sediment-$kind.answers" "$work/pywb-$kind.txt" "$work/pywb-$kind.answers" <<'EOF'
import concurrent.futures, itertools, json, sys, urllib.error, urllib.request
# Fields one server adds that the other has no counterpart for: pywb names the collection.
ADDED = {"source", "source-coll"}
def answer(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            status, body = r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        status, body = e.code, ""
    # The query without the server's own address, then the answer.
    lines = [f"# {url.split('?', 1)[1]} -> {status}"]
    for line in body.splitlines():
        if not line.strip():
            continue
        key, ts, blob = (line.split(" ", 2) + ["", ""])[:3]
        try:
            fields = {k: v for k, v in json.loads(blob).items() if k not in ADDED}
            blob = json.dumps(fields, sort_keys=True)
        except ValueError:
            pass
        lines.append(f"{key} {ts} {blob}")
    # Captures of one URL key in the same second come in no defined order (pywb keeps its
    # index file's, sorted by the JSON text; Sediment the store's): each such run is
    # compared as a set, every other order as it is.
    runs = [sorted(run) for _, run in itertools.groupby(lines[1:], key=lambda l: l.split(" ", 2)[:2])]
    lines = lines[:1] + [l for run in runs for l in run]
    return "\n".join(lines) + "\n"
for urls_file, out_file in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    urls = [l.strip() for l in open(urls_file) if l.strip()]
    with concurrent.futures.ThreadPoolExecutor(4) as pool, open(out_file, "w") as out:
        for text in pool.map(answer, urls):
            out.write(text)
EOF
    bench_corrupt serve "$work/sediment-$kind.answers"
    check_same "$(wc -l <"$work/sediment-$kind.txt") $kind queries: sediment's answers = pywb's" \
        "$work/sediment-$kind.answers" "$work/pywb-$kind.answers"
done
[[ -n "${CHECK_ONLY:-}" ]] && exit 0

# One oha run: prints "queries/s p50_ms p99_ms non_200". Extra arguments go to oha.
measure() {
    local list=$1 concurrency=$2 count=$3
    shift 3
    timeout "$run_timeout" "$oha" --no-tui --output-format json -n "$count" -c "$concurrency" \
        "$@" --urls-from-file "$list" >"$work/oha.json" || true
    python3 - "$work/oha.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s, p = r["summary"], r["latencyPercentiles"]
codes = r.get("statusCodeDistribution", {})
bad = sum(v for k, v in codes.items() if k != "200")
print(f'{s["requestsPerSec"]:.0f} {p["p50"]*1000:.2f} {p["p99"]*1000:.2f} {bad}')
EOF
}

echo "warming up"
measure "$work/sediment-exact.txt" 8 2000 >/dev/null
measure "$work/pywb-exact.txt" 8 200 >/dev/null

echo
echo "captures: $captures ($copies WARC files of $data); machine: $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GB"
echo "pywb $("$python" -c 'import pywb; print(pywb.__version__)') under uWSGI $("$uwsgi" --version), $workers worker processes, gevent 100"
echo
echo "| query | clients | sediment q/s | p50 ms | p99 ms | pywb q/s | p50 ms | p99 ms | × pywb |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for kind in exact prefix; do
    for concurrency in 1 64; do
        # Each server gets the best of $repeat runs, interleaved, so that a moment of
        # noise on the shared machine does not decide a ratio. pywb's server answers a
        # kept-alive connection in two writes, which meets the client's delayed ACK
        # (about 40 ms per query at 1 client): each of its runs is the better of one with
        # and one without keep-alive.
        : >"$work/s-runs" && : >"$work/p-runs"
        for _ in $(seq "$repeat"); do
            measure "$work/sediment-$kind.txt" "$concurrency" "$requests" >>"$work/s-runs"
            measure "$work/pywb-$kind.txt" "$concurrency" "$pywb_requests" >>"$work/p-runs"
            measure "$work/pywb-$kind.txt" "$concurrency" "$pywb_requests" --disable-keepalive >>"$work/p-runs"
        done
        read -r s_rps s_p50 s_p99 s_bad < <(sort -n -r "$work/s-runs" | head -1)
        read -r p_rps p_p50 p_p99 p_bad < <(sort -n -r "$work/p-runs" | head -1)
        ratio=$(python3 -c "print(f'{$s_rps / max($p_rps, 1):.1f}')")
        echo "| $kind | $concurrency | $s_rps | $s_p50 | $s_p99 | $p_rps | $p_p50 | $p_p99 | $ratio |"
        if [[ "$s_bad" != 0 || "$p_bad" != 0 ]]; then
            echo "  (non-200 answers: sediment $s_bad, pywb $p_bad)"
        fi
    done
done

echo
echo "RSS of sediment serve over $rss_queries exact queries at 64 clients:"
rss() { awk '/VmRSS/ {print $2}' "/proc/$serve_pid/status"; }
echo "$(date +%s) $(rss)" >"$work/rss.log"
(while kill -0 "$serve_pid" 2>/dev/null; do echo "$(date +%s) $(rss)"; sleep 1; done >>"$work/rss.log") &
sampler=$!
read -r m_rps m_p50 m_p99 m_bad < <(measure "$work/sediment-exact.txt" 64 "$rss_queries")
kill "$sampler" 2>/dev/null || true
python3 - "$work/rss.log" "$m_rps" "$m_p99" "$m_bad" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 2]
kb = [int(r[1]) for r in rows]
n = len(kb)
tenth = max(1, n // 10)
print(f"  before: {kb[0]/1024:.1f} MB; first tenth max {max(kb[:tenth])/1024:.1f} MB; "
      f"last tenth max {max(kb[-tenth:])/1024:.1f} MB; peak {max(kb)/1024:.1f} MB; {n} samples")
print(f"  during it: {float(sys.argv[2]):.0f} q/s, p99 {sys.argv[3]} ms, non-200: {sys.argv[4]}")
EOF
