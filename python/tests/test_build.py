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
    root_names = {name for name, _ in root}
    # The bindings build the library without its optional features (the Bigtable backend,
    # Parquet, the server), so their lock holds a subset of the root's packages: each at
    # the root's version, and besides them only pyo3's own packages.
    other_versions = sorted(f"{n} {v}" for n, v in python - root if n in root_names)
    extra = sorted(f"{n} {v}" for n, v in python - root if n not in root_names)
    pyo3_own = {"pyo3", "pyo3-build-config", "pyo3-ffi", "pyo3-macros", "pyo3-macros-backend",
                "target-lexicon", "sediment-python"}
    refresh = ("Refresh it: cp Cargo.lock python/Cargo.lock && cargo metadata --manifest-path "
               "python/Cargo.toml >/dev/null.")
    assert not other_versions, (
        "python/Cargo.lock has other versions than Cargo.lock: the bindings would be built "
        "with other dependency versions than the tested CLI, and RocksDB compiled again. "
        f"{refresh} Differing: {other_versions}"
    )
    assert all(entry.split()[0] in pyo3_own for entry in extra), (
        f"python/Cargo.lock has packages the root's has not, beyond pyo3's: {extra}. {refresh}"
    )
    assert ("librocksdb-sys", next(v for n, v in root if n == "librocksdb-sys")) in python


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
