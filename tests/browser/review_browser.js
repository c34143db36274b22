// SPDX-License-Identifier: MIT
// Drives the review page in headless Chromium (playwright-core, the Debian
// chromium binary): approves the first item with the keyboard, checks that
// names holding <script> show as text and run nothing, answers one item
// blind, rejects one with a typed reason, opens the statistics.
//
// usage: node review_browser.js URL [--video]
// With --video the fixture's rec_video holds a real 12 s clip, and the
// page must seek it to the clip start and stop at the clip end.
// Prints "ok - NAME" / "not ok - NAME" lines and "approved=ID",
// "answered=ID:INDEX", "rejected=ID" for tests/cli/test_browser.sh, which
// then checks the database.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const Q_HEAD = 'a000000000000001';
const Q_GAZE = 'a000000000000003';
const Q_XSS = 'a000000000000005';
const XSS = '<script>alert(1)</script>';
const WAIT = { timeout: 15000 };
const GONE = { timeout: 15000, state: 'attached' }; /* for [hidden] elements */

let failures = 0;

function check(cond, name, detail) {
	if (cond) {
		console.log('ok - ' + name);
	} else {
		failures++;
		console.log('not ok - ' + name + (detail !== undefined ? ' (' + detail + ')' : ''));
	}
}

async function itemShown(page, id, blind) {
	const sel = '#item-body[data-id="' + id + '"]' + (blind === undefined ? '' : '[data-blind="' + (blind ? 1 : 0) + '"]');

	await page.waitForSelector(sel, WAIT);
}

async function main() {
	const url = process.argv[2];
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'proxima-chromium-'));
	const dialogs = [];
	const cspErrors = [];
	const pageErrors = [];
	let ctx;

	if (!url)
		throw new Error('usage: node review_browser.js URL');
	try {
		ctx = await chromium.launchPersistentContext(profile, {
			executablePath: '/usr/bin/chromium',
			headless: true,
			viewport: { width: 1400, height: 1000 },
			args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
				'--disable-background-networking', '--disable-component-update', '--disable-sync']
		});
		const page = ctx.pages()[0] || await ctx.newPage();

		page.on('dialog', function (d) {
			dialogs.push(d.type() + ': ' + d.message());
			d.dismiss().catch(function () {});
		});
		page.on('console', function (m) {
			if (/Content Security Policy/i.test(m.text()))
				cspErrors.push(m.text());
		});
		page.on('pageerror', function (e) { pageErrors.push(e.message); });

		/* 1. the page loads the queue and opens its first item */
		await page.goto(url);
		await page.waitForSelector('body[data-ready="1"]', WAIT);
		const first = await page.$eval('#queue-list li', function (li) { return li.dataset.id; });
		const shown = await page.$eval('#item-body', function (e) { return e.dataset.id; });

		check(first && first === shown, 'the first queued item is shown', first + ' vs ' + shown);

		/* 2. approve it with the keyboard: the page moves on and the queue drops it */
		await page.keyboard.press('a');
		await page.waitForFunction(function (id) {
			return document.querySelector('#item-body').dataset.id !== id &&
				!document.querySelector('#queue-list li[data-id="' + id + '"]');
		}, first, WAIT);
		check(true, 'a approves and moves to the next item');
		console.log('approved=' + first);

		/* 3. names with <script> are text, and nothing runs */
		await page.evaluate(function (id) { location.hash = '#qa=' + id; }, Q_XSS);
		await itemShown(page, Q_XSS);
		const q = await page.textContent('#question');
		check(q === 'Where is the ' + XSS + ' next?', 'the question shows <script> as text', q);
		const where = await page.textContent('#item-where');
		check(where.indexOf('target ' + XSS) >= 0, 'the target name shows as text', where);
		const optB = await page.textContent('#options li[data-index="1"] .text');
		check(optB === '<img src=x onerror=alert(2)>', 'an option with markup shows as text', optB);
		const labels = await page.$$eval('#bev-svg text', function (ts) { return ts.map(function (t) { return t.textContent; }); });
		check(labels.indexOf(XSS) >= 0, 'the bird\'s-eye label shows the name as text', labels.join('|'));
		await page.keyboard.press('t');
		await page.waitForSelector('#trace[open]', WAIT);
		const trace = await page.textContent('#trace-body');
		check(trace.indexOf('<script>alert(3)</script>') >= 0, 'the trace shows <script> as text');
		const injected = await page.$$eval('#item-body script, #item-body img, #item-body iframe, #queue-list script, #queue-list img',
			function (n) { return n.length; });
		check(injected === 0, 'no element was made from stored strings', injected);
		const listText = await page.textContent('#queue-list li[data-id="' + Q_XSS + '"] .q');
		check(listText.indexOf(XSS) >= 0, 'the queue shows the question as text', listText);

		/* 4. blind mode: no key until the answer; the answer is stored, then the key shows */
		await page.keyboard.press('b');
		await page.waitForSelector('#blind-state.on', WAIT);
		await itemShown(page, Q_XSS, true);
		await page.evaluate(function (id) { location.hash = '#qa=' + id; }, Q_HEAD);
		await itemShown(page, Q_HEAD, true);
		check(await page.$('#options li.key') === null, 'blind: the key is hidden');
		check(await page.$('#bev-svg svg') === null, 'blind: the bird\'s-eye view is hidden');
		await page.keyboard.press('3');
		await page.waitForSelector('#options li.key', WAIT);
		await itemShown(page, Q_HEAD, false);
		const key = await page.$eval('#options li.key', function (li) { return li.dataset.index; });
		const picked = await page.$eval('#options li.picked', function (li) { return li.dataset.index; });
		check(key === '1', 'blind: after the answer the key (B) is shown', key);
		check(picked === '2', 'blind: the pick (C) is marked', picked);
		console.log('answered=' + Q_HEAD + ':2');
		await page.keyboard.press('b');
		await page.waitForSelector('#blind-state:not(.on)', WAIT);

		/* 5. reject with a typed reason */
		await page.evaluate(function (id) { location.hash = '#qa=' + id; }, Q_GAZE);
		await itemShown(page, Q_GAZE, false);
		await page.keyboard.press('r');
		await page.waitForSelector('#dialog:not([hidden])', WAIT);
		await page.keyboard.type('the kettle is hidden');
		await page.keyboard.press('Control+Enter');
		await page.waitForSelector('#dialog[hidden]', GONE);
		await page.waitForFunction(function (id) {
			return document.querySelector('#item-body').dataset.id !== id;
		}, Q_GAZE, WAIT);
		check(true, 'r asks a reason and rejects');
		console.log('rejected=' + Q_GAZE);

		/* 6. a real video: seeks to the clip start (1 s) and stops at its end (9 s) */
		if (process.argv.indexOf('--video') >= 0) {
			await page.evaluate(function (id) { location.hash = '#qa=' + id; }, Q_HEAD);
			await itemShown(page, Q_HEAD, false);
			await page.waitForFunction(function () {
				const v = document.querySelector('#clip-media video');

				return v && v.readyState >= 1 && !v.seeking && Math.abs(v.currentTime - 1) < 0.05;
			}, null, WAIT).then(function () { check(true, 'video: seeks to the clip start'); },
				function () { check(false, 'video: seeks to the clip start'); });
			await page.evaluate(function () {
				const v = document.querySelector('#clip-media video');

				v.currentTime = 8.6;
				return v.play();
			});
			await page.waitForFunction(function () {
				const v = document.querySelector('#clip-media video');

				return v.paused && Math.abs(v.currentTime - 9) < 0.05;
			}, null, WAIT).then(function () { check(true, 'video: stops at the clip end'); },
				function () { check(false, 'video: stops at the clip end'); });
		}

		/* 7. the statistics view */
		await page.keyboard.press('s');
		await page.waitForSelector('#stats-body table', WAIT);
		const stats = await page.textContent('#stats-body');
		check(/kappa/i.test(stats) && stats.indexOf('browser') >= 0 && stats.indexOf('alice') >= 0,
			'the statistics list the reviewers and the kappa section');
		await page.keyboard.press('s');
		await page.waitForSelector('#review-view:not([hidden])', WAIT);

		/* 8. help opens with ? */
		await page.keyboard.press('?');
		await page.waitForSelector('#help:not([hidden])', WAIT);
		await page.keyboard.press('Escape');
		await page.waitForSelector('#help[hidden]', GONE);
		check(true, '? opens the help and Esc closes it');

		check(dialogs.length === 0, 'no alert or other dialog was raised', dialogs.join('; '));
		check(cspErrors.length === 0, 'no Content-Security-Policy violation', cspErrors.join('; '));
		check(pageErrors.length === 0, 'no uncaught page error', pageErrors.join('; '));
	} finally {
		if (ctx)
			await ctx.close();
		fs.rmSync(profile, { recursive: true, force: true });
	}
}

main().then(function () {
	process.exit(failures ? 1 : 0);
}, function (e) {
	console.log('not ok - the browser run finished (' + String(e && e.message || e).split('\n')[0] + ')');
	process.exit(1);
});
