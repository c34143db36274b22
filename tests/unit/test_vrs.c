/* SPDX-License-Identifier: MIT */
/*
 * engine/recording/vrs.c on the real ADT sample (tests/data/adt/video.vrs)
 * and on small VRS files written here from the published format
 * (facebookresearch/vrs FileFormat.h, IndexRecord.h, DescriptionRecord.cpp,
 * RecordFormat.h): split-head and classic indexes, no index, lz4 and zstd
 * records, a data layout with variable-size pieces; and every kind of bad
 * input, each a clear error naming the file and the byte offset.
 *
 * The ADT literals were read independently with python3's struct module
 * from the same file (record headers, the zstd index through the zstd
 * program, the 84-byte data layout of each 214-1 record: capture_timestamp_ns
 * at offset 44). Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lz4frame.h>
#include <turbojpeg.h>
#include <zstd.h>

#include "err.h"
#include "vrs.h"
#include "test_util.h"

#define ADT_VRS "tests/data/adt/video.vrs"
#define ADT_BOXES "tests/data/adt/2d_bounding_box_rgb3.csv"

static char tmp[64];

static void msg_has(const char *want)
{
	if (!strstr(err_msg(), want)) {
		print_error("message '%s' lacks '%s'\n", err_msg(), want);
		fail();
	}
}

static const char *put(const char *name, const uint8_t *b, size_t n)
{
	static char path[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(b, 1, n, fp), n);
	fclose(fp);
	return path;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/proxima-test-vrs-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* ======================= The ADT sample ======================= */

/* The first three distinct 214-1 timestamps of the 2d_bounding_box.csv excerpt. */
static void box_times(int64_t out[3])
{
	FILE *fp = fopen(ADT_BOXES, "r");
	char line[512];
	int n = 0;

	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof(line), fp)); /* header */
	while (n < 3 && fgets(line, sizeof(line), fp)) {
		char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		long long t;

		assert_non_null(c2);
		if (strncmp(line, "214-1,", 6))
			continue;
		t = strtoll(c2 + 1, NULL, 10);
		if (!n || out[n - 1] != t)
			out[n++] = t;
	}
	fclose(fp);
	assert_int_equal(n, 3);
}

static void test_adt_rgb(void **state)
{
	static const int64_t capture[3] = { 87551170813262, 87551204152300, 87551237472175 };
	static const int64_t offsets[3] = { 60812, 574745, 1087031 };
	/* record payload minus its 84-byte data layout block */
	static const size_t jpeg_len[3] = { 354962, 353303, 353380 };
	struct vrs_file *f = NULL;
	int64_t boxes[3];
	double rate;
	int w, h;
	size_t i;

	(void)state;
	box_times(boxes);
	assert_int_equal(vrs_open(ADT_VRS, VRS_TYPE_RGB_CAMERA, VRS_INSTANCE_RGB, &f), 0);
	assert_int_equal(vrs_frame_count(f), 3);
	vrs_image_size(f, &w, &h, &rate);
	assert_int_equal(w, 1408);
	assert_int_equal(h, 1408);
	assert_true(rate == 30.0);
	for (i = 0; i < 3; i++) {
		const struct vrs_frame *fr = vrs_frame(f, i);
		uint8_t *jpg = NULL;
		size_t n = 0;
		int jw = 0, jh = 0, sub = 0, cs = 0;
		tjhandle tj = tjInitDecompress();

		assert_int_equal(fr->t_ns, capture[i]);
		/* the ground truth's frame times are within 0.1 ms of the capture times */
		assert_true(llabs(fr->t_ns - boxes[i]) < 100000);
		assert_int_equal(fr->offset, offsets[i]);
		assert_int_equal(vrs_read_jpeg(f, i, &jpg, &n), 0);
		assert_int_equal(n, jpeg_len[i]);
		assert_true(jpg[0] == 0xff && jpg[1] == 0xd8 && jpg[n - 2] == 0xff && jpg[n - 1] == 0xd9);
		assert_int_equal(tjDecompressHeader3(tj, jpg, (unsigned long)n, &jw, &jh, &sub, &cs), 0);
		assert_int_equal(jw, 1408);
		assert_int_equal(jh, 1408);
		tjDestroy(tj);
		free(jpg);
	}
	assert_string_equal(vrs_path(f), ADT_VRS);
	vrs_close(f);
	vrs_close(NULL);
}

static void test_adt_other_streams(void **state)
{
	struct vrs_file *f = NULL;
	double rate;
	int w, h;

	(void)state;
	/* SLAM left: its capture times are the ground truth's (87551170910700 ...) */
	assert_int_equal(vrs_open(ADT_VRS, 1201, 1, &f), 0);
	assert_int_equal(vrs_frame_count(f), 3);
	assert_int_equal(vrs_frame(f, 0)->t_ns, 87551170910700);
	vrs_image_size(f, &w, &h, &rate);
	assert_int_equal(w, 640);
	assert_int_equal(h, 480);
	vrs_close(f);
	f = NULL;
	assert_int_equal(vrs_open(ADT_VRS, 1202, 1, &f), ENG_EINVAL); /* the IMU */
	msg_has("stream 1202-1 is not an image stream");
	assert_int_equal(vrs_open(ADT_VRS, 999, 1, &f), ENG_ENOENT);
	msg_has("stream 999-1 has no data record");
	assert_null(f);
}

/* ======================= Bad versions of the ADT sample ======================= */

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void set64(uint8_t *p, uint64_t v)
{
	set32(p, (uint32_t)v);
	set32(p + 4, (uint32_t)(v >> 32));
}

/* Opens a modified copy; expects rc and a message with each of the needles. */
static void bad(const char *name, const uint8_t *b, size_t n, int rc, const char *m1,
		const char *m2)
{
	struct vrs_file *f = NULL;
	const char *p = put(name, b, n);

	assert_int_equal(vrs_open(p, VRS_TYPE_RGB_CAMERA, VRS_INSTANCE_RGB, &f), rc);
	assert_null(f);
	msg_has(name);
	msg_has(m1);
	if (m2)
		msg_has(m2);
}

static void test_adt_broken(void **state)
{
	size_t n;
	uint8_t *orig = tu_slurp(ADT_VRS, &n), *b = malloc(n);
	struct vrs_file *f = NULL;

	(void)state;
	assert_non_null(b);
	assert_int_equal(n, 1593340);

	bad("short.vrs", orig, 50, ENG_EPARSE, "truncated: 50 bytes", NULL);
	memcpy(b, orig, n);
	b[0] = 'X';
	bad("magic.vrs", b, n, ENG_EPARSE, "bad magic at byte offset 0", NULL);
	/* the last frame's record (1087031 + 353496 bytes) no longer fits */
	bad("cut.vrs", orig, 1200000, ENG_EPARSE, "points outside the file",
	    "record at byte offset 1087031");
	/* the index's zstd frame starts at 33156 + 32 + 68 = 33256; break its block */
	memcpy(b, orig, n);
	memset(b + 33256 + 8, 0xff, 40);
	bad("zstd.vrs", b, n, ENG_EPARSE, "broken zstd block at byte offset 33256", NULL);
	/* the second frame's record header claims more bytes than the file has */
	memcpy(b, orig, n);
	set32(b + 574745, 0xfffff000u);
	bad("overrun.vrs", b, n, ENG_EPARSE, "record at byte offset 574745",
	    "overrun the file (1593340 bytes)");
	/* ... or a size that disagrees with the index */
	memcpy(b, orig, n);
	set32(b + 574745, 353419 - 16);
	bad("mismatch.vrs", b, n, ENG_EPARSE, "byte offset 574745 does not match its index entry", NULL);
	/* the index record offset of the file header points past the end */
	memcpy(b, orig, n);
	set64(b + 24, (uint64_t)n + 100);
	bad("index.vrs", b, n, ENG_EPARSE, "points outside the file (index 1593440", NULL);
	/* the compressed configuration record of 214-1 (at 37471, payload at 37503) */
	memcpy(b, orig, n);
	memset(b + 37503 + 20, 0x5a, 64);
	bad("config.vrs", b, n, ENG_EPARSE, "broken zstd block at byte offset 37503", NULL);
	/* a JPEG block that is not a JPEG is found when the frame is read */
	memcpy(b, orig, n);
	b[60812 + 32 + 84] = 0;
	assert_int_equal(vrs_open(put("nojpeg.vrs", b, n), 214, 1, &f), 0);
	{
		uint8_t *j = NULL;
		size_t jn = 0;

		assert_int_equal(vrs_read_jpeg(f, 0, &j, &jn), ENG_EPARSE);
		msg_has("record at byte offset 60812 is not a JPEG");
		assert_null(j);
		assert_int_equal(vrs_read_jpeg(f, 1, &j, &jn), 0);
		free(j);
	}
	vrs_close(f);
	f = NULL;
	assert_int_equal(vrs_open("tests/data/adt/no-such.vrs", 214, 1, &f), ENG_ENOENT);
	msg_has("cannot open 'tests/data/adt/no-such.vrs'");
	free(b);
	free(orig);
}

/* ======================= VRS files written here ======================= */

struct out {
	uint8_t b[1 << 16];
	size_t n;
};

static void add(struct out *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof(o->b));
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void add32(struct out *o, uint32_t v)
{
	uint8_t b[4];

	set32(b, v);
	add(o, b, 4);
}

static void add_str(struct out *o, const char *s)
{
	add32(o, (uint32_t)strlen(s));
	add(o, s, strlen(s));
}

/* A record header (FileFormat::RecordHeader, 32 bytes). */
static void add_header(struct out *o, uint32_t size, uint32_t prev, int32_t type, uint32_t ver,
		       double ts, uint16_t inst, uint8_t rtype, uint8_t comp, uint32_t usize)
{
	uint8_t b[32];
	uint64_t t;

	memcpy(&t, &ts, 8);
	set32(b, size);
	set32(b + 4, prev);
	set32(b + 8, (uint32_t)type);
	set32(b + 12, ver);
	set64(b + 16, t);
	b[24] = (uint8_t)inst;
	b[25] = (uint8_t)(inst >> 8);
	b[26] = rtype;
	b[27] = comp;
	set32(b + 28, usize);
	add(o, b, 32);
}

/* A tiny grey JPEG of w x h. */
static uint8_t *tiny_jpeg(int w, int h, unsigned char grey, unsigned long *n)
{
	tjhandle tj = tjInitCompress();
	unsigned char *px = malloc((size_t)w * (size_t)h), *jpg = NULL;

	assert_non_null(px);
	memset(px, grey, (size_t)w * (size_t)h);
	assert_int_equal(tjCompress2(tj, px, w, 0, h, TJPF_GRAY, &jpg, n, TJSAMP_GRAY, 90, 0), 0);
	tjDestroy(tj);
	free(px);
	return jpg;
}

enum layout_kind { IDX_SPLIT, IDX_CLASSIC, IDX_NONE };

/*
 * Writes a VRS file of stream 214-1 with 3 frames at t = 5, 6, 7 s (capture
 * times 5e9 + 7 ...), the data records' payload "data_layout + image/jpg"
 * where the data layout has a string piece (so its size comes from its
 * index), compressed with `comp` (0 none, 1 lz4, 2 zstd), with an index of
 * `kind`.
 */
static size_t write_vrs(struct out *o, enum layout_kind kind, int comp)
{
	static const char dl[] =
		"{\"data_layout\":[{\"name\":\"frame_number\",\"type\":\"DataPieceValue<uint64_t>\",\"offset\":0},"
		"{\"name\":\"capture_timestamp_ns\",\"type\":\"DataPieceValue<int64_t>\",\"offset\":8},"
		"{\"name\":\"note\",\"type\":\"DataPieceString\",\"index\":0}]}";
	static const char cdl[] =
		"{\"data_layout\":[{\"name\":\"image_width\",\"type\":\"DataPieceValue<uint32_t>\",\"offset\":0},"
		"{\"name\":\"image_height\",\"type\":\"DataPieceValue<uint32_t>\",\"offset\":4}]}";
	struct out desc = { .n = 0 };
	size_t desc_at = 80, index_at, first_at, i, rsize[4];
	uint8_t rtype[4];
	double rts[4];
	uint32_t prev;

	o->n = 0;
	/* description record payload (format 2): one stream, no user tags, 4 vrs tags */
	add32(&desc, 1);
	add32(&desc, 214);
	add(&desc, "\x01\x00", 2);
	add32(&desc, 0);
	add32(&desc, 4);
	add_str(&desc, "DL:Configuration:1:0");
	add_str(&desc, cdl);
	add_str(&desc, "DL:Data:1:0");
	add_str(&desc, dl);
	add_str(&desc, "RF:Configuration:1");
	add_str(&desc, "data_layout/size=8");
	add_str(&desc, "RF:Data:1");
	add_str(&desc, "data_layout+image/jpg");
	add32(&desc, 0); /* file tags */

	/* file header, patched below */
	add(o, "VisionRe", 8);
	add(o, "\0\0\0\0\0\0\0\0", 8);
	add32(o, 80);
	add32(o, 32);
	add(o, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	       "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 48);
	add(o, "cord", 4);
	add(o, kind == IDX_SPLIT ? "VRS2" : "VRS1", 4);
	add_header(o, (uint32_t)(32 + desc.n), 0, 2, 2, 1.797e308, 0, 3, 0, 0);
	add(o, desc.b, desc.n);
	prev = (uint32_t)(32 + desc.n);
	index_at = o->n;
	if (kind == IDX_SPLIT) /* uncompressed split index of 4 entries */
		add_header(o, 32 + 4 * 19, prev, 1, 3, 1.797e308, 0, 3, 0, 0), o->n += 4 * 19;
	first_at = o->n;
	/* configuration record: 1408 x 704 */
	add_header(o, 32 + 8, 0, 214, 1, 0.0, 1, 2, 0, 0);
	add32(o, 1408);
	add32(o, 704);
	rsize[0] = 40;
	rtype[0] = 2;
	rts[0] = 0;
	for (i = 1; i <= 3; i++) {
		unsigned long jn = 0;
		uint8_t *jpg = tiny_jpeg(16, 8, (unsigned char)(60 * i), &jn);
		uint8_t pay[4096], zbuf[8192];
		size_t pn = 0, zn;
		double ts = 4.0 + (double)i;

		/* fixed part (16) + var index (8) + "hi" + jpeg */
		set64(pay, i);
		set64(pay + 8, (uint64_t)(4000000000 + (int64_t)i * 1000000000 + 7));
		set32(pay + 16, 0);
		set32(pay + 20, 2);
		memcpy(pay + 24, "hi", 2);
		pn = 26;
		assert_true(pn + jn <= sizeof(pay));
		memcpy(pay + pn, jpg, jn);
		pn += jn;
		tjFree(jpg);
		if (comp == 2) {
			zn = ZSTD_compress(zbuf, sizeof(zbuf), pay, pn, 3);
			assert_false(ZSTD_isError(zn));
		} else if (comp == 1) {
			zn = LZ4F_compressFrame(zbuf, sizeof(zbuf), pay, pn, NULL);
			assert_false(LZ4F_isError(zn));
		} else {
			zn = 0;
		}
		if (comp) {
			add_header(o, (uint32_t)(32 + zn), 0, 214, 1, ts, 1, 3, (uint8_t)comp, (uint32_t)pn);
			add(o, zbuf, zn);
			rsize[i] = 32 + zn;
		} else {
			add_header(o, (uint32_t)(32 + pn), 0, 214, 1, ts, 1, 3, 0, 0);
			add(o, pay, pn);
			rsize[i] = 32 + pn;
		}
		rtype[i] = 3;
		rts[i] = ts;
	}
	if (kind == IDX_CLASSIC) {
		index_at = o->n;
		add_header(o, (uint32_t)(32 + 4 + 6 + 4 + 4 * 19), 0, 1, 2, 1.797e308, 0, 3, 0, 0);
		add32(o, 1);
		add32(o, 214);
		add(o, "\x01\x00", 2);
		add32(o, 4);
	}
	for (i = 0; kind != IDX_NONE && i < 4; i++) {
		uint8_t e[19];
		uint64_t t;
		size_t at = kind == IDX_SPLIT ? index_at + 32 + i * 19 : o->n;

		memcpy(&t, &rts[i], 8);
		set64(e, t);
		set32(e + 8, (uint32_t)rsize[i]);
		e[12] = rtype[i];
		set32(e + 13, 214);
		e[17] = 1;
		e[18] = 0;
		if (kind == IDX_SPLIT)
			memcpy(o->b + at, e, 19);
		else
			add(o, e, 19);
	}
	set64(o->b + 24, kind == IDX_NONE ? 0 : index_at);
	set64(o->b + 32, desc_at);
	set64(o->b + 40, kind == IDX_SPLIT ? first_at : 0);
	return first_at;
}

static void check_written(const char *name, enum layout_kind kind, int comp)
{
	struct out *o = calloc(1, sizeof(*o));
	struct vrs_file *f = NULL;
	double rate;
	int w, h, i;

	assert_non_null(o);
	write_vrs(o, kind, comp);
	if (vrs_open(put(name, o->b, o->n), 214, 1, &f))
		print_error("%s: %s\n", name, err_msg());
	assert_non_null(f);
	assert_int_equal(vrs_frame_count(f), 3);
	vrs_image_size(f, &w, &h, &rate);
	assert_int_equal(w, 1408);
	assert_int_equal(h, 704);
	assert_true(rate == 0);
	for (i = 0; i < 3; i++) {
		uint8_t *j = NULL;
		size_t n = 0;
		int jw = 0, jh = 0, sub = 0, cs = 0;
		tjhandle tj = tjInitDecompress();

		assert_int_equal(vrs_frame(f, (size_t)i)->t_ns, 5000000007LL + i * 1000000000LL);
		assert_true(vrs_frame(f, (size_t)i)->record_s == 5.0 + i);
		assert_int_equal(vrs_read_jpeg(f, (size_t)i, &j, &n), 0);
		assert_int_equal(tjDecompressHeader3(tj, j, (unsigned long)n, &jw, &jh, &sub, &cs), 0);
		assert_int_equal(jw, 16);
		assert_int_equal(jh, 8);
		tjDestroy(tj);
		free(j);
	}
	vrs_close(f);
	free(o);
}

static void test_written_files(void **state)
{
	(void)state;
	check_written("split.vrs", IDX_SPLIT, 0);
	check_written("classic.vrs", IDX_CLASSIC, 0);
	check_written("noindex.vrs", IDX_NONE, 0);
	check_written("lz4.vrs", IDX_SPLIT, 1);
	check_written("zstd.vrs", IDX_CLASSIC, 2);
}

static void test_written_broken(void **state)
{
	struct out *o = calloc(1, sizeof(*o));
	struct vrs_file *f = NULL;
	size_t first;
	char want[128];

	(void)state;
	assert_non_null(o);
	/* an lz4 record cut short: its header still claims the full uncompressed size */
	first = write_vrs(o, IDX_NONE, 1);
	{
		size_t rec1 = first + 40; /* after the 40-byte configuration record */
		uint8_t *p = o->b + rec1;
		uint32_t size = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;

		memset(p + 32 + 7, 0, size - 32 - 7); /* the frame's blocks zeroed */
		assert_int_equal(vrs_open(put("lz4bad.vrs", o->b, o->n), 214, 1, &f), ENG_EPARSE);
		snprintf(want, sizeof(want), "broken lz4 block at byte offset %zu", rec1 + 32);
		msg_has(want);
	}
	/* a description tag whose length runs past the record */
	first = write_vrs(o, IDX_SPLIT, 0);
	set32(o->b + 80 + 32 + 4 + 6 + 4 + 4, 60000);
	assert_int_equal(vrs_open(put("desc.vrs", o->b, o->n), 214, 1, &f), ENG_EPARSE);
	msg_has("a 60000-byte string at byte offset 130 overruns the record");
	/* a split index entry whose record overruns the file */
	write_vrs(o, IDX_SPLIT, 0);
	o->n -= 10;
	assert_int_equal(vrs_open(put("split-cut.vrs", o->b, o->n), 214, 1, &f), ENG_EPARSE);
	msg_has("entry 3 points outside the file");
	/* no index and a record cut short */
	write_vrs(o, IDX_NONE, 0);
	o->n -= 10;
	assert_int_equal(vrs_open(put("scan-cut.vrs", o->b, o->n), 214, 1, &f), ENG_EPARSE);
	msg_has("overrun the file");
	(void)first;
	assert_null(f);
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adt_rgb),
		cmocka_unit_test(test_adt_other_streams),
		cmocka_unit_test(test_adt_broken),
		cmocka_unit_test(test_written_files),
		cmocka_unit_test(test_written_broken),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
