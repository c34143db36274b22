#!/bin/sh
# SPDX-License-Identifier: MIT
# The demo (`make demo`): the main job on the bundled example with the
# local brain. It describes the recording, generates QAs of all nine groups
# into demo.db (offline, deterministic: a rerun adds nothing), and prints
# the store's counts. Run from the repository root after `make`.
set -eu
PROXIMA=${PROXIMA:-./proxima}
EXAMPLE=${EXAMPLE:-examples/kitchen-10min}
DB=${DB:-demo.db}
PER_TASK=${PER_TASK:-60}

echo "== proxima inspect $EXAMPLE"
"$PROXIMA" inspect "$EXAMPLE"
echo
echo "== proxima generate $EXAMPLE --db $DB --per-task $PER_TASK (local brain)"
"$PROXIMA" generate "$EXAMPLE" --db "$DB" --per-task "$PER_TASK"
echo
echo "== proxima stats --db $DB"
"$PROXIMA" stats --db "$DB"
echo
echo "Next: review the QAs in a browser with"
echo "  $PROXIMA review serve --db $DB"
echo "or export them with"
echo "  $PROXIMA export --db $DB --status pending --format egoprox -o out/"
