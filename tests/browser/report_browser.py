# SPDX-License-Identifier: MIT
# Opens the page of `proxima report` (DIR/index.html, from the file system)
# in headless Chromium through WebDriver (Debian's python3-selenium and
# chromium-driver, as review_browser.py does) and checks that it renders
# with no console error, no dialog and no script: every chart is drawn
# with a size, each mark sits inside its chart, and a hostile name shows
# as text.
#
# usage: /usr/bin/python3 report_browser.py DIR/index.html CHARTS [TEXT]
# CHARTS is the number of charts report.json lists; TEXT (optional) must
# appear on the page as text. Prints "ok - NAME" / "not ok - NAME" lines
# for tests/cli/test_browser.sh.
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service

# Runs before the page: records what must never happen.
WATCH = r"""
window.__proxima = { dialogs: [], errors: [] };
['alert', 'confirm', 'prompt'].forEach(function (k) {
	window[k] = function (m) { window.__proxima.dialogs.push(k + ': ' + m); };
});
window.addEventListener('error', function (e) { window.__proxima.errors.push(String(e.message)); }, true);
"""

failures = 0


def check(cond, name, detail=None):
    global failures
    if cond:
        print('ok - ' + name, flush=True)
    else:
        failures += 1
        print('not ok - ' + name + ('' if detail is None else ' (%s)' % (detail,)), flush=True)


def run(d, path, charts, text):
    d.get('file://' + os.path.abspath(path))
    js = d.execute_script
    check(js("return document.readyState") == 'complete', 'the report page loads')
    n = js("return document.querySelectorAll('svg.proxima-plot').length;")
    check(n == charts, 'the page draws every chart (%d)' % charts, n)
    sized = js("return Array.prototype.filter.call(document.querySelectorAll('svg.proxima-plot'),"
               " function (s) { var r = s.getBoundingClientRect(); return r.width > 100 && r.height > 50; }).length;")
    check(sized == charts, 'every chart is laid out with a size', sized)
    # each mark inside its chart's box (a bar may be empty, never outside)
    outside = js("""
        var bad = [];
        document.querySelectorAll('svg.proxima-plot').forEach(function (s) {
            var b = s.getBoundingClientRect();
            s.querySelectorAll('.mark').forEach(function (m) {
                var r = m.getBoundingClientRect();
                if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
                    bad.push(s.dataset.plot + ':' + m.dataset.key);
            });
        });
        return bad;""")
    check(not outside, 'every mark is drawn inside its chart', outside[:5])
    marks = js("return document.querySelectorAll('svg.proxima-plot .mark').length;")
    check(marks > charts, 'the charts hold their marks (%d)' % marks)
    check(js("return document.scripts.length;") == 0, 'the page has no script element')
    if text:
        body = js("return document.body.textContent;")
        check(text in body, 'the hostile name shows as text')
    seen = js("return window.__proxima;") or {}
    check(not seen.get('dialogs'), 'no alert or other dialog was raised', seen.get('dialogs'))
    check(not seen.get('errors'), 'no page error', seen.get('errors'))
    severe = [e.get('message', '') for e in d.get_log('browser') if e.get('level') == 'SEVERE']
    check(not severe, 'the browser console holds no error', '; '.join(severe)[:400])


def main():
    if len(sys.argv) < 3:
        print('usage: report_browser.py DIR/index.html CHARTS [TEXT]', file=sys.stderr)
        return 2
    path, charts = sys.argv[1], int(sys.argv[2])
    text = sys.argv[3] if len(sys.argv) > 3 else None
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
        run(d, path, charts, text)
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
