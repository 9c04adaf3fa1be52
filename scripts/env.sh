# Sourced by the scripts: one cargo target directory shared by every build and by CI,
# because RocksDB's C++ takes a long time to compile on small machines.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sediment-target}"
SEDIMENT_BIN="$CARGO_TARGET_DIR/release/sediment"
export SEDIMENT_BIN
# The project's Python virtual environment (scripts/setup.sh makes it) first on PATH:
# `python3`, `pip`, `wayback`, `cdxj-indexer` and `spark-submit` in the tests and scripts
# are its own, whatever interpreter the system has.
export SEDIMENT_VENV="${SEDIMENT_VENV:-$HOME/.cache/sediment-venv}"
case ":$PATH:" in
  *":$SEDIMENT_VENV/bin:"*) ;;
  *) PATH="$SEDIMENT_VENV/bin:$PATH" ;;
esac
export PATH
export VIRTUAL_ENV="$SEDIMENT_VENV"
# Spark's Python workers run the venv's interpreter, which has pyspark.
export PYSPARK_PYTHON="$SEDIMENT_VENV/bin/python3"
export PYSPARK_DRIVER_PYTHON="$SEDIMENT_VENV/bin/python3"
