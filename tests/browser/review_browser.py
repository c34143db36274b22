# SPDX-License-Identifier: MIT
# Drives the review page in headless Chromium through WebDriver: Debian's
# python3-selenium talking to Debian's chromedriver (chromium-driver), so
# it runs on Debian 12's own packages. It approves the first item with the
# keyboard, checks that names holding <script> show as text and run
# nothing, answers one item blind, rejects one with a typed reason, times
# approve-to-next on the bulk items, opens the statistics (with the report's
# charts) and the help.
#
# usage: /usr/bin/python3 review_browser.py URL [--video] [--advance N]
# With --video the fixture's rec_video holds a real 12 s clip, and the
# page must seek it to the clip start and stop at the clip end. With
# --advance N the first N bulk items (rec_zbulk) are approved with the
# keyboard and the page's own approve-to-next measures are printed.
# Prints "ok - NAME" / "not ok - NAME" lines, "approved=ID",
# "answered=ID:INDEX", "rejected=ID", "bulk_approved=N" and
# "timing: ..." lines for tests/cli/test_browser.sh, which then checks
# the database.
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import selenium
from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

Q_HEAD = 'a000000000000001'
Q_NAV = 'a000000000000002'
Q_GAZE = 'a000000000000003'
Q_CHAIN = 'a000000000000004'
Q_XSS = 'a000000000000005'
XSS = '<script>alert(1)</script>'
WAIT = 15

# Runs before any script of every page: records what must never happen
# (a dialog, a CSP violation, an uncaught error) where the test can read it.
WATCH = r"""
window.__proxima = { dialogs: [], csp: [], errors: [] };
['alert', 'confirm', 'prompt'].forEach(function (k) {
	window[k] = function (m) { window.__proxima.dialogs.push(k + ': ' + m); };
});
document.addEventListener('securitypolicyviolation', function (e) {
	window.__proxima.csp.push(e.violatedDirective + ' ' + e.blockedURI);
});
window.addEventListener('error', function (e) { window.__proxima.errors.push(String(e.message)); });
window.addEventListener('unhandledrejection', function (e) {
	window.__proxima.errors.push('unhandled rejection: ' + String(e.reason));
});
"""

failures = 0


def check(cond, name, detail=None):
    global failures
    if cond:
        print('ok - ' + name, flush=True)
    else:
        failures += 1
        print('not ok - ' + name + ('' if detail is None else ' (%s)' % (detail,)), flush=True)


def js(d, script, *args):
    return d.execute_script(script, *args)


def wait_for(d, script, *args, what='the page'):
    """Waits until the JavaScript expression script (with arguments) is true."""
    try:
        WebDriverWait(d, WAIT, poll_frequency=0.02).until(
            lambda drv: drv.execute_script('return !!(' + script + ');', *args))
        return True
    except TimeoutException:
        return False


def press(d, keys):
    ActionChains(d).send_keys(keys).perform()


def item_shown(d, qa_id, blind=None):
    cond = "!document.querySelector('#item-body').hidden && " \
           "document.querySelector('#item-body').dataset.id === arguments[0]" + \
           ('' if blind is None else " && document.querySelector('#item-body').dataset.blind === arguments[1]")
    return wait_for(d, cond, qa_id, '1' if blind else '0')


def go(d, qa_id):
    js(d, "location.hash = '#qa=' + arguments[0];", qa_id)


def text(d, sel):
    return js(d, "var e=document.querySelector(arguments[0]); return e ? e.textContent : null;", sel)


def versions(d):
    caps = d.capabilities
    chrome = caps.get('browserVersion', '?')
    drv = (caps.get('chrome') or {}).get('chromedriverVersion', '?').split(' ')[0]
    return chrome, drv


def run(d, url, video, advance):
    d.get(url)
    ok = wait_for(d, "document.body.dataset.ready === '1'")
    check(ok, 'the page loads its queue')
    first = js(d, "var li=document.querySelector('#queue-list li'); return li && li.dataset.id;")
    shown = js(d, "return document.querySelector('#item-body').dataset.id;")
    check(first and first == shown, 'the first queued item is shown', '%s vs %s' % (first, shown))

    # 1. approve it with the keyboard: the page moves on and the queue drops it
    press(d, 'a')
    ok = wait_for(d, "document.querySelector('#item-body').dataset.id !== arguments[0] && "
                  "!document.querySelector('#queue-list li[data-id=\"' + arguments[0] + '\"]')", first)
    check(ok, 'a approves and moves to the next item')
    print('approved=' + str(first), flush=True)

    # 2. names with <script> are text, and nothing runs
    go(d, Q_XSS)
    check(item_shown(d, Q_XSS), 'the hostile item opens')
    q = text(d, '#question')
    check(q == 'Where is the ' + XSS + ' next?', 'the question shows <script> as text', q)
    where = text(d, '#item-where') or ''
    check(('target ' + XSS) in where, 'the target name shows as text', where)
    opt_b = text(d, '#options li[data-index="1"] .text')
    check(opt_b == '<img src=x onerror=alert(2)>', 'an option with markup shows as text', opt_b)
    labels = js(d, "return Array.from(document.querySelectorAll('#bev-svg text')).map(function(t){return t.textContent;});")
    check(XSS in labels, "the bird's-eye label shows the name as text", '|'.join(labels))
    press(d, 't')
    check(wait_for(d, "document.querySelector('#trace').open"), 't opens the trace')
    trace = text(d, '#trace-body') or ''
    check('<script>alert(3)</script>' in trace, 'the trace shows <script> as text')
    injected = js(d, "return document.querySelectorAll('#item-body script, #item-body img, #item-body iframe, "
                     "#queue-list script, #queue-list img').length;")
    check(injected == 0, 'no element was made from stored strings', injected)
    li = text(d, '#queue-list li[data-id="%s"] .q' % Q_XSS) or ''
    check(XSS in li, 'the queue shows the question as text', li)

    # 2b. bird's-eye labels: none overlaps another (boxes measured by the browser)
    overlap_js = """
        var t = Array.from(document.querySelectorAll('#bev-svg text.bev-label, #bev-svg text.bev-leg-label,'
            + ' #bev-svg text.bev-chain-letter')).map(function (e) { return e.getBBox(); });
        var m = Array.from(document.querySelectorAll('#bev-svg circle, #bev-svg path.bev-target,'
            + ' #bev-svg rect.bev-ref')).map(function (e) { return e.getBBox(); });
        function hit(a, b) {
            return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
        }
        var segs = [];
        document.querySelectorAll('#bev-svg line.bev-leg, #bev-svg line.bev-chain-edge,'
            + ' #bev-svg line.bev-gaze, #bev-svg line.bev-heading').forEach(function (l) {
            segs.push(['x1', 'y1', 'x2', 'y2'].map(function (k) { return +l.getAttribute(k); }));
        });
        document.querySelectorAll('#bev-svg polyline.bev-path').forEach(function (pl) {
            var p = pl.getAttribute('points').trim().split(/\s+/).map(function (xy) { return xy.split(',').map(Number); });
            for (var k = 0; k + 1 < p.length; k++)
                segs.push([p[k][0], p[k][1], p[k + 1][0], p[k + 1][1]]);
        });
        /* Liang-Barsky: does segment s cross box b (shrunk by 1 px)? */
        function cuts(sg, b) {
            var x0 = b.x + 1, y0 = b.y + 1, x1 = b.x + b.width - 1, y1 = b.y + b.height - 1;
            var dx = sg[2] - sg[0], dy = sg[3] - sg[1], t0 = 0, t1 = 1;
            var ps = [-dx, dx, -dy, dy], qs = [sg[0] - x0, x1 - sg[0], sg[1] - y0, y1 - sg[1]];
            for (var k = 0; k < 4; k++) {
                if (ps[k] === 0) { if (qs[k] < 0) return false; continue; }
                var r = qs[k] / ps[k];
                if (ps[k] < 0) t0 = Math.max(t0, r); else t1 = Math.min(t1, r);
                if (t0 > t1) return false;
            }
            return true;
        }
        var bad = 0, i, j;
        for (i = 0; i < t.length; i++) {
            for (j = i + 1; j < t.length; j++)
                if (hit(t[i], t[j]))
                    bad++;
            for (j = 0; j < m.length; j++)
                if (hit(t[i], m[j]))
                    bad++;
            for (j = 0; j < segs.length; j++)
                if (cuts(segs[j], t[i]))
                    bad++;
        }
        return [t.length, bad];"""
    for qa_id, want in ((Q_NAV, 3), (Q_CHAIN, 2)):
        go(d, qa_id)
        item_shown(d, qa_id)
        n, bad = js(d, overlap_js)
        check(n == want and bad == 0, "bird's-eye labels of %s overlap no label, mark or line" % qa_id,
              '%d labels, %d overlaps' % (n, bad))

    # 3. blind mode: no key until the answer; the answer is stored, then the key shows
    press(d, 'b')
    check(wait_for(d, "document.querySelector('#blind-state').classList.contains('on')"), 'b turns blind mode on')
    check(item_shown(d, Q_CHAIN, True), 'blind: the item reloads without its key')
    go(d, Q_HEAD)
    check(item_shown(d, Q_HEAD, True), 'blind: the next item opens blind')
    check(js(d, "return document.querySelector('#options li.key') === null;"), 'blind: the key is hidden')
    check(js(d, "return document.querySelector('#bev-svg svg') === null;"), "blind: the bird's-eye view is hidden")
    press(d, '3')
    check(wait_for(d, "document.querySelector('#options li.key')"), 'blind: the key appears after the answer')
    item_shown(d, Q_HEAD, False)
    key = js(d, "var e=document.querySelector('#options li.key'); return e && e.dataset.index;")
    picked = js(d, "var e=document.querySelector('#options li.picked'); return e && e.dataset.index;")
    check(key == '1', 'blind: after the answer the key (B) is shown', key)
    check(picked == '2', 'blind: the pick (C) is marked', picked)
    print('answered=%s:2' % Q_HEAD, flush=True)
    press(d, 'b')
    check(wait_for(d, "!document.querySelector('#blind-state').classList.contains('on')"), 'b turns blind mode off')

    # 4. reject with a typed reason
    go(d, Q_GAZE)
    check(item_shown(d, Q_GAZE, False), 'the gaze item opens')
    press(d, 'r')
    check(wait_for(d, "!document.querySelector('#dialog').hidden"), 'r asks a reason')
    press(d, 'the kettle is hidden')
    ActionChains(d).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()
    ok = wait_for(d, "document.querySelector('#dialog').hidden && "
                  "document.querySelector('#item-body').dataset.id !== arguments[0]", Q_GAZE)
    check(ok, 'Ctrl+Enter rejects with the reason and moves on')
    print('rejected=' + Q_GAZE, flush=True)

    # 5. a real video: seeks to the clip start (1 s) and stops at its end (9 s)
    if video:
        go(d, Q_HEAD)
        item_shown(d, Q_HEAD, False)
        ok = wait_for(d, "(function(){var v=document.querySelector('#clip-media video');"
                      "return v && v.readyState >= 1 && !v.seeking && Math.abs(v.currentTime - 1) < 0.05;})()")
        check(ok, 'video: seeks to the clip start')
        js(d, "var v=document.querySelector('#clip-media video'); v.currentTime = 8.6; v.play();")
        ok = wait_for(d, "(function(){var v=document.querySelector('#clip-media video');"
                      "return v.paused && Math.abs(v.currentTime - 9) < 0.05;})()")
        check(ok, 'video: stops at the clip end')
        # the frames the model sees, decoded by the server from the same clip
        # (160 px wide: the 160x120 video is never upscaled), T marked once
        ok = wait_for(d, "(function(){var im=document.querySelectorAll('#frames-strip img');"
                      "return im.length > 0 && Array.prototype.every.call(im, function(i){"
                      "return i.complete && i.naturalWidth === 160 && i.naturalHeight === 120;});})()")
        n = js(d, "return document.querySelectorAll('#frames-strip img').length;")
        check(ok, 'frames: the strip shows the clip\'s frames, decoded', '%s images' % n)
        marked = js(d, "return document.querySelectorAll('#frames-strip figure.at-t').length;")
        check(marked == 1, 'frames: T is marked once', str(marked))

    # 6. approve-to-next, timed by the page itself (performance.measure)
    if advance > 0:
        js(d, "document.querySelector('#f-recording').value = 'rec_zbulk';"
              "document.querySelector('#f-recording').dispatchEvent(new Event('change'));")
        ok = wait_for(d, "(function(){var b=document.querySelector('#item-body');"
                      "return b.dataset.id && b.dataset.id.charAt(0) === 'c';})()")
        check(ok, 'the recording filter opens the bulk items')
        js(d, "performance.clearMeasures('proxima:approve-to-next');")
        done = 0
        for _ in range(advance):
            cur = js(d, "return document.querySelector('#item-body').dataset.id;")
            press(d, 'a')
            if not wait_for(d, "document.querySelector('#item-body').dataset.id !== arguments[0] && "
                            "document.body.dataset.busy !== '1'", cur):
                break
            done += 1
        check(done == advance, 'a approves %d bulk items in a row' % advance, done)
        print('bulk_approved=%d' % done, flush=True)
        ms = js(d, "return performance.getEntriesByName('proxima:approve-to-next').map(function(e){return e.duration;});")
        total = js(d, "return document.querySelector('#counts').dataset.total;")
        if ms:
            ms_sorted = sorted(ms)
            print('timing: approve-to-next at %s QAs: median %.1f ms, max %.1f ms over %d approvals (page measure)'
                  % (total, statistics.median(ms_sorted), ms_sorted[-1], len(ms_sorted)), flush=True)
        check(len(ms) == done, 'the page measured every approve-to-next', len(ms))

    # 7. the statistics view
    press(d, 's')
    check(wait_for(d, "document.querySelector('#stats-body table')"), 's opens the statistics')
    stats = text(d, '#stats-body') or ''
    check(re.search('kappa', stats, re.I) and 'browser' in stats and 'alice' in stats,
          'the statistics list the reviewers and the kappa section')
    # the report's charts, as images of the engine's SVG (GET /api/report)
    ok = wait_for(d, "document.querySelector('#stats-charts').dataset.ready === '1'")
    check(ok, 'the statistics load the report charts')
    charts = js(d, "return Array.prototype.map.call(document.querySelectorAll('#stats-charts img.plot'),"
                   " function (i) { return [i.dataset.plot, i.complete && i.naturalWidth > 0]; });") or []
    names = [c[0] for c in charts]
    check('all.status' in names and 'all.recordings' in names and len(charts) >= 10,
          'the charts include the status and recording charts of all groups', names[:6])
    ok = wait_for(d, "Array.prototype.every.call(document.querySelectorAll('#stats-charts img.plot'),"
                     " function (i) { return i.complete && i.naturalWidth > 0; })")
    check(ok, 'every chart image decodes (%d)' % len(charts))
    press(d, 's')
    check(wait_for(d, "!document.querySelector('#review-view').hidden"), 's goes back to the queue')

    # 8. help opens with ? and closes with Esc
    press(d, '?')
    opened = wait_for(d, "!document.querySelector('#help').hidden")
    press(d, Keys.ESCAPE)
    check(opened and wait_for(d, "document.querySelector('#help').hidden"), '? opens the help and Esc closes it')

    seen = js(d, "return window.__proxima;") or {}
    check(not seen.get('dialogs'), 'no alert or other dialog was raised', '; '.join(seen.get('dialogs') or []))
    check(not seen.get('csp'), 'no Content-Security-Policy violation', '; '.join(seen.get('csp') or []))
    check(not seen.get('errors'), 'no uncaught page error', '; '.join(seen.get('errors') or []))
    severe = [e.get('message', '') for e in d.get_log('browser') if e.get('level') == 'SEVERE']
    check(not severe, 'the browser console holds no error', '; '.join(severe)[:400])


def main():
    args = sys.argv[1:]
    if not args:
        print('usage: review_browser.py URL [--video] [--advance N]', file=sys.stderr)
        return 2
    url = args[0]
    video = '--video' in args
    advance = int(args[args.index('--advance') + 1]) if '--advance' in args else 0
    chromium = os.environ.get('CHROMIUM', '/usr/bin/chromium')
    chromedriver = os.environ.get('CHROMEDRIVER', '/usr/bin/chromedriver')
    profile = tempfile.mkdtemp(prefix='proxima-chromium-')
    d = None
    try:
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--disable-dev-shm-usage', '--window-size=1400,1000', '--user-data-dir=' + profile):
            opts.add_argument(a)
        opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        d = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
        d.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': WATCH})
        chrome, drv = versions(d)
        print('browser: Chromium %s, ChromeDriver %s, selenium %s, Python %s'
              % (chrome, drv, selenium.__version__, sys.version.split()[0]), flush=True)
        run(d, url, video, advance)
    except WebDriverException as e:
        check(False, 'the browser run finished', str(e.msg if hasattr(e, 'msg') else e).split('\n')[0])
    except Exception as e:  # noqa: BLE001 - any failure is a test failure, with its reason
        check(False, 'the browser run finished', repr(e).split('\n')[0])
    finally:
        if d is not None:
            try:
                d.quit()
            except WebDriverException:
                pass
        shutil.rmtree(profile, ignore_errors=True)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
