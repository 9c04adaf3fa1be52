# Sourced by the scripts: one cargo target directory shared by every build and by CI,
# because RocksDB's C++ takes a long time to compile on small machines.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/sediment-target}"
SEDIMENT_BIN="$CARGO_TARGET_DIR/release/sediment"
export SEDIMENT_BIN
