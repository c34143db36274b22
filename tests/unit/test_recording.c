/* SPDX-License-Identifier: MIT */
/*
 * The CSV reader, the JSON file reader, the native loader (a hand-written
 * recording in tests/data/native) and every bad-input case of
 * tests/data/bad. Run from the repository root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "err.h"
#include "jsonfile.h"
#include "recording.h"

#define DATA "tests/data/"
#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static char tmpdir[64];

/* Writes `text` to a new file in a per-run temporary folder; returns its path. */
static const char *write_tmp(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/proxima-test-rec-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* err_msg() contains `want` (prints both when not). */
static void msg_has(const char *want)
{
	if (!strstr(err_msg(), want)) {
		print_error("message '%s' lacks '%s'\n", err_msg(), want);
		fail();
	}
}

/* ======================= csv ======================= */

static void test_csv_columns_by_name(void **state)
{
	const char *p = write_tmp("a.csv", "\xEF\xBB\xBF" "b,a,\"c,d\"\r\n"
					    "1,2,\"x \"\"q\"\" y\"\r\n"
					    "\r\n"
					    "4,5,6\n");
	struct csv *c;
	size_t ia, ib;

	(void)state;
	assert_int_equal(csv_open(p, &c), 0);
	assert_int_equal(csv_ncols(c), 3);
	assert_int_equal(csv_need(c, "a", &ia), 0);
	assert_int_equal(csv_need(c, "b", &ib), 0);
	assert_int_equal(ia, 1); /* the byte-order mark is not part of "b" */
	assert_int_equal(ib, 0);
	assert_int_equal(csv_col(c, "c,d"), 2);
	assert_int_equal(csv_col(c, "nope"), -1);
	assert_int_equal(csv_need(c, "nope", &ia), ENG_EPARSE);
	msg_has("a.csv:1: missing column 'nope'");
	assert_int_equal(csv_next(c), 1);
	assert_string_equal(csv_cell(c, 1), "2");
	assert_string_equal(csv_cell(c, 2), "x \"q\" y");
	assert_int_equal(csv_line(c), 2);
	assert_int_equal(csv_next(c), 1); /* the blank line is skipped */
	assert_int_equal(csv_line(c), 4);
	assert_string_equal(csv_cell(c, 0), "4");
	assert_int_equal(csv_next(c), 0);
	csv_free(c);
}

/*
 * Every number a CSV cell holds reads as strtod reads it, bit for bit:
 * the plain decimals of the fast path (up to 2^53 - 1 in digits, up to 22
 * after the point) and the forms it leaves to strtod (17+ digits,
 * exponents, a leading point, hex).
 */
/*
 * csv_i64 reads what strtoll reads: every length from 1 to 20 digits,
 * signs, leading zeros, the int64 limits and one past them (out of range).
 */
static void test_csv_integers_as_strtoll(void **state)
{
	static const char *const fixed[] = {
		"0", "-0", "+7", "007", "-0000000000000000001", "9223372036854775807",
		"-9223372036854775808", "999999999999999999", "-999999999999999999",
		"1000000000000000000", "9223372036854775808", "-9223372036854775809",
		"12345678901234567890",
	};
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), n = nf + 4000, i, len = 8;
	char (*gen)[32] = calloc(n, sizeof(*gen)), *text, *w, *end;
	uint64_t r = 777;
	struct csv *c;

	(void)state;
	assert_non_null(gen);
	for (i = 0; i < n; i++) {
		if (i < nf) {
			snprintf(gen[i], sizeof(gen[i]), "%s", fixed[i]);
		} else {
			int nd = (int)(i % 20) + 1, k;
			size_t at = 0;

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			if ((r >> 40) % 3 == 0)
				gen[i][at++] = (r >> 50) & 1 ? '-' : '+';
			for (k = 0; k < nd; k++) {
				r = r * 6364136223846793005ULL + 1442695040888963407ULL;
				gen[i][at++] = (char)('0' + (r >> 33) % 10);
			}
			gen[i][at] = '\0';
		}
		len += strlen(gen[i]) + 1;
	}
	text = malloc(len);
	assert_non_null(text);
	w = text + sprintf(text, "v\n");
	for (i = 0; i < n; i++)
		w += sprintf(w, "%s\n", gen[i]);
	assert_int_equal(csv_open(write_tmp("i.csv", text), &c), 0);
	for (i = 0; i < n; i++) {
		long long want;
		int64_t got = -1;
		int rc;

		assert_int_equal(csv_next(c), 1);
		errno = 0;
		want = strtoll(gen[i], &end, 10);
		rc = csv_i64(c, 0, &got);
		if (errno == ERANGE) {
			assert_int_equal(rc, ENG_ERANGE);
		} else {
			assert_int_equal(rc, 0);
			assert_true(got == (int64_t)want);
		}
	}
	csv_free(c);
	free(text);
	free(gen);
}

static void test_csv_numbers_as_strtod(void **state)
{
	static const char *const fixed[] = {
		"0", "-0", "-0.0", "+1.25", "1.", "-.5", "0.1", "0.541675220", "-0.454519478",
		"9007199254740991", "9007199254740992", "9007199254740993", "0.1234567890123456789",
		"123456789012345678901234", "1e5", "-2.5E-3", "0x1p3", "0000000000000001.5",
		"3.0000000000000000000001", "0.0000000000000000000001", "4.35", "87551170.8132620",
	};
	char buf[64], *text = NULL, *w, *end;
	size_t n = sizeof(fixed) / sizeof(fixed[0]) + 20000, i, len = 8;
	uint64_t r = 12345;
	const char **cells = calloc(n, sizeof(*cells));
	char (*gen)[40] = calloc(n, sizeof(*gen));
	struct csv *c;
	double d, want;

	(void)state;
	assert_non_null(cells);
	assert_non_null(gen);
	for (i = 0; i < n; i++) {
		if (i < sizeof(fixed) / sizeof(fixed[0])) {
			cells[i] = fixed[i];
		} else {
			/* digits before and after the point, a sign, some long */
			unsigned a, b;

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			a = (unsigned)(r >> 33) % 20;
			b = (unsigned)(r >> 45) % 24;
			snprintf(buf, sizeof(buf), "%s%.*llu.%0*llu", (r >> 7) & 1 ? "-" : "", (int)a % 10 + 1,
				 (unsigned long long)(r >> 20) % 100000000000ULL, (int)b,
				 (unsigned long long)((r >> 3) % 10000000000000000000ULL));
			snprintf(gen[i], sizeof(gen[i]), "%.39s", buf);
			cells[i] = gen[i];
		}
		len += strlen(cells[i]) + 1;
	}
	text = malloc(len);
	assert_non_null(text);
	w = text + sprintf(text, "v\n");
	for (i = 0; i < n; i++)
		w += sprintf(w, "%s\n", cells[i]);
	assert_int_equal(csv_open(write_tmp("s.csv", text), &c), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(csv_next(c), 1);
		want = strtod(cells[i], &end);
		assert_int_equal(csv_f64(c, 0, &d), 0);
		if (memcmp(&d, &want, sizeof(d))) {
			print_error("'%s': %.17g, strtod %.17g\n", cells[i], d, want);
			fail();
		}
	}
	csv_free(c);
	free(text);
	free(cells);
	free(gen);
}

/*
 * Rows as written, read back through the reader's own buffer: many rows
 * of mixed cells (decimals of every length and sign, exponents, hex,
 * junk that is no number, words, empty and quoted cells), CRLF and blank
 * lines, and one line longer than the first buffer, so that cells fall
 * at every place relative to the blocks read. Each cell's text must come
 * back as written, and csv_f64 / csv_i64 must agree with strtod /
 * strtoll, whether the number is read before or after the text; so must
 * csv_f64s over the whole row (check_f64s).
 */
/*
 * csv_f64s() over the row's cells, in column order and reversed: the
 * values strtod gives up to the first cell it refuses, whose position
 * comes back in nread with csv_f64()'s error code. Both orders are read
 * before anything else reads the row's cells, when the caller calls this
 * first (no cell terminated yet, as the loaders meet them).
 */
static void check_f64s(const struct csv *c, char (*cells)[48], size_t ncols)
{
	size_t cols[2][8], nread[2], i, o;
	double out[2][8];
	int rc[2];

	assert_true(ncols <= 8);
	for (i = 0; i < ncols; i++) {
		cols[0][i] = i;
		cols[1][i] = ncols - 1 - i;
	}
	memset(out, 0, sizeof(out));
	for (o = 0; o < 2; o++)
		rc[o] = csv_f64s(c, cols[o], ncols, out[o], &nread[o]);
	for (o = 0; o < 2; o++) {
		size_t want_n = ncols;
		int want_rc = 0;

		for (i = 0; i < ncols && want_n == ncols; i++) {
			const char *s = cells[cols[o][i]];
			double dw, d;
			char *end;

			errno = 0;
			dw = strtod(s, &end);
			if (!*s || *end || end == s || !isfinite(dw) ||
			    (errno == ERANGE && fabs(dw) > 1.0)) {
				want_n = i;
				want_rc = csv_f64(c, cols[o][i], &d);
			}
		}
		assert_int_equal(rc[o], want_rc);
		assert_int_equal(nread[o], want_n);
		for (i = 0; i < want_n; i++) {
			double dw = strtod(cells[cols[o][i]], NULL);

			if (memcmp(&out[o][i], &dw, sizeof(dw))) {
				print_error("cell '%s': csv_f64s %.17g, strtod %.17g\n",
					    cells[cols[o][i]], out[o][i], dw);
				fail();
			}
		}
	}
}

static void test_csv_rows_as_written(void **state)
{
	static const char *const junk[] = {
		"1.2.3", "1-2", "--1", "+-1", "1a", "a1", ".", "-", "+", "1e", "0x",
		"12345678901234567.5", "1..2", "-.", "9.9e999", "nan", "inf", "٣",
	};
	enum { ROWS = 30000, COLS = 5 };
	char (*want)[COLS][48] = calloc(ROWS, sizeof(*want));
	char *text = malloc((size_t)ROWS * COLS * 60 + 400000), *w = text, *end;
	uint64_t r = 4242;
	struct csv *c;
	size_t i, k, longrow = ROWS / 3, longlen = 0;

	(void)state;
	assert_non_null(want);
	assert_non_null(text);
	w += sprintf(w, "a,b,c,d,e\n");
	for (i = 0; i < ROWS; i++) {
		for (k = 0; k < COLS; k++) {
			char *cell = want[i][k];
			unsigned kind, a, b;

			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			kind = (unsigned)(r >> 59) % 8;
			a = (unsigned)(r >> 20) % 12;
			b = (unsigned)(r >> 30) % 19;
			if (kind < 4) {
				/* exactly a digits (0..10) before the point, b (0..18) after */
				unsigned long long pa = 1, pb = 1;
				unsigned j;

				for (j = 0; j < a % 11; j++)
					pa *= 10;
				for (j = 0; j < b; j++)
					pb *= 10;
				snprintf(cell, 48, "%s%.*llu%s%.*llu", (r >> 5) & 1 ? "-" : "",
					 (int)(a % 11), (unsigned long long)(r >> 7) % pa,
					 b || !(a % 11) ? "." : "", (int)b,
					 (unsigned long long)(r >> 3) % pb);
			} else if (kind == 4) {
				snprintf(cell, 48, "%s%llu", (r >> 5) & 1 ? "-" : "",
					 (unsigned long long)(r >> 9) >> (r >> 58));
			} else if (kind == 5) {
				snprintf(cell, 48, "%s", junk[(r >> 13) % (sizeof(junk) / sizeof(junk[0]))]);
			} else if (kind == 6) {
				snprintf(cell, 48, "%.3fe%d", (double)(r >> 40) / 1000.0, (int)(r >> 60) - 8);
			} else {
				snprintf(cell, 48, "%s", (r >> 8) % 3 ? "word" : "");
			}
		}
		for (k = 0; k < COLS; k++) {
			/* a cell with a comma or a quote is written quoted */
			if (k == 2 && (r >> 17) % 50 == 0) {
				snprintf(want[i][k], 48, "x,\"y\"");
				w += sprintf(w, "\"x,\"\"y\"\"\"");
			} else {
				w += sprintf(w, "%s", want[i][k]);
			}
			if (k + 1 < COLS)
				*w++ = ',';
		}
		if (i == longrow) {
			/* 300 KB more in the last cell: longer than the first buffer */
			memset(w, '7', 300000);
			w += 300000;
			longlen = strlen(want[i][COLS - 1]) + 300000;
		}
		w += sprintf(w, "%s", (r >> 23) % 4 ? "\n" : "\r\n");
		if ((r >> 29) % 97 == 0)
			w += sprintf(w, "\n");
	}
	*w = '\0';
	assert_int_equal(csv_open(write_tmp("rows.csv", text), &c), 0);
	for (i = 0; i < ROWS; i++) {
		assert_int_equal(csv_next(c), 1);
		/* every other row: csv_f64s first, on cells nothing has read yet */
		if (i != longrow && i % 2 == 0)
			check_f64s(c, want[i], COLS);
		for (k = 0; k < COLS; k++) {
			const char *s = want[i][k];
			bool text_first = ((i + k) & 1) != 0;
			double d = 0, dw;
			int64_t v = 0;
			long long vw;
			int rc, ri;
			bool ok_f, ok_i;

			if (i == longrow && k == COLS - 1)
				continue;
			if (text_first)
				assert_string_equal(csv_cell(c, k), s);
			errno = 0;
			dw = strtod(s, &end);
			ok_f = *s && !(*end) && end != s && isfinite(dw) &&
			       !(errno == ERANGE && fabs(dw) > 1.0);
			errno = 0;
			vw = strtoll(s, &end, 10);
			ok_i = *s && !(*end) && end != s && errno != ERANGE &&
			       (*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'));
			rc = csv_f64(c, k, &d);
			ri = csv_i64(c, k, &v);
			if ((rc == 0) != ok_f || (ok_f && memcmp(&d, &dw, sizeof(d)))) {
				print_error("row %zu cell '%s': rc %d %.17g, strtod %.17g\n", i, s, rc,
					    d, dw);
				fail();
			}
			if ((ri == 0) != ok_i || (ok_i && v != (int64_t)vw)) {
				print_error("row %zu cell '%s': rc %d %lld, strtoll %lld\n", i, s, ri,
					    (long long)v, vw);
				fail();
			}
			if (!text_first)
				assert_string_equal(csv_cell(c, k), s);
		}
		if (i != longrow && i % 2 == 1)
			check_f64s(c, want[i], COLS);
		if (i == longrow)
			assert_int_equal(strlen(csv_cell(c, COLS - 1)), longlen);
	}
	assert_int_equal(csv_next(c), 0);
	csv_free(c);
	free(text);
	free(want);
}

static void test_csv_strict_numbers(void **state)
{
	const char *p = write_tmp("n.csv", "v\n1.5\n1.5x\n\nnan\ninf\n 1\n-1\n1e999\n");
	struct csv *c;
	double d = 0;
	int64_t i = 0;
	uint64_t u = 0;

	(void)state;
	assert_int_equal(csv_open(p, &c), 0);
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), 0);
	NEAR(d, 1.5, 0);
	assert_int_equal(csv_i64(c, 0, &i), ENG_EPARSE); /* "1.5" is no integer */
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE);
	msg_has("n.csv:3: column 'v': '1.5x' is not a number");
	assert_int_equal(csv_next(c), 1); /* "" line is blank, skipped: next is nan */
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE);
	msg_has("n.csv:5: column 'v': 'nan' is not a finite number");
	assert_int_equal(csv_f64_nan(c, 0, &d), 0);
	assert_true(isnan(d));
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE);
	msg_has("n.csv:6:");
	assert_int_equal(csv_f64_nan(c, 0, &d), ENG_EPARSE); /* infinity stays an error */
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE); /* leading space */
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_i64(c, 0, &i), 0);
	assert_int_equal(i, -1);
	assert_int_equal(csv_u64(c, 0, &u), ENG_EPARSE); /* strtoull would wrap "-1" */
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE); /* overflows to infinity */
	assert_int_equal(csv_next(c), 0);
	csv_free(c);

	p = write_tmp("e.csv", "a,b\n,7\n5691266090916432,18446744073709551616\n");
	assert_int_equal(csv_open(p, &c), 0);
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_f64(c, 0, &d), ENG_EPARSE);
	msg_has("e.csv:2: column 'a' is empty");
	d = 0;
	assert_int_equal(csv_f64_opt(c, 0, 3.25, &d), 0);
	NEAR(d, 3.25, 0);
	assert_int_equal(csv_next(c), 1);
	/* 16-digit ADT ids pass exactly (a double would round 2^53 + 1) */
	assert_int_equal(csv_u64(c, 0, &u), 0);
	assert_true(u == 5691266090916432ull);
	assert_int_equal(csv_u64(c, 1, &u), ENG_ERANGE);
	csv_free(c);
}

/* The row estimate: from the file's size and its first row, near the true count. */
static void test_csv_rows_estimate(void **state)
{
	char *text = malloc(64 * 1000 + 64), *w;
	struct csv *c;
	size_t i, est;

	(void)state;
	assert_non_null(text);
	w = text + sprintf(text, "t_ns,x\n");
	for (i = 0; i < 1000; i++)
		w += sprintf(w, "%zu,%s\n", 1000000 + i, i % 2 ? "0.25" : "0.5"); /* 13 or 12 bytes */
	assert_int_equal(csv_open(write_tmp("e.csv", text), &c), 0);
	assert_int_equal(csv_rows_estimate(c), 0); /* no data row read yet */
	assert_int_equal(csv_next(c), 1);
	est = csv_rows_estimate(c);
	/* (12500 bytes / 12 per row) + 3% + 1 = 1074: at least the rows, at most 8% over */
	assert_true(est >= 1000 && est <= 1080);
	csv_free(c);
	free(text);
}

static void test_csv_truncated_and_long_rows(void **state)
{
	const char *p = write_tmp("t.csv", "a,b,c\n1,2,3\n4,5\n");
	struct csv *c;

	(void)state;
	assert_int_equal(csv_open(p, &c), 0);
	assert_int_equal(csv_next(c), 1);
	assert_int_equal(csv_next(c), ENG_EPARSE);
	msg_has("t.csv:3: 2 cells, the header has 3 (truncated row)");
	csv_free(c);
	p = write_tmp("q.csv", "a\n\"open\n");
	assert_int_equal(csv_open(p, &c), 0);
	assert_int_equal(csv_next(c), ENG_EPARSE);
	msg_has("q.csv:2: unterminated quote");
	csv_free(c);
	assert_int_equal(csv_open(write_tmp("empty.csv", ""), &c), ENG_EPARSE);
	msg_has("empty file");
	assert_int_equal(csv_open(write_tmp("dup.csv", "a,b,a\n"), &c), ENG_EPARSE);
	msg_has("column 'a' appears twice");
	assert_int_equal(csv_open(DATA "no/such.csv", &c), ENG_ENOENT);
	msg_has("cannot open 'tests/data/no/such.csv'");
}

static void test_jsonfile_parse_error_line(void **state)
{
	cJSON *j = NULL;
	const char *p = write_tmp("j.json", "{\n  \"a\": 1,\n  \"b\": [1, 2,,]\n}\n");
	int64_t v = 0;
	double vec[3];

	(void)state;
	assert_int_equal(jsonfile_read(p, &j), ENG_EPARSE);
	msg_has("j.json: parse error near line 3");
	assert_null(j);
	p = write_tmp("k.json", "{\"a\": 1.5, \"v\": [1, \"x\", 3], \"n\": 9007199254740993}\n");
	assert_int_equal(jsonfile_read(p, &j), 0);
	assert_int_equal(jsonfile_i64(j, "a", true, "k.json: o", &v), ENG_EPARSE);
	msg_has("k.json: o.a: expected an integer");
	assert_int_equal(jsonfile_vec(j, "v", 3, true, "k.json:", vec), ENG_EPARSE);
	msg_has("k.json: v[1]: expected a finite number");
	assert_int_equal(jsonfile_i64(j, "n", true, "k.json:", &v), ENG_ERANGE);
	assert_int_equal(jsonfile_i64(j, "missing", true, "k.json:", &v), ENG_EPARSE);
	msg_has("k.json: missing: missing");
	v = 42;
	assert_int_equal(jsonfile_i64(j, "missing", false, "k.json:", &v), 0);
	assert_int_equal(v, 42);
	cJSON_Delete(j);
	p = write_tmp("l.json", "{} {}\n");
	assert_int_equal(jsonfile_read(p, &j), ENG_EPARSE);
	msg_has("text after the value");
}

/* ======================= native ======================= */

static void test_native_round_trip(void **state)
{
	struct recording *rec = NULL;
	struct pose p;
	struct obb b;
	vec3 fwd = { 0, 0, 1 }, w;
	long cup, spoon, mug, table;
	double n;

	(void)state;
	assert_int_equal(recording_detect(DATA "native"), REC_LAYOUT_NATIVE);
	assert_int_equal(recording_load(DATA "native", REC_LAYOUT_AUTO, &rec), 0);
	assert_string_equal(rec->layout, "proxima-recording/1");
	assert_string_equal(rec->id, "hand-kitchen-01");
	assert_null(rec->warnings);

	/* trajectory.csv: 5 rows as written, t in ns */
	assert_int_equal(rec->ntraj, 5);
	assert_true(rec->traj[0].t_ns == 1000000000);
	assert_true(rec->traj[4].t_ns == 1400000000);
	NEAR(rec->traj[3].pose.t[0], 0.3, 1e-6);
	NEAR(rec->traj[3].pose.t[2], 1.6, 1e-6);
	/* row 3 holds twice the unit quaternion of a 20 deg yaw: normalised silently */
	NEAR(rec->traj[2].pose.q[0], -0.579227965, 1e-6);
	NEAR(rec->traj[2].pose.q[1], 0.405579788, 1e-6);
	NEAR(rec->traj[2].pose.q[3], 0.579227965, 1e-6);
	/* the camera (OpenCV, +Z forward) looks along world +X at t0 ... */
	pose_rotate(&rec->traj[0].pose, fwd, w);
	NEAR(w[0], 1, 1e-6);
	NEAR(w[1], 0, 1e-6);
	NEAR(w[2], 0, 1e-6);
	/* ... and yaws 10 deg left per row: (cos 40, sin 40, 0) at t4 */
	pose_rotate(&rec->traj[4].pose, fwd, w);
	NEAR(w[0], cos(40 * M_PI / 180), 1e-6);
	NEAR(w[1], sin(40 * M_PI / 180), 1e-6);
	NEAR(rec->info_traj.rate_hz, 10.0, 1e-9);
	assert_string_equal(rec->info_traj.file, "trajectory.csv");

	/* gaze.csv: directions normalised, empty depth = 0 */
	assert_int_equal(rec->ngaze, 4);
	assert_int_equal(rec->gaze_rows, 4);
	n = sqrt(3.0 * 3.0 + 0.9 * 0.9);
	NEAR(rec->gaze[1].d[0], 3.0 / n, 1e-6);
	NEAR(rec->gaze[1].d[2], -0.9 / n, 1e-6);
	NEAR(rec->gaze[1].depth_m, 0, 0);
	NEAR(rec->gaze[0].depth_m, 2.1, 1e-6);
	NEAR(rec->gaze[3].d[0], 0.8, 1e-6);
	NEAR(rec->gaze[3].d[1], 0.6, 1e-6);

	/* camera and video from recording.json */
	assert_int_equal(rec->camera.model, REC_CAM_PINHOLE);
	assert_int_equal(rec->camera.width, 640);
	NEAR(rec->camera.fx, 500, 0);
	NEAR(rec->camera.cy, 240, 0);
	/* horizontal fov = 2 atan(320 / 500) */
	NEAR(rec->camera.fov_deg, 2 * atan(320.0 / 500.0) * 180 / M_PI, 1e-4);
	assert_string_equal(rec->video.path, "video.mp4");
	assert_true(rec->video.t0_ns == 1000000000);
	NEAR(rec->video.fps, 30, 0);

	/* objects.json */
	assert_int_equal(rec->nobjects, 4);
	mug = recording_find_object(rec, "mug-1");
	table = recording_find_object(rec, "table-1");
	cup = recording_find_object(rec, "cup-1");
	spoon = recording_find_object(rec, "spoon-1");
	assert_true(mug == 0 && table == 1 && cup == 2 && spoon == 3);
	assert_string_equal(rec->objects[table].category, ""); /* none given */
	assert_string_equal(rec->objects[cup].category, "cup");
	assert_int_equal(rec->objects[mug].motion, REC_STATIC);
	assert_int_equal(rec->objects[spoon].motion, REC_DYNAMIC);
	/* mug: pose t (2, 0, 0.9) + local centre (0, 0, 0.06) */
	recording_object_box_at(rec, (size_t)mug, 1200000000, &b);
	NEAR(b.c[0], 2.0, 1e-6);
	NEAR(b.c[2], 0.96, 1e-6);
	NEAR(b.h[2], 0.06, 1e-6);
	/* table: yawed 90 deg, so its local x axis points along world +Y */
	recording_object_box_at(rec, (size_t)table, 1000000000, &b);
	NEAR(b.ax[0][1], 1, 1e-6);
	NEAR(b.h[0], 0.6, 1e-6);

	/* object_poses.csv rows were interleaved: grouped per object, sorted by time */
	assert_int_equal(rec->nobj_poses, 5);
	assert_int_equal(rec->objects[cup].pose_count, 3);
	assert_int_equal(rec->objects[spoon].pose_count, 2);
	assert_true(rec->obj_poses[rec->objects[cup].pose_first].t_ns == 1200000000);
	assert_true(rec->obj_poses[rec->objects[cup].pose_first + 2].t_ns == 1400000000);
	assert_true(rec->obj_poses[rec->objects[spoon].pose_first].t_ns == 1100000000);
	/* cup: resting pose before its first sample, then interpolated */
	recording_object_pose_at(rec, (size_t)cup, 1000000000, &p);
	NEAR(p.t[0], 1.8, 1e-6);
	NEAR(p.t[2], 0.95, 1e-6);
	recording_object_pose_at(rec, (size_t)cup, 1250000000, &p);
	NEAR(p.t[0], (1.8 + 1.6) / 2, 1e-6);
	NEAR(p.t[1], (-0.3 - 0.1) / 2, 1e-6);
	NEAR(p.t[2], (1.05 + 1.15) / 2, 1e-6);
	recording_object_pose_at(rec, (size_t)cup, 2000000000, &p);
	NEAR(p.t[0], 1.4, 1e-6);
	/* spoon: no resting pose given, so the first sample; halfway it has turned 45 deg */
	recording_object_pose_at(rec, (size_t)spoon, 1000000000, &p);
	NEAR(p.t[2], 0.95, 1e-6);
	recording_object_box_at(rec, (size_t)spoon, 1200000000, &b);
	NEAR(b.ax[0][0], cos(M_PI / 4), 1e-5);
	NEAR(b.ax[0][1], sin(M_PI / 4), 1e-5);
	/* centre = (2.1, 0.2, 1.0) + R_z(45) (0.05, 0, 0) */
	NEAR(b.c[0], 2.1 + 0.05 * cos(M_PI / 4), 1e-5);
	NEAR(b.c[1], 0.2 + 0.05 * sin(M_PI / 4), 1e-5);
	NEAR(b.c[2], 1.0, 1e-5);
	/* mean rate per dynamic object: (2 + 1) steps over 0.2 + 0.2 s */
	NEAR(rec->info_objects.rate_hz, 3 / 0.4, 1e-9);

	/* actions.json: sorted by start, object ids resolved */
	assert_int_equal(rec->nactions, 3);
	assert_string_equal(rec->actions[0].description, "Look at the table");
	assert_int_equal(rec->actions[0].object, -1);
	assert_int_equal(rec->actions[0].step_id, -1);
	assert_null(rec->actions[0].verb);
	assert_null(rec->actions[0].goal);
	assert_string_equal(rec->actions[1].verb, "pick up");
	assert_int_equal(rec->actions[1].object, cup);
	assert_int_equal(rec->actions[1].hand, REC_HAND_RIGHT);
	assert_int_equal(rec->actions[1].step_id, 3);
	assert_string_equal(rec->actions[1].goal, "make tea");
	assert_int_equal(rec->actions[2].object, spoon);
	assert_int_equal(rec->actions[2].hand, REC_HAND_LEFT);
	assert_true(rec->actions[2].end_ns == 1400000000);

	/* floor: lowest box bottom = the table's (0.45 - 0.45) */
	NEAR(rec->floor_z, 0.0, 1e-6);
	recording_free(rec);
}

static void test_native_default_camera(void **state)
{
	struct recording *rec = NULL;

	(void)state;
	/* the hostile-name folder has no camera: pinhole 640x480, 90 deg */
	assert_int_equal(recording_load(DATA "bad/hostile-name", REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(rec->camera.model, REC_CAM_PINHOLE);
	assert_int_equal(rec->camera.width, 640);
	assert_int_equal(rec->camera.height, 480);
	NEAR(rec->camera.fx, 320, 1e-4); /* 320 / tan(45 deg) */
	NEAR(rec->camera.cx, 320, 0);
	NEAR(rec->camera.cy, 240, 0);
	NEAR(rec->camera.fov_deg, 90, 1e-4);
	recording_free(rec);
}

static void test_hostile_name_kept_verbatim(void **state)
{
	struct recording *rec = NULL;

	(void)state;
	assert_int_equal(recording_load(DATA "bad/hostile-name", REC_LAYOUT_AUTO, &rec), 0);
	assert_string_equal(rec->id, "hostile \"id\" <b>");
	assert_int_equal(rec->nobjects, 1);
	assert_string_equal(rec->objects[0].id, "x\"1");
	assert_string_equal(rec->objects[0].name,
			    "mug \"quoted\" <script>alert(1)</script>\nsecond line\t\\end");
	assert_string_equal(rec->objects[0].category, "<img src=x onerror=alert(1)>");
	assert_int_equal(recording_find_object(rec, "x\"1"), 0);
	recording_free(rec);
}

/* ======================= bad input ======================= */

/* Loading `dir` fails with `code`, and the message holds both strings. */
static void load_fails(const char *dir, int code, const char *want1, const char *want2)
{
	struct recording *rec = (struct recording *)&rec; /* must stay untouched */
	int rc = recording_load(dir, REC_LAYOUT_AUTO, &rec);

	if (rc != code)
		print_error("%s: rc %d (%s), wanted %d\n", dir, rc, err_msg(), code);
	assert_int_equal(rc, code);
	assert_true(rec == (struct recording *)&rec);
	msg_has(want1);
	if (want2)
		msg_has(want2);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	load_fails(DATA "bad/truncated-row", ENG_EPARSE, "truncated-row/trajectory.csv:3:",
		   "6 cells, the header has 8 (truncated row)");
	load_fails(DATA "bad/not-a-number", ENG_EPARSE, "not-a-number/trajectory.csv:3:",
		   "column 'tx': '0.1x' is not a number");
	load_fails(DATA "bad/nan-value", ENG_EPARSE, "nan-value/trajectory.csv:3:",
		   "column 'ty': 'nan' is not a finite number");
	load_fails(DATA "bad/inf-value", ENG_EPARSE, "inf-value/trajectory.csv:3:",
		   "column 'tz': 'inf' is not a finite number");
	load_fails(DATA "bad/empty-cell", ENG_EPARSE, "empty-cell/trajectory.csv:3:",
		   "column 'ty' is empty");
	load_fails(DATA "bad/zero-quaternion", ENG_EINVAL, "zero-quaternion/trajectory.csv:3:",
		   "zero quaternion");
	load_fails(DATA "bad/out-of-order", ENG_EINVAL, "out-of-order/trajectory.csv:4:",
		   "timestamps out of order");
	load_fails(DATA "bad/missing-file", ENG_ENOENT, "cannot open",
		   "missing-file/trajectory.csv");
	load_fails(DATA "bad/unknown-layout", ENG_EINVAL, "unknown-layout': unknown layout", NULL);
	load_fails(DATA "bad/malformed-json", ENG_EPARSE,
		   "malformed-json/recording.json: parse error near line 4", NULL);
	load_fails(DATA "bad/unknown-object-id", ENG_EINVAL,
		   "unknown-object-id/actions.json: actions[1].object: unknown object id 'ghost-7'",
		   NULL);
	load_fails(DATA "bad/bad-json-field", ENG_EPARSE,
		   "bad-json-field/objects.json: objects[1].half_extents[1]: expected a finite number",
		   NULL);
	load_fails(DATA "bad/adt-missing-file", ENG_ENOENT,
		   "missing required file 'scene_objects.csv'", NULL);
	load_fails(DATA "bad/adt-zero-quaternion", ENG_EINVAL,
		   "adt-zero-quaternion/scene_objects.csv:2: zero quaternion", NULL);
	load_fails(DATA "bad/mps-bad-gaze", ENG_EPARSE,
		   "mps-bad-gaze/eye_gaze/general_eye_gaze.csv:1: not an Aria eye-gaze file", NULL);
	load_fails(DATA "no-such-folder", ENG_ENOENT, "cannot open 'tests/data/no-such-folder'",
		   NULL);
}

/* Small native folders written at run time for the remaining field checks. */
static void test_bad_native_fields(void **state)
{
	static const char traj[] = "t_ns,tx,ty,tz,qx,qy,qz,qw\n1,0,0,0,0,0,0,1\n2,0,0,0,0,0,0,1\n";
	struct recording *rec = NULL;
	char dir[128];

	(void)state;
	write_tmp("trajectory.csv", traj);
	snprintf(dir, sizeof(dir), "%s", tmpdir);

	write_tmp("recording.json", "{\"format\": \"proxima-recording/2\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\"}}");
	load_fails(dir, ENG_EPARSE, "recording.json: format: 'proxima-recording/2'", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,1,0], \"streams\": {\"trajectory\": \"trajectory.csv\"}}");
	load_fails(dir, ENG_EINVAL, "recording.json: up: must be [0,0,1]", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"../../etc/passwd\"}}");
	load_fails(dir, ENG_EPARSE, "streams.trajectory: '../../etc/passwd' must be a relative path", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {}}");
	load_fails(dir, ENG_EPARSE, "recording.json: streams.trajectory: missing", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"camera\": {\"model\": \"fisheye\", \"width\": 100, \"height\": 100}, \"streams\": {\"trajectory\": \"trajectory.csv\"}}");
	load_fails(dir, ENG_EPARSE, "camera.fov_deg: missing", NULL);

	/* objects: duplicate ids, dynamic with nothing to place it, bad motion */
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\", \"objects\": \"objects.json\"}}");
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"a\", \"name\": \"a\", \"half_extents\": [1,1,1], \"motion\": \"static\", \"pose\": {\"t\": [0,0,0], \"q\": [0,0,0,1]}}, {\"id\": \"a\", \"name\": \"b\", \"half_extents\": [1,1,1], \"motion\": \"static\", \"pose\": {\"t\": [0,0,0], \"q\": [0,0,0,1]}}]}");
	load_fails(dir, ENG_EPARSE, "objects[1].id: 'a' repeats objects[0].id", NULL);
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"a\", \"name\": \"a\", \"half_extents\": [1,1,1], \"motion\": \"dynamic\"}]}");
	load_fails(dir, ENG_EINVAL, "object 'a' is dynamic but has no pose and no sample", NULL);
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"a\", \"name\": \"a\", \"half_extents\": [1,1,1], \"motion\": \"flying\"}]}");
	load_fails(dir, ENG_EPARSE, "objects[0].motion: expected \"static\" or \"dynamic\"", NULL);
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"a\", \"name\": \"a\", \"half_extents\": [1,1,1], \"motion\": \"static\", \"pose\": {\"t\": [0,0,0], \"q\": [0,0,0,0]}}]}");
	load_fails(dir, ENG_EINVAL, "objects[0].pose.q: zero quaternion", NULL);
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"a\", \"name\": \"a\", \"half_extents\": [1,-1,1], \"motion\": \"static\", \"pose\": {\"t\": [0,0,0], \"q\": [0,0,0,1]}}]}");
	load_fails(dir, ENG_ERANGE, "objects[0].half_extents[1]", NULL);

	/* object poses: unknown id, static object, duplicate time */
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\", \"objects\": \"objects.json\", \"object_poses\": \"p.csv\"}}");
	write_tmp("objects.json", "{\"objects\": [{\"id\": \"s\", \"name\": \"s\", \"half_extents\": [1,1,1], \"motion\": \"static\", \"pose\": {\"t\": [0,0,0], \"q\": [0,0,0,1]}}, {\"id\": \"d\", \"name\": \"d\", \"half_extents\": [1,1,1], \"motion\": \"dynamic\"}]}");
	write_tmp("p.csv", "object_id,t_ns,tx,ty,tz,qx,qy,qz,qw\nd,1,0,0,0,0,0,0,1\nq,1,0,0,0,0,0,0,1\n");
	load_fails(dir, ENG_EINVAL, "p.csv:3: unknown object id 'q'", NULL);
	write_tmp("p.csv", "object_id,t_ns,tx,ty,tz,qx,qy,qz,qw\ns,1,0,0,0,0,0,0,1\n");
	load_fails(dir, ENG_EINVAL, "p.csv:2: object 's' is static", NULL);
	write_tmp("p.csv", "object_id,t_ns,tx,ty,tz,qx,qy,qz,qw\nd,1,0,0,0,0,0,0,1\nd,5,0,0,0,0,0,0,1\nd,5,1,0,0,0,0,0,1\n");
	load_fails(dir, ENG_EINVAL, "p.csv:4: object 'd' has two samples at t_ns 5 (line 3)", NULL);
	/* one object's rows out of time order: a stray row is not sorted in quietly */
	write_tmp("p.csv", "object_id,t_ns,tx,ty,tz,qx,qy,qz,qw\nd,5,0,0,0,0,0,0,1\nd,1,0,0,0,0,0,0,1\n");
	load_fails(dir, ENG_EINVAL,
		   "p.csv:3: object 'd': timestamps out of order (t_ns 1 on line 3 comes after t_ns 5 on line 2)",
		   NULL);

	/* actions: end before start, bad hand */
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\", \"actions\": \"a.json\"}}");
	write_tmp("a.json", "{\"actions\": [{\"start_ns\": 5, \"end_ns\": 4, \"description\": \"x\"}]}");
	load_fails(dir, ENG_EINVAL, "a.json: actions[0].end_ns: 4 is before start_ns 5", NULL);
	write_tmp("a.json", "{\"actions\": [{\"start_ns\": 1, \"end_ns\": 4, \"description\": \"x\", \"hand\": \"third\"}]}");
	load_fails(dir, ENG_EPARSE, "actions[0].hand: expected", NULL);
	write_tmp("a.json", "{\"actions\": [{\"start_ns\": 1, \"end_ns\": 4}]}");
	load_fails(dir, ENG_EPARSE, "a.json: actions[0].description: missing", NULL);

	/* gaze: zero direction, out of order */
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\", \"gaze\": \"g.csv\"}}");
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,0,0,0,0,0,1\n");
	load_fails(dir, ENG_EINVAL, "g.csv:2: zero gaze direction", NULL);
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n2,0,0,0,1,0,0,1\n1,0,0,0,1,0,0,1\n");
	load_fails(dir, ENG_EINVAL, "g.csv:3: timestamps out of order", NULL);

	/*
	 * Two faults in one row: the one met first reading the cells in
	 * column order (a coordinate's range counts right after its number).
	 */
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,2e6,0,x,0,0,1\n");
	load_fails(dir, ENG_ERANGE, "g.csv:2: column 'oy': 2e+06 is out of range", NULL);
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,y,3e6,1,0,0,1\n");
	load_fails(dir, ENG_EPARSE, "g.csv:2: column 'oy': 'y' is not a number", NULL);
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,0,0,1,0,0,-1\n");
	load_fails(dir, ENG_ERANGE, "g.csv:2: column 'depth_m': -1 is not in", NULL);
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,0,0,1,0,0,1m\n");
	load_fails(dir, ENG_EPARSE, "g.csv:2: column 'depth_m': '1m' is not a number", NULL);
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,0,2e6,1,0,0,1m\n");
	load_fails(dir, ENG_ERANGE, "g.csv:2: column 'oz': 2e+06 is out of range", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"t2.csv\"}}");
	write_tmp("t2.csv", "t_ns,tx,ty,tz,qx,qy,qz,qw\n1,0,0,-5e6,q,0,0,1\n");
	load_fails(dir, ENG_ERANGE, "t2.csv:2: column 'tz': -5e+06 is out of range", NULL);
	write_tmp("t2.csv", "t_ns,tx,ty,tz,qx,qy,qz,qw\n1,0,0,0,0,0,2e7,\n");
	load_fails(dir, ENG_EPARSE, "t2.csv:2: column 'qw' is empty", NULL);
	write_tmp("t2.csv", "t_ns,tx,ty,tz,qx,qy,qz,qw\n1,0,0,0,0,0,2e7,1\n");
	load_fails(dir, ENG_ERANGE, "t2.csv:2: quaternion component out of range", NULL);
	write_tmp("recording.json", "{\"format\": \"proxima-recording/1\", \"id\": \"x\", \"up\": [0,0,1], \"streams\": {\"trajectory\": \"trajectory.csv\", \"gaze\": \"g.csv\"}}");

	/* and the good case loads; an empty depth is 0 (unknown) */
	write_tmp("g.csv", "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n1,0,0,0,1,0,0,1.25\n2,0,0,0,0,2,0,\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), 0);
	assert_int_equal(rec->ngaze, 2);
	assert_true(rec->gaze[0].depth_m == 1.25f && rec->gaze[1].depth_m == 0.0f);
	assert_true(rec->gaze[1].d[1] == 1.0f && rec->gaze[1].d[0] == 0.0f);
	recording_free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_columns_by_name),
		cmocka_unit_test(test_csv_strict_numbers),
		cmocka_unit_test(test_csv_numbers_as_strtod),
		cmocka_unit_test(test_csv_rows_as_written),
		cmocka_unit_test(test_csv_integers_as_strtoll),
		cmocka_unit_test(test_csv_truncated_and_long_rows),
		cmocka_unit_test(test_csv_rows_estimate),
		cmocka_unit_test(test_jsonfile_parse_error_line),
		cmocka_unit_test(test_native_round_trip),
		cmocka_unit_test(test_native_default_camera),
		cmocka_unit_test(test_hostile_name_kept_verbatim),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_bad_native_fields),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[160];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return rc;
}
