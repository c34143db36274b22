/* SPDX-License-Identifier: MIT */
/*
 * The review page: queue, item, bird's-eye view, actions, blind mode and
 * statistics over the JSON API of `proxima review serve`. Every string
 * that comes from a recording or the store is put in the page as a text
 * node (textContent / createTextNode), never parsed as markup.
 */
'use strict';

(function () {
	const STATUSES = ['pending', 'approved', 'edited', 'rejected', 'conflict', 'superseded', 'dropped'];
	const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
	const PAGE = 100;
	const SVGNS = 'http://www.w3.org/2000/svg';

	const state = {
		token: null,
		reviewer: '',
		offset: 0,
		total: 0,
		queue: [],
		item: null,        /* the record on screen */
		id: null,
		shownAt: 0,        /* Unix ms the item was first shown */
		blind: false,
		revealed: false,   /* blind: the key is on screen */
		picked: -1,        /* blind: the option the reviewer chose */
		view: 'review',
		busy: false,
		filtersFilled: false
	};

	/* ======================= DOM helpers ======================= */

	function $(id) {
		return document.getElementById(id);
	}

	/* An element with a class and children (strings become text nodes). */
	function el(tag, cls) {
		const e = document.createElement(tag);
		let i;

		if (cls)
			e.className = cls;
		for (i = 2; i < arguments.length; i++)
			append(e, arguments[i]);
		return e;
	}

	function append(parent, child) {
		if (child === null || child === undefined)
			return;
		if (typeof child === 'string' || typeof child === 'number')
			parent.appendChild(document.createTextNode(String(child)));
		else
			parent.appendChild(child);
	}

	function svg(tag, attrs) {
		const e = document.createElementNS(SVGNS, tag);
		let k;

		for (k in attrs)
			if (Object.prototype.hasOwnProperty.call(attrs, k))
				e.setAttribute(k, String(attrs[k]));
		return e;
	}

	function svgText(x, y, text, cls, anchor) {
		const t = svg('text', { x: x, y: y, 'class': cls || 'bev-label' });

		if (anchor)
			t.setAttribute('text-anchor', anchor);
		t.textContent = String(text);
		return t;
	}

	function svgTitle(node, text) {
		const t = svg('title', {});

		t.textContent = String(text);
		node.appendChild(t);
		return node;
	}

	function clear(node) {
		node.replaceChildren();
	}

	let toastTimer = null;

	function toast(msg, isError) {
		const t = $('toast');

		t.textContent = msg;
		t.classList.toggle('error', !!isError);
		t.classList.add('show');
		clearTimeout(toastTimer);
		toastTimer = setTimeout(function () { t.classList.remove('show'); }, isError ? 5000 : 2200);
	}

	function secs(ns) {
		return (Number(ns) / 1e9).toFixed(3);
	}

	function isObj(v) {
		return v !== null && typeof v === 'object' && !Array.isArray(v);
	}

	function isVec(v, n) {
		let i;

		if (!Array.isArray(v) || v.length < n)
			return false;
		for (i = 0; i < n; i++)
			if (typeof v[i] !== 'number' || !isFinite(v[i]))
				return false;
		return true;
	}

	function pretty(v) {
		try {
			return JSON.stringify(v, null, 2);
		} catch (e) {
			return String(v);
		}
	}

	/* ======================= API ======================= */

	async function api(path, body) {
		const opts = { method: 'GET', headers: {}, credentials: 'same-origin', cache: 'no-store' };
		let res, data = null;

		if (body !== undefined) {
			opts.method = 'POST';
			opts.headers['Content-Type'] = 'application/json';
			opts.headers['X-Proxima-Token'] = state.token;
			opts.body = JSON.stringify(body);
		}
		res = await fetch(path, opts);
		try {
			data = await res.json();
		} catch (e) {
			data = null;
		}
		if (!res.ok) {
			const msg = data && typeof data.error === 'string' ? data.error : res.status + ' ' + res.statusText;
			throw new Error(msg);
		}
		return data;
	}

	function filterQuery() {
		const p = new URLSearchParams();
		const map = { category: 'f-category', subtask: 'f-subtask', metric: 'f-metric',
			status: 'f-status', recording: 'f-recording' };
		let k;

		for (k in map)
			if ($(map[k]).value)
				p.set(k, $(map[k]).value);
		/* "mine": the items this reviewer has (or has not) reviewed yet */
		if ($('f-mine').value === 'todo' && state.reviewer)
			p.set('not_reviewer', state.reviewer);
		else if ($('f-mine').value === 'done' && state.reviewer)
			p.set('reviewer', state.reviewer);
		return p;
	}

	/* ======================= Queue ======================= */

	function fillSelect(sel, values, labels) {
		const keep = sel.value, key = JSON.stringify([values, labels || null]);

		if (sel.dataset.filled === key)
			return; /* the same choices: leave the element alone (no relayout) */
		sel.dataset.filled = key;
		while (sel.options.length > 1)
			sel.remove(1);
		values.forEach(function (v) {
			const o = document.createElement('option');

			o.value = v;
			o.textContent = labels && labels[v] !== undefined ? labels[v] : v;
			o.title = v; /* the whole value, when the select cuts it */
			sel.appendChild(o);
		});
		sel.value = values.indexOf(keep) >= 0 ? keep : '';
	}

	function renderFilters(data) {
		const groups = isObj(data.counts && data.counts.groups) ? data.counts.groups : {};
		const cats = {}, subs = {};
		const byStatus = (data.counts && data.counts.by_status) || {};
		const statusSel = $('f-status');
		let g, i;

		for (g in groups) {
			const m = /^([^.]*)\.([^/]*)\//.exec(g);

			if (m) {
				cats[m[1]] = true;
				subs[m[2]] = true;
			}
		}
		fillSelect($('f-category'), Object.keys(cats).sort());
		fillSelect($('f-subtask'), Object.keys(subs).sort());
		fillSelect($('f-recording'), Array.isArray(data.recordings) ? data.recordings.slice() : []);
		for (i = 1; i < statusSel.options.length; i++) {
			const o = statusSel.options[i];

			o.textContent = o.value + ' (' + (byStatus[o.value] || 0) + ')';
		}
		statusSel.options[0].textContent = 'any (' + ((data.counts && data.counts.total) || 0) + ')';
	}

	function renderCounts(data) {
		const box = $('counts');
		const groups = isObj(data.counts && data.counts.groups) ? data.counts.groups : {};
		const table = el('table');
		let g;

		clear(box);
		box.dataset.total = String((data.counts && data.counts.total) || 0);
		append(box, el('div', null, data.total + ' in this filter'));
		const conflicts = (data.counts && data.counts.by_status && data.counts.by_status.conflict) || 0;

		table.appendChild(el('tr', null, el('td', null, 'group'), el('td', 'n', 'pend'),
			conflicts ? el('td', 'n', 'confl') : null, el('td', 'n', 'done'), el('td', 'n', 'all')));
		for (g in groups) {
			const c = groups[g];

			table.appendChild(el('tr', null, el('td', null, g), el('td', 'n', String(c.pending || 0)),
				conflicts ? el('td', 'n', String(c.conflict || 0)) : null,
				el('td', 'n', String((c.approved || 0) + (c.edited || 0) + (c.rejected || 0))),
				el('td', 'n', String(c.total || 0))));
		}
		box.appendChild(table);
	}

	function renderQueue() {
		const list = $('queue-list');

		clear(list);
		state.queue.forEach(function (it) {
			const li = el('li', it.id === state.id ? 'current' : null,
				el('span', 'status ' + it.status, it.status),
				el('span', 'g', it.group + ' · T ' + secs(it.t_ns) + ' s · ' + it.recording_id),
				el('span', 'q', it.question_edited || it.question));

			li.dataset.id = it.id;
			li.title = it.id;
			li.addEventListener('click', function () { openItem(it.id, true); });
			list.appendChild(li);
		});
		$('page-info').textContent = state.total
			? (state.offset + 1) + '–' + (state.offset + state.queue.length) + ' of ' + state.total
			: 'nothing matches';
		$('page-prev').disabled = state.offset === 0;
		$('page-next').disabled = state.offset + state.queue.length >= state.total;
	}

	function fetchQueue() {
		const q = filterQuery();

		q.set('offset', String(state.offset));
		q.set('limit', String(PAGE));
		return api('/api/queue?' + q.toString());
	}

	function showQueue(data) {
		state.queue = Array.isArray(data.items) ? data.items : [];
		state.total = data.total || 0;
		renderFilters(data);
		renderCounts(data);
		renderQueue();
		return data;
	}

	async function loadQueue() {
		return showQueue(await fetchQueue());
	}

	function markCurrent() {
		const items = $('queue-list').children;
		let i;

		for (i = 0; i < items.length; i++)
			items[i].classList.toggle('current', items[i].dataset.id === state.id);
	}

	/* ======================= Bird's-eye view ======================= */

	/* The first object among the candidates with a grid and RLE rows. */
	function findOccupancy(gt) {
		const cands = [gt.occupancy, gt.path && gt.path.occupancy, gt.path, gt.grid];
		let k, i;

		for (k in gt)
			if (isObj(gt[k]))
				cands.push(gt[k]);
		for (i = 0; i < cands.length; i++) {
			const c = cands[i];

			if (isObj(c) && isObj(c.grid) && Array.isArray(c.rle) && c.grid.w > 0 && c.grid.h > 0 &&
			    c.grid.cell_m > 0)
				return c;
		}
		return null;
	}

	function findGaze(gt) {
		const clip = isObj(gt.clip) ? gt.clip : {};
		const cands = [gt.gaze, clip.gaze, clip.fixation && clip.fixation.ray, clip.fixation, clip.ray];
		let i;

		for (i = 0; i < cands.length; i++) {
			const c = cands[i];

			if (!isObj(c))
				continue;
			const o = c.origin || c.position, d = c.direction || c.dir;

			if (isVec(o, 2) && isVec(d, 2))
				return { origin: o, dir: d };
		}
		return null;
	}

	/* Everything drawable in the ground truth, in world XY metres. */
	function collectScene(gt, item) {
		const s = { points: [], layers: [] };
		const sp = isObj(gt.spatial) ? gt.spatial : null;
		const path = isObj(gt.path) ? gt.path : null;
		const cam = isObj(gt.camera) ? gt.camera : sp && isObj(sp.camera) ? sp.camera
			: path && isObj(path.camera) ? path.camera : null;

		if (cam && isVec(cam.position, 2)) {
			s.cam = { p: cam.position, heading: typeof cam.heading_deg === 'number' ? cam.heading_deg : null };
			s.points.push(cam.position);
		}
		if (sp && isObj(sp.target) && isVec(sp.target.position, 2)) {
			const o = isObj(sp.target.object) ? sp.target.object : {};

			s.target = { p: sp.target.position, name: o.name || o.id || item.target || 'target' };
			s.points.push(sp.target.position);
		}
		if (sp && isObj(sp.relation) && isVec(sp.relation.reference_position, 2)) {
			const r = isObj(sp.relation.reference) ? sp.relation.reference : {};

			s.ref = { p: sp.relation.reference_position, name: r.name || r.id || 'reference',
				label: sp.relation.label || '' };
			s.points.push(sp.relation.reference_position);
		}
		if (path) {
			if (Array.isArray(path.path))
				s.path = path.path.filter(function (p) { return isVec(p, 2); });
			if (Array.isArray(path.legs))
				s.legs = path.legs.filter(function (l) { return isObj(l) && isVec(l.start, 2) && isVec(l.end, 2); });
			if (isObj(path.goal) && isVec(path.goal.position, 2))
				s.goal = path.goal.position;
			(s.path || []).forEach(function (p) { s.points.push(p); });
			if (s.goal)
				s.points.push(s.goal);
			if (!s.target && isObj(path.target) && s.goal)
				s.goalName = path.target.name || path.target.id || '';
		}
		s.occ = findOccupancy(gt);
		if (s.occ) {
			const g = s.occ.grid;

			s.points.push([g.x0, g.y0], [g.x0 + g.w * g.cell_m, g.y0 + g.h * g.cell_m]);
		}
		s.gaze = findGaze(gt);
		if (s.gaze)
			s.points.push(s.gaze.origin);
		if (isObj(gt.chain) && Array.isArray(gt.chain.actions)) {
			s.chain = gt.chain.actions.filter(function (a) { return isObj(a) && isVec(a.location, 2); });
			s.chain.forEach(function (a) { s.points.push(a.location); });
			s.chainObserved = isObj(gt.chain.observed) ? gt.chain.observed : null;
		}
		if (isObj(gt.visible_at_t) && Array.isArray(gt.visible_at_t.objects)) {
			s.visible = gt.visible_at_t.objects.filter(function (o) { return isObj(o) && isVec(o.position, 2); });
			s.visible.forEach(function (o) { s.points.push(o.position); });
		}
		return s;
	}

	function niceStep(range) {
		const steps = [0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100];
		let i;

		for (i = 0; i < steps.length; i++)
			if (range / steps[i] <= 8)
				return steps[i];
		return Math.pow(10, Math.ceil(Math.log10(range / 8)));
	}

	function drawBev(item) {
		const box = $('bev-svg'), legend = $('bev-legend');
		const gt = isObj(item.gt) ? item.gt : null;
		const W = 420, H = 420, ML = 44, MB = 34, MT = 10, MR = 10;
		const shown = [];
		let s, x0, x1, y0, y1, scale, i;

		clear(box);
		legend.textContent = '';
		if (!gt) {
			box.appendChild(el('p', 'muted', item.blind ? 'Hidden in blind mode until you answer.'
				: 'No ground truth is stored for this item.'));
			return;
		}
		s = collectScene(gt, item);
		if (!s.points.length) {
			box.appendChild(el('p', 'muted', 'The ground truth has no positions to draw.'));
			return;
		}
		x0 = Infinity; x1 = -Infinity; y0 = Infinity; y1 = -Infinity;
		s.points.forEach(function (p) {
			x0 = Math.min(x0, p[0]); x1 = Math.max(x1, p[0]);
			y0 = Math.min(y0, p[1]); y1 = Math.max(y1, p[1]);
		});
		{
			/* a square window with a margin, at least 2 m across */
			const span = Math.max(x1 - x0, y1 - y0, 2) * 1.15 + 0.4;
			const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;

			x0 = cx - span / 2; x1 = cx + span / 2;
			y0 = cy - span / 2; y1 = cy + span / 2;
			scale = (W - ML - MR) / span;
		}
		function X(x) { return ML + (x - x0) * scale; }
		function Y(y) { return MT + (y1 - y) * scale; }

		/*
		 * Labels are placed last, so that none covers another or a marker:
		 * markers register their boxes as they are drawn (mark), labels
		 * queue their anchor (label), and placeLabels() tries positions
		 * around each anchor (right, left, above, below, the diagonals,
		 * then farther out) and takes the first free one inside the plot,
		 * else the one that overlaps least.
		 */
		const taken = [], pending = [];

		function mark(x, y, r) {
			taken.push({ x0: x - r, y0: y - r, x1: x + r, y1: y + r });
		}
		/* a drawn line is taken too, every 6 px, so no label sits on it */
		function markLine(ax, ay, bx, by) {
			const n = Math.min(200, Math.ceil(Math.hypot(bx - ax, by - ay) / 6));
			let k;

			for (k = 0; k <= n; k++)
				mark(ax + (bx - ax) * k / Math.max(n, 1), ay + (by - ay) * k / Math.max(n, 1), 3);
		}
		function label(x, y, text, cls, gap) {
			pending.push({ x: x, y: y, text: String(text), cls: cls || 'bev-label', gap: gap || 9 });
		}
		function overlap(a, b) {
			const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);

			return w > 0 && h > 0 ? w * h : 0;
		}
		function placeLabels() {
			pending.forEach(function (l) {
				const w = l.text.length * (l.cls === 'bev-label' ? 6.2 : 6.6) + 4, h = 13;
				const dirs = [[1, 0], [-1, 0], [0, -1], [0, 1], [1, -1], [-1, -1], [1, 1], [-1, 1]];
				let best = null, bestCost = Infinity, k, ring;

				for (ring = 1; ring <= 3 && bestCost > 0; ring++) {
					for (k = 0; k < dirs.length && bestCost > 0; k++) {
						const g = l.gap * ring, dx = dirs[k][0], dy = dirs[k][1];
						/* the box: left of the anchor for dx < 0, centred for dx = 0 */
						const bx0 = dx > 0 ? l.x + g : dx < 0 ? l.x - g - w : l.x - w / 2;
						const by0 = dy < 0 ? l.y - g - h : dy > 0 ? l.y + g : l.y - h / 2;
						const b = { x0: bx0, y0: by0, x1: bx0 + w, y1: by0 + h };
						let cost = 0;

						if (b.x0 < ML || b.x1 > W - MR || b.y0 < MT || b.y1 > H - MB)
							cost += 1e6;
						taken.forEach(function (t) { cost += overlap(b, t); });
						cost += ring * 0.01 + k * 0.001; /* prefer near, and the order above */
						if (cost < bestCost) {
							bestCost = cost;
							best = b;
						}
					}
				}
				taken.push(best);
				plot.appendChild(svgText(best.x0 + 2, best.y1 - 3, l.text, l.cls));
			});
		}

		const root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'bird\'s-eye view' });
		const defs = svg('defs', {});
		const m1 = svg('marker', { id: 'bev-arrow', viewBox: '0 0 10 10', refX: 8, refY: 5,
			markerWidth: 11, markerHeight: 11, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' });
		const m2 = svg('marker', { id: 'bev-chain-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5,
			markerWidth: 10, markerHeight: 10, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' });
		const clip = svg('clipPath', { id: 'bev-clip' });
		const plot = svg('g', { 'clip-path': 'url(#bev-clip)' });

		m1.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', 'class': 'bev-arrowhead' }));
		m2.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', 'class': 'bev-chain-head' }));
		clip.appendChild(svg('rect', { x: ML, y: MT, width: W - ML - MR, height: H - MT - MB }));
		defs.appendChild(m1);
		defs.appendChild(m2);
		defs.appendChild(clip);
		root.appendChild(defs);
		root.appendChild(svg('rect', { x: ML, y: MT, width: W - ML - MR, height: H - MT - MB, 'class': 'bev-bg' }));

		/* axes in metres, +X right, +Y up */
		{
			const step = niceStep(x1 - x0);
			let t;

			for (t = Math.ceil(x0 / step) * step; t <= x1 + 1e-9; t += step) {
				root.appendChild(svg('line', { x1: X(t), y1: MT, x2: X(t), y2: H - MB, 'class': 'bev-gridline' }));
				root.appendChild(svgText(X(t), H - MB + 13, +t.toFixed(2), 'bev-tick', 'middle'));
			}
			for (t = Math.ceil(y0 / step) * step; t <= y1 + 1e-9; t += step) {
				root.appendChild(svg('line', { x1: ML, y1: Y(t), x2: W - MR, y2: Y(t), 'class': 'bev-gridline' }));
				root.appendChild(svgText(ML - 4, Y(t) + 3, +t.toFixed(2), 'bev-tick', 'end'));
			}
			root.appendChild(svg('line', { x1: ML, y1: H - MB, x2: W - MR, y2: H - MB, 'class': 'bev-axis' }));
			root.appendChild(svg('line', { x1: ML, y1: MT, x2: ML, y2: H - MB, 'class': 'bev-axis' }));
			root.appendChild(svgText((ML + W - MR) / 2, H - 6, 'x (m)', 'bev-tick', 'middle'));
			root.appendChild(svgText(10, (MT + H - MB) / 2, 'y (m)', 'bev-tick', 'middle'));
		}

		root.appendChild(plot);
		/* occupancy grid: RLE runs [value, count], row-major, row 0 at y0 */
		if (s.occ) {
			const g = s.occ.grid, cell = g.cell_m, w = g.w;
			const layer = svg('g', {});
			let idx = 0, rects = 0;

			for (i = 0; i < s.occ.rle.length && rects < 60000; i++) {
				const run = s.occ.rle[i];
				let left, v;

				if (!isVec(run, 2))
					break;
				v = run[0];
				left = run[1];
				while (left > 0 && rects < 60000) {
					const col = idx % w, row = Math.floor(idx / w);
					const n = Math.min(left, w - col);

					if (v !== 0) {
						layer.appendChild(svg('rect', {
							x: X(g.x0 + col * cell), y: Y(g.y0 + (row + 1) * cell),
							width: n * cell * scale + 0.3, height: cell * scale + 0.3,
							'class': v === 1 ? 'occ-1' : 'occ-2'
						}));
						rects++;
					}
					idx += n;
					left -= n;
				}
			}
			plot.appendChild(layer);
			shown.push('occupancy grid (dark: obstacle, light: inflation)');
		}
		if (s.visible && s.visible.length) {
			s.visible.forEach(function (o) {
				plot.appendChild(svgTitle(svg('circle', { cx: X(o.position[0]), cy: Y(o.position[1]), r: 3,
					'class': 'bev-visible' }), (o.name || o.id || 'object') + ' (visible at T)'));
				mark(X(o.position[0]), Y(o.position[1]), 4);
			});
			shown.push('grey: objects visible at T');
		}
		if (s.path && s.path.length > 1) {
			plot.appendChild(svg('polyline', { points: s.path.map(function (p) {
				return X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1);
			}).join(' '), 'class': 'bev-path' }));
			for (i = 0; i + 1 < s.path.length; i++)
				markLine(X(s.path[i][0]), Y(s.path[i][1]), X(s.path[i + 1][0]), Y(s.path[i + 1][1]));
		}
		if (s.legs && s.legs.length) {
			s.legs.forEach(function (l, k) {
				const line = svg('line', { x1: X(l.start[0]), y1: Y(l.start[1]), x2: X(l.end[0]), y2: Y(l.end[1]),
					'class': 'bev-leg', 'marker-end': 'url(#bev-arrow)' });

				plot.appendChild(svgTitle(line, 'leg ' + (k + 1) + ': ' + (l.direction || '') +
					(typeof l.length_m === 'number' ? ', ' + l.length_m.toFixed(2) + ' m' : '')));
				{
					/* the label is anchored at the leg's middle; the leg's ends are taken */
					const ax = X(l.start[0]), ay = Y(l.start[1]), bx = X(l.end[0]), by = Y(l.end[1]);

					markLine(ax, ay, bx, by);
					label((ax + bx) / 2, (ay + by) / 2, (k + 1) + (l.direction ? ' ' + l.direction : ''),
						'bev-leg-label', 6);
				}
			});
			shown.push('green: path legs');
		}
		if (s.goal) {
			plot.appendChild(svgTitle(svg('circle', { cx: X(s.goal[0]), cy: Y(s.goal[1]), r: 6, 'class': 'bev-goal' }),
				'goal cell' + (s.goalName ? ' by ' + s.goalName : '')));
			mark(X(s.goal[0]), Y(s.goal[1]), 7);
			if (s.goalName)
				label(X(s.goal[0]), Y(s.goal[1]), s.goalName);
		}
		if (s.gaze) {
			const o = s.gaze.origin, d = s.gaze.dir;
			const len = Math.hypot(d[0], d[1]) || 1, reach = (x1 - x0) * 1.5;

			plot.appendChild(svgTitle(svg('line', { x1: X(o[0]), y1: Y(o[1]),
				x2: X(o[0] + d[0] / len * reach), y2: Y(o[1] + d[1] / len * reach), 'class': 'bev-gaze' }),
				'gaze ray'));
			markLine(X(o[0]), Y(o[1]), X(o[0] + d[0] / len * reach), Y(o[1] + d[1] / len * reach));
			shown.push('purple: gaze ray');
		}
		if (s.chain && s.chain.length) {
			const byIndex = {};
			const order = s.chainObserved && Array.isArray(s.chainObserved.order) ? s.chainObserved.order : null;
			const letters = s.chainObserved && Array.isArray(s.chainObserved.letters) ? s.chainObserved.letters : [];
			let seq;

			s.chain.forEach(function (a) { byIndex[a.index] = a; });
			seq = order ? order.map(function (k) { return byIndex[k]; }).filter(Boolean) : s.chain;
			for (i = 0; i + 1 < seq.length; i++) {
				const a = seq[i].location, b = seq[i + 1].location;

				const ax = X(a[0]), ay = Y(a[1]), bx = X(b[0]), by = Y(b[1]);
				const d = Math.hypot(bx - ax, by - ay) || 1, r = Math.min(9, d / 2);

				/* from circle edge to circle edge, so the arrowhead shows */
				plot.appendChild(svg('line', { x1: ax + (bx - ax) / d * r, y1: ay + (by - ay) / d * r,
					x2: bx - (bx - ax) / d * r, y2: by - (by - ay) / d * r,
					'class': 'bev-chain-edge', 'marker-end': 'url(#bev-chain-arrow)' }));
				markLine(ax, ay, bx, by);
				if (letters[i] !== undefined && letters[i] !== null)
					label((ax + bx) / 2, (ay + by) / 2, String(letters[i]), 'bev-chain-letter', 4);
			}
			seq.forEach(function (a, k) {
				const gnode = svg('g', {});
				const cand = Array.isArray(item.options) ? item.options.indexOf(a.description) : -1;

				/* the node shows the candidate's number in the question when it is one */
				gnode.appendChild(svg('circle', { cx: X(a.location[0]), cy: Y(a.location[1]), r: 8, 'class': 'bev-chain-node' }));
				mark(X(a.location[0]), Y(a.location[1]), 9);
				gnode.appendChild(svgText(X(a.location[0]), Y(a.location[1]) + 3.5, cand >= 0 ? cand + 1 : '?',
					'bev-chain-num', 'middle'));
				svgTitle(gnode, 'step ' + (k + 1) + (cand >= 0 ? ', candidate ' + (cand + 1) : '') + ': ' +
					(a.description || a.verb || 'action') + (a.object && a.object.name ? ' (' + a.object.name + ')' : ''));
				plot.appendChild(gnode);
			});
			shown.push('teal: the next actions in order (numbered as candidates), with edge letters');
		}
		if (s.ref) {
			plot.appendChild(svgTitle(svg('rect', { x: X(s.ref.p[0]) - 5, y: Y(s.ref.p[1]) - 5, width: 10, height: 10,
				'class': 'bev-ref' }), 'reference: ' + s.ref.name));
			mark(X(s.ref.p[0]), Y(s.ref.p[1]), 6);
			label(X(s.ref.p[0]), Y(s.ref.p[1]), s.ref.name);
			shown.push('orange: reference object');
		}
		if (s.target) {
			const tx = X(s.target.p[0]), ty = Y(s.target.p[1]);

			plot.appendChild(svgTitle(svg('path', { d: 'M ' + tx + ' ' + (ty - 8) + ' L ' + (tx + 7) + ' ' + ty +
				' L ' + tx + ' ' + (ty + 8) + ' L ' + (tx - 7) + ' ' + ty + ' z', 'class': 'bev-target' }),
				'target: ' + s.target.name));
			mark(tx, ty, 8);
			label(tx, ty, s.target.name);
			shown.push('red: target');
		}
		if (s.cam) {
			const cx = X(s.cam.p[0]), cy = Y(s.cam.p[1]);

			if (s.cam.heading !== null) {
				const h = s.cam.heading * Math.PI / 180, len = 36;

				plot.appendChild(svg('line', { x1: cx, y1: cy, x2: cx + Math.cos(h) * len, y2: cy - Math.sin(h) * len,
					'class': 'bev-heading', 'marker-end': 'url(#bev-arrow)' }));
			}
			plot.appendChild(svgTitle(svg('circle', { cx: cx, cy: cy, r: 6, 'class': 'bev-cam' }),
				'camera at T' + (s.cam.heading !== null ? ', heading ' + s.cam.heading.toFixed(1) + '°' : '')));
			mark(cx, cy, 7);
			if (s.cam.heading !== null) {
				const h = s.cam.heading * Math.PI / 180;

				markLine(cx, cy, cx + Math.cos(h) * 36, cy - Math.sin(h) * 36);
			}
			shown.unshift('blue: camera at T and its heading');
		}
		placeLabels();
		box.appendChild(root);
		legend.textContent = shown.join(' · ');
	}

	/* ======================= Item ======================= */

	function renderClip(item) {
		const media = $('clip-media'), info = $('clip-info'), frames = $('frame-times');
		const t = Number(item.t_ns);

		clear(media);
		clear(frames);
		info.textContent = 'clip ' + secs(item.clip_start_ns) + ' – ' + secs(item.clip_end_ns) +
			' s (device clock), T = ' + secs(item.t_ns) + ' s';
		if (isObj(item.video) && typeof item.video.url === 'string') {
			const v = document.createElement('video');
			const start = Math.max(0, Number(item.video.start_s) || 0), end = Number(item.video.end_s) || 0;

			v.controls = true;
			v.preload = 'metadata';
			v.muted = true;
			v.src = item.video.url;
			v.addEventListener('loadedmetadata', function () { v.currentTime = start; });
			v.addEventListener('timeupdate', function () {
				if (end > start && v.currentTime >= end) {
					v.pause();
					v.currentTime = end;
				}
			});
			v.addEventListener('error', function () {
				info.textContent += ' · the video cannot be played here; the frame times are below';
			});
			media.appendChild(v);
			append(media, el('p', 'muted', 'video ' + (item.video.file || '') + ' at [' + start.toFixed(2) + ', ' +
				end.toFixed(2) + '] s'));
		} else if (isObj(item.frame_source)) {
			media.appendChild(el('p', 'muted', 'The video (' + (item.frame_source.file || '?') + ', ' +
				(item.frame_source.kind || '?') + ') does not play in a browser; the frames below are ' +
				'decoded from it. The clip\'s frame times:'));
		} else {
			media.appendChild(el('p', 'muted', item.video_error ? 'No usable video: ' + item.video_error
				: 'This recording has no video; the clip\'s frame times:'));
		}
		(Array.isArray(item.frames) ? item.frames : []).forEach(function (f) {
			const d = (Number(f) - t) / 1e9;

			frames.appendChild(el('li', null, secs(f) + ' s (T' + (d < 0 ? '−' : '+') + Math.abs(d).toFixed(2) + ' s)'));
		});
	}

	function keyText(item) {
		const a = item.answer;

		if (typeof item.answer_index === 'number' && item.answer_index >= 0)
			return 'key: ' + LETTERS[item.answer_index];
		if (isObj(a) && Array.isArray(a.correct_answer) && a.correct_answer.length) {
			const c = a.correct_answer[0];

			return 'key (chain): nodes ' + (Array.isArray(c.node) ? c.node.join(' → ') : '?') +
				', edges ' + (Array.isArray(c.edge) ? c.edge.join(' ') : '?') +
				(a.correct_answer.length > 1 ? ' (' + a.correct_answer.length + ' valid orders)' : '');
		}
		return 'no single key for this item';
	}

	function renderQuestion(item) {
		const opts = $('options'), orig = $('question-orig');
		const hideKey = state.blind && !state.revealed;

		$('question').textContent = item.question_edited || item.question || '';
		if (item.question_edited) {
			orig.textContent = 'generated wording: ' + item.question;
			orig.hidden = false;
		} else {
			orig.hidden = true;
		}
		clear(opts);
		opts.classList.toggle('blind', hideKey);
		(Array.isArray(item.options) ? item.options : []).forEach(function (o, k) {
			/* chains: candidates are numbered, as in the question (letters are edge directions) */
			const mark = isChainLike(item) ? String(k + 1) + '.' : LETTERS[k] || '?';
			const li = el('li', null, el('span', 'letter', mark), el('span', 'text', String(o)));

			li.dataset.index = String(k);
			if (!hideKey && item.answer_index === k)
				li.classList.add('key');
			if (state.picked === k)
				li.classList.add('picked');
			li.addEventListener('click', function () {
				if (state.blind && !state.revealed)
					blindAnswer(k);
			});
			opts.appendChild(li);
		});
		if (hideKey)
			$('key-info').textContent = item.answer_index === undefined && isChainLike(item)
				? 'Blind mode: this item has no single key; press v to reveal it.'
				: 'Blind mode: pick your answer with 1–8 or A–H (or click it); the key is shown afterwards.';
		else
			$('key-info').textContent = keyText(item) + (state.picked >= 0 ? ' · your answer: ' + LETTERS[state.picked] +
				(state.picked === item.answer_index ? ' (agrees)' : ' (differs)') : '');
	}

	/* Each reviewer's verdict, the adjudication, and what a conflict waits for. */
	function renderVerdicts(item) {
		const box = $('verdicts'), note = $('conflict-note');
		const v = Array.isArray(item.verdicts) ? item.verdicts : [];

		clear(box);
		note.hidden = true;
		if (item.blind) {
			box.textContent = '';
			return;
		}
		if (!v.length && !isObj(item.adjudication)) {
			box.textContent = 'no verdict yet';
			return;
		}
		append(box, 'verdicts: ');
		v.forEach(function (r, k) {
			if (k)
				append(box, ' · ');
			append(box, (r.reviewer || '?') + ' ');
			append(box, el('span', 'v-' + (r.decision || ''), r.decision || '?'));
		});
		if (isObj(item.adjudication)) {
			append(box, (v.length ? ' · ' : '') + 'adjudicated by ' + (item.adjudication.reviewer || '?') + ': ');
			append(box, el('span', 'v-' + (item.adjudication.decision || ''), item.adjudication.decision || '?'));
		}
		if (item.status === 'conflict') {
			note.textContent = 'The reviewers disagree. It stays out of exports until someone settles it: ' +
				'proxima review adjudicate ' + item.id + ' --decision approve|reject|edit';
			note.hidden = false;
		}
	}

	/*
	 * The frames the model sees ({url, t_ns} each, decoded by the server
	 * from the recording's video), oldest first, each captioned with its
	 * time from T; the one nearest T is marked. Shown in blind mode too:
	 * a blind answer is only worth something when it saw what the model
	 * sees. A click opens the frame at full size.
	 */
	function renderFrames(item) {
		const strip = $('frames-strip'), note = $('frames-note');
		const frames = Array.isArray(item.frame_images) ? item.frame_images.filter(function (f) {
			return isObj(f) && typeof f.url === 'string';
		}) : [];
		const t = Number(item.t_ns);
		let near = -1, best = Infinity;

		clear(strip);
		clear(note);
		$('frames').hidden = !frames.length && !item.frames_error;
		if (!frames.length) {
			if (item.frames_error)
				note.textContent = 'No frames: ' + item.frames_error;
			return;
		}
		frames.forEach(function (f, k) {
			const d = Math.abs(Number(f.t_ns) - t);

			if (d < best) {
				best = d;
				near = k;
			}
		});
		frames.forEach(function (f, k) {
			const fig = el('figure', k === near ? 'at-t' : null);
			const a = document.createElement('a');
			const img = document.createElement('img');
			const d = (Number(f.t_ns) - t) / 1e9;
			const rel = Math.abs(d) < 0.0005 ? 'T' : 'T' + (d < 0 ? '−' : '+') + Math.abs(d).toFixed(Math.abs(d) < 1 ? 2 : 1) + ' s';

			img.src = f.url;
			img.alt = 'frame ' + (k + 1) + ' at ' + secs(f.t_ns) + ' s (' + rel + ')';
			img.title = img.alt;
			img.loading = 'eager';
			img.addEventListener('error', function () {
				fig.classList.add('broken');
				img.alt = 'frame ' + (k + 1) + ' could not be decoded';
			});
			a.href = f.url;
			a.target = '_blank';
			a.rel = 'noopener';
			a.appendChild(img);
			fig.appendChild(a);
			fig.appendChild(el('figcaption', null, rel));
			strip.appendChild(fig);
		});
		if (isObj(item.frame_source))
			note.textContent = frames.length + ' frames from ' + (item.frame_source.file || '?') + ' (' +
				(item.frame_source.kind || '?') + ', ' + (item.frame_source.width || '?') + 'x' +
				(item.frame_source.height || '?') + '), ' + (item.frame_source.frame_width || '?') +
				' px wide as the model gets them; T is marked';
	}

	function isChainLike(item) {
		return item.category === 'chain';
	}

	function flatRows(obj, prefix, rows, depth) {
		let k;

		for (k in obj) {
			const v = obj[k], name = prefix ? prefix + '.' + k : k;

			if (v === null || typeof v !== 'object')
				rows.push([name, v === null ? '—' : String(v)]);
			else if (isObj(v) && depth < 2)
				flatRows(v, name, rows, depth + 1);
		}
	}

	function renderQc(item) {
		const table = $('qc-table');
		const qc = isObj(item.qc) ? (isObj(item.qc.qc) ? item.qc.qc : item.qc) : null;
		const rows = [];

		clear(table);
		if (!qc) {
			table.appendChild(el('tr', null, el('td', null, item.blind ? 'hidden in blind mode' : 'no QC figures')));
			return;
		}
		flatRows(qc, '', rows, 0);
		if (isObj(item.qc) && item.qc !== qc && typeof item.qc.answer_letter === 'string')
			rows.unshift(['answer_letter', item.qc.answer_letter]);
		rows.forEach(function (r) {
			table.appendChild(el('tr', null, el('td', null, r[0]), el('td', null, r[1])));
		});
	}

	function renderReviews(item) {
		const list = $('review-list');

		clear(list);
		if (!Array.isArray(item.reviews)) {
			list.appendChild(el('li', 'muted', item.blind ? 'hidden in blind mode' : 'none'));
			return;
		}
		if (!item.reviews.length)
			list.appendChild(el('li', 'muted', 'none yet'));
		item.reviews.forEach(function (r) {
			const parts = [r.decided_at || '', r.reviewer || '', r.decision || ''];

			if (typeof r.blind_answer_index === 'number')
				parts.push('answered ' + LETTERS[r.blind_answer_index]);
			if (r.reason)
				parts.push('reason: ' + r.reason);
			if (r.edit_after)
				parts.push('wording: ' + r.edit_after);
			if (r.note)
				parts.push('note: ' + r.note);
			if (typeof r.time_ms === 'number')
				parts.push((r.time_ms / 1000).toFixed(1) + ' s');
			list.appendChild(el('li', null, parts.join(' · ')));
		});
	}

	function maybeJson(text) {
		if (typeof text !== 'string')
			return pretty(text);
		try {
			return pretty(JSON.parse(text));
		} catch (e) {
			return text;
		}
	}

	function renderTrace(item) {
		const body = $('trace-body');
		const tr = item.trace;
		const msgs = isObj(tr) && Array.isArray(tr.messages) ? tr.messages : null;

		clear(body);
		if (!msgs) {
			$('trace-count').textContent = item.blind ? '(hidden in blind mode)' : '(none stored)';
			return;
		}
		$('trace-count').textContent = '(' + msgs.length + ' messages' +
			(tr.brain ? ', brain ' + tr.brain : '') + (tr.model ? ' ' + tr.model : '') + ')';
		msgs.forEach(function (m, k) {
			const role = typeof m.role === 'string' ? m.role : '?';
			const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
			const d = el('details', 'msg role-' + role.replace(/[^a-z]/g, ''));
			let head = (k + 1) + '. ' + role;

			if (m.name)
				head += ' ← ' + m.name;
			if (calls.length)
				head += ' → ' + calls.map(function (c) { return c && c.name ? c.name : '?'; }).join(', ');
			d.appendChild(el('summary', null, head));
			if (m.content !== undefined && m.content !== null)
				d.appendChild(el('pre', 'mono', maybeJson(m.content)));
			calls.forEach(function (c) {
				if (!isObj(c))
					return;
				d.appendChild(el('div', null, 'call ' + (c.name || '?') + (c.id ? ' [' + c.id + ']' : '')));
				d.appendChild(el('pre', 'mono', maybeJson(c.arguments)));
				if (c.arguments_error)
					d.appendChild(el('div', 'muted', 'argument error: ' + c.arguments_error));
			});
			body.appendChild(d);
		});
	}

	function renderItem(item) {
		state.item = item;
		$('item-empty').hidden = true;
		$('item-body').hidden = false;
		$('item-body').dataset.id = item.id;
		$('item-body').dataset.blind = item.blind ? '1' : '0';
		$('item-status').textContent = item.status;
		$('item-status').className = 'status ' + item.status;
		$('item-group').textContent = item.group;
		$('item-id').textContent = item.id;
		$('item-where').textContent = item.recording_id + ' · T ' + secs(item.t_ns) + ' s' +
			(item.target ? ' · target ' + item.target : '');
		renderClip(item);
		drawBev(item);
		renderFrames(item);
		renderQuestion(item);
		renderVerdicts(item);
		renderQc(item);
		renderReviews(item);
		renderTrace(item);
		$('gt-json').textContent = item.blind ? 'hidden in blind mode'
			: pretty({ gt: item.gt, answer: item.answer, answer_index: item.answer_index });
		document.querySelector('[data-act="prev"]').disabled = !item.prev;
		document.querySelector('[data-act="next"]').disabled = !item.next;
	}

	/* Shows item id; `fresh` starts its review clock and resets blind state. */
	function fetchItem(id, fresh) {
		const q = filterQuery();

		if (state.blind && !(state.revealed && !fresh))
			q.set('blind', '1');
		return api('/api/qa/' + encodeURIComponent(id) + '?' + q.toString());
	}

	async function openItem(id, fresh) {
		let item;

		try {
			item = await fetchItem(id, fresh);
		} catch (e) {
			toast(e.message, true);
			return;
		}
		showItem(item, id, fresh);
	}

	function showItem(item, id, fresh) {
		if (fresh) {
			state.revealed = false;
			state.picked = -1;
		}
		if (fresh || state.id !== id)
			state.shownAt = Date.now();
		state.id = id;
		if (history.replaceState)
			history.replaceState(null, '', '#qa=' + encodeURIComponent(id));
		renderItem(item);
		markCurrent();
	}

	function showEmpty(msg) {
		state.item = null;
		state.id = null;
		$('item-body').hidden = true;
		$('item-empty').hidden = false;
		$('item-empty').textContent = msg;
	}

	/* ======================= Actions ======================= */

	function askText(label, initial) {
		return new Promise(function (resolve) {
			const dlg = $('dialog'), form = $('dialog-form'), text = $('dialog-text');

			function done(value) {
				dlg.hidden = true;
				form.removeEventListener('submit', onSubmit);
				$('dialog-cancel').removeEventListener('click', onCancel);
				text.removeEventListener('keydown', onKey);
				resolve(value);
			}
			function onSubmit(ev) {
				ev.preventDefault();
				done(text.value);
			}
			function onCancel() {
				done(null);
			}
			function onKey(ev) {
				if (ev.key === 'Escape') {
					ev.preventDefault();
					done(null);
				} else if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey || !ev.shiftKey && text.rows <= 1)) {
					ev.preventDefault();
					done(text.value);
				}
			}
			$('dialog-label').textContent = label;
			text.value = initial || '';
			dlg.hidden = false;
			form.addEventListener('submit', onSubmit);
			$('dialog-cancel').addEventListener('click', onCancel);
			text.addEventListener('keydown', onKey);
			text.focus();
			text.select();
		});
	}

	async function post(action, body) {
		body.started_at = state.shownAt || Date.now();
		return api('/api/qa/' + encodeURIComponent(state.id) + '/' + action, body);
	}

	/*
	 * After a decision: the queue and the item to show next are fetched
	 * at once and shown together (one round trip and one repaint, not two).
	 */
	async function refreshAfterWrite(advance) {
		const next = advance && state.item && state.item.next ? state.item.next : null;
		const id = next || state.id;
		const queue = fetchQueue().catch(function (e) { toast(e.message, true); return null; });
		const item = id ? fetchItem(id, !!next).catch(function (e) { return e; }) : null;
		const got = await Promise.all([queue, item]);

		if (got[0])
			showQueue(got[0]);
		if (got[1] instanceof Error)
			toast(got[1].message, true);
		else if (got[1])
			showItem(got[1], id, !!next);
	}

	function setBusy(on) {
		state.busy = on;
		document.body.dataset.busy = on ? '1' : '0';
	}

	async function act(name) {
		const t0 = performance.now();
		let res, text;

		if (!state.item || state.busy)
			return;
		if (state.blind && !state.revealed && ['approve', 'reject', 'edit'].indexOf(name) >= 0) {
			toast('Blind mode: answer first (1–8 / A–H), or press b', true);
			return;
		}
		setBusy(true);
		try {
			if (name === 'approve') {
				res = await post('approve', {});
			} else if (name === 'reject') {
				text = await askText('Why is this item rejected?', '');
				if (text === null || !text.trim())
					return;
				res = await post('reject', { reason: text });
			} else if (name === 'edit') {
				text = await askText('New wording (the options and the key stay as computed):',
					state.item.question_edited || state.item.question);
				if (text === null || !text.trim())
					return;
				res = await post('edit', { question: text });
			} else if (name === 'flag') {
				res = await post('flag', { reason: 'ambiguous' });
			} else if (name === 'note') {
				text = await askText('Note on this item:', '');
				if (text === null || !text.trim())
					return;
				res = await post('note', { note: text });
			}
			if (res) {
				toast(name + ' saved' + (res.status ? ' · status ' + res.status : ''));
				await refreshAfterWrite(name === 'approve' || name === 'reject' || name === 'edit');
				/* the time from the key to the next item on screen (read by the browser test) */
				if (name === 'approve')
					performance.measure('proxima:approve-to-next', { start: t0, end: performance.now() });
			}
		} catch (e) {
			toast(e.message, true);
		} finally {
			setBusy(false);
		}
	}

	async function blindAnswer(k) {
		const item = state.item;

		if (!item || state.busy || !state.blind || state.revealed)
			return;
		if (!Array.isArray(item.options) || k < 0 || k >= item.options.length)
			return;
		if (isChainLike(item)) {
			toast('This item has no single key: press v to reveal it', true);
			return;
		}
		setBusy(true);
		try {
			await post('answer', { answer_index: k });
			state.picked = k;
			state.revealed = true;
			await openItem(item.id, false);
			toast('your answer ' + LETTERS[k] + ' is stored · ' + keyText(state.item));
		} catch (e) {
			toast(e.message, true);
		} finally {
			setBusy(false);
		}
	}

	async function reveal() {
		if (!state.item || !state.blind || state.revealed)
			return;
		state.revealed = true;
		await openItem(state.item.id, false);
	}

	function setBlind(on) {
		state.blind = on;
		try {
			localStorage.setItem('proxima.blind', on ? '1' : '0');
		} catch (e) {
			/* storage may be off: the mode then lasts for this page only */
		}
		$('blind-state').textContent = on ? 'blind on' : 'blind off';
		$('blind-state').classList.toggle('on', on);
		state.revealed = false;
		state.picked = -1;
		if (state.id)
			openItem(state.id, false);
	}

	async function move(dir) {
		const item = state.item;
		const target = item ? (dir > 0 ? item.next : item.prev) : null;

		if (!target) {
			toast(dir > 0 ? 'this is the last item of the filter' : 'this is the first item of the filter');
			return;
		}
		await openItem(target, true);
	}

	function playClip() {
		const v = document.querySelector('#clip-media video');

		if (!v || !state.item || !isObj(state.item.video))
			return;
		v.currentTime = Math.max(0, Number(state.item.video.start_s) || 0);
		v.play().catch(function () { toast('the video cannot be played', true); });
	}

	/* ======================= Statistics ======================= */

	function fmt(v, digits) {
		return typeof v === 'number' && isFinite(v) ? v.toFixed(digits) : '—';
	}

	function table(headers, rows) {
		const t = el('table');

		t.appendChild(el('tr', null, ...headers.map(function (h) { return el('th', null, h); })));
		rows.forEach(function (r) {
			t.appendChild(el('tr', null, ...r.map(function (c) { return el('td', null, String(c)); })));
		});
		return t;
	}

	async function loadStats() {
		const body = $('stats-body');
		let st;

		clear(body);
		try {
			st = await api('/api/stats');
		} catch (e) {
			body.appendChild(el('p', null, 'cannot load the statistics: ' + e.message));
			return;
		}
		const rv = isObj(st.reviews) ? st.reviews : {};
		const groups = isObj(st.groups) ? st.groups : {};
		const byStatus = isObj(st.by_status) ? st.by_status : {};
		let g, name;

		body.appendChild(el('p', null, st.total + ' QAs · ' + STATUSES.map(function (s) {
			return s + ' ' + (byStatus[s] || 0);
		}).join(' · ')));
		body.appendChild(el('h3', null, 'Acceptance by group'));
		const grows = [];

		for (g in groups) {
			const c = groups[g];

			grows.push([g, c.total || 0, c.pending || 0, c.approved || 0, c.edited || 0, c.rejected || 0,
				c.conflict || 0, fmt(c.acceptance, 2)]);
		}
		body.appendChild(table(['group', 'total', 'pending', 'approved', 'edited', 'rejected', 'conflict',
			'acceptance'], grows));
		body.appendChild(el('p', null, 'overall acceptance (approved + edited over decided): ' + fmt(rv.acceptance, 2) +
			' · reviews ' + (rv.total || 0) + ' · median time per item ' +
			(typeof rv.median_time_ms === 'number' ? (rv.median_time_ms / 1000).toFixed(1) + ' s' : '—')));
		body.appendChild(el('h3', null, 'Reviewers and time per item'));
		const rrows = [];
		const reviewers = isObj(rv.reviewers) ? rv.reviewers : {};

		for (name in reviewers) {
			const r = reviewers[name];

			rrows.push([name, r.reviews || 0, r.items || 0,
				typeof r.median_time_ms === 'number' ? (r.median_time_ms / 1000).toFixed(1) + ' s' : '—']);
		}
		body.appendChild(table(['reviewer', 'reviews', 'items', 'median time per item'], rrows));
		body.appendChild(el('h3', null, 'Reviewers\' agreement with the key (blind answers)'));
		const b = isObj(rv.blind) ? rv.blind : {};

		body.appendChild(table(['blind answers', 'agree with the key', 'rate'], [[b.n || 0, b.agree || 0, fmt(b.rate, 2)]]));
		body.appendChild(el('h3', null, 'Agreement between two reviewers (Cohen\'s kappa, accept vs reject)'));
		const krows = (Array.isArray(rv.kappa) ? rv.kappa : []).map(function (k) {
			return [k.a + ' / ' + k.b, k.n || 0, k.agree || 0, fmt(k.kappa, 3)];
		});

		if (krows.length)
			body.appendChild(table(['pair', 'items both decided', 'agree', 'kappa'], krows));
		else
			body.appendChild(el('p', 'muted', 'no item has decisions by two reviewers yet'));
		if (Array.isArray(st.letters) && st.letters.length) {
			body.appendChild(el('h3', null, 'Answer-letter balance (live QAs)'));
			body.appendChild(table(['options', 'n', 'counts', 'chi2', 'p'], st.letters.map(function (l) {
				const c = isObj(l.counts) ? l.counts : {};

				return [l.options, l.n, Object.keys(c).map(function (k) { return k + ' ' + c[k]; }).join(' '),
					fmt(l.chi2, 2), fmt(l.p, 4)];
			})));
		}
		loadCharts(false);
	}

	/* The report's charts (GET /api/report): one image per chart, grouped by scope. */
	async function loadCharts(withAudit) {
		const box = $('stats-charts');
		let rep;

		clear(box);
		box.appendChild(el('p', 'muted', withAudit ? 'running the blind audit…' : 'loading the charts…'));
		try {
			rep = await api('/api/report' + (withAudit ? '?audit=1' : ''));
		} catch (e) {
			clear(box);
			box.appendChild(el('p', null, 'cannot load the charts: ' + e.message));
			return;
		}
		clear(box);
		const head = el('p', null, (rep.qas || 0) + ' QAs charted (' + rep.status + ') · ');
		const btn = el('button', null, withAudit ? 'Run the blind audit again' : 'Add the blind audit');

		btn.type = 'button';
		btn.id = 'stats-audit';
		btn.addEventListener('click', function () { loadCharts(true); });
		head.appendChild(btn);
		box.appendChild(head);
		const plots = Array.isArray(rep.plots) ? rep.plots : [];
		const scopes = Array.isArray(rep.scopes) ? rep.scopes : [];

		scopes.forEach(function (sc, i) {
			const mine = plots.filter(function (p) { return p.scope === sc.name; });

			if (!mine.length)
				return;
			const d = el('details', 'chart-scope', el('summary', null,
				(sc.name === 'all' ? 'All groups' : sc.name) + ' · ' + (sc.qas || 0) + ' QAs · ' +
				mine.length + ' charts'));
			const grid = el('div', 'charts');

			d.open = i === 0;
			mine.forEach(function (p) {
				const img = el('img', 'plot');

				img.alt = p.title || p.name;
				img.title = p.title || p.name;
				img.dataset.plot = p.name;
				/* an image cannot run script; the SVG is the engine's own, text escaped */
				img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(p.svg || '');
				grid.appendChild(img);
			});
			d.appendChild(grid);
			box.appendChild(d);
		});
		box.dataset.ready = withAudit ? 'audit' : '1';
	}

	function showView(view) {
		state.view = view;
		$('review-view').hidden = view !== 'review';
		$('stats-view').hidden = view !== 'stats';
		$('tab-queue').classList.toggle('active', view === 'review');
		$('tab-stats').classList.toggle('active', view === 'stats');
		if (view === 'stats')
			loadStats();
	}

	/* ======================= Keyboard ======================= */

	function onKey(ev) {
		const tag = ev.target && ev.target.tagName;
		const k = ev.key;

		if (!$('dialog').hidden)
			return;
		if (!$('help').hidden) {
			if (k === 'Escape' || k === '?') {
				ev.preventDefault();
				$('help').hidden = true;
			}
			return;
		}
		if (ev.ctrlKey || ev.metaKey || ev.altKey)
			return;
		if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
			if (k === 'Escape')
				ev.target.blur();
			return;
		}
		if (k === '?') {
			$('help').hidden = false;
		} else if (k === 's') {
			showView(state.view === 'stats' ? 'review' : 'stats');
		} else if (state.view !== 'review') {
			return;
		} else if (k === 'a') {
			act('approve');
		} else if (k === 'r') {
			act('reject');
		} else if (k === 'e') {
			act('edit');
		} else if (k === 'f') {
			act('flag');
		} else if (k === 'n') {
			act('note');
		} else if (k === 'j' || k === 'ArrowDown' || k === 'ArrowRight') {
			move(1);
		} else if (k === 'k' || k === 'ArrowUp' || k === 'ArrowLeft') {
			move(-1);
		} else if (k === 'b') {
			setBlind(!state.blind);
		} else if (k === 'v') {
			reveal();
		} else if (k === 'p') {
			playClip();
		} else if (k === 't') {
			$('trace').open = !$('trace').open;
		} else if (/^[1-8]$/.test(k)) {
			blindAnswer(Number(k) - 1);
		} else if (/^[A-H]$/.test(k)) {
			blindAnswer(k.charCodeAt(0) - 65);
		} else {
			return;
		}
		ev.preventDefault();
	}

	/* ======================= Start ======================= */

	async function refilter() {
		state.offset = 0;
		try {
			await loadQueue();
		} catch (e) {
			toast(e.message, true);
			return;
		}
		if (state.queue.length)
			await openItem(state.queue[0].id, true);
		else
			showEmpty('Nothing matches this filter.');
	}

	async function start() {
		let session, wanted = null;
		const m = /^#qa=([0-9a-f]{16,64})$/.exec(location.hash);

		try {
			state.blind = localStorage.getItem('proxima.blind') === '1';
		} catch (e) {
			state.blind = false;
		}
		$('blind-state').textContent = state.blind ? 'blind on' : 'blind off';
		$('blind-state').classList.toggle('on', state.blind);
		document.addEventListener('keydown', onKey);
		['f-category', 'f-subtask', 'f-metric', 'f-status', 'f-recording', 'f-mine'].forEach(function (id) {
			$(id).addEventListener('change', refilter);
		});
		$('filters').addEventListener('submit', function (ev) { ev.preventDefault(); });
		$('page-prev').addEventListener('click', function () {
			state.offset = Math.max(0, state.offset - PAGE);
			loadQueue().catch(function (e) { toast(e.message, true); });
		});
		$('page-next').addEventListener('click', function () {
			state.offset += PAGE;
			loadQueue().catch(function (e) { toast(e.message, true); });
		});
		$('tab-queue').addEventListener('click', function () { showView('review'); });
		$('tab-stats').addEventListener('click', function () { showView('stats'); });
		$('help-btn').addEventListener('click', function () { $('help').hidden = !$('help').hidden; });
		$('help').addEventListener('click', function () { $('help').hidden = true; });
		$('blind-state').addEventListener('click', function () { setBlind(!state.blind); });
		window.addEventListener('hashchange', function () {
			const h = /^#qa=([0-9a-f]{16,64})$/.exec(location.hash);

			if (h && h[1] !== state.id)
				openItem(h[1], true);
		});
		document.querySelectorAll('#actions button').forEach(function (b) {
			b.addEventListener('click', function () {
				const a = b.dataset.act;

				if (a === 'prev' || a === 'next')
					move(a === 'next' ? 1 : -1);
				else if (a === 'blind')
					setBlind(!state.blind);
				else
					act(a);
			});
		});
		try {
			session = await api('/api/session');
			state.token = session.token;
			state.reviewer = session.reviewer;
			$('who').textContent = 'reviewer ' + session.reviewer + ' · ' + session.store;
			await loadQueue();
		} catch (e) {
			showEmpty('Cannot reach the review server: ' + e.message);
			return;
		}
		if (m)
			wanted = m[1];
		else if (state.queue.length)
			wanted = state.queue[0].id;
		if (wanted)
			await openItem(wanted, true);
		else
			showEmpty('Nothing matches this filter.');
		document.body.dataset.ready = '1';
	}

	start();
}());
