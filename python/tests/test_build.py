"""The module is built with the dependency versions and settings the CLI is built and tested
with, so a shared CARGO_TARGET_DIR gives it the CLI's compiled dependencies."""

import re

from conftest import REPO, missing


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


def test_the_release_profile_is_the_roots():
    try:
        import tomllib
    except ImportError:
        missing("tomllib", "Python 3.11 or newer")

    def profile(path):
        with open(path, "rb") as f:
            return tomllib.load(f).get("profile")

    assert profile(REPO / "python" / "Cargo.toml") == profile(REPO / "Cargo.toml"), (
        "python/Cargo.toml's [profile] sections must be the root's: other settings make "
        "every dependency, RocksDB included, compile again for the module"
    )
