#!/usr/bin/env bash
# Builds a Bigtable emulator from Debian's packaged Go client (golang-google-cloud-dev
# ships cloud.google.com/go/bigtable/bttest, the in-memory server the official
# `cbtemulator` wraps), for machines without Google's Cloud SDK packages.
#
# Usage: scripts/build-bigtable-emulator.sh [OUT]    (default /usr/local/bin/cbtemulator)
# The binary takes -host and -port like cbtemulator and prints
# "Cloud Bigtable emulator running on HOST:PORT" when it listens.
set -euo pipefail
out="${1:-/usr/local/bin/cbtemulator}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
if ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/cloud.google.com/go/bigtable/bttest ]; then
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq golang-go golang-google-cloud-dev >/dev/null
fi
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
mkdir -p "$src/src/cbtemulator"
cat > "$src/src/cbtemulator/main.go" <<'GO'
package main

import (
	"flag"
	"fmt"
	"log"

	"cloud.google.com/go/bigtable/bttest"
)

func main() {
	host := flag.String("host", "localhost", "the address to bind to")
	port := flag.Int("port", 9000, "the port to bind to (0: any free port)")
	flag.Parse()
	srv, err := bttest.NewServer(fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		log.Fatalf("failed to start the emulator: %v", err)
	}
	fmt.Printf("Cloud Bigtable emulator running on %s\n", srv.Addr)
	select {}
}
GO
GOPATH="$src:/usr/share/gocode" GO111MODULE=off GOFLAGS=-mod=mod go build -o "$out" cbtemulator
echo "built $out"
