#!/bin/sh
# SPDX-License-Identifier: MIT
# The review page in a real browser: headless Chromium (Debian chromium,
# driven by playwright-core from npm) approves an item with the keyboard,
# answers one blind and rejects one; then the database is checked with
# sqlite3. Skipped, with a message, only when Chromium cannot be installed.
. tests/cli/lib.sh

BROWSER_DIR=tests/browser
: "${PROXIMA_BUILD:=$(pwd)/build}"
FIXTURE_BIN="$PROXIMA_BUILD/tests/test_review"

# playwright drives /usr/bin/chromium itself; chromium-driver comes along for WebDriver users
sh scripts/setup.sh chromium chromium-driver >"$TMP/setup.log" 2>&1
if [ ! -x /usr/bin/chromium ]; then
	echo "# skip: Chromium cannot be installed here, so the browser test does not run:"
	sed 's/^/#   /' "$TMP/setup.log"
	done_testing
	exit 0
fi
ok "chromium is installed"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	sh scripts/setup.sh nodejs npm >"$TMP/setup-node.log" 2>&1
fi
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	ok "node and npm are installed"
else
	not_ok "node and npm are installed"
	done_testing
	exit 0
fi

# playwright-core into tests/browser/node_modules (gitignored), from the lock file
want=$(sed -n 's/.*"playwright-core": "\([0-9.]*\)".*/\1/p' "$BROWSER_DIR/package.json" | head -n 1)
have=$(cd "$BROWSER_DIR" && node -p "require('playwright-core/package.json').version" 2>/dev/null)
if [ "$have" != "$want" ]; then
	(cd "$BROWSER_DIR" && { npm ci --no-audit --no-fund --loglevel=error ||
		npm install --no-audit --no-fund --loglevel=error; }) >"$TMP/npm.log" 2>&1
	have=$(cd "$BROWSER_DIR" && node -p "require('playwright-core/package.json').version" 2>/dev/null)
fi
if [ "$have" = "$want" ]; then ok "playwright-core $want is installed"; else
	not_ok "playwright-core $want is installed (have '$have')"; sed 's/^/# /' "$TMP/npm.log" | tail -n 10
	done_testing
	exit 0
fi

# a store made with the store functions (test_review --fixture)
mkdir -p "$TMP/fx"
expect_status 0 "the fixture store is built" "$FIXTURE_BIN" --fixture "$TMP/fx" 5
DB="$TMP/fx/r.db"
# a real clip when ffmpeg is there (scripts/setup.sh installs it): rec_video's
# device clock starts the video at 1 s, and item 1's clip is [2 s, 10 s]
video_arg=""
if command -v ffmpeg >/dev/null 2>&1 &&
	ffmpeg -loglevel error -y -f lavfi -i testsrc=size=160x120:rate=10 -t 12 -c:v libvpx -b:v 200k \
		"$TMP/fx/rec_video/clip.webm" >/dev/null 2>&1; then
	sed 's/"video\.mp4"/"clip.webm"/' "$TMP/fx/rec_video/recording.json" >"$TMP/rj" &&
		mv "$TMP/rj" "$TMP/fx/rec_video/recording.json" && video_arg=--video
else
	echo "# no ffmpeg: the video seeking checks do not run"
fi

"$PROXIMA" review serve --db "$DB" --port 0 --reviewer browser >"$TMP/serve.log" 2>&1 &
srv=$!
url=""
i=0
while [ $i -lt 100 ] && [ -z "$url" ]; do
	url=$(grep -o 'http://[0-9.:]*/' "$TMP/serve.log" | head -n 1)
	[ -n "$url" ] || sleep 0.1
	i=$((i + 1))
done
expect_match '^http://127\.0\.0\.1:[0-9]+/$' "$url" "serve prints its URL"

(cd "$BROWSER_DIR" && node review_browser.js "$url" $video_arg) >"$TMP/browser.log" 2>&1
lines=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "browser: ${line#ok - }"; lines=$((lines + 1)) ;;
	"not ok - "*) not_ok "browser: ${line#not ok - }"; lines=$((lines + 1)) ;;
	esac
done <"$TMP/browser.log"
[ "$lines" -gt 0 ] || { not_ok "the browser script ran"; sed 's/^/# /' "$TMP/browser.log" | tail -n 20; }
approved=$(sed -n 's/^approved=//p' "$TMP/browser.log")
answered=$(sed -n 's/^answered=//p' "$TMP/browser.log")
rejected=$(sed -n 's/^rejected=//p' "$TMP/browser.log")

kill -TERM "$srv" 2>/dev/null
wait "$srv"
rc=$?
if [ "$rc" -eq 0 ]; then ok "serve stops cleanly on SIGTERM"; else not_ok "serve stops cleanly on SIGTERM (exit $rc)"; fi

# the database, read independently of the program
q() { sqlite3 -batch -noheader "$DB" "$1"; }
expect_match '^a000000000000006$' "$approved" "the first pending item was the one approved"
expect_match '^approved$' "$(q "SELECT status FROM qa WHERE id = '$approved'")" "db: the item is approved"
expect_match '^approve\|browser\|[0-9TZ:.-]+$' \
	"$(q "SELECT decision, reviewer, started_at FROM reviews WHERE qa_id = '$approved'")" \
	"db: one approve review by the page's reviewer, with the time the item was shown"
expect_match '^a000000000000001:2$' "$answered" "the page answered item 1 with C"
expect_match '^answer\|2\|browser$' \
	"$(q "SELECT decision, blind_answer_index, reviewer FROM reviews WHERE qa_id = 'a000000000000001'")" \
	"db: the blind answer is stored (index 2) and nothing else on that item"
expect_match '^pending$' "$(q "SELECT status FROM qa WHERE id = 'a000000000000001'")" \
	"db: a blind answer leaves the status alone"
expect_match '^rejected\|reject\|the kettle is hidden$' \
	"$(q "SELECT q.status, r.decision, r.reason FROM qa q JOIN reviews r ON r.qa_id = q.id WHERE q.id = '$rejected'")" \
	"db: the typed reason is stored with the rejection"
expect_match '^0$' "$(q "SELECT count(*) FROM reviews WHERE qa_id = 'a000000000000005'")" \
	"db: looking at an item writes nothing"
expect_match '^5$' "$(q "SELECT count(*) FROM reviews")" \
	"db: 3 reviews from the page besides the fixture's 2"

done_testing
