#!/usr/bin/env python3
"""Sediment ingestion on Apache Spark: the HBase bulk-load pattern with Sediment doing the
per-file work.

    spark-submit --master local[2] scripts/spark/sediment_spark.py import-warc --store STORE INPUT...
    spark-submit --master local[2] scripts/spark/sediment_spark.py backfill-cdx --store STORE INPUT...

1. The driver lists the inputs (paths, directories, globs; `scheme://` URLs through Hadoop's
   file system) and asks the store what it holds (`sediment ingest-sst --plan`).
2. One task per input (a large CDX file: one per part) runs `sediment extract`, which prints
   the input's captures as record lines keyed by store key, and a summary line last. Spark
   keeps the lines as blocks of a few MB: Python never handles a record on its own.
3. The driver chooses key ranges from the key samples of the summaries; `sediment
   split-ranges` cuts every block into the ranges' shares, and Spark shuffles the shares to
   their ranges (a range whose key space is the digests keeps every capture of a digest
   together). That is the map side of a Hadoop job: records are cut by Sediment, moved by
   Spark and sorted on the reduce side.
4. One task per range runs `sediment write-sst --sort`: its shares sorted (an external
   sort) into SST files for the capture key spaces (and, on an empty store, the file rows of
   its digests).
5. The driver runs `sediment ingest-sst` as the store's one writer: it checks that every
   input and record is there once, ingests the files, derives what the ranges could not,
   records the inputs and publishes a version.

The store then equals what a single `sediment import-warc` / `backfill-cdx` of the same inputs
makes. Children are checked here, not trusted: an extract must exit 0, end with its summary
and have printed as many records as the summary says; a write-sst must read every record it
was given. A failed or killed child fails its task, Spark runs it again, and only the output
of the attempt that succeeded is used (each attempt writes its own directory).

The sediment binary: SEDIMENT_BIN, else `sediment` on PATH; executors also find one shipped
with `spark-submit --files /path/to/sediment`.

On a cluster (`--master spark://…`, YARN, Kubernetes) the executors are other processes,
on other nodes, in directories of their own and without the driver's environment. What
the nodes must share:
- the sediment binary: shipped with `--files`, on the executors' PATH, or at the driver's
  path on every node (the driver passes its absolute path as the executors' last resort);
  a build that runs on the nodes' OS;
- Python: PYSPARK_PYTHON (or spark.pyspark.python) names an interpreter present at that
  path on every node; the tasks need pyspark's worker and the standard library only;
- the inputs: local paths at the same path on every node (a shared mount), or `scheme://`
  URLs read with `hadoop fs -cat` (Hadoop's client on the executors' PATH). A relative
  path is opened in the driver's working directory, which must then exist at the same
  path on the nodes, so that captures name inputs as the single-process import does;
- the staging directory (`--staging`, default beside the store): range tasks write their
  SST files there and the driver ingests them, so the executors and the driver must see
  it at one path (ingestion hard-links the files when it is on the store's file system);
- nothing else: the store is opened by the driver alone (a Bigtable table by every range
  task), and the files the driver makes (key-range bounds, the inputs already ingested)
  travel with SparkContext.addFile.
scripts/spark/cluster.sh starts a standalone cluster (a master and workers) on one
machine; tests/spark.rs and `MASTER=standalone scripts/bench-spark.sh` run on it.

Where the result goes is a target: a RocksDB store directory (SST files ingested by the
driver), or a Bigtable table (`--store bigtable://PROJECT/INSTANCE/TABLE`), where each range
task writes its records into the table and derives its digests' rows itself
(`sediment write-range`, under the table's derivation lease), and the driver only records
the inputs (`ingest-sst --records-written`).
"""

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

USAGE_ERROR = 2


# --- finding the binary -------------------------------------------------------------------

def sediment_binary(fallback=None):
    """The sediment binary: shipped with --files, SEDIMENT_BIN, PATH, then `fallback`."""
    try:
        from pyspark import SparkFiles
        shipped = SparkFiles.get("sediment")
        if os.path.isfile(shipped) and os.access(shipped, os.X_OK):
            return shipped
    except Exception:
        pass
    for candidate in (os.environ.get("SEDIMENT_BIN"), shutil.which("sediment"), fallback):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            # Absolute: the driver's binary is the executors' fallback, and an executor
            # runs in a directory of its own.
            return os.path.abspath(candidate)
    raise RuntimeError("no sediment binary: set SEDIMENT_BIN, put sediment on PATH, "
                       "or ship it with spark-submit --files /path/to/sediment")


# --- children ------------------------------------------------------------------------------

class ChildFailed(RuntimeError):
    pass


def stderr_tail(path, limit=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def forward_stderr(path):
    """What a child reported (problems with file and offset, its summary) goes to the task's
    stderr: the console in local mode, the executor's log on a cluster."""
    try:
        with open(path, "rb") as f:
            sys.stderr.write(f.read().decode("utf-8", "replace"))
            sys.stderr.flush()
    except OSError:
        pass


def child_cwd(config):
    """Where an extract runs: the driver's working directory where the executor sees it
    (on one machine, or a directory every node mounts at the same path), so that relative
    input paths open and are named as the single-process import names them; else the
    executor's own (absolute paths then)."""
    cwd = config.get("cwd")
    return cwd if cwd and os.path.isdir(cwd) else None


def fail_once(stage, name):
    """Test hook: SEDIMENT_SPARK_FAIL_ONCE=STAGE:NAME kills the child of the first attempt of
    that task (stage `extract` with an input's file name, `split` with a part number, or
    `write` with a range number; several, comma-separated)."""
    wanted = os.environ.get("SEDIMENT_SPARK_FAIL_ONCE", "").split(",")
    if f"{stage}:{name}" not in wanted:
        return False
    from pyspark import TaskContext
    context = TaskContext.get()
    return context is not None and context.attemptNumber() == 0


# --- tasks ---------------------------------------------------------------------------------

# Bytes of record lines Spark keeps and moves as one element: large enough that Python's
# cost per element vanishes, small enough for the workers' memory.
BLOCK_BYTES = 8 << 20


def extract_task(task, config):
    """Runs `sediment extract` on one input (part) and yields its record lines in blocks,
    (b"r", bytes) cut at line ends, then (b"s", summary). Raises when the child fails or
    its output is not whole."""
    binary = sediment_binary(config["driver_binary"])
    command = [binary, "extract", config["command"], *config["filter_args"]]
    if config["strict"]:
        command.append("--strict")
    if task["parts"] > 1:
        command += ["--part", f"{task['part']}/{task['parts']}"]
    if config["completed_file"]:
        from pyspark import SparkFiles
        command += ["--completed", SparkFiles.get(config["completed_file"])]
    source = None
    if task["local"]:
        command.append(task["path"])
    else:
        # Not a local file: streamed through Hadoop's command line into standard input.
        command += ["-", "--name", task["path"]]
        source = subprocess.Popen(["hadoop", "fs", "-cat", task["path"]], stdout=subprocess.PIPE)
    kill = fail_once("extract", os.path.basename(task["path"]))
    with tempfile.NamedTemporaryFile(prefix="sediment-extract-", suffix=".err", delete=False) as err:
        err_path = err.name
    try:
        with open(err_path, "wb") as err:
            child = subprocess.Popen(command, stdin=source.stdout if source else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=err, cwd=child_cwd(config))
        if source:
            source.stdout.close()
        lines = 0
        record_bytes = 0
        pending = b""  # the last block, held back: it ends with the summary line
        carry = b""
        while True:
            data = child.stdout.read(4096 if kill else BLOCK_BYTES)
            if kill:
                child.send_signal(signal.SIGKILL)
                child.wait()
                raise ChildFailed(f"extract of {task['path']} killed (SEDIMENT_SPARK_FAIL_ONCE)")
            if not data:
                break
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut == 0:
                continue
            if pending:
                yield (b"r", pending)
            pending = data[:cut]
            lines += pending.count(b"\n")
            record_bytes += len(pending)
        code = child.wait()
        if source and source.wait() != 0:
            raise ChildFailed(f"hadoop fs -cat {task['path']} failed")
        forward_stderr(err_path)
        if code not in (0, 3):
            raise ChildFailed(f"sediment extract of {task['path']} failed (exit status {code}):\n"
                              + stderr_tail(err_path))
        # A whole output ends with its summary line; anything after it (a cut line) or no
        # summary at all means the child did not finish.
        last = pending.rfind(b"\n", 0, len(pending) - 1) + 1
        if carry or not pending[last:].startswith(b"s\t"):
            raise ChildFailed(f"sediment extract of {task['path']} printed no summary")
        summary, pending = pending[last + 2:-1], pending[:last]
        lines -= 1
        record_bytes -= len(summary) + 3
        if pending:
            yield (b"r", pending)
        parsed = json.loads(summary)
        printed = parsed["records"]["captures"] + parsed["records"]["index_entries"]
        if printed != lines:
            raise ChildFailed(f"sediment extract of {task['path']}: {lines} records read, "
                              f"its summary says {printed}")
        parsed["record_bytes"] = record_bytes  # the shuffle volume, for the report
        yield (b"s", json.dumps(parsed).encode())
    finally:
        os.unlink(err_path)


def split_task(entries, config):
    """Cuts the blocks of record lines among `entries` into the ranges' shares with one
    `sediment split-ranges`; yields (range, bytes of lines)."""
    from pyspark import SparkFiles, TaskContext
    binary = sediment_binary(config["driver_binary"])
    command = [binary, "split-ranges", "--bounds", SparkFiles.get(config["bounds_file"])]
    part = TaskContext.get().partitionId() if TaskContext.get() else 0
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        if fail_once("split", str(part)):
            child.send_signal(signal.SIGKILL)
            child.wait()
            raise ChildFailed(f"split-ranges of part {part} killed (SEDIMENT_SPARK_FAIL_ONCE)")
        given = [0]
        failure = []

        def feed():
            try:
                for kind, block in entries:
                    if kind == b"r":
                        child.stdin.write(block)
                        given[0] += block.count(b"\n")
                child.stdin.close()
            except BrokenPipeError:
                pass  # the child is gone: its exit status says why
            except BaseException as e:  # reading the cached blocks failed: fail the task
                failure.append(e)
                child.kill()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        placed = 0
        while True:
            header = child.stdout.readline()
            if not header:
                break
            index, size, count = (int(x) for x in header.split(b"\t"))
            share = child.stdout.read(size)
            if len(share) != size or share.count(b"\n") != count:
                break  # a cut block: the exit status or the count below says why
            placed += count
            yield (index, share)
        feeder.join()
        code = child.wait()
        if failure:
            raise failure[0]
        if code != 0:
            err.seek(0)
            raise ChildFailed(f"sediment split-ranges failed (exit status {code}):\n"
                              + err.read().decode("utf-8", "replace")[-4000:])
        if placed != given[0]:
            raise ChildFailed(f"sediment split-ranges placed {placed} of {given[0]} lines")


def write_range_task(index, shares, config):
    """Runs the target's range writer (`sediment write-sst --sort`, or `write-range --sort`
    into a Bigtable table) on one key range's shares; yields its manifest."""
    shares = iter(shares)
    first = next(shares, None)
    if first is None:
        return
    from pyspark import TaskContext
    context = TaskContext.get()
    attempt = context.attemptNumber() if context else 0
    binary = sediment_binary(config["driver_binary"])
    out = None
    if config["direct_store"]:
        writer = "write-range"
        command = [binary, "--store", config["direct_store"], writer, "--ts", str(config["ts"])]
    else:
        writer = "write-sst"
        out = os.path.join(config["staging"], "ranges",
                           f"r{index:05d}-a{attempt}-{uuid.uuid4().hex[:8]}")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        command = [binary, writer, "--out", out, "--ts", str(config["ts"])]
        if config["derive"]:
            command.append("--derive")
    command += ["--sort", "--sort-memory-mb", str(config["sort_memory_mb"])]
    kill = fail_once("write", str(index))
    with tempfile.NamedTemporaryFile(prefix="sediment-write-", suffix=".err", delete=False) as err:
        err_path = err.name
    try:
        with open(err_path, "wb") as err:
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=err)
        fed = 0
        try:
            for _, share in _chain(first, shares):
                if kill:
                    child.send_signal(signal.SIGKILL)
                    child.wait()
                    raise ChildFailed(f"{writer} of range {index} killed (SEDIMENT_SPARK_FAIL_ONCE)")
                child.stdin.write(share)
                fed += share.count(b"\n")
            child.stdin.close()
        except BrokenPipeError:
            pass  # the child is gone: its exit status says why
        output = child.stdout.read()
        code = child.wait()
        forward_stderr(err_path)
        if code != 0:
            raise ChildFailed(f"sediment {writer} of range {index} failed (exit status {code}):\n"
                              + stderr_tail(err_path))
        manifest = json.loads(output)
        if manifest["records"] != fed:
            raise ChildFailed(f"{writer} of range {index} read {manifest['records']} records "
                              f"of {fed}")
        yield {"range": index, "dir": out, "manifest": manifest}
    finally:
        os.unlink(err_path)


def _chain(first, rest):
    yield first
    yield from rest


# --- key ranges ----------------------------------------------------------------------------

def range_bounds(summaries, ranges):
    """`ranges - 1` bounds at equal weight of the sampled partition keys."""
    samples = []
    for summary in summaries:
        for entry in summary.get("sample", []):
            samples.append((entry["key"].encode(), entry["weight"]))
    if ranges <= 1 or not samples:
        return []
    samples.sort()
    total = sum(w for _, w in samples)
    bounds, seen = [], 0.0
    for key, weight in samples:
        seen += weight
        if len(bounds) < ranges - 1 and seen >= total * (len(bounds) + 1) / ranges:
            if not bounds or key > bounds[-1]:
                bounds.append(key)
    return bounds


# --- inputs --------------------------------------------------------------------------------

def is_warc_name(name):
    name = name.lower()
    return name.endswith(".warc") or name.endswith(".warc.gz")


def list_inputs(spark, patterns, accept):
    """The input files: local paths spelled as a shell would (so captures name them as a
    single-process run given the same arguments does), `scheme://` URLs through Hadoop's
    file system. Directories are searched for names `accept` takes, in name order."""
    found = []
    for pattern in patterns:
        if "://" in pattern and not pattern.startswith("file://"):
            found += list_hadoop(spark, pattern, accept)
            continue
        local = pattern[len("file://"):] if pattern.startswith("file://") else pattern
        matches = sorted(glob.glob(local)) if glob.has_magic(local) else [local]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise UsageError(f"no input matches {pattern}")
        for match in matches:
            if os.path.isdir(match):
                for root, dirs, files in os.walk(match):
                    dirs.sort()
                    for name in sorted(files):
                        if accept(name):
                            path = os.path.join(root, name)
                            found.append({"path": path, "size": os.path.getsize(path), "local": True})
            else:
                found.append({"path": match, "size": os.path.getsize(match), "local": True})
    return found


def list_hadoop(spark, pattern, accept):
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(pattern)
    fs = path.getFileSystem(conf)
    statuses = fs.globStatus(path) or []
    if len(statuses) == 0:
        raise UsageError(f"no input matches {pattern}")
    found = []
    for status in statuses:
        if status.isDirectory():
            files = fs.listFiles(status.getPath(), True)
            while files.hasNext():
                f = files.next()
                if accept(f.getPath().getName()):
                    found.append({"path": f.getPath().toString(), "size": f.getLen(), "local": False})
        else:
            found.append({"path": status.getPath().toString(), "size": status.getLen(), "local": False})
    return sorted(found, key=lambda f: f["path"])


class UsageError(Exception):
    pass


# --- targets -------------------------------------------------------------------------------

class RocksTarget:
    """A store directory: ranges become SST files the driver ingests as the one writer."""

    direct = False

    def __init__(self, store, binary):
        self.store = store
        self.binary = binary

    def sediment(self, *args, capture=True):
        command = [self.binary, "--store", self.store, *args]
        done = subprocess.run(command, stdout=subprocess.PIPE if capture else None)
        if done.returncode not in (0, 3):
            raise ChildFailed(f"{' '.join(command[:5])} … failed (exit status {done.returncode})")
        return done.stdout

    def plan(self):
        return json.loads(self.sediment("ingest-sst", "--plan"))

    def staging_dir(self, requested):
        if requested:
            # Absolute: the range tasks write there from their executors' directories.
            requested = os.path.abspath(requested)
            os.makedirs(requested, exist_ok=True)
            return tempfile.mkdtemp(prefix="sediment-spark-", dir=requested)
        # Beside the store, on its file system: ingestion then hard-links the files.
        parent = os.path.dirname(os.path.abspath(self.store))
        os.makedirs(parent, exist_ok=True)
        return tempfile.mkdtemp(prefix=".sediment-spark-", dir=parent)

    def commit(self, ranges, summaries_path, ts):
        """Ingests the ranges; returns the bytes of their SST files."""
        dirs = [r["dir"] for r in sorted(ranges, key=lambda r: r["range"])]
        sst_bytes = sum(os.path.getsize(os.path.join(d, f["file"]))
                        for r in ranges for d in [r["dir"]] for f in r["manifest"]["files"])
        self.sediment("ingest-sst", "--ts", str(ts), "--inputs", summaries_path, *dirs,
                      capture=False)
        return sst_bytes


class BigtableTarget(RocksTarget):
    """A Bigtable table: each range task writes its records into the table and derives the
    rows of its digests under the table's lease (`write-range`); the driver only finishes
    what a dead task left and records the inputs. Executors reach the table with the usual
    Google credentials, or BIGTABLE_EMULATOR_HOST (spark.executorEnv on a cluster)."""

    direct = True

    def staging_dir(self, requested):
        # Only the driver's small files (input summaries) live here.
        if requested:
            os.makedirs(requested, exist_ok=True)
        return tempfile.mkdtemp(prefix="sediment-spark-", dir=requested or None)

    def commit(self, ranges, summaries_path, ts):
        written = sum(r["manifest"]["records"] for r in ranges)
        self.sediment("ingest-sst", "--ts", str(ts), "--inputs", summaries_path,
                      "--records-written", str(written), capture=False)
        return 0


def target_for(store, binary):
    if store.startswith("bigtable://"):
        return BigtableTarget(store, binary)
    return RocksTarget(store, binary)


# --- the job -------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="sediment_spark.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["import-warc", "backfill-cdx"])
    parser.add_argument("inputs", nargs="+", help="files, directories, globs or Hadoop URLs")
    parser.add_argument("--store", required=True,
                        help="the store directory, or bigtable://PROJECT/INSTANCE/TABLE")
    parser.add_argument("--ranges", type=int, default=0,
                        help="key ranges of the shuffle (default: Spark's default parallelism)")
    parser.add_argument("--sort-memory-mb", type=int, default=256,
                        help="memory of each range writer's sort, in MiB")
    parser.add_argument("--split-mb", type=float, default=256.0,
                        help="CDX inputs larger than this are read by several tasks")
    parser.add_argument("--staging", help="where range files are written (default: beside the "
                                          "store; on a cluster, a file system every node shares)")
    parser.add_argument("--keep-staging", action="store_true")
    parser.add_argument("--force", action="store_true",
                        help="apply inputs the store has already ingested")
    parser.add_argument("--strict", action="store_true", help="stop at the first bad record")
    parser.add_argument("--mime", action="append", default=[], help="file filter (repeatable)")
    parser.add_argument("--status", help="file filter: HTTP status codes, comma-separated")
    parser.add_argument("--all-statuses", action="store_true")
    parser.add_argument("--parquet", help="also export the capture index as Parquet into DIR")
    return parser.parse_args(argv)


def filter_args(args):
    out = []
    for mime in args.mime:
        out += ["--mime", mime]
    if args.status:
        out += ["--status", args.status]
    if args.all_statuses:
        out.append("--all-statuses")
    return out


def tasks_for(command, inputs, split_bytes):
    tasks = []
    for entry in inputs:
        parts = 1
        if command == "backfill-cdx" and entry["size"] > split_bytes:
            parts = min(64, -(-entry["size"] // split_bytes))
        for part in range(parts):
            tasks.append({**entry, "part": part, "parts": parts})
    return tasks


def warm_up(sc):
    """Start-up, kept apart from the work in the timings: the executors start their Python
    workers with the first job that needs them, and the JVM compiles the path of a Python
    task's output into the cache the first time a task takes it (a few hundred ms of the
    first tasks otherwise). One small cached job of one task per core does both."""
    from pyspark import StorageLevel
    cores = sc.defaultParallelism
    blocks = (sc.parallelize(range(cores), cores)
              .map(lambda _: (b"r", bytes(1 << 20)))
              .persist(StorageLevel.MEMORY_AND_DISK))
    blocks.filter(lambda kv: kv[0] == b"s").collect()
    blocks.unpersist()


def run(argv):
    started = time.time()
    args = parse_args(argv)
    from pyspark import SparkConf, StorageLevel
    from pyspark.sql import SparkSession

    conf = SparkConf()
    # Executors talk to their Python workers over a Unix socket rather than loopback TCP:
    # an empty PySpark task then costs ~15 ms instead of ~30 on the 2-core test machine
    # (Spark 4; older versions ignore the setting).
    conf.setIfMissing("spark.python.unix.domain.socket.enabled", "true")
    if conf.get("spark.master", "local[*]").startswith("local"):
        # A local run stays on this machine.
        conf.setIfMissing("spark.driver.host", "127.0.0.1")
        conf.setIfMissing("spark.driver.bindAddress", "127.0.0.1")
        conf.setIfMissing("spark.ui.enabled", "false")
    else:
        # A cluster: the job starts once every executor it asked for is up, so that their
        # launch is start-up, not the first tasks' time, and the extracts spread over all
        # of them (standalone's default is to start at once with whatever registered).
        conf.setIfMissing("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        conf.setIfMissing("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
    spark = SparkSession.builder.config(conf=conf).appName(f"sediment {args.command}").getOrCreate()
    sc = spark.sparkContext
    context_up = time.time()
    warm_up(sc)
    jvm_up = time.time()
    binary = sediment_binary()
    target = target_for(args.store, binary)
    accept = is_warc_name if args.command == "import-warc" else (lambda name: True)
    inputs = list_inputs(spark, args.inputs, accept)
    plan = target.plan()
    staging = target.staging_dir(args.staging)
    ts = int(time.time() * 1000)
    try:
        completed_file = None
        if plan["completed"] and not args.force:
            completed_path = os.path.join(staging, "completed.jsonl")
            with open(completed_path, "w") as f:
                for entry in plan["completed"]:
                    f.write(json.dumps(entry) + "\n")
            sc.addFile(completed_path)
            completed_file = "completed.jsonl"
        config = {
            "command": args.command,
            "filter_args": filter_args(args),
            "strict": args.strict,
            "completed_file": completed_file,
            "driver_binary": binary,
            "cwd": os.getcwd(),
            "staging": staging,
            "ts": ts,
            "derive": bool(plan["empty"]),
            "direct_store": args.store if target.direct else None,
            "sort_memory_mb": args.sort_memory_mb,
        }
        tasks = tasks_for(args.command, inputs, int(args.split_mb * (1 << 20)))
        ranges = args.ranges or sc.defaultParallelism
        records = (sc.parallelize(tasks, max(1, len(tasks)))
                   .mapPartitions(lambda part: (r for t in part for r in extract_task(t, config)))
                   .persist(StorageLevel.MEMORY_AND_DISK))
        # Running the extracts once: their summaries (and key samples) come to the driver,
        # their blocks of records stay cached for the shuffle.
        summaries = [json.loads(v) for k, v in records.filter(lambda kv: kv[0] == b"s").collect()]
        extracted = time.time()
        bounds = range_bounds(summaries, ranges)
        bounds_path = os.path.join(staging, "bounds.txt")
        with open(bounds_path, "wb") as f:
            f.writelines(bound + b"\n" for bound in bounds)
        sc.addFile(bounds_path)
        config["bounds_file"] = "bounds.txt"
        # The Hadoop way: each block is cut into its ranges' shares by Sediment, Spark moves
        # the shares to their ranges without reading a record, and each range's writer
        # sorts what it got (an external sort, in Rust) before it writes. The cached blocks
        # are cut by one task per core, not per input: a PySpark task costs tens of ms
        # whatever it does.
        written = (records.coalesce(min(len(tasks), sc.defaultParallelism))
                   .mapPartitions(lambda entries: split_task(entries, config))
                   .partitionBy(len(bounds) + 1, lambda index: index)
                   .mapPartitionsWithIndex(lambda i, part: write_range_task(i, part, config))
                   .collect())
        records.unpersist()
        shuffled = time.time()
        summaries_path = os.path.join(staging, "inputs.jsonl")
        with open(summaries_path, "w") as f:
            for summary in summaries:
                f.write(json.dumps(summary) + "\n")
        sst_bytes = target.commit(written, summaries_path, ts)
        ingested = time.time()
        if args.parquet:
            target.sediment("export-captures", "--format", "parquet", "-o", args.parquet,
                            capture=False)
    finally:
        if not args.keep_staging:
            shutil.rmtree(staging, ignore_errors=True)
    spark.stop()
    problems = sum(sum(s["problems"].values()) for s in summaries)
    skipped = len({s["path"] for s in summaries if s.get("skipped")})
    record_count = sum(s["records"]["captures"] + s["records"]["index_entries"] for s in summaries)
    record_bytes = sum(s.get("record_bytes", 0) for s in summaries)
    captures = sum(s["records"]["captures"] for s in summaries)
    print(f"sediment-spark {args.command}: inputs {len(inputs)}, tasks {len(tasks)}, "
          f"inputs_skipped {skipped}, captures {captures}, records {record_count}, "
          f"record_bytes {record_bytes}, ranges {len(written)}, sst_bytes {sst_bytes}, "
          f"problems {problems}; start-up {jvm_up - started:.2f} s (JVM and SparkContext "
          f"{context_up - started:.2f} s, Python workers {jvm_up - context_up:.2f} s), extract {extracted - jvm_up:.2f} s, "
          f"shuffle and write-sst {shuffled - extracted:.2f} s, ingest {ingested - shuffled:.2f} s, "
          f"total after start-up {ingested - jvm_up:.2f} s", file=sys.stderr)
    return 3 if problems else 0


def main():
    try:
        return run(sys.argv[1:])
    except UsageError as e:
        print(f"sediment-spark: {e}", file=sys.stderr)
        return USAGE_ERROR
    except ChildFailed as e:
        print(f"sediment-spark: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a task failed for good (Py4JJavaError carries its traceback)
        print(f"sediment-spark: the job failed: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
