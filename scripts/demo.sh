#!/bin/sh
# SPDX-License-Identifier: MIT
# The demo (`make demo`): writes a fresh synthetic recording into a
# temporary folder and describes it, then describes the bundled example.
# Run from the repository root after `make`.
set -eu
PROXIMA=${PROXIMA:-./proxima}
EXAMPLE=${EXAMPLE:-examples/kitchen-10min}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "== proxima synth --scene office --minutes 1 --seed 1"
"$PROXIMA" synth --scene office --minutes 1 --seed 1 -o "$tmp/office"
"$PROXIMA" inspect "$tmp/office"
echo
echo "== proxima inspect $EXAMPLE"
"$PROXIMA" inspect "$EXAMPLE"
