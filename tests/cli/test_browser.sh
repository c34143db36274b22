#!/bin/sh
# SPDX-License-Identifier: MIT
# The review page in a real browser: headless Chromium, driven through
# WebDriver by Debian's python3-selenium and chromedriver (all Debian 12
# packages, no npm), approves an item with the keyboard, answers one blind,
# rejects one with a reason, checks hostile names stay text, and times
# approve-to-next over a store of 100,000 QAs; then the database is checked
# with sqlite3. Then the page of `proxima report` is opened from the file
# system and must render with no console error (report_browser.py). Skipped, with the reason, only when the packages cannot be
# installed at all; a version mismatch that can be installed is a failure.
. tests/cli/lib.sh

BROWSER_DIR=tests/browser
: "${PROXIMA_BUILD:=$(pwd)/build}"
: "${BROWSER_BULK:=100000}"
FIXTURE_BIN="$PROXIMA_BUILD/tests/test_review"
PY=/usr/bin/python3

if ! sh scripts/setup.sh chromium chromium-driver python3-selenium >"$TMP/setup.log" 2>&1; then
	echo "# skip: chromium, chromium-driver and python3-selenium cannot be installed here,"
	echo "# so the browser test does not run:"
	sed 's/^/#   /' "$TMP/setup.log"
	done_testing
	exit 0
fi
for f in /usr/bin/chromium /usr/bin/chromedriver "$PY"; do
	if [ -x "$f" ]; then ok "$f is installed"; else not_ok "$f is installed"; fi
done
chromium_v=$(/usr/bin/chromium --version 2>/dev/null | sed -n 's/^Chromium \([0-9.]*\).*/\1/p')
driver_v=$(/usr/bin/chromedriver --version 2>/dev/null | sed -n 's/^ChromeDriver \([0-9.]*\).*/\1/p')
selenium_v=$("$PY" -c 'import selenium; print(selenium.__version__)' 2>/dev/null)
echo "# versions: Chromium ${chromium_v:-?}, ChromeDriver ${driver_v:-?}, python3-selenium ${selenium_v:-?}, $("$PY" --version 2>&1); no Node.js"
# chromedriver drives only the Chromium of its own major version
if [ -n "$chromium_v" ] && [ "${chromium_v%%.*}" = "${driver_v%%.*}" ]; then
	ok "chromedriver $driver_v matches chromium $chromium_v"
else
	not_ok "chromedriver '$driver_v' matches chromium '$chromium_v' (install both from the same Debian release)"
fi
# python3-selenium 4 speaks W3C WebDriver (Debian 12 ships 4.8.3)
case "$selenium_v" in
[4-9].*) ok "python3-selenium $selenium_v is 4 or later" ;;
*) not_ok "python3-selenium '$selenium_v' is 4 or later" ;;
esac

# a store made with the store functions (test_review --fixture), with bulk
# QAs in rec_zbulk so that approve-to-next is timed at scale
mkdir -p "$TMP/fx"
expect_status 0 "the fixture store is built ($BROWSER_BULK bulk QAs)" "$FIXTURE_BIN" --fixture "$TMP/fx" "$BROWSER_BULK"
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

serve_start "$TMP/serve.log" --db "$DB" --port 0 --reviewer browser
expect_match '^http://127\.0\.0\.1:[0-9]+/$' "$url" "serve prints its URL"

ADVANCE=20
"$PY" "$BROWSER_DIR/review_browser.py" "$url" $video_arg --advance $ADVANCE >"$TMP/browser.log" 2>&1
lines=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "browser: ${line#ok - }"; lines=$((lines + 1)) ;;
	"not ok - "*) not_ok "browser: ${line#not ok - }"; lines=$((lines + 1)) ;;
	"browser: "* | "timing: "*) echo "# $line" ;;
	esac
done <"$TMP/browser.log"
[ "$lines" -gt 0 ] || { not_ok "the browser script ran"; sed 's/^/# /' "$TMP/browser.log" | tail -n 20; }
approved=$(sed -n 's/^approved=//p' "$TMP/browser.log")
answered=$(sed -n 's/^answered=//p' "$TMP/browser.log")
rejected=$(sed -n 's/^rejected=//p' "$TMP/browser.log")
bulk=$(sed -n 's/^bulk_approved=//p' "$TMP/browser.log")

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
expect_match "^$ADVANCE\$" "$bulk" "the page approved $ADVANCE bulk items"
# the bulk items are approved in review order: c000000000000000, ..01, ...
first_bulk=$(q "SELECT group_concat(id) FROM (SELECT id FROM qa WHERE recording_id = 'rec_zbulk' ORDER BY t_ns, id LIMIT $ADVANCE)")
expect_match "^$ADVANCE\|$ADVANCE\|$first_bulk\$" \
	"$(q "SELECT count(*), sum(q.status = 'approved'), group_concat(q.id) FROM (SELECT * FROM reviews ORDER BY id) r JOIN qa q ON q.id = r.qa_id WHERE q.recording_id = 'rec_zbulk'")" \
	"db: the $ADVANCE bulk approvals are the first $ADVANCE bulk items, in order, each approved once"
expect_match "^$((5 + ADVANCE))\$" "$(q "SELECT count(*) FROM reviews")" \
	"db: $((3 + ADVANCE)) reviews from the page besides the fixture's 2"

# the page of `proxima report`, opened from the file system, over a generated
# store with one object renamed to markup
XSS='<script>alert(1)</script>'
if "$PROXIMA" synth --scene kitchen --minutes 2 --seed 5 --no-video -o "$TMP/rrec" >/dev/null 2>&1 &&
	"$PROXIMA" generate "$TMP/rrec" --db "$TMP/rq.db" --per-task 6 --quiet --no-audit >/dev/null 2>&1; then
	ok "a small store for the report page"
else
	not_ok "a small store for the report page"
fi
sqlite3 "$TMP/rq.db" "UPDATE qa SET answer_json = json_set(answer_json, '\$.object', '$XSS') WHERE id = (SELECT id FROM qa WHERE subtask = 'gaze_target' ORDER BY id LIMIT 1)"
expect_status 0 "report of the small store" "$PROXIMA" report --db "$TMP/rq.db" -o "$TMP/rep"
charts=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["plots"]))' "$TMP/rep/report.json")
"$PY" "$BROWSER_DIR/report_browser.py" "$TMP/rep/index.html" "$charts" "$XSS" >"$TMP/rbrowser.log" 2>&1
lines=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "report page: ${line#ok - }"; lines=$((lines + 1)) ;;
	"not ok - "*) not_ok "report page: ${line#not ok - }"; lines=$((lines + 1)) ;;
	esac
done <"$TMP/rbrowser.log"
[ "$lines" -gt 0 ] || { not_ok "the report page script ran"; sed 's/^/# /' "$TMP/rbrowser.log" | tail -n 20; }

done_testing
