"""Shared by the Python binding tests: the `sediment` binary, a store it builds from the
repository's fixture crawls, and strict mode (as in tests/common/prerequisites.rs: under
CI=true or SEDIMENT_STRICT=1 a test that lacks what it needs fails instead of skipping)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def strict():
    def on(name):
        v = "".join(os.environ.get(name, "").split()).lower()
        return v not in ("", "0", "false")

    return on("SEDIMENT_STRICT") or on("CI")


def missing(what, install):
    """Fails in strict mode, skips otherwise."""
    message = f"{what} is missing ({install})"
    if strict():
        pytest.fail(f"{message}; strict mode (CI=true or SEDIMENT_STRICT=1) does not let a test pass without it")
    pytest.skip(message)


@pytest.fixture(scope="session")
def binary():
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.expanduser("~/.cache/sediment-target")
    path = Path(os.environ.get("SEDIMENT_BIN") or Path(target) / "release" / "sediment")
    if not path.is_file():
        missing(f"the sediment binary ({path})", "cargo build --release, or set SEDIMENT_BIN")
    return path


class Cli:
    """The `sediment` command on one store."""

    def __init__(self, binary, store):
        self.binary = binary
        self.store = store

    def run(self, *args):
        return subprocess.run(
            [str(self.binary), "--store", str(self.store), *args],
            capture_output=True,
            text=True,
        )

    def ok(self, *args):
        run = self.run(*args)
        assert run.returncode == 0, f"sediment {args} failed: {run.stderr}"
        return run.stdout

    def json_lines(self, *args):
        return [json.loads(line) for line in self.ok(*args).splitlines() if line]

    def error(self, *args):
        """The message of a failing command: its `sediment: error: …` line."""
        run = self.run(*args)
        assert run.returncode != 0, f"sediment {args} should have failed"
        first = run.stderr.splitlines()[0]
        assert first.startswith("sediment: error: "), run.stderr
        return first[len("sediment: error: "):]


@pytest.fixture(scope="session")
def crawl_store(binary, tmp_path_factory):
    """Both fixture crawls imported by `sediment import-warc`: rows, captures, revisits."""
    store = tmp_path_factory.mktemp("crawls") / "store"
    cli = Cli(binary, store)
    cli.ok(
        "import-warc",
        str(FIXTURES / "crawl" / "crawl1.warc.gz"),
        str(FIXTURES / "crawl" / "crawl2.warc.gz"),
    )
    return cli


@pytest.fixture(scope="session")
def sediment():
    try:
        import sediment
    except ImportError as e:
        missing(f"the sediment Python module ({e})", "pip install ./python")
    return sediment
