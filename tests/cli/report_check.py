# SPDX-License-Identifier: MIT
# Checks a `proxima report` folder against the store it was made from,
# counting everything again here from the qa, drops and reviews tables
# (sqlite3), never from the program's own JSON: every chart's SVG file
# parses as XML and has one mark (class "mark") per value; the marks of
# the counted charts equal the counts made here; the audit charts equal
# `proxima audit --json`; the page has every chart inline, no script and
# nothing fetched, and shows hostile names as text.
#
# usage: python3 report_check.py STORE REPORT_DIR AUDIT_JSON [STATUSES]
# Prints "ok - NAME" / "not ok - NAME" lines for tests/cli/test_report.sh.
import html.parser
import json
import math
import os
import sqlite3
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

SECTORS = ['front', 'front-left', 'left', 'back-left', 'back', 'back-right', 'right', 'front-right']
TURNS = ['right 135-165', 'right 90-130', 'right 45-85', 'right 15-40', 'forward',
         'left 15-40', 'left 45-85', 'left 90-130', 'left 135-165', 'around']
DISTS = ['<0.25', '0.25-0.5', '0.5-1', '1-2', '2-4', '4-8', '>=8']
ZS = ['<-2', '[-2,-1.5)', '[-1.5,-1)', '[-1,-0.5)', '[-0.5,0)', '[0,0.5)', '[0.5,1)',
      '[1,1.5)', '[1.5,2)', '>=2']
STATUSES = ['pending', 'approved', 'edited', 'conflict', 'rejected', 'dropped', 'superseded']
SEEDS = {
    'direction': SECTORS, 'legs': SECTORS, 'turn': TURNS, 'distance': DISTS,
    'vertical': ['down', 'level', 'up'], 'hand': ['left', 'right', 'both', 'none'],
    'relation': ['left_of', 'right_of', 'in_front_of', 'behind', 'near'],
    'edges': list('ABCDEFGH'), 'z': ZS,
}
BY_COUNT = ('recordings', 'verb', 'object', 'reference')
TOP = 20

failures = 0


def check(cond, name, detail=None):
    global failures
    if cond:
        print('ok - ' + name, flush=True)
    else:
        failures += 1
        print('not ok - ' + name + ('' if detail is None else ' (%s)' % (detail,)), flush=True)


def turn_bin(y):
    a = abs(y)
    side = 'left' if y > 0 else 'right'
    if a < 15:
        return 'forward'
    if a > 165:
        return 'around'
    if a < 45:
        return side + ' 15-40'
    if a < 90:
        return side + ' 45-85'
    if a < 135:
        return side + ' 90-130'
    return side + ' 135-165'


def dist_bin(d):
    for i in range(6):
        if d < 0.25 * 2 ** i:
            return DISTS[i]
    return DISTS[6]


def z_bin(z):
    if z < -2:
        return ZS[0]
    if z >= 2:
        return ZS[9]
    return ZS[1 + int(math.floor((z + 2) / 0.5))]


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def file_token(name):
    t = ''.join(c if (c.isascii() and (c.isalnum() or c in '._-')) else ('.' if c == '/' else '_')
                for c in name)
    return t


def expected(db, statuses):
    """(scope, chart) -> Counter, and letters (scope, k) -> Counter, counted from the tables."""
    con = sqlite3.connect(db)
    exp = defaultdict(Counter)
    letters = defaultdict(Counter)
    q = ('SELECT category, subtask, metric, recording_id, answer_index, options_json, answer_json,'
         ' qc_json FROM qa WHERE status IN (%s)' % ','.join('?' * len(statuses)))
    n = Counter()
    for cat, sub, met, rec, key, opts, ans, qc in con.execute(q, statuses):
        g = '%s.%s/%s' % (cat, sub, met)
        scopes = ('all', g)
        for s in scopes:
            n[s] += 1
            exp[(s, 'recordings')][rec] += 1

        def add(chart, k):
            for s in scopes:
                exp[(s, chart)][k] += 1
        try:
            k = len(json.loads(opts))
        except (TypeError, ValueError):
            k = 0
        if key is not None and key >= 0 and 2 <= k <= 26 and key < k:
            for s in scopes:
                letters[(s, k)][chr(65 + key)] += 1
        try:
            z = json.loads(qc).get('z') if qc else None
        except ValueError:
            z = None
        if number(z):
            add('z', z_bin(z))
        try:
            a = json.loads(ans) if ans else None
        except ValueError:
            a = None
        if not isinstance(a, dict):
            continue
        if isinstance(a.get('chain'), dict):
            a = a['chain']
        if isinstance(a.get('direction'), str) and a['direction'] in SECTORS:
            add('direction', a['direction'])
        for leg in a.get('legs') or []:
            if isinstance(leg, str) and leg in SECTORS:
                add('legs', leg)
        if number(a.get('yaw_deg')):
            add('turn', turn_bin(a['yaw_deg']))
        if number(a.get('distance_m')):
            add('distance', dist_bin(a['distance_m']))
        if isinstance(a.get('vertical'), str):
            add('vertical', a['vertical'])
            add('hand', a['hand'] if isinstance(a.get('hand'), str) else 'none')
        elif isinstance(a.get('hand'), str):
            add('hand', a['hand'])
        for f in ('verb', 'relation', 'object', 'reference'):
            if isinstance(a.get(f), str):
                add(f, a[f])
        if isinstance(a.get('nodes'), list):
            add('chain_length', str(len(a['nodes'])))
        for e in a.get('edges') or []:
            if isinstance(e, str):
                add('edges', e)
    # the store's own figures, every status
    for g, st, c in con.execute("SELECT category || '.' || subtask || '/' || metric, status,"
                                " count(*) FROM qa GROUP BY 1, 2"):
        exp[(g, 'status')][st] += c
        exp[('all', 'status')][st] += c
    for g, why, c in con.execute("SELECT category || '.' || subtask || '/' || metric, reason,"
                                 " count(*) FROM drops GROUP BY 1, 2"):
        exp[(g, 'drops')][why] += c
        exp[('all', 'drops')][why] += c
        exp[(g, 'status')].update({})  # a group with drops only still has its status chart
    for who, items in con.execute('SELECT reviewer, count(DISTINCT qa_id) FROM reviews GROUP BY 1'):
        exp[('all', 'reviewers')][who] = items
    for g, acc, rej in con.execute("SELECT category || '.' || subtask || '/' || metric,"
                                   " sum(status IN ('approved', 'edited')), sum(status = 'rejected')"
                                   " FROM qa GROUP BY 1"):
        if acc + rej:
            exp[('all', 'acceptance')][g] = acc / (acc + rej)
    return exp, letters, n


def ordered(chart, counter):
    """The (key, value) list a chart must draw for these counts."""
    if chart in SEEDS:
        seed = SEEDS[chart]
        if chart in ('direction', 'legs'):
            return [(k, counter.get(k, 0)) for k in seed]
        return [(k, counter.get(k, 0)) for k in seed] + \
               [(k, v) for k, v in counter.items() if k not in seed]
    if chart == 'chain_length':
        return sorted(counter.items(), key=lambda kv: float(kv[0]))
    if chart == 'status':
        return [(k, counter.get(k, 0)) for k in STATUSES]
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    if chart in BY_COUNT and len(items) > TOP:
        rest = items[TOP:]
        items = items[:TOP] + [('other (%d more)' % len(rest), sum(v for _, v in rest))]
    return items


def marks_of(path):
    root = ET.parse(path).getroot()
    return [(m.get('data-key'), float(m.get('data-value')) if m.get('data-value') != 'null' else None,
             m) for m in root.iter() if m.get('class') == 'mark']


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = Counter()
        self.refs = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        for k, v in attrs:
            if k in ('src', 'href', 'xlink:href', 'action', 'srcset') and v is not None:
                self.refs.append(v)

    def handle_data(self, data):
        self.text.append(data)


def main():
    db, out, audit_path = sys.argv[1:4]
    statuses = (sys.argv[4] if len(sys.argv) > 4 else 'pending,approved,edited,conflict').split(',')
    rep = json.load(open(os.path.join(out, 'report.json')))
    audit = json.load(open(audit_path))
    exp, letters, n = expected(db, statuses)
    plots = rep['plots']
    check(rep['qas'] == n['all'], 'report.json counts the QAs of the statuses asked (%d)' % n['all'],
          rep['qas'])
    check(sorted(p['name'] for p in plots) == sorted(set(p['name'] for p in plots)),
          'every chart has its own name')

    # 1. every chart file parses, one mark per value, the same figures as report.json
    bad = []
    for p in plots:
        path = os.path.join(out, p['file'])
        try:
            m = marks_of(path)
        except (OSError, ET.ParseError) as e:
            bad.append('%s: %s' % (p['file'], e))
            continue
        if [(k, v) for k, v, _ in m] != [(v['key'], v['value']) for v in p['values']]:
            bad.append('%s: marks %s vs values %s' % (p['file'], [(k, v) for k, v, _ in m][:4],
                                                      p['values'][:4]))
    check(not bad, 'all %d charts parse as XML, with one mark per value of report.json' % len(plots),
          '; '.join(bad[:3]))

    # 2. the counted charts against the counts made here
    by_name = {p['name']: p for p in plots}
    scopes = {s['name']: s['file'] for s in rep['scopes']}
    checked = 0
    bad = []
    for (scope, chart), counter in sorted(exp.items()):
        if chart == 'acceptance':
            continue
        name = '%s.%s' % (scopes.get(scope, file_token(scope)), chart)
        p = by_name.get(name)
        if chart in ('drops',) and not counter:
            continue
        if p is None:
            bad.append('no chart %s' % name)
            continue
        want = ordered(chart, counter)
        got = [(k, v) for k, v, _ in marks_of(os.path.join(out, p['file']))]
        checked += 1
        if got != [(k, float(v)) for k, v in want]:
            bad.append('%s: %s != %s' % (name, got[:6], want[:6]))
    check(not bad and checked >= 10, 'the marks of %d counted charts equal the counts of the tables'
          % checked, '; '.join(bad[:3]))
    # no chart for a field no QA has
    extra = [p['name'] for p in plots if p['plot'] not in ('audit', 'acceptance', 'review_time', 'kappa')
             and not p['plot'].startswith('letters-')
             and (p['scope'], p['plot']) not in exp]
    check(not extra, 'no chart without values behind it', extra[:5])

    # 3. letters against uniform: counts and the chi-square worked out here
    bad = []
    for (scope, k), c in letters.items():
        name = '%s.letters-%d' % (scopes[scope], k)
        p = by_name.get(name)
        want = [(chr(65 + i), float(c.get(chr(65 + i), 0))) for i in range(k)]
        nn = sum(c.values())
        e = nn / k
        chi2 = sum((c.get(chr(65 + i), 0) - e) ** 2 / e for i in range(k))
        if p is None:
            bad.append('no chart ' + name)
            continue
        got = [(kk, v) for kk, v, _ in marks_of(os.path.join(out, p['file']))]
        if got != want or abs(p['chi2'] - chi2) > 1e-9 or p['df'] != k - 1 or abs(p['ref'] - e) > 1e-9:
            bad.append('%s: %s chi2 %s vs %s %s' % (name, got, p.get('chi2'), want, chi2))
    check(letters and not bad, 'answer letters and their chi-square (%d charts)' % len(letters),
          '; '.join(bad[:3]))

    # 4. the audit charts equal proxima audit --json
    bad = []
    for g in audit['groups']:
        name = '%s.audit' % scopes.get(g['group'], file_token(g['group']))
        p = by_name.get(name)
        if not g['solvers']:  # too few QAs for any solver: no chart
            if p is not None:
                bad.append('%s: a chart without solvers' % name)
            continue
        if p is None:
            bad.append('no chart ' + name)
            continue
        got = [(m.get('data-key'), float(m.get('data-value')), float(m.get('data-lo')),
                float(m.get('data-hi'))) for _, _, m in marks_of(os.path.join(out, p['file']))]
        want = [(s['name'], s['accuracy'], s['lower_95'], s['upper_95']) for s in g['solvers']]
        if len(got) != len(want) or any(a[0] != b[0] or max(abs(x - y) for x, y in zip(a[1:], b[1:])) > 1e-5
                                        for a, b in zip(got, want)):
            bad.append('%s: %s vs %s' % (name, got[:2], want[:2]))
        if abs(p['ref'] - g['chance']) > 1e-9:
            bad.append('%s: chance %s vs %s' % (name, p['ref'], g['chance']))
    allp = by_name.get('all.audit')
    if allp is None and audit['groups']:
        bad.append('no chart all.audit')
    elif allp is not None:
        got = {m.get('data-key'): (float(m.get('data-value')), float(m.get('data-ref')))
               for _, _, m in marks_of(os.path.join(out, allp['file']))}
        for g in [g for g in audit['groups'] if g.get('best')]:
            best = [s for s in g['solvers'] if s['name'] == g['best']][0]
            if abs(got[g['group']][0] - best['accuracy']) > 1e-5 or abs(got[g['group']][1] - g['chance']) > 1e-5:
                bad.append('all.audit %s: %s vs %s %s' % (g['group'], got[g['group']], best['accuracy'], g['chance']))
    if audit['groups']:
        check(not bad, 'the audit charts equal proxima audit --json (%d groups)'
              % len(audit['groups']), '; '.join(bad[:3]))
    else:
        check(not [p for p in plots if p['plot'] == 'audit'], 'no audit chart without an audit')

    # 5. reviewers' acceptance by group
    acc = exp.get(('all', 'acceptance'), Counter())
    if acc:
        got = {k: v for k, v, _ in marks_of(os.path.join(out, by_name['all.acceptance']['file']))}
        check(all(abs(got.get(g, -1) - a) < 1e-5 for g, a in acc.items()) and len(got) == len(acc),
              'acceptance by group equals (approved + edited) / decided', (got, dict(acc)))

    # 6. the page: every chart inline, no script, nothing fetched, hostile text shown as text
    page_text = open(os.path.join(out, 'index.html'), encoding='utf-8').read()
    page = Page()
    page.feed(page_text)
    check(page.tags['svg'] == len(plots), 'index.html holds every chart inline (%d)' % len(plots),
          page.tags['svg'])
    check(page.tags['script'] == 0 and '<script' not in page_text.lower(), 'index.html has no script')
    outside = [r for r in page.refs if not (r.startswith('#') or (r.endswith('.svg') and '/' not in r))]
    check(not outside, 'index.html links only its own chart files', outside[:3])
    check('http' not in page_text.replace('xmlns="http://www.w3.org/2000/svg"', ''),
          'index.html names no address (nothing is fetched)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
