/* SPDX-License-Identifier: MIT */
/*
 * The VRS reader: file header, description record, index (classic and
 * split-head), record formats and data layouts, zstd and lz4 records, and
 * the JPEG frames of one image stream with their capture times.
 */
#include "vrs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <lz4frame.h>
#include <zstd.h>

#include "banned.h"
#include "err.h"

/* ======================= Format constants ======================= */

#define VRS_FILE_HEADER_SIZE 80    /* sizeof(FileFormat::FileHeader) */
#define VRS_RECORD_HEADER_SIZE 32  /* sizeof(FileFormat::RecordHeader) */
#define VRS_HEADER_GROWTH_MAX 200  /* headers may grow, but not by more */
#define VRS_DISK_RECORD_INFO 19    /* IndexRecord::DiskRecordInfo, packed */
#define VRS_DISK_STREAM_ID 6       /* IndexRecord::DiskStreamId, packed */
#define VRS_INDEX_CLASSIC 2
#define VRS_INDEX_SPLIT 3
#define VRS_TYPE_INDEX 1           /* RecordableTypeId::VRSIndex */
#define VRS_TYPE_DESCRIPTION 2     /* RecordableTypeId::VRSDescription */
#define VRS_DESCRIPTION_V2 2       /* stream tags as maps */
#define VRS_LEGACY_TEST_IDS 100000 /* type ids from here are legacy test devices */
#define VRS_TEST_DEVICES 65500     /* ... which VRS reads as RecordableTypeId::TestDevices + n */
#define VRS_PREFIX 4096            /* bytes of a plain data record read to find its blocks */

enum vrs_record_type { VRS_REC_STATE = 1, VRS_REC_CONFIGURATION = 2, VRS_REC_DATA = 3, VRS_REC_TAGS = 4 };
enum vrs_compression { VRS_COMP_NONE = 0, VRS_COMP_LZ4 = 1, VRS_COMP_ZSTD = 2 };

/* Caps that keep a hostile file from asking for unbounded memory. */
#define VRS_MAX_PAYLOAD (512u << 20)   /* one record, uncompressed */
#define VRS_MAX_INDEX_ENTRIES 50000000 /* IndexRecord's own limit is about this */
#define VRS_MAX_TAGS 4096              /* vrs tags kept for the stream */
#define VRS_MAX_BLOCKS 16              /* content blocks in one record format */
#define VRS_MAX_FORMATS 32             /* record formats of one stream */

/* ======================= Types ======================= */

/* A record header, decoded. */
struct rec_hdr {
	uint32_t size;       /* header + payload on disk */
	uint32_t prev;
	int32_t type_id;
	uint32_t version;    /* format version of the payload */
	double ts;           /* record timestamp, s */
	uint16_t instance;
	uint8_t rtype;       /* enum vrs_record_type */
	uint8_t comp;        /* enum vrs_compression */
	uint32_t usize;      /* uncompressed payload size, 0 when stored plain */
};

/* One index entry of the stream being read. */
struct entry {
	int64_t offset;
	uint32_t size;
	uint8_t rtype;
	double ts;
};

enum block_kind { BLK_CUSTOM, BLK_EMPTY, BLK_DATA_LAYOUT, BLK_IMAGE, BLK_AUDIO, BLK_UNKNOWN };

/* A field of a DataLayout that the reader uses. */
struct dl_field {
	long offset;     /* in the fixed part, -1 when absent */
	int size;        /* bytes of its type */
};

/* A DataLayout block description (the DL tag's JSON). */
struct layout {
	long fixed;            /* bytes of the fixed pieces, -1 when a type is unknown */
	long nvar;             /* variable-size pieces (their index follows the fixed part) */
	struct dl_field capture_ns, width, height, rate;
};

/* One content block of a record format. */
struct block {
	enum block_kind kind;
	int64_t size;          /* -1 when the format does not say */
	char image[16];        /* image blocks: "jpg", "raw", "video", ... */
	struct layout *dl;     /* data_layout blocks: its layout, or NULL */
};

/* A record format of the stream, "RF:<type>:<version>". */
struct format {
	uint8_t rtype;
	uint32_t version;
	size_t nblocks;
	struct block blocks[VRS_MAX_BLOCKS];
};

/* Where a frame's JPEG lies in its (uncompressed) payload. */
struct frame_loc {
	uint32_t img_off, img_len;
};

struct vrs_file {
	char *path;
	int fd;
	int64_t fsize;
	uint32_t fhs, rhs;               /* file and record header sizes */
	int32_t type_id;
	uint16_t instance;
	char **tags;                     /* the stream's vrs tags, name then value */
	size_t ntags;
	struct format formats[VRS_MAX_FORMATS];
	size_t nformats;
	struct entry *entries;           /* the stream's records, index order */
	size_t nentries;
	struct vrs_frame *frames;        /* sorted by time */
	struct frame_loc *locs;          /* parallel to frames */
	size_t nframes;
	int width, height;
	double rate_hz;
};

/* ======================= Bytes ======================= */

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static double lef64(const uint8_t *p)
{
	uint64_t u = le64(p);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Reads n bytes at off; a short file is ENG_EPARSE naming `what` and off. */
static int read_at(struct vrs_file *f, int64_t off, void *buf, size_t n, const char *what)
{
	size_t done = 0;

	if (off < 0 || (uint64_t)off > (uint64_t)f->fsize || n > (uint64_t)(f->fsize - off))
		return err_set(ENG_EPARSE,
			       "%s: truncated: %s at byte offset %" PRId64 " needs %zu bytes, the file has %" PRId64,
			       f->path, what, off, n, f->fsize);
	while (done < n) {
		ssize_t r = pread(f->fd, (uint8_t *)buf + done, n - done, (off_t)(off + (int64_t)done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;

			return err_set(ENG_EIO, "%s: cannot read %s at byte offset %" PRId64 ": %s", f->path,
				       what, off, r < 0 ? strerror(e) : "end of file");
		}
		done += (size_t)r;
	}
	return 0;
}

/*
 * The recordable type id as VRS reads it: legacy test-device ids from
 * 100000 up are moved to RecordableTypeId::TestDevices (65500) and up.
 */
static int32_t type_of(int32_t raw)
{
	if (raw >= VRS_LEGACY_TEST_IDS)
		return raw - VRS_LEGACY_TEST_IDS + VRS_TEST_DEVICES;
	return raw;
}

static void parse_hdr(const uint8_t *b, struct rec_hdr *h)
{
	h->size = le32(b);
	h->prev = le32(b + 4);
	h->type_id = type_of((int32_t)le32(b + 8));
	h->version = le32(b + 12);
	h->ts = lef64(b + 16);
	h->instance = le16(b + 24);
	h->rtype = b[26];
	h->comp = b[27];
	h->usize = le32(b + 28);
}

/* Reads and checks the record header at off. */
static int read_hdr(struct vrs_file *f, int64_t off, const char *what, struct rec_hdr *h)
{
	uint8_t b[VRS_RECORD_HEADER_SIZE];
	int rc = read_at(f, off, b, sizeof(b), what);

	if (rc)
		return rc;
	parse_hdr(b, h);
	if (h->size < f->rhs)
		return err_set(ENG_EPARSE, "%s: %s at byte offset %" PRId64 ": record size %" PRIu32
			       " is smaller than its header (%" PRIu32 " bytes)", f->path, what, off,
			       h->size, f->rhs);
	if ((uint64_t)off + h->size > (uint64_t)f->fsize)
		return err_set(ENG_EPARSE, "%s: %s at byte offset %" PRId64 ": its %" PRIu32
			       " bytes overrun the file (%" PRId64 " bytes)", f->path, what, off, h->size,
			       f->fsize);
	if (h->rtype < VRS_REC_STATE || h->rtype > VRS_REC_TAGS)
		return err_set(ENG_EPARSE, "%s: %s at byte offset %" PRId64 ": unknown record type %u",
			       f->path, what, off, h->rtype);
	if (h->comp > VRS_COMP_ZSTD)
		return err_set(ENG_EPARSE, "%s: %s at byte offset %" PRId64 ": unknown compression %u",
			       f->path, what, off, h->comp);
	return 0;
}

/* ======================= Decompression ======================= */

/*
 * Decompresses src (a zstd or lz4 frame stream) into exactly dlen bytes
 * of dst; input left over after that is ignored (VRS pads some records).
 * `off` is the byte offset of the compressed data, for messages.
 */
static int decompress(const struct vrs_file *f, int comp, const uint8_t *src, size_t slen,
		      uint8_t *dst, size_t dlen, int64_t off)
{
	size_t got = 0;
	int rc = 0;

	if (comp == VRS_COMP_ZSTD) {
		ZSTD_DStream *z = ZSTD_createDStream();
		ZSTD_inBuffer in = { src, slen, 0 };
		ZSTD_outBuffer out = { dst, dlen, 0 };

		if (!z)
			return ENG_ENOMEM;
		ZSTD_initDStream(z);
		while (out.pos < out.size) {
			size_t before_in = in.pos, before_out = out.pos;
			size_t r = ZSTD_decompressStream(z, &out, &in);

			if (ZSTD_isError(r)) {
				rc = err_set(ENG_EPARSE, "%s: broken zstd block at byte offset %" PRId64
					     " (after %zu of %zu input bytes): %s", f->path, off, in.pos, slen,
					     ZSTD_getErrorName(r));
				break;
			}
			if (in.pos == before_in && out.pos == before_out)
				break; /* no progress: input exhausted */
		}
		got = out.pos;
		ZSTD_freeDStream(z);
	} else if (comp == VRS_COMP_LZ4) {
		LZ4F_dctx *z = NULL;
		size_t ip = 0;

		if (LZ4F_isError(LZ4F_createDecompressionContext(&z, LZ4F_VERSION)))
			return ENG_ENOMEM;
		while (got < dlen && ip < slen) {
			size_t dn = dlen - got, sn = slen - ip;
			size_t r = LZ4F_decompress(z, dst + got, &dn, src + ip, &sn, NULL);

			if (LZ4F_isError(r)) {
				rc = err_set(ENG_EPARSE, "%s: broken lz4 block at byte offset %" PRId64
					     " (after %zu of %zu input bytes): %s", f->path, off, ip, slen,
					     LZ4F_getErrorName(r));
				break;
			}
			got += dn;
			ip += sn;
			if (!dn && !sn)
				break;
		}
		LZ4F_freeDecompressionContext(z);
	} else {
		return err_set(ENG_EPARSE, "%s: unknown compression %d at byte offset %" PRId64, f->path,
			       comp, off);
	}
	if (!rc && got != dlen)
		rc = err_set(ENG_EPARSE, "%s: broken compressed block at byte offset %" PRId64
			     ": it gives %zu of the %zu bytes it should", f->path, off, got, dlen);
	return rc;
}

/*
 * The uncompressed payload of the record at off with header h: a new
 * buffer in *out of *len bytes.
 */
static int read_payload(struct vrs_file *f, int64_t off, const struct rec_hdr *h,
			uint8_t **out, uint32_t *len)
{
	uint32_t disk = h->size - f->rhs;
	uint8_t *raw = NULL, *plain = NULL;
	int rc;

	*out = NULL;
	*len = 0;
	if (h->comp == VRS_COMP_NONE || h->usize == 0) {
		raw = malloc(disk ? disk : 1);
		if (!raw)
			return ENG_ENOMEM;
		rc = read_at(f, off + f->rhs, raw, disk, "record payload");
		if (rc) {
			free(raw);
			return rc;
		}
		*out = raw;
		*len = disk;
		return 0;
	}
	if (h->usize > VRS_MAX_PAYLOAD)
		return err_set(ENG_EPARSE, "%s: record at byte offset %" PRId64 ": uncompressed size %" PRIu32
			       " bytes is past the %u-byte limit", f->path, off, h->usize, VRS_MAX_PAYLOAD);
	raw = malloc(disk ? disk : 1);
	plain = malloc(h->usize);
	if (!raw || !plain) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = read_at(f, off + f->rhs, raw, disk, "record payload");
	if (!rc)
		rc = decompress(f, h->comp, raw, disk, plain, h->usize, off + f->rhs);
	if (!rc) {
		*out = plain;
		*len = h->usize;
		plain = NULL;
	}
out:
	free(raw);
	free(plain);
	return rc;
}

/* ======================= Description record ======================= */

/* A bounded reader over a byte range, for the description record. */
struct cursor {
	const uint8_t *p;
	size_t n, pos;
	int64_t base;   /* file offset of p[0] */
};

static int cur_u32(const struct vrs_file *f, struct cursor *c, uint32_t *v)
{
	if (c->n - c->pos < 4)
		return err_set(ENG_EPARSE, "%s: description record truncated at byte offset %" PRId64,
			       f->path, c->base + (int64_t)c->pos);
	*v = le32(c->p + c->pos);
	c->pos += 4;
	return 0;
}

/* A length-prefixed string: its bytes stay in the cursor's buffer. */
static int cur_str(const struct vrs_file *f, struct cursor *c, const uint8_t **s, uint32_t *len)
{
	int rc = cur_u32(f, c, len);

	if (rc)
		return rc;
	if (*len > c->n - c->pos)
		return err_set(ENG_EPARSE, "%s: description record: a %" PRIu32 "-byte string at byte offset %"
			       PRId64 " overruns the record", f->path, *len,
			       c->base + (int64_t)c->pos - 4);
	*s = c->p + c->pos;
	c->pos += *len;
	return 0;
}

/* Reads one name/value map; keeps the pairs when keep. */
static int read_map(struct vrs_file *f, struct cursor *c, bool keep)
{
	uint32_t count, i;
	int rc = cur_u32(f, c, &count);

	for (i = 0; !rc && i < count; i++) {
		const uint8_t *name = NULL, *value = NULL;
		uint32_t nl = 0, vl = 0;

		rc = cur_str(f, c, &name, &nl);
		rc = rc ? rc : cur_str(f, c, &value, &vl);
		if (rc || !keep)
			continue;
		if (f->ntags / 2 >= VRS_MAX_TAGS)
			return err_set(ENG_EPARSE, "%s: description record: more than %d tags for stream %"
				       PRId32 "-%u", f->path, VRS_MAX_TAGS, f->type_id, f->instance);
		if (!(f->ntags % 64)) {
			char **t = realloc(f->tags, (f->ntags + 64) * sizeof(*t));

			if (!t)
				return ENG_ENOMEM;
			f->tags = t;
		}
		f->tags[f->ntags] = strndup((const char *)name, nl);
		f->tags[f->ntags + 1] = strndup((const char *)value, vl);
		f->ntags += 2;
		if (!f->tags[f->ntags - 2] || !f->tags[f->ntags - 1])
			return ENG_ENOMEM;
	}
	return rc;
}

static int read_description(struct vrs_file *f, int64_t off, uint32_t *size)
{
	struct rec_hdr h;
	struct cursor c;
	uint8_t *buf = NULL;
	uint32_t len, n, i;
	int rc;

	rc = read_hdr(f, off, "description record", &h);
	if (rc)
		return rc;
	*size = h.size;
	if (h.type_id != VRS_TYPE_DESCRIPTION)
		return err_set(ENG_EPARSE, "%s: the description record at byte offset %" PRId64
			       " has type id %" PRId32 ", not %d", f->path, off, h.type_id, VRS_TYPE_DESCRIPTION);
	if (h.version != VRS_DESCRIPTION_V2)
		return err_set(ENG_EPARSE, "%s: description record format %" PRIu32
			       " at byte offset %" PRId64 " is not supported (only %d)", f->path, h.version,
			       off, VRS_DESCRIPTION_V2);
	rc = read_payload(f, off, &h, &buf, &len);
	if (rc)
		return rc;
	c.p = buf;
	c.n = len;
	c.pos = 0;
	c.base = off + f->rhs;
	rc = cur_u32(f, &c, &n);
	for (i = 0; !rc && i < n; i++) {
		int32_t tid;
		uint16_t inst;
		bool ours;

		if (c.n - c.pos < VRS_DISK_STREAM_ID) {
			rc = err_set(ENG_EPARSE, "%s: description record truncated at byte offset %" PRId64,
				     f->path, c.base + (int64_t)c.pos);
			break;
		}
		tid = type_of((int32_t)le32(c.p + c.pos));
		inst = le16(c.p + c.pos + 4);
		c.pos += VRS_DISK_STREAM_ID;
		ours = tid == f->type_id && inst == f->instance;
		rc = read_map(f, &c, false);            /* user tags */
		rc = rc ? rc : read_map(f, &c, ours);   /* vrs tags */
	}
	free(buf);
	return rc;
}

/* The value of the stream's vrs tag `name`, or NULL. */
static const char *tag(const struct vrs_file *f, const char *name)
{
	size_t i;

	for (i = 0; i + 1 < f->ntags; i += 2)
		if (!strcmp(f->tags[i], name))
			return f->tags[i + 1];
	return NULL;
}

/* ======================= Record formats and data layouts ======================= */

static const char *type_name(uint8_t rtype)
{
	switch (rtype) {
	case VRS_REC_STATE: return "State";
	case VRS_REC_CONFIGURATION: return "Configuration";
	case VRS_REC_DATA: return "Data";
	case VRS_REC_TAGS: return "Tags";
	default: return "Undefined";
	}
}

/* Bytes of a DataPieceValue<T> / DataPieceArray<T> element type, or 0. */
static int piece_size(const char *t)
{
	static const struct {
		const char *name;
		int size;
	} sizes[] = {
		{ "int8_t", 1 }, { "uint8_t", 1 }, { "Bool", 1 }, { "char", 1 },
		{ "int16_t", 2 }, { "uint16_t", 2 },
		{ "int32_t", 4 }, { "uint32_t", 4 }, { "float", 4 },
		{ "int64_t", 8 }, { "uint64_t", 8 }, { "double", 8 },
		{ "Point2Df", 8 }, { "Point2Di", 8 }, { "Point2Dd", 16 },
		{ "Point3Df", 12 }, { "Point3Di", 12 }, { "Point3Dd", 24 },
		{ "Point4Df", 16 }, { "Point4Di", 16 }, { "Point4Dd", 32 },
		{ "Matrix2Df", 16 }, { "Matrix2Di", 16 }, { "Matrix2Dd", 32 },
		{ "Matrix3Df", 36 }, { "Matrix3Di", 36 }, { "Matrix3Dd", 72 },
		{ "Matrix4Df", 64 }, { "Matrix4Di", 64 }, { "Matrix4Dd", 128 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		if (!strcmp(t, sizes[i].name))
			return sizes[i].size;
	return 0;
}

/* "DataPieceValue<int64_t>" -> "int64_t" in out; false for other shapes. */
static bool piece_elem(const char *type, const char *kind, char *out, size_t size)
{
	size_t k = strlen(kind), n = strlen(type);

	if (strncmp(type, kind, k) || type[k] != '<' || n < k + 3 || type[n - 1] != '>' ||
	    n - k - 2 >= size)
		return false;
	memcpy(out, type + k + 1, n - k - 2);
	out[n - k - 2] = '\0';
	return true;
}

static void want_field(struct dl_field *fl, const char *name, const char *want,
		       const char *elem, const char *elem_want, long off, int size)
{
	if (!strcmp(name, want) && !strcmp(elem, elem_want)) {
		fl->offset = off;
		fl->size = size;
	}
}

/* Parses a DL tag's JSON; ctx names the tag in messages. */
static int parse_layout(const struct vrs_file *f, const char *json, const char *ctx,
			struct layout *dl)
{
	cJSON *doc = cJSON_Parse(json), *arr, *p;
	int rc = 0;

	memset(dl, 0, sizeof(*dl));
	dl->capture_ns.offset = dl->width.offset = dl->height.offset = dl->rate.offset = -1;
	arr = cJSON_GetObjectItemCaseSensitive(doc, "data_layout");
	if (!cJSON_IsArray(arr)) {
		cJSON_Delete(doc);
		return err_set(ENG_EPARSE, "%s: tag '%s' is not a data layout (no \"data_layout\" array)",
			       f->path, ctx);
	}
	cJSON_ArrayForEach(p, arr) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "name"));
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "type"));
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(p, "offset");
		const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(p, "size");
		char elem[48];
		long o, sz = 0;
		int es;

		if (!name || !type) {
			rc = err_set(ENG_EPARSE, "%s: tag '%s': a data piece without name or type", f->path, ctx);
			break;
		}
		if (!cJSON_IsNumber(off)) {
			dl->nvar++;     /* a variable-size piece: it has an "index" */
			continue;
		}
		if (off->valuedouble < 0 || off->valuedouble > (double)VRS_MAX_PAYLOAD) {
			rc = err_set(ENG_EPARSE, "%s: tag '%s': piece '%.64s' has offset %g", f->path, ctx,
				     name, off->valuedouble);
			break;
		}
		o = (long)off->valuedouble;
		if (piece_elem(type, "DataPieceValue", elem, sizeof(elem))) {
			es = piece_size(elem);
			sz = es;
		} else if (piece_elem(type, "DataPieceArray", elem, sizeof(elem)) && cJSON_IsNumber(cnt) &&
			   cnt->valuedouble >= 0 && cnt->valuedouble <= 1e6) {
			es = piece_size(elem);
			sz = (long)cnt->valuedouble * es;
		} else {
			elem[0] = '\0';
			es = 0;
		}
		if (!es)
			dl->fixed = -1;
		else if (dl->fixed >= 0 && o + sz > dl->fixed)
			dl->fixed = o + sz;
		if (piece_elem(type, "DataPieceValue", elem, sizeof(elem))) {
			want_field(&dl->capture_ns, name, "capture_timestamp_ns", elem, "int64_t", o, 8);
			want_field(&dl->width, name, "image_width", elem, "uint32_t", o, 4);
			want_field(&dl->height, name, "image_height", elem, "uint32_t", o, 4);
			want_field(&dl->rate, name, "nominal_rate", elem, "double", o, 8);
		}
	}
	cJSON_Delete(doc);
	return rc;
}

/* Parses one block spec ("data_layout/size=84", "image/jpg", ...). */
static int parse_block(const struct vrs_file *f, const char *s, size_t n, const char *ctx,
		       struct block *b)
{
	static const char *const kinds[] = { "custom", "empty", "data_layout", "image", "audio" };
	char part[64];
	size_t i, k = 0, e;
	unsigned long size;
	char *end;

	memset(b, 0, sizeof(*b));
	b->size = -1;
	b->kind = BLK_UNKNOWN;
	for (i = 0; k <= n; i++) {
		e = k;
		while (e < n && s[e] != '/')
			e++;
		if (e - k >= sizeof(part))
			return err_set(ENG_EPARSE, "%s: record format '%s': a block part is too long", f->path, ctx);
		memcpy(part, s + k, e - k);
		part[e - k] = '\0';
		k = e + 1;
		if (i == 0) {
			size_t j;

			for (j = 0; j < ARRAY_SIZE(kinds); j++)
				if (!strcmp(part, kinds[j]))
					b->kind = (enum block_kind)j;
		} else if (!strncmp(part, "size=", 5)) {
			errno = 0;
			size = strtoul(part + 5, &end, 10);
			if (errno || *end || end == part + 5 || size > VRS_MAX_PAYLOAD)
				return err_set(ENG_EPARSE, "%s: record format '%s': bad block size '%s'", f->path,
					       ctx, part);
			b->size = (int64_t)size;
		} else if (b->kind == BLK_IMAGE && !b->image[0]) {
			memcpy(b->image, part, strlen(part) < sizeof(b->image) ? strlen(part) + 1 : 1);
		}
		if (e >= n)
			break;
	}
	if (b->kind == BLK_EMPTY)
		b->size = 0;
	return 0;
}

/* The record format of (rtype, version), parsed on first use; NULL in *out when the file has none. */
static int get_format(struct vrs_file *f, uint8_t rtype, uint32_t version, const struct format **out)
{
	struct format *fm;
	char name[64];
	const char *rf, *s;
	size_t i;
	int rc = 0;

	*out = NULL;
	for (i = 0; i < f->nformats; i++)
		if (f->formats[i].rtype == rtype && f->formats[i].version == version) {
			*out = &f->formats[i];
			return 0;
		}
	snprintf(name, sizeof(name), "RF:%s:%" PRIu32, type_name(rtype), version);
	rf = tag(f, name);
	if (!rf)
		return 0;
	if (f->nformats == VRS_MAX_FORMATS)
		return err_set(ENG_EPARSE, "%s: stream %" PRId32 "-%u has more than %d record formats", f->path,
			       f->type_id, f->instance, VRS_MAX_FORMATS);
	fm = &f->formats[f->nformats];
	memset(fm, 0, sizeof(*fm));
	fm->rtype = rtype;
	fm->version = version;
	for (s = rf; !rc;) {
		size_t n = strcspn(s, "+");

		if (fm->nblocks == VRS_MAX_BLOCKS) {
			rc = err_set(ENG_EPARSE, "%s: record format '%s' has more than %d blocks", f->path, name,
				     VRS_MAX_BLOCKS);
			break;
		}
		rc = parse_block(f, s, n, name, &fm->blocks[fm->nblocks]);
		if (!rc && fm->blocks[fm->nblocks].kind == BLK_DATA_LAYOUT) {
			char dln[80];
			const char *json;

			snprintf(dln, sizeof(dln), "DL:%s:%" PRIu32 ":%zu", type_name(rtype), version, fm->nblocks);
			json = tag(f, dln);
			if (json) {
				struct layout *dl = malloc(sizeof(*dl));

				if (!dl) {
					rc = ENG_ENOMEM;
					break;
				}
				rc = parse_layout(f, json, dln, dl);
				if (rc)
					free(dl);
				else
					fm->blocks[fm->nblocks].dl = dl;
			}
		}
		fm->nblocks++;
		if (!s[n])
			break;
		s += n + 1;
	}
	if (rc) {
		for (i = 0; i < fm->nblocks; i++)
			free(fm->blocks[i].dl);
		return rc;
	}
	f->nformats++;
	*out = fm;
	return 0;
}

/* ======================= Content blocks of one record ======================= */

/* Sum of the known sizes of blocks from..end, or -1 when one is unknown. */
static int64_t rest_size(const struct format *fm, size_t from)
{
	int64_t s = 0;
	size_t k;

	for (k = from; k < fm->nblocks; k++) {
		if (fm->blocks[k].size < 0)
			return -1;
		s += fm->blocks[k].size;
	}
	return s;
}

/*
 * Finds where each block of the payload (len bytes) starts and ends, the
 * way RecordFormat::getBlockSize does: a block's own size, else what the
 * blocks after it leave, else a data layout's fixed part, index and
 * variable part. starts[] gets nblocks + 1 entries. Only pay[0..avail)
 * is at hand: ENG_ETOOBIG when more of the payload is needed.
 */
static int locate_blocks(const struct vrs_file *f, const struct format *fm, const uint8_t *pay,
			 uint32_t avail, uint32_t len, int64_t off, int64_t *starts)
{
	int64_t pos = 0;
	size_t k;

	for (k = 0; k < fm->nblocks; k++) {
		const struct block *b = &fm->blocks[k];
		int64_t size = b->size, rest = rest_size(fm, k + 1);

		starts[k] = pos;
		if (size < 0 && rest >= 0 && rest <= (int64_t)len - pos)
			size = (int64_t)len - pos - rest;
		if (size < 0 && b->kind == BLK_DATA_LAYOUT && b->dl && b->dl->fixed >= 0) {
			int64_t fix = b->dl->fixed + 8 * b->dl->nvar, var = 0;

			if (pos + fix > (int64_t)len)
				return err_set(ENG_EPARSE, "%s: record at byte offset %" PRId64
					       ": its data layout block %zu needs %" PRId64 " bytes, %" PRId64 " are left",
					       f->path, off, k, fix, (int64_t)len - pos);
			if (b->dl->nvar) {
				const uint8_t *last = pay + pos + fix - 8;

				if (pos + fix > (int64_t)avail)
					return ENG_ETOOBIG;
				var = (int64_t)le32(last) + (int64_t)le32(last + 4);
			}
			size = fix + var;
		}
		if (size < 0)
			return err_set(ENG_EPARSE, "%s: record at byte offset %" PRId64
				       ": the size of content block %zu is unknown", f->path, off, k);
		if (size > (int64_t)len - pos)
			return err_set(ENG_EPARSE, "%s: record at byte offset %" PRId64 ": content block %zu (%"
				       PRId64 " bytes) overruns the %" PRIu32 "-byte payload", f->path, off, k,
				       size, len);
		pos += size;
	}
	starts[fm->nblocks] = pos;
	return 0;
}

/* A field of the data layout block at start..end, when it lies inside it and in pay[0..avail). */
static bool read_field(const uint8_t *pay, uint32_t avail, int64_t start, int64_t end,
		       const struct dl_field *fl, uint8_t *out)
{
	if (fl->offset < 0 || start + fl->offset + fl->size > end ||
	    start + fl->offset + fl->size > (int64_t)avail)
		return false;
	memcpy(out, pay + start + fl->offset, (size_t)fl->size);
	return true;
}

/* ======================= Index ======================= */

static int add_entry(struct vrs_file *f, const struct entry *e, size_t *cap)
{
	if (f->nentries == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct entry *p = realloc(f->entries, n * sizeof(*p));

		if (!p)
			return ENG_ENOMEM;
		f->entries = p;
		*cap = n;
	}
	f->entries[f->nentries++] = *e;
	return 0;
}

/* Walks the DiskRecordInfo array rec[0..n) from file offset start. */
static int walk_index(struct vrs_file *f, const uint8_t *rec, size_t n, int64_t start,
		      int64_t index_off)
{
	size_t i, cap = 0;
	int64_t off = start;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const uint8_t *r = rec + i * VRS_DISK_RECORD_INFO;
		struct entry e;
		int32_t tid = type_of((int32_t)le32(r + 13));
		uint16_t inst = le16(r + 17);

		e.ts = lef64(r);
		e.size = le32(r + 8);
		e.rtype = r[12];
		e.offset = off;
		if (e.size < f->rhs || e.rtype < VRS_REC_STATE || e.rtype > VRS_REC_TAGS)
			return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64
				       ": entry %zu is broken (size %" PRIu32 ", record type %u)", f->path,
				       index_off, i, e.size, e.rtype);
		if ((uint64_t)off + e.size > (uint64_t)f->fsize)
			return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64
				       ": entry %zu points outside the file (record at byte offset %" PRId64
				       " of %" PRIu32 " bytes, the file has %" PRId64 ")", f->path, index_off,
				       i, off, e.size, f->fsize);
		off += e.size;
		if (tid == f->type_id && inst == f->instance)
			rc = add_entry(f, &e, &cap);
	}
	return rc;
}

/* A file without an index: every record from `start` to the end, header by header. */
static int scan_records(struct vrs_file *f, int64_t start)
{
	int64_t off = start;
	size_t cap = 0;
	int rc = 0;

	while (!rc && off < f->fsize) {
		struct rec_hdr h;
		struct entry e;

		rc = read_hdr(f, off, "record", &h);
		if (rc)
			break;
		e.offset = off;
		e.size = h.size;
		e.rtype = h.rtype;
		e.ts = h.ts;
		if (h.type_id == f->type_id && h.instance == f->instance)
			rc = add_entry(f, &e, &cap);
		off += h.size;
	}
	return rc;
}

/* Reads the index record at off; records start at `start` (0: unknown). */
static int read_index(struct vrs_file *f, int64_t off, int64_t start)
{
	struct rec_hdr h;
	uint8_t *pay = NULL, *recs = NULL, pre[4];
	uint32_t body = 0, count = 0, types = 0;
	int64_t roff;
	size_t need;
	int rc;

	rc = read_hdr(f, off, "index record", &h);
	if (rc)
		return rc;
	if (h.type_id != VRS_TYPE_INDEX)
		return err_set(ENG_EPARSE, "%s: the index record at byte offset %" PRId64 " has type id %"
			       PRId32 ", not %d", f->path, off, h.type_id, VRS_TYPE_INDEX);
	if (h.version != VRS_INDEX_CLASSIC && h.version != VRS_INDEX_SPLIT)
		return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64 ": format %" PRIu32
			       " is not supported (2 classic, 3 split-head)", f->path, off, h.version);
	if (h.comp == VRS_COMP_LZ4 && h.usize)
		return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64
			       ": lz4 compression is not used for indexes", f->path, off);
	body = h.size - f->rhs;
	roff = off + f->rhs;
	if (h.version == VRS_INDEX_CLASSIC) {
		rc = read_at(f, roff, pre, 4, "index record");
		if (rc)
			return rc;
		types = le32(pre);
		if (body < 8 || types > (body - 8) / VRS_DISK_STREAM_ID)
			return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64
				       ": %" PRIu32 " streams do not fit in its %" PRIu32 " bytes", f->path,
				       off, types, body);
		roff += 4 + (int64_t)types * VRS_DISK_STREAM_ID;
		rc = read_at(f, roff, pre, 4, "index record");
		if (rc)
			return rc;
		count = le32(pre);
		roff += 4;
		body -= 8 + types * VRS_DISK_STREAM_ID;
		if (!start)
			return err_set(ENG_EPARSE, "%s: cannot tell where the records start", f->path);
	} else {
		if (!start)
			return err_set(ENG_EPARSE, "%s: split-head index at byte offset %" PRId64
				       " but no first record offset in the file header", f->path, off);
		if (!body)
			return scan_records(f, start); /* the index was never completed */
		count = (uint32_t)((h.usize ? h.usize : body) / VRS_DISK_RECORD_INFO);
	}
	if (count > VRS_MAX_INDEX_ENTRIES)
		return err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64 ": %" PRIu32
			       " entries is past the limit", f->path, off, count);
	need = (size_t)count * VRS_DISK_RECORD_INFO;
	if (!count)
		return 0;
	pay = malloc(body ? body : 1);
	if (!pay)
		return ENG_ENOMEM;
	rc = read_at(f, roff, pay, body, "index record");
	if (rc)
		goto out;
	if (h.comp == VRS_COMP_NONE || !h.usize) {
		if (need > body) {
			rc = err_set(ENG_EPARSE, "%s: index record at byte offset %" PRId64 ": %" PRIu32
				     " entries do not fit in its %" PRIu32 " bytes", f->path, off, count, body);
			goto out;
		}
		rc = walk_index(f, pay, count, start, off);
		goto out;
	}
	recs = malloc(need);
	if (!recs) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = decompress(f, h.comp, pay, body, recs, need, roff);
	if (!rc)
		rc = walk_index(f, recs, count, start, off);
out:
	free(pay);
	free(recs);
	return rc;
}

/* ======================= Frames ======================= */

static int cmp_frame(const void *pa, const void *pb)
{
	const struct vrs_frame *a = pa, *b = pb;

	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns ? -1 : 1;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

/* Reads the header of entry e and checks it against the entry. */
static int entry_header(struct vrs_file *f, const struct entry *e, struct rec_hdr *h)
{
	int rc = read_hdr(f, e->offset, "record", h);

	if (rc)
		return rc;
	if (h->size != e->size || h->rtype != e->rtype || h->type_id != f->type_id ||
	    h->instance != f->instance)
		return err_set(ENG_EPARSE, "%s: the record at byte offset %" PRId64
			       " does not match its index entry (size %" PRIu32 " vs %" PRIu32
			       ", stream %" PRId32 "-%u, type %u)", f->path, e->offset, h->size, e->size,
			       h->type_id, h->instance, h->rtype);
	return 0;
}

/* Reads and checks the header of entry e, and its uncompressed payload. */
static int entry_payload(struct vrs_file *f, const struct entry *e, struct rec_hdr *h,
			 uint8_t **pay, uint32_t *len)
{
	int rc = entry_header(f, e, h);

	return rc ? rc : read_payload(f, e->offset, h, pay, len);
}

static int read_configuration(struct vrs_file *f, const struct entry *e)
{
	const struct format *fm = NULL;
	int64_t starts[VRS_MAX_BLOCKS + 1];
	struct rec_hdr h;
	uint8_t *pay = NULL, v[8];
	uint32_t len = 0;
	int rc;

	rc = entry_payload(f, e, &h, &pay, &len);
	rc = rc ? rc : get_format(f, VRS_REC_CONFIGURATION, h.version, &fm);
	if (rc || !fm || !fm->nblocks || fm->blocks[0].kind != BLK_DATA_LAYOUT || !fm->blocks[0].dl)
		goto out;
	rc = locate_blocks(f, fm, pay, len, len, e->offset, starts);
	if (rc)
		goto out;
	if (read_field(pay, len, starts[0], starts[1], &fm->blocks[0].dl->width, v))
		f->width = (int)(le32(v) & 0x7fffffff);
	if (read_field(pay, len, starts[0], starts[1], &fm->blocks[0].dl->height, v))
		f->height = (int)(le32(v) & 0x7fffffff);
	if (read_field(pay, len, starts[0], starts[1], &fm->blocks[0].dl->rate, v)) {
		f->rate_hz = lef64(v);
		if (!isfinite(f->rate_hz) || f->rate_hz < 0 || f->rate_hz > 1e6)
			f->rate_hz = 0;
	}
out:
	free(pay);
	return rc;
}

/*
 * The blocks of data record e: a plain record is read only as far as
 * VRS_PREFIX bytes unless its blocks need more, a compressed one whole.
 * *pay holds *avail bytes of the *len-byte payload.
 */
static int data_blocks(struct vrs_file *f, const struct entry *e, struct rec_hdr *h,
		       const struct format **fm, uint8_t **pay, uint32_t *avail, uint32_t *len,
		       int64_t *starts)
{
	int rc = entry_header(f, e, h);

	*pay = NULL;
	rc = rc ? rc : get_format(f, VRS_REC_DATA, h->version, fm);
	if (rc)
		return rc;
	if (!*fm)
		return err_set(ENG_EPARSE, "%s: stream %" PRId32 "-%u has no record format for data records"
			       " of version %" PRIu32 " (tag RF:Data:%" PRIu32 ")", f->path, f->type_id,
			       f->instance, h->version, h->version);
	if (h->comp == VRS_COMP_NONE || !h->usize) {
		*len = h->size - f->rhs;
		*avail = *len < VRS_PREFIX ? *len : VRS_PREFIX;
		*pay = malloc(*avail ? *avail : 1);
		if (!*pay)
			return ENG_ENOMEM;
		rc = read_at(f, e->offset + f->rhs, *pay, *avail, "record payload");
		rc = rc ? rc : locate_blocks(f, *fm, *pay, *avail, *len, e->offset, starts);
		if (rc != ENG_ETOOBIG)
			return rc;
		free(*pay);
		*pay = NULL;
	}
	rc = read_payload(f, e->offset, h, pay, len);
	*avail = *len;
	return rc ? rc : locate_blocks(f, *fm, *pay, *avail, *len, e->offset, starts);
}

/* The time and the JPEG block of data record e. */
static int read_data(struct vrs_file *f, const struct entry *e, struct vrs_frame *fr,
		     struct frame_loc *loc)
{
	const struct format *fm = NULL;
	int64_t starts[VRS_MAX_BLOCKS + 1];
	struct rec_hdr h;
	uint8_t *pay = NULL, v[8];
	uint32_t len = 0, avail = 0;
	size_t k;
	bool have_t = false;
	int rc;

	rc = data_blocks(f, e, &h, &fm, &pay, &avail, &len, starts);
	if (rc)
		goto out;
	fr->record_s = h.ts;
	fr->offset = e->offset;
	fr->size = e->size;
	loc->img_len = 0;
	for (k = 0; k < fm->nblocks; k++) {
		const struct block *b = &fm->blocks[k];

		if (b->kind == BLK_DATA_LAYOUT && b->dl && !have_t &&
		    read_field(pay, avail, starts[k], starts[k + 1], &b->dl->capture_ns, v)) {
			fr->t_ns = (int64_t)le64(v);
			have_t = true;
		}
		if (b->kind == BLK_IMAGE && !loc->img_len) {
			if (strcmp(b->image, "jpg")) {
				rc = err_set(ENG_EINVAL, "%s: stream %" PRId32 "-%u holds image/%s frames, not JPEG",
					     f->path, f->type_id, f->instance, b->image[0] ? b->image : "?");
				goto out;
			}
			loc->img_off = (uint32_t)starts[k];
			loc->img_len = (uint32_t)(starts[k + 1] - starts[k]);
		}
	}
	if (!loc->img_len) {
		rc = err_set(ENG_EINVAL, "%s: stream %" PRId32 "-%u is not an image stream (its data record"
			     " at byte offset %" PRId64 " has no image block)", f->path, f->type_id,
			     f->instance, e->offset);
		goto out;
	}
	if (!have_t) {
		if (!isfinite(h.ts) || fabs(h.ts) > 9.2e9) {
			rc = err_set(ENG_EPARSE, "%s: the data record at byte offset %" PRId64
				     " has timestamp %g s", f->path, e->offset, h.ts);
			goto out;
		}
		fr->t_ns = (int64_t)llround(h.ts * 1e9);
	}
out:
	free(pay);
	return rc;
}

/* A frame and where its JPEG lies, sorted together. */
struct frame_pair {
	struct vrs_frame fr;
	struct frame_loc loc;
};

static int cmp_pair(const void *pa, const void *pb)
{
	const struct frame_pair *a = pa, *b = pb;

	return cmp_frame(&a->fr, &b->fr);
}

static int read_frames(struct vrs_file *f)
{
	struct frame_pair *pairs = NULL;
	size_t i, ndata = 0, k = 0;
	bool have_cfg = false;
	int rc = 0;

	for (i = 0; i < f->nentries; i++)
		ndata += f->entries[i].rtype == VRS_REC_DATA;
	if (!ndata)
		return err_set(ENG_ENOENT, "%s: stream %" PRId32 "-%u has no data record", f->path,
			       f->type_id, f->instance);
	pairs = calloc(ndata, sizeof(*pairs));
	f->frames = calloc(ndata, sizeof(*f->frames));
	f->locs = calloc(ndata, sizeof(*f->locs));
	if (!pairs || !f->frames || !f->locs) {
		free(pairs);
		return ENG_ENOMEM;
	}
	for (i = 0; !rc && i < f->nentries; i++) {
		const struct entry *e = &f->entries[i];

		if (e->rtype == VRS_REC_CONFIGURATION && !have_cfg) {
			have_cfg = true;
			rc = read_configuration(f, e);
		} else if (e->rtype == VRS_REC_DATA) {
			rc = read_data(f, e, &pairs[k].fr, &pairs[k].loc);
			k++;
		}
	}
	if (!rc) {
		qsort(pairs, ndata, sizeof(*pairs), cmp_pair);
		for (i = 0; i < ndata; i++) {
			f->frames[i] = pairs[i].fr;
			f->locs[i] = pairs[i].loc;
		}
		f->nframes = ndata;
	}
	free(pairs);
	return rc;
}

/* ======================= The handle ======================= */

static int read_file_header(struct vrs_file *f, int64_t *index_off, int64_t *desc_off,
			    int64_t *first_off)
{
	uint8_t b[VRS_FILE_HEADER_SIZE];
	uint32_t ver;
	int rc;

	if (f->fsize < VRS_FILE_HEADER_SIZE)
		return err_set(ENG_EPARSE, "%s: truncated: %" PRId64 " bytes, shorter than a VRS file header (%d)",
			       f->path, f->fsize, VRS_FILE_HEADER_SIZE);
	rc = read_at(f, 0, b, sizeof(b), "file header");
	if (rc)
		return rc;
	if (memcmp(b, "VisionRe", 8) || memcmp(b + 72, "cord", 4))
		return err_set(ENG_EPARSE, "%s: bad magic at byte offset 0: not a VRS file", f->path);
	f->fhs = le32(b + 16);
	f->rhs = le32(b + 20);
	if (f->fhs < VRS_FILE_HEADER_SIZE || f->fhs > VRS_FILE_HEADER_SIZE + VRS_HEADER_GROWTH_MAX ||
	    f->rhs < VRS_RECORD_HEADER_SIZE || f->rhs > VRS_RECORD_HEADER_SIZE + VRS_HEADER_GROWTH_MAX)
		return err_set(ENG_EPARSE, "%s: bad header sizes at byte offset 16 (file %" PRIu32
			       ", record %" PRIu32 ")", f->path, f->fhs, f->rhs);
	ver = le32(b + 76);
	if (memcmp(b + 76, "VRS1", 4) && memcmp(b + 76, "VRS2", 4) && memcmp(b + 76, "VRS3", 4))
		return err_set(ENG_EPARSE, "%s: file format version 0x%08" PRIx32 " at byte offset 76 is not"
			       " supported (VRS1, VRS2, VRS3)", f->path, ver);
	*index_off = (int64_t)le64(b + 24);
	*desc_off = (int64_t)le64(b + 32);
	*first_off = (int64_t)le64(b + 40);
	if (*index_off < 0 || *index_off >= f->fsize || *desc_off <= 0 || *desc_off >= f->fsize ||
	    *first_off < 0 || *first_off > f->fsize)
		return err_set(ENG_EPARSE, "%s: file header: an offset points outside the file (index %" PRId64
			       ", description %" PRId64 ", first record %" PRId64 ", file %" PRId64 " bytes)",
			       f->path, *index_off, *desc_off, *first_off, f->fsize);
	return 0;
}

int vrs_open(const char *path, int32_t type_id, uint16_t instance, struct vrs_file **out)
{
	struct vrs_file *f;
	struct stat st;
	int64_t index_off = 0, desc_off = 0, first = 0;
	uint32_t desc_size = 0;
	int rc, e;

	f = calloc(1, sizeof(*f));
	if (!f)
		return ENG_ENOMEM;
	f->fd = -1;
	f->type_id = type_id;
	f->instance = instance;
	f->path = strdup(path);
	if (!f->path) {
		rc = ENG_ENOMEM;
		goto out;
	}
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		e = errno;
		rc = err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "cannot open '%s': %s", path, strerror(e));
		goto out;
	}
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode)) {
		rc = err_set(ENG_EIO, "'%s' is not a regular file", path);
		goto out;
	}
	f->fsize = (int64_t)st.st_size;
	rc = read_file_header(f, &index_off, &desc_off, &first);
	rc = rc ? rc : read_description(f, desc_off, &desc_size);
	if (rc)
		goto out;
	if (!first) {
		/* early files: the records follow the file header, or the description after it */
		first = f->fhs;
		if (desc_off == first)
			first += desc_size;
	}
	rc = index_off ? read_index(f, index_off, first) : scan_records(f, first);
	rc = rc ? rc : read_frames(f);
out:
	if (rc) {
		vrs_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

void vrs_close(struct vrs_file *f)
{
	size_t i, k;

	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	for (i = 0; i < f->ntags; i++)
		free(f->tags[i]);
	free(f->tags);
	for (i = 0; i < f->nformats; i++)
		for (k = 0; k < f->formats[i].nblocks; k++)
			free(f->formats[i].blocks[k].dl);
	free(f->entries);
	free(f->frames);
	free(f->locs);
	free(f->path);
	free(f);
}

size_t vrs_frame_count(const struct vrs_file *f)
{
	return f->nframes;
}

const struct vrs_frame *vrs_frame(const struct vrs_file *f, size_t i)
{
	return &f->frames[i];
}

void vrs_image_size(const struct vrs_file *f, int *width, int *height, double *rate_hz)
{
	*width = f->width;
	*height = f->height;
	*rate_hz = f->rate_hz;
}

const char *vrs_path(const struct vrs_file *f)
{
	return f->path;
}

int vrs_read_jpeg(struct vrs_file *f, size_t i, uint8_t **out, size_t *len)
{
	const struct vrs_frame *fr = &f->frames[i];
	const struct frame_loc *loc = &f->locs[i];
	struct entry e = { fr->offset, fr->size, VRS_REC_DATA, fr->record_s };
	struct rec_hdr h;
	uint8_t *pay = NULL, *jpg;
	uint32_t plen = 0;
	int rc;

	rc = entry_payload(f, &e, &h, &pay, &plen);
	if (rc)
		return rc;
	if ((uint64_t)loc->img_off + loc->img_len > plen || loc->img_len < 4 ||
	    pay[loc->img_off] != 0xff || pay[loc->img_off + 1] != 0xd8) {
		free(pay);
		return err_set(ENG_EPARSE, "%s: the image block of the record at byte offset %" PRId64
			       " is not a JPEG (no start-of-image marker)", f->path, fr->offset);
	}
	if (loc->img_off == 0) {
		*out = pay;     /* the whole payload is the image */
		*len = loc->img_len;
		return 0;
	}
	jpg = malloc(loc->img_len);
	if (!jpg) {
		free(pay);
		return ENG_ENOMEM;
	}
	memcpy(jpg, pay + loc->img_off, loc->img_len);
	free(pay);
	*out = jpg;
	*len = loc->img_len;
	return 0;
}
