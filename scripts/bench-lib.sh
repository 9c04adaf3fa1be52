# Sourced by the benchmark scripts: the equivalence checks. A benchmark that compares the
# speed of Sediment with a reference first proves that both produced the same result; when
# they did not, it stops with status 1 and prints where they differ, so that no ratio is
# ever reported for work that was not the same.
#
# BENCH_CORRUPT=NAME alters, on purpose, the output that the check called NAME reads (see
# bench_corrupt): it is how each script's check is shown to fail when the outputs differ.

# check_fail MESSAGE...: stops the benchmark.
check_fail() {
    echo "EQUIVALENCE CHECK FAILED: $*" >&2
    exit 1
}

# check_same LABEL A B: files A and B are byte for byte the same (callers sort and
# normalise first, and say how in LABEL or next to the call; Sediment's side comes first
# where there is one).
check_same() {
    local label=$1 a=$2 b=$3
    # Two empty outputs are the same, and prove nothing.
    [[ -s "$a" || -s "$b" ]] || check_fail "$label: both outputs are empty ($a, $b)"
    if ! cmp -s "$a" "$b"; then
        {
            echo "EQUIVALENCE CHECK FAILED: $label"
            echo "  $a: $(wc -l <"$a") lines; $b: $(wc -l <"$b") lines; first differences (< first, > second):"
            diff "$a" "$b" | head -20 | sed 's/^/  /'
        } >&2
        exit 1
    fi
    echo "check passed: $label ($(wc -l <"$a") lines identical)"
}

# check_equal LABEL X Y: two values (counts) are equal.
check_equal() {
    [[ "$2" == "$3" ]] || check_fail "$1: sediment $2, reference $3"
    echo "check passed: $1 ($2)"
}

# check_within LABEL X Y PERCENT: |X - Y| <= PERCENT % of the larger of the two.
check_within() {
    local label=$1 x=$2 y=$3 percent=$4
    if ! awk -v x="$x" -v y="$y" -v p="$percent" 'BEGIN {
            d = x - y; if (d < 0) d = -d
            m = (x > y ? x : y); if (m < 0) m = -m
            exit !(d <= p / 100 * m) }'; then
        check_fail "$label: sediment $x, reference $y, more than $percent % apart"
    fi
    echo "check passed: $label (sediment $x, reference $y, within $percent %)"
}

# bench_corrupt NAME FILE: when BENCH_CORRUPT=NAME, changes one line of FILE (the first is
# replaced) so that the check that reads it must fail.
bench_corrupt() {
    [[ "${BENCH_CORRUPT:-}" == "$1" ]] || return 0
    echo "BENCH_CORRUPT=$1: altering $2 on purpose; the check must fail" >&2
    sed -i '1s/.*/corrupted on purpose/' "$2"
}

# bench_corrupt_value NAME VALUE: prints VALUE, or VALUE * 2 + 1 when BENCH_CORRUPT=NAME.
bench_corrupt_value() {
    if [[ "${BENCH_CORRUPT:-}" == "$1" ]]; then
        echo "BENCH_CORRUPT=$1: altering a count on purpose; the check must fail" >&2
        awk -v v="$2" 'BEGIN {print v * 2 + 1}'
    else
        echo "$2"
    fi
}

# The Python interpreter of the project's virtual environment when there is one (made by
# scripts/setup.sh), else python3 from PATH.
bench_python() {
    local venv="${SEDIMENT_VENV:-$HOME/.cache/sediment-venv}"
    if [[ -x "$venv/bin/python" ]]; then echo "$venv/bin/python"; else command -v python3; fi
}

# bench_tools: builds the reference programs of scripts/bench-tools (apart from Sediment's
# target directory) and prints the directory of their binaries.
bench_tools() {
    local target="${CARGO_TARGET_DIR:?}-bench-tools"
    CARGO_TARGET_DIR="$target" cargo build --release --quiet --manifest-path scripts/bench-tools/Cargo.toml >&2
    echo "$target/release"
}

# The records of WARC files as each side read them, one sorted line per record:
# `WARC-Type \t WARC-Record-ID \t WARC-Target-URI \t VERDICT`, VERDICT being the check of the
# payload digest of an HTTP response against its bytes: ok, bad, or - (nothing checked).
# Normalised where the readers legitimately differ: fastwarc hashes the stored payload only,
# so a chunked payload whose header names the digest of the de-chunked body (Sediment's
# match-dechunked) is `bad` on both sides; Sediment also checks resource records, which
# fastwarc does not: those count as `-`. (A response that is not HTTP, which fastwarc does
# not check either, would show as a difference: the crawls used here have none.)
# warc_records_sediment < OUTPUT_OF_WARC_DUMP (examples/warc_dump, one run per file)
warc_records_sediment() {
    python3 -c '
import re, sys
line_re = re.compile(r"^\d+ \+\d+ len \d+ (\S+) (\S+) (None|Some\(\"((?:[^\"\\]|\\.)*)\"\)) (\S+) ")
for line in sys.stdin:
    if line.startswith("error "):
        print("error"); continue
    m = line_re.match(line)
    if not m:
        sys.exit("warc_dump printed an unexpected line: " + line)
    kind, rid, uri, check = m.group(1), m.group(2).strip("<>"), m.group(4) or "-", m.group(5)
    verdict = "-"
    if kind == "response" and check in ("match", "mismatch", "match-dechunked"):
        verdict = "ok" if check == "match" else "bad"
    print(f"{kind}\t{rid}\t{uri}\t{verdict}")' | LC_ALL=C sort
}
# warc_records_reference TOOLS_DIR FILE...
warc_records_reference() {
    local tools=$1
    shift
    "$tools/fastwarc_list" "$@" | awk -F'\t' '
        $2 == "error" { print "error"; next }
        { print $3 "\t" $2 "\t" $4 "\t" $7 }' | LC_ALL=C sort
}

# The captures of WARC files as the fastwarc crate reads them: one sorted line
# `URL TIMESTAMP DIGEST` per record of the given types (the timestamp in 14 digits; the
# payload digest, or the block digest when there is none, without its `sha1:`), the fields
# a CDX line or a store's capture carries. A store keeps response, revisit and resource
# records as captures; `sediment cdx` and cdxj-indexer index metadata records too.
# warc_captures_reference TOOLS_DIR 'response|revisit|resource' FILE...
warc_captures_reference() {
    local tools=$1 types=$2
    shift 2
    "$tools/fastwarc_list" "$@" | awk -F'\t' -v types="^($types)\$" '
        $2 == "error" { print "error reading " $1 ": " $3; next }
        $3 ~ types {
            ts = $5; gsub(/[^0-9]/, "", ts); ts = substr(ts, 1, 14)
            digest = ($6 != "-" ? $6 : $8); sub(/^[Ss][Hh][Aa]1:/, "", digest)
            print $4 " " ts " " digest }' | LC_ALL=C sort
}
# The same fields from CDX-11 lines (`sediment cdx`, `sediment captures --output cdx`).
# cdx_captures FILE
cdx_captures() {
    awk '$1 != "CDX" && NF >= 11 { print $3 " " $2 " " $6 }' "$1" | LC_ALL=C sort
}
# The number of HTTP responses whose payload digest fastwarc verified against the bytes,
# and of those it found wrong: `OK BAD`. warc_digest_verdicts TOOLS_DIR FILE...
warc_digest_verdicts() {
    local tools=$1
    shift
    "$tools/fastwarc_list" "$@" | awk -F'\t' '$7 == "ok" { ok++ } $7 == "bad" { bad++ } END { print ok + 0, bad + 0 }'
}

# The scale benchmarks' shared parts (bench-scale.sh, bench-scale-incremental.sh,
# bench-serve-disk.sh).

# scale_path_files: the CDX files whose URL paths examples/gen_scale_cdx.rs takes, one a
# line: the corpus's (sandcrawler's, pywb's sample) and the bench crawls' when they exist.
# The same list gives the same lines for a seed, so a sample can be drawn again later.
scale_path_files() {
    local corpus="${SEDIMENT_CORPUS:-../shared/corpus}" f
    for f in "$corpus"/sandcrawler/*.cdx "$corpus"/pywb/sample_archive/cdx/*.cdx \
             /work/bench-data/*.cdx /work/bench-data/small-records/*.cdx; do
        [[ -s "$f" ]] && echo "$f"
    done
    return 0
}

# time_summary LABEL LOG: one line of wall time, CPU time and peak RSS from /usr/bin/time -v.
time_summary() {
    awk -v label="$1" -F': ' '
      /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = (n == 3 ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2]) }
      /User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
      END { printf "%-40s wall %8.2f s  cpu %8.2f s (user %.2f, sys %.2f)  peak RSS %7.0f MB\n", label, wall, user + sys, user, sys, rss / 1024 }' "$2"
}

# memory_cgroup NAME MB: a memory cgroup (v1 at /sys/fs/cgroup/memory, else v2) whose limit,
# page cache included, is MB; prints its directory. Root only.
memory_cgroup() {
    local cg
    if [[ -d /sys/fs/cgroup/memory ]]; then
        cg=/sys/fs/cgroup/memory/$1
        mkdir -p "$cg"
        echo $(($2 * 1048576)) > "$cg/memory.limit_in_bytes"
        echo 0 > "$cg/memory.max_usage_in_bytes" 2> /dev/null || true
    else
        cg=/sys/fs/cgroup/$1
        mkdir -p "$cg"
        echo $(($2 * 1048576)) > "$cg/memory.max"
    fi
    echo "$cg"
}

# cgroup_peak_mb DIR: the most memory the cgroup has used, page cache included, in MB.
cgroup_peak_mb() {
    local file=$1/memory.max_usage_in_bytes
    [[ -f "$file" ]] || file=$1/memory.peak
    echo $(($(cat "$file") / 1048576))
}

# in_cgroup DIR COMMAND...: drops the page cache (so that nothing read before is charged
# elsewhere) and becomes COMMAND inside the cgroup. It replaces the shell it runs in: call
# it in the background (then $! is COMMAND's pid) or in a subshell.
in_cgroup() {
    sync
    echo 3 > /proc/sys/vm/drop_caches
    exec sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$@"
}

# Search latency through `sediment serve` (issue 37: scripts/bench-search.sh,
# scripts/bench-scale-pages.sh).

# search_queries DB OUT N: draws N queries (seeded) from the words of the titles of the
# summary database's searchable documents into OUT, one a line: 40 % one word, 30 % two
# words, 10 % a two-word phrase, 10 % a word and an exclusion, 10 % a word and a site:
# filter. Over 200,000 titles, a seeded sample of 200,000 is used, so that a 1 M-page index
# costs seconds here (below, the queries are those bench-search.sh always drew).
search_queries() {
    python3 - "$1" "$2" "$3" <<'PY'
import random, re, sqlite3, sys
db, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
titles = [t for (t,) in conn.execute(
    "SELECT dd.title FROM document_description dd JOIN full_text_entity_index f "
    "ON f.rowid = dd.entity_generation_id WHERE dd.title IS NOT NULL")]
searchable = len(titles)
if len(titles) > 200000:
    titles = random.Random(36).sample(titles, 200000)
hosts = [h for (h,) in conn.execute("SELECT DISTINCT host FROM origin WHERE host IS NOT NULL")]
word = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
runs = [word.findall(t) for t in titles]
runs = [r for r in runs if r]
vocabulary = sorted({w.lower() for r in runs for w in r})
rng = random.Random(37)
queries = []
for i in range(n):
    kind = i % 10
    if kind < 4:
        q = rng.choice(vocabulary)
    elif kind < 7:
        q = f"{rng.choice(vocabulary)} {rng.choice(vocabulary)}"
    elif kind < 8:
        r = rng.choice([r for r in runs if len(r) > 1] or runs)
        j = rng.randrange(max(1, len(r) - 1))
        q = '"' + " ".join(r[j:j + 2]) + '"'
    elif kind < 9:
        q = f"{rng.choice(vocabulary)} -{rng.choice(vocabulary)}"
    else:
        q = f"{rng.choice(vocabulary)} site:{rng.choice(hosts)}"
    queries.append(q)
rng.shuffle(queries)
open(out, "w").write("\n".join(queries) + "\n")
print(f"{len(queries)} queries from {len(vocabulary)} title words of {searchable} searchable documents")
PY
}

# search_serve SEDIMENT STORE DB LOG: starts `sediment serve --summary-db DB` on 127.0.0.1
# (no access log) in the background; sets serve_pid and serve_base (http://127.0.0.1:PORT).
# The caller stops it (kill "$serve_pid").
search_serve() {
    local sediment=$1 store=$2 db=$3 log=$4 port=""
    "$sediment" --store "$store" serve --bind 127.0.0.1:0 --summary-db "$db" \
        --access-log off 2>"$log" &
    serve_pid=$!
    for _ in $(seq 1 600); do
        port="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    [[ -n "$port" ]] || { echo "sediment serve did not start: $(cat "$log")" >&2; return 1; }
    serve_base="http://127.0.0.1:$port"
}

# search_load HTTP_LOAD QUERIES REQUESTS_FILE CLIENTS REQUESTS: the queries as requests
# (`/search?format=json&q=…`, which counts, facets and pages as the HTML page does) run
# through examples/http_load.rs against serve_base: once over every query with 1 client as
# a warm-up, then REQUESTS requests at CLIENTS clients. Every answer must be a 200 whose
# JSON has a total. Prints http_load's lines and the server's CPU time over the measured run.
search_load() {
    local load=$1 queries=$2 requests_file=$3 clients=$4 requests=$5 before after
    python3 -c '
import sys, urllib.parse
for q in open(sys.argv[1]):
    if q.strip():
        print("/search?format=json&q=" + urllib.parse.quote_plus(q.rstrip("\n")))
' "$queries" > "$requests_file"
    echo "warm-up: every query once, 1 client"
    "$load" "$serve_base" "$requests_file" 1 "$(grep -c . "$requests_file")" '"total":'
    before=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
    echo "measured: $requests requests, $clients clients"
    "$load" "$serve_base" "$requests_file" "$clients" "$requests" '"total":'
    after=$(awk '{print $14 + $15}' "/proc/$serve_pid/stat")
    echo "server CPU over the measured run: $(awk -v a="$before" -v b="$after" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t }') s (user + sys)"
}
