"""The module is built with the dependency versions the CLI is tested with."""

import re

from conftest import REPO


def locked(path):
    text = path.read_text()
    return set(re.findall(r'^name = "([^"]+)"\nversion = "([^"]+)"', text, re.M))


def test_the_lock_file_is_the_roots_plus_pyo3():
    root = locked(REPO / "Cargo.lock")
    python = locked(REPO / "python" / "Cargo.lock")
    missing = sorted(f"{name} {version}" for name, version in root - python)
    assert not missing, (
        "python/Cargo.lock lacks versions that Cargo.lock has: the bindings would be built "
        "with other dependency versions than the tested CLI, and RocksDB compiled again. "
        "Refresh it: cp Cargo.lock python/Cargo.lock && cargo metadata --manifest-path "
        f"python/Cargo.toml >/dev/null. Missing: {missing}"
    )
