# SPDX-License-Identifier: MIT
# Checks the dataset card (README.md) of a `proxima export` folder: its
# YAML header parses and follows the Hugging Face dataset-card fields
# (license left to set, task_categories, size_categories, configs whose
# data_files name the exported records), and every number of its tables
# equals manifest.json's: counts by group and in all, by status, the
# generation runs, the blind audit (and, given `proxima audit --json`, the
# manifest's audit equals it); every chart it shows exists, parses as XML,
# and its recordings chart adds up to the manifest's counts.
#
# usage: /usr/bin/python3 card_check.py EXPORT_DIR [AUDIT_JSON]
# Prints "ok - NAME" / "not ok - NAME" lines.
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

import yaml

HF_TASKS = {'visual-question-answering', 'multiple-choice', 'question-answering',
            'video-text-to-text', 'image-text-to-text'}
SIZES = ['n<1K', '1K<n<10K', '10K<n<100K', '100K<n<1M', '1M<n<10M']

failures = 0


def check(cond, name, detail=None):
    global failures
    if cond:
        print('ok - ' + name, flush=True)
    else:
        failures += 1
        print('not ok - ' + name + ('' if detail is None else ' (%s)' % (detail,)), flush=True)


def unescape(cell):
    cell = cell.strip()
    if cell.startswith('`') and cell.endswith('`'):
        return cell[1:-1]
    cell = re.sub(r'\\(.)', r'\1', cell)
    return cell.replace('&lt;', '<').replace('&gt;', '>').replace('&amp;', '&')


def table(body, heading):
    """The rows of the first table after '## heading', as lists of cells."""
    at = body.find('\n## ' + heading + '\n')
    if at < 0:
        return None
    rows = []
    started = False
    for line in body[at:].split('\n')[2:]:
        if line.startswith('|'):
            started = True
            cells = re.split(r'(?<!\\)\|', line.strip()[1:-1])
            if all(set(c.strip()) <= set('-') for c in cells):
                continue
            rows.append([unescape(c) for c in cells])
        elif started:
            break
    return rows[1:]  # without the header row


def size_category(n):
    lim = 1000
    for s in SIZES:
        if n < lim:
            return s
        lim *= 10
    return None


def pct(x):
    return '%.1f%%' % (100 * x)


def main():
    d = sys.argv[1]
    audit = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
    man = json.load(open(os.path.join(d, 'manifest.json')))
    text = open(os.path.join(d, 'README.md'), encoding='utf-8').read()
    counts = man['counts']

    # 1. the YAML header
    m = re.match(r'---\n(.*?)\n---\n', text, re.S)
    check(m is not None, 'README.md opens with a YAML header between --- lines')
    if m is None:
        return 1
    try:
        y = yaml.safe_load(m.group(1))
    except yaml.YAMLError as e:
        check(False, 'the YAML header parses', e)
        return 1
    check(isinstance(y, dict), 'the YAML header parses to a mapping')
    check('license' in y and y['license'] in ('other', None, ''),
          'license is there for the user to set (other or empty)', y.get('license'))
    check('# set this' in m.group(1), 'the license line says to set it')
    tc = y.get('task_categories')
    check(isinstance(tc, list) and tc and set(tc) <= HF_TASKS, 'task_categories are Hugging Face tasks', tc)
    check(y.get('size_categories') == [size_category(counts['total'])],
          'size_categories fits the %d QAs of the manifest' % counts['total'], y.get('size_categories'))
    cfg = (y.get('configs') or [{}])[0]
    files = cfg.get('data_files') or [{}]
    check(cfg.get('config_name') == 'default' and files[0].get('path') == man['files'][0]
          and os.path.isfile(os.path.join(d, files[0]['path'])),
          'configs: data_files names the exported records file (%s)' % man['files'][0], cfg)
    check(y.get('language') == ['en'], 'language: en')
    body = text[m.end():]

    # 2. counts: the counts table, the tasks table and the status table are the manifest's
    rows = table(body, 'Counts')
    got = {r[0]: int(r[1]) for r in rows or [] if r[0] != '**total**' and r[0] != 'total'}
    total = [int(r[1]) for r in rows or [] if r[0] in ('**total**', 'total')]
    check(got == counts['groups'] and total == [counts['total']],
          'the counts table equals manifest counts.groups and total', (got, total))
    rows = table(body, 'Tasks')
    got = {r[0]: int(r[3]) for r in rows or []}
    check(got == counts['groups'], 'the tasks table lists every group with its manifest count', got)
    check(all(r[1] and r[2] for r in rows or []) and rows,
          'every group has its definition and answer form')
    rows = table(body, 'How the QAs were made')
    runs = [(int(r[0]), r[1], r[3]) for r in rows or []]
    want = [(r['id'], r['brain'] or '—', '—' if r['seed'] is None else str(r['seed'])) for r in man['runs']]
    check(runs == want and runs, 'the runs table is the manifest runs (id, brain, seed)', (runs, want))
    at = body.find('**Review.**')
    st = []
    for line in body[at:].split('\n'):
        mm = re.match(r'\| (\w+) \| (\d+) \|$', line)
        if mm:
            st.append((mm.group(1), int(mm.group(2))))
        elif st:
            break
    check(dict(st) == counts['by_status'] and sum(v for _, v in st) == counts['total'],
          'the status table is manifest counts.by_status and adds up to the total', st)
    mm = re.search(r'- (\d+) QAs from (\d+) recording', body)
    check(mm and int(mm.group(1)) == counts['total'] and int(mm.group(2)) == counts['recordings'],
          'the card names the manifest total and its recordings')
    check(man['engine_version'] in body, 'the card names the engine version of the manifest')
    check(man['filters']['status'] in body, 'the card names the statuses exported')

    # 3. the blind audit table is the manifest's, and the manifest's is proxima audit's
    rows = table(body, 'Blind audit')
    ma = man.get('audit')
    if ma is None:
        check(not rows and 'without the blind audit' in body, 'no audit: the card says so')
    else:
        got = {r[0]: (int(r[1]), r[4], r[5], r[7]) for r in rows or []}
        want = {g: (a['n'], a['best'] or '—', '—' if a['accuracy'] is None else pct(a['accuracy']),
                    '**yes**' if a['flagged'] else 'no')
                for g, a in ma['groups'].items()}
        check(got == want and set(got) <= set(counts['groups']) and got,
              'the audit table is manifest audit.groups (%d groups)' % len(got), (got, want))
    if audit is not None and ma is not None:
        bad = []
        for g in audit['groups']:
            if g['group'] not in counts['groups']:
                continue
            a = ma['groups'].get(g['group'])
            best = [s for s in g['solvers'] if s['name'] == g.get('best')]
            acc = best[0]['accuracy'] if best else None
            if not a or a['n'] != g['n'] or a['best'] != g.get('best') or a['chance'] != g['chance'] \
                    or (acc is None) != (a['accuracy'] is None) \
                    or (acc is not None and abs(a['accuracy'] - acc) > 1e-9):
                bad.append(g['group'])
        check(not bad, 'the manifest audit equals proxima audit --json', bad)

    # 4. the charts it shows: present, XML, and adding up to the manifest's counts
    refs = re.findall(r'\]\((plots/[^)]+\.svg)\)', body)
    missing = [r for r in refs if not os.path.isfile(os.path.join(d, r))]
    check(refs and not missing, 'the card shows or links %d chart files, all present' % len(refs), missing[:3])
    bad = []
    for r in refs:
        try:
            ET.parse(os.path.join(d, r))
        except (OSError, ET.ParseError) as e:
            bad.append('%s: %s' % (r, e))
    check(not bad, 'every chart of the card parses as XML', bad[:3])

    def rec_sum(name):
        p = os.path.join(d, 'plots', name + '.recordings.svg')
        root = ET.parse(p).getroot()
        return sum(float(e.get('data-value')) for e in root.iter() if e.get('class') == 'mark')
    check(rec_sum('all') == counts['total'], 'the all-groups recordings chart adds up to the total')
    bad = [g for g, n in counts['groups'].items() if rec_sum(g.replace('/', '.')) != n]
    check(not bad, "each group's recordings chart adds up to its manifest count", bad)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
