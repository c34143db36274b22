/* SPDX-License-Identifier: MIT */
/*
 * Exports of reviewed QA sets (EgoProx, JSONL, lmms-eval, VLMEvalKit,
 * Label Studio, LLaVA) with a manifest, and the clip frames written in
 * one pass over each recording's video (engine/recording/video.h).
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "banned.h"
#include "card.h"
#include "embed.h"
#include "err.h"
#include "recording.h"
#include "report.h"
#include "store.h"
#include "video.h"

/* The folder of the card's charts, in the output folder. */
#define CARD_PLOTS "plots"

/* ============================== Formats ============================== */

struct exporter;
struct item;

/*
 * One row per output format: its name and main file, how records are
 * framed, which QAs it can hold, how one record is written, and the files
 * it writes beside the records. Adding a format is one row and its record
 * function.
 */
struct export_ops {
	const char *name;      /* --format value */
	const char *file;      /* the main records file in the output folder */
	bool array;            /* the file is one JSON array (else one record per line) */
	bool mc_only;          /* multiple-choice QAs only: chains are skipped */
	bool needs_source;     /* QAs need an EgoProx source name */
	bool counts_first;     /* a first pass over the QAs sizes the header (TSV) */
	/* a reason to skip a QA once its frames are known, or NULL (may be NULL) */
	const char *(*refuse)(const struct exporter *x, const struct item *it);
	/* one record as JSON (NULL on failure, *rc set for other errors than memory) */
	cJSON *(*record)(struct exporter *x, const struct item *it, int *rc);
	/* or one line of text, with it NULL for the header line */
	int (*row)(struct exporter *x, const struct item *it, struct buf *out);
	int (*extra)(struct exporter *x); /* files beside the records, or NULL */
	const char *extra_files[3];       /* their names, for the manifest */
};

static const struct export_ops *ops_of(enum export_format f);

const char *export_format_name(enum export_format f)
{
	return (unsigned)f < EXPORT_NFORMAT ? ops_of(f)->name : "?";
}

enum export_format export_format_from_name(const char *name)
{
	int i;

	for (i = 0; name && i < EXPORT_NFORMAT; i++)
		if (!strcmp(name, ops_of((enum export_format)i)->name))
			return (enum export_format)i;
	return EXPORT_NFORMAT;
}

const char *export_format_file(enum export_format f)
{
	return (unsigned)f < EXPORT_NFORMAT ? ops_of(f)->file : "?";
}

const char *export_egoprox_source(const char *category, const char *metric)
{
	static const char *const cats[] = { "intention", "exploration", "exploitation" };
	static const char *const names[][2] = {
		{ "Intention_Approx", "Intention_Relative" },
		{ "Exploration_Approx", "Exploration_Relative" },
		{ "Exploitation_Approx", "Exploitation_Relative" },
	};
	size_t i;

	if (!category || !metric)
		return NULL;
	if (!strcmp(category, "chain"))
		return "Chain of Actions";
	for (i = 0; i < ARRAY_SIZE(cats); i++) {
		if (strcmp(category, cats[i]))
			continue;
		if (!strcmp(metric, "approx"))
			return names[i][0];
		if (!strcmp(metric, "relative"))
			return names[i][1];
	}
	return NULL;
}

/* ============================== Task lists ============================== */

/* One element of a task list, split into its parts (pointers into buf). */
struct task_spec {
	char buf[256];
	const char *category, *subtask, *metric; /* subtask, metric may be NULL */
};

/* Splits `s` (len bytes) into *t. Returns 0 or ENG_EINVAL naming it. */
static int task_parse(const char *s, size_t len, struct task_spec *t)
{
	char *dot, *slash;

	memset(t, 0, sizeof(*t));
	if (len == 0 || len >= sizeof(t->buf))
		return err_set(ENG_EINVAL, "tasks: '%.*s' is not CATEGORY[.SUBTASK][/METRIC]",
			       (int)(len > 64 ? 64 : len), s);
	memcpy(t->buf, s, len);
	t->buf[len] = '\0';
	slash = strchr(t->buf, '/');
	if (slash) {
		*slash = '\0';
		t->metric = slash + 1;
	}
	dot = strchr(t->buf, '.');
	if (dot) {
		*dot = '\0';
		t->subtask = dot + 1;
	}
	t->category = t->buf;
	if (!*t->category || (t->subtask && (!*t->subtask || strchr(t->subtask, '.'))) ||
	    (t->metric && strcmp(t->metric, "approx") && strcmp(t->metric, "relative")) ||
	    strchr(t->category, ' '))
		return err_set(ENG_EINVAL, "tasks: '%.*s' is not CATEGORY[.SUBTASK][/METRIC] "
			       "(METRIC approx or relative)", (int)len, s);
	return 0;
}

/* Calls fn on each non-empty comma-separated element of list. */
static int task_each(const char *list, int (*fn)(const struct task_spec *, void *),
		     void *ctx)
{
	const char *p = list, *e;
	struct task_spec t;
	int rc;

	while (p && *p) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		while (p < e && *p == ' ')
			p++;
		if (e > p) {
			size_t n = (size_t)(e - p);

			while (n && p[n - 1] == ' ')
				n--;
			rc = task_parse(p, n, &t);
			if (rc)
				return rc;
			rc = fn(&t, ctx);
			if (rc)
				return rc;
		}
		p = *e ? e + 1 : e;
	}
	return 0;
}

static int task_ok(const struct task_spec *t, void *ctx)
{
	(void)t;
	(void)ctx;
	return 0;
}

int export_tasks_check(const char *tasks)
{
	return task_each(tasks, task_ok, NULL);
}

struct task_query {
	const char *category, *subtask, *metric;
};

/* Returns 1 (stop) when t selects the query. */
static int task_hit(const struct task_spec *t, void *ctx)
{
	const struct task_query *q = ctx;

	if (strcmp(t->category, q->category))
		return 0;
	if (t->subtask && strcmp(t->subtask, q->subtask))
		return 0;
	if (t->metric && strcmp(t->metric, q->metric))
		return 0;
	return 1;
}

bool export_tasks_match(const char *tasks, const char *category,
			const char *subtask, const char *metric)
{
	struct task_query q = { category ? category : "", subtask ? subtask : "",
				metric ? metric : "" };

	if (!tasks || !*tasks)
		return true;
	return task_each(tasks, task_hit, &q) == 1;
}

/* ============================== Small helpers ============================== */

void export_frame_times(int64_t start, int64_t end, int n, int64_t *out)
{
	int i;

	if (n == 1) {
		out[0] = end;
		return;
	}
	for (i = 0; i < n; i++)
		out[i] = start + (int64_t)llround((double)(end - start) * i / (n - 1));
}

int export_tsv_field(struct buf *out, const char *s)
{
	const char *p;
	int rc = 0;

	if (!s)
		s = "";
	if (!strpbrk(s, "\t\r\n\""))
		return buf_adds(out, s);
	rc = buf_add(out, "\"", 1);
	for (p = s; !rc && *p; p++)
		rc = *p == '"' ? buf_add(out, "\"\"", 2) : buf_add(out, p, 1);
	return rc ? rc : buf_add(out, "\"", 1);
}

int export_mc_text(const char *question, const cJSON *options, struct buf *out)
{
	const cJSON *o;
	int i = 0, rc;

	if (!cJSON_IsArray(options) || cJSON_GetArraySize(options) > 26)
		return err_set(ENG_EINVAL, "options: expected an array of at most 26 strings");
	rc = buf_addf(out, "%s\n", question ? question : "");
	cJSON_ArrayForEach(o, options) {
		if (!cJSON_IsString(o))
			return err_set(ENG_EINVAL, "options[%d]: expected a string", i);
		rc = rc ? rc : buf_addf(out, "%c. %s\n", 'A' + i, o->valuestring);
		i++;
	}
	return rc ? rc : buf_adds(out, EXPORT_MC_INSTRUCTION);
}

/* cJSON building that records allocation failures in *oom. */
static cJSON *j_add(int *oom, cJSON *parent, const char *key, cJSON *item)
{
	cJSON_bool ok;

	if (!item) {
		*oom = 1;
		return NULL;
	}
	if (!parent) {
		cJSON_Delete(item);
		*oom = 1;
		return NULL;
	}
	ok = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
	if (!ok) {
		cJSON_Delete(item);
		*oom = 1;
		return NULL;
	}
	return item;
}

static void j_str(int *oom, cJSON *o, const char *key, const char *s)
{
	j_add(oom, o, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

/* An exact int64 number (cJSON would print large values with an exponent). */
static void j_i64(int *oom, cJSON *o, const char *key, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, v);
	j_add(oom, o, key, cJSON_CreateRaw(b));
}

static void j_num(int *oom, cJSON *o, const char *key, double v)
{
	j_add(oom, o, key, cJSON_CreateNumber(v));
}

static void j_dup(int *oom, cJSON *o, const char *key, const cJSON *v)
{
	j_add(oom, o, key, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
}

/* Parses stored JSON text; NULL text gives NULL. Returns 0 or ENG_EINVAL. */
static int parse_json(const char *text, const char *id, const char *field, cJSON **out)
{
	*out = NULL;
	if (!text)
		return 0;
	*out = cJSON_Parse(text);
	if (!*out)
		return err_set(ENG_EINVAL, "qa '%s': %s is not JSON", id, field);
	return 0;
}

/* Writes len bytes to path (created or truncated). Returns 0 or -1 with errno set. */
static int write_file_bytes(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "we");
	int e;

	if (!fp)
		return -1;
	if (fwrite(data, 1, len, fp) != len) {
		e = errno;
		fclose(fp);
		errno = e;
		return -1;
	}
	return fclose(fp) ? -1 : 0;
}

/* mkdir -p. Returns 0 or ENG_EIO naming the folder. */
static int mkdirs(const char *path)
{
	char b[PATH_MAX];
	size_t i, n = strlen(path);
	struct stat sb;

	if (n == 0 || n >= sizeof(b))
		return err_set(ENG_EINVAL, "'%s': bad folder name", path);
	memcpy(b, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (b[i] != '/' && b[i] != '\0')
			continue;
		b[i] = '\0';
		if (mkdir(b, 0777) && errno != EEXIST) {
			int e = errno;

			return err_set(ENG_EIO, "'%s': cannot create folder: %s", b, strerror(e));
		}
		b[i] = i == n ? '\0' : '/';
	}
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return err_set(ENG_EIO, "'%s': not a folder", path);
	return 0;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" of now. */
static void now_iso(char *out, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char b[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%s.%03dZ", b, (int)(ts.tv_nsec / 1000000));
}

/* ============================== The exporter ============================== */

/*
 * A VLMEvalKit image cell written as a placeholder: the frames are written
 * after the rows of their recording (one pass per video), so the base64
 * goes in once the export has them (vlm_fill).
 */
struct vlm_hole {
	long offset;        /* of the placeholder in the records file */
	char id[64];        /* the QA */
	int nframes;
};

/* Bits of struct exporter.seen: one per EgoProx MC source, and chains. */
#define SEEN_CHAIN (1u << 6)
#define SEEN_MC (1u << 7)    /* any multiple-choice QA */


/* A frame waiting to be written by the one pass over its recording's video. */
struct frame_job {
	int64_t t_ns;       /* device time */
	char *path;         /* DIR/Frames/<id>/NNN.jpg */
};

/*
 * The video of the recording last looked up, and the frames asked of it
 * so far: QAs come grouped by recording, and its frames are written in
 * one pass when the next recording comes or the export ends.
 */
struct video_cache {
	char *rec_id;       /* recording looked up, or NULL */
	char *video;        /* its video file, or NULL */
	int64_t t0_ns;      /* device time of the video's first frame */
	struct recording *rec;  /* the recording, while its video is open */
	struct video *v;        /* its video, or NULL */
	struct frame_job *jobs; /* frames to write */
	size_t njobs, capjobs;
};

struct exporter {
	struct store *st;
	const struct export_params *p;
	char *dir;           /* output folder */
	FILE *fp;            /* main records file (tmp name) */
	char *tmp_path, *final_path;
	int counting;        /* pre-pass: only find max_options */
	int max_options;     /* VLMEvalKit: option columns */
	size_t n;            /* records written */
	char **ids;          /* exported ids (owned) */
	size_t nids, capids;
	cJSON *manifest;     /* built as we go */
	cJSON *groups;       /* manifest counts.groups */
	cJSON *skipped;      /* manifest counts.skipped */
	cJSON *options;      /* manifest config.options (MC option counts) */
	cJSON *cands;        /* manifest config.chain_candidates */
	cJSON *recordings;   /* manifest frames.recordings */
	int oom;
	unsigned seen;       /* SEEN_* bits: the EgoProx sources written */
	struct vlm_hole *holes; /* VLMEvalKit: image cells to fill once the frames exist */
	size_t nholes, capholes;
	struct video_cache vc;
	struct export_summary sum;
	struct buf line;     /* one record's text */
	struct report *rep;  /* the card's charts, of the QAs written */
	cJSON *by_status;    /* manifest counts.by_status */
	size_t nrecordings;  /* distinct recordings written (QAs come grouped by recording) */
	char *last_rec;      /* the recording of the last QA written */
	int64_t *runs;       /* the runs of the QAs written, distinct */
	size_t nruns, capruns;
};

/* One QA as the writers see it. */
struct item {
	const struct store_qa *qa;
	const char *question;   /* the edited wording when set */
	cJSON *options;         /* parsed options (owned) */
	int nopt;
	int chain;              /* 1: a chain-of-actions item */
	char letter;            /* MC key letter; 0 for chains */
	cJSON *answer;          /* parsed structured answer (owned), or NULL */
	const cJSON *correct;   /* chain: answer.correct_answer */
	char group[200];        /* CATEGORY.SUBTASK/METRIC */
	const char *source;     /* EgoProx source, or NULL */
	int nframes;
	int64_t times[EXPORT_MAX_FRAMES];
	int extracted;          /* frames were written */
	const char *video;      /* recording video, or NULL */
	int64_t video_t0;
};

static void item_release(struct item *it)
{
	cJSON_Delete(it->options);
	cJSON_Delete(it->answer);
}

static void count(struct exporter *x, cJSON *obj, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (c)
		cJSON_SetNumberHelper(c, c->valuedouble + 1);
	else
		j_num(&x->oom, obj, key, 1);
}

static void skip(struct exporter *x, const char *reason)
{
	if (x->counting)
		return;
	x->sum.skipped++;
	count(x, x->skipped, reason);
}

/*
 * Reads the QA's options and answer. Returns 0 with it filled, 1 when the
 * QA has no key the formats can use (counted as skipped), or an error.
 */
static int item_init(struct exporter *x, const struct store_qa *qa, struct item *it)
{
	const cJSON *o;
	int rc;

	memset(it, 0, sizeof(*it));
	it->qa = qa;
	it->question = qa->question_edited ? qa->question_edited : qa->question;
	snprintf(it->group, sizeof(it->group), "%s.%s/%s", qa->category, qa->subtask,
		 qa->metric);
	it->source = export_egoprox_source(qa->category, qa->metric);
	rc = parse_json(qa->options_json, qa->id, "options_json", &it->options);
	rc = rc ? rc : parse_json(qa->answer_json, qa->id, "answer_json", &it->answer);
	if (rc)
		return rc;
	if (!cJSON_IsArray(it->options))
		return err_set(ENG_EINVAL, "qa '%s': options_json is not an array", qa->id);
	cJSON_ArrayForEach(o, it->options)
		if (!cJSON_IsString(o))
			return err_set(ENG_EINVAL, "qa '%s': options_json holds a non-string", qa->id);
	it->nopt = cJSON_GetArraySize(it->options);
	if (qa->answer_index >= 0) {
		if (qa->answer_index >= it->nopt || it->nopt > 26)
			return err_set(ENG_EINVAL, "qa '%s': answer_index %d out of %d options",
				       qa->id, qa->answer_index, it->nopt);
		it->letter = (char)('A' + qa->answer_index);
		return 0;
	}
	it->correct = cJSON_GetObjectItemCaseSensitive(it->answer, "correct_answer");
	if (!cJSON_IsArray(it->correct) || !cJSON_GetArraySize(it->correct)) {
		skip(x, "no_answer_key");
		return 1;
	}
	cJSON_ArrayForEach(o, it->correct)
		if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "node")) ||
		    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "edge")))
			return err_set(ENG_EINVAL, "qa '%s': answer_json.correct_answer items need "
				       "\"node\" and \"edge\" arrays", qa->id);
	it->chain = 1;
	return 0;
}

/*
 * Writes the frames queued for the current recording in one pass over
 * its video (video_extract sorts their times and decodes forward once).
 */
static int frames_flush(struct exporter *x)
{
	struct video_cache *vc = &x->vc;
	struct video_shot *shots = NULL;
	int64_t *t = NULL;
	const char **paths = NULL;
	size_t i, n = vc->njobs;
	int rc = 0;

	if (!n)
		return 0;
	t = malloc(n * sizeof(*t));
	paths = malloc(n * sizeof(*paths));
	shots = calloc(n, sizeof(*shots));
	if (!t || !paths || !shots) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		t[i] = vc->jobs[i].t_ns;
		paths[i] = vc->jobs[i].path;
	}
	rc = video_extract(vc->v, t, n, VIDEO_DEFAULT_WIDTH, paths, shots);
	if (rc) {
		char m[1024];

		snprintf(m, sizeof(m), "%s", err_msg());
		rc = err_set(rc, "recording '%s': frames of %zu QAs from '%s': %s", vc->rec_id,
			     n / (size_t)(x->p->frames > 0 ? x->p->frames : 1), vc->video, m);
		goto out;
	}
	x->sum.frames_written += n;
out:
	for (i = 0; i < n; i++)
		free(vc->jobs[i].path);
	vc->njobs = 0;
	free(t);
	free(paths);
	free(shots);
	return rc;
}

/* Writes what is queued and forgets the current recording. */
static int video_drop(struct exporter *x)
{
	struct video_cache *vc = &x->vc;
	int rc = frames_flush(x);

	video_close(vc->v);
	recording_free(vc->rec);
	free(vc->rec_id);
	free(vc->video);
	free(vc->jobs);
	memset(vc, 0, sizeof(*vc));
	return rc;
}

/* Looks up (and caches) the video of recording rec_id, and opens it. */
static int video_lookup(struct exporter *x, const char *rec_id)
{
	struct video_cache *vc = &x->vc;
	struct video_info vi;
	cJSON *r = NULL, *info = NULL;
	const char *root, *why = NULL;
	char whyb[600];
	int rc;

	if (vc->rec_id && !strcmp(vc->rec_id, rec_id))
		return 0;
	rc = video_drop(x);
	if (rc)
		return rc;
	vc->rec_id = strdup(rec_id);
	if (!vc->rec_id)
		return ENG_ENOMEM;
	rc = store_recording_get(x->st, rec_id, &r);
	if (rc)
		return rc;
	root = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "root"));
	if (!root) {
		why = "the store has no folder for this recording";
	} else {
		rc = recording_load(root, REC_LAYOUT_AUTO, &vc->rec);
		if (rc) {
			snprintf(whyb, sizeof(whyb), "cannot load '%s': %s", root,
				 *err_msg() ? err_msg() : eng_strerror(rc));
			why = whyb;
			rc = 0;
		} else if (!vc->rec->video.path) {
			why = "the recording has no video";
		} else if (snprintf(whyb, sizeof(whyb), "%s/%s", vc->rec->root, vc->rec->video.path) > 0 &&
			   vc->rec->video.path[0] != '/' && access(whyb, R_OK)) {
			char path[sizeof(whyb)];

			memcpy(path, whyb, sizeof(path));
			snprintf(whyb, sizeof(whyb), "video '%.500s' cannot be read", path);
			why = whyb;
		} else {
			rc = video_open(vc->rec, &vc->v);
			if (rc == ENG_ENOMEM)
				goto out;
			if (rc) {
				snprintf(whyb, sizeof(whyb), "%s", *err_msg() ? err_msg() : eng_strerror(rc));
				why = whyb;
				rc = 0;
			} else {
				video_get_info(vc->v, &vi);
				vc->video = strdup(vi.file);
				if (!vc->video) {
					rc = ENG_ENOMEM;
					goto out;
				}
				vc->t0_ns = vi.t_first_ns;
			}
		}
	}
	info = cJSON_CreateObject();
	if (vc->video) {
		j_str(&x->oom, info, "video", vc->video);
		j_i64(&x->oom, info, "video_t0_ns", vc->t0_ns);
	} else {
		j_str(&x->oom, info, "no_video", why);
	}
	if (!cJSON_GetObjectItemCaseSensitive(x->recordings, rec_id))
		j_add(&x->oom, x->recordings, rec_id, info);
	else
		cJSON_Delete(info);
out:
	cJSON_Delete(r);
	return rc;
}

/* Frame times, and the frames themselves when asked and possible. */
static int item_frames(struct exporter *x, struct item *it)
{
	const struct store_qa *qa = it->qa;
	cJSON *ft = NULL;
	char path[PATH_MAX];
	int i, rc = 0, want_video = x->p->frames > 0 || x->p->format == EXPORT_LABELSTUDIO;

	if (x->p->frames > 0) {
		it->nframes = x->p->frames;
	} else {
		rc = parse_json(qa->frames_json, qa->id, "frames_json", &ft);
		if (rc)
			return rc;
		it->nframes = cJSON_IsArray(ft) ? cJSON_GetArraySize(ft) : 0;
		if (it->nframes > EXPORT_MAX_FRAMES)
			it->nframes = EXPORT_MAX_FRAMES;
		for (i = 0; i < it->nframes; i++) {
			const cJSON *v = cJSON_GetArrayItem(ft, i);

			if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
				cJSON_Delete(ft);
				return err_set(ENG_EINVAL, "qa '%s': frames_json[%d] is not a time",
					       qa->id, i);
			}
			it->times[i] = (int64_t)llround(v->valuedouble);
		}
		cJSON_Delete(ft);
		if (it->nframes == 0)
			it->nframes = EXPORT_DEFAULT_FRAMES;
		else
			goto video;
	}
	export_frame_times(qa->clip_start_ns, qa->clip_end_ns, it->nframes, it->times);
video:
	if (!want_video || x->counting)
		return 0;
	rc = video_lookup(x, qa->recording_id);
	if (rc)
		return rc;
	it->video = x->vc.video;
	it->video_t0 = x->vc.t0_ns;
	if (!it->video) {
		x->sum.no_video++;
		return 0;
	}
	if (x->p->frames <= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/Frames/%s", x->dir, qa->id);
	rc = mkdirs(path);
	for (i = 0; !rc && i < it->nframes; i++) {
		struct video_cache *vc = &x->vc;
		struct frame_job *j;
		size_t n = strlen(x->dir) + strlen(qa->id) + 24;

		if (vc->njobs == vc->capjobs) {
			size_t cap = vc->capjobs ? 2 * vc->capjobs : 64;
			struct frame_job *nj = realloc(vc->jobs, cap * sizeof(*nj));

			if (!nj) {
				rc = ENG_ENOMEM;
				break;
			}
			vc->jobs = nj;
			vc->capjobs = cap;
		}
		j = &vc->jobs[vc->njobs];
		j->path = malloc(n);
		if (!j->path) {
			rc = ENG_ENOMEM;
			break;
		}
		snprintf(j->path, n, "%s/Frames/%s/%03d.jpg", x->dir, qa->id, i + 1);
		j->t_ns = it->times[i];
		vc->njobs++;
	}
	/* written by frames_flush(); an export whose frames fail fails as a whole */
	it->extracted = !rc;
	return rc;
}

/* ============================== Record builders ============================== */

static void frame_path(const struct item *it, int i, char *out, size_t size)
{
	snprintf(out, size, "Frames/%s/%03d.jpg", it->qa->id, i + 1);
}

static cJSON *frame_list(int *oom, const struct item *it)
{
	cJSON *a = cJSON_CreateArray();
	char p[300];
	int i;

	if (!a) {
		*oom = 1;
		return NULL;
	}
	for (i = 0; i < it->nframes; i++) {
		frame_path(it, i, p, sizeof(p));
		j_str(oom, a, NULL, p);
	}
	return a;
}

/* "Frames/<id>": the frame folder, used as the video of LLaVA and lmms-eval. */
static void frame_dir(const struct item *it, char *out, size_t size)
{
	snprintf(out, size, "Frames/%s", it->qa->id);
}

static const char chain_system_prompt[] =
	"You see frames of an egocentric (first-person) video in time order; the last frame "
	"is the current moment. Plan the actions the person will do next and the spatial "
	"relationships among the action locations. Choose the actions from the numbered "
	"candidate action set in the order they will happen, and give for each pair of "
	"consecutive actions the direction of the next action's location from the previous "
	"one's, as seen from above: A right, B left, C front, D back, E front-right, "
	"F front-left, G back-left, H back-right. Reply with a JSON array "
	"[[node_id_1, ..., node_id_K], [edge_1, ..., edge_K-1]], for example "
	"[[3, 1, 7], [\"B\", \"E\"]].";

/*
 * A chain's user prompt: the question, plus the numbered candidate set
 * when the question does not already list every candidate ("1. Get ...").
 */
static int chain_prompt(const struct item *it, struct buf *out)
{
	const cJSON *o;
	struct buf probe;
	int i = 0, all = 1, rc = 0;

	buf_init(&probe, 1 << 20);
	cJSON_ArrayForEach(o, it->options) {
		buf_reset(&probe);
		rc = rc ? rc : buf_addf(&probe, "%d. %s", i + 1, o->valuestring);
		if (rc || !strstr(it->question, buf_str(&probe)))
			all = 0;
		i++;
	}
	buf_release(&probe);
	rc = rc ? rc : buf_adds(out, it->question);
	if (all || rc)
		return rc;
	rc = buf_adds(out, "\nCandidate actions:");
	i = 0;
	cJSON_ArrayForEach(o, it->options) {
		rc = rc ? rc : buf_addf(out, "\n%d. %s", i + 1, o->valuestring);
		i++;
	}
	return rc;
}

/* The first correct chain as text, "[[3,1,7],[\"B\",\"E\"]]". */
static char *chain_text(int *oom, const struct item *it)
{
	const cJSON *first = cJSON_GetArrayItem(it->correct, 0);
	cJSON *a = cJSON_CreateArray();
	char *s;

	j_dup(oom, a, NULL, cJSON_GetObjectItemCaseSensitive(first, "node"));
	j_dup(oom, a, NULL, cJSON_GetObjectItemCaseSensitive(first, "edge"));
	s = a ? cJSON_PrintUnformatted(a) : NULL;
	if (!s)
		*oom = 1;
	cJSON_Delete(a);
	return s;
}

static int mc_text(const struct item *it, struct buf *b)
{
	buf_reset(b);
	return export_mc_text(it->question, it->options, b);
}

static cJSON *rec_egoprox(struct exporter *x, const struct item *it)
{
	int *oom = &x->oom, i, rc;
	cJSON *r = cJSON_CreateObject(), *turn, *content, *part;
	struct buf b;
	char p[300];

	buf_init(&b, 1 << 20);
	j_str(oom, r, "id", it->qa->id);
	j_str(oom, r, "source", it->source);
	if (it->chain) {
		j_str(oom, r, "system_prompt", chain_system_prompt);
		rc = chain_prompt(it, &b);
		if (rc)
			*oom = 1;
		j_str(oom, r, "user_prompt", buf_str(&b));
		j_add(oom, r, "image", frame_list(oom, it));
		j_dup(oom, r, "correct_answer", it->correct);
	} else {
		turn = j_add(oom, j_add(oom, r, "data", cJSON_CreateArray()), NULL,
			     cJSON_CreateObject());
		j_str(oom, turn, "role", "user");
		content = j_add(oom, turn, "content", cJSON_CreateArray());
		for (i = 0; i < it->nframes; i++) {
			part = j_add(oom, content, NULL, cJSON_CreateObject());
			frame_path(it, i, p, sizeof(p));
			j_str(oom, part, "type", "image");
			j_str(oom, part, "image", p);
		}
		part = j_add(oom, content, NULL, cJSON_CreateObject());
		if (mc_text(it, &b))
			*oom = 1;
		j_str(oom, part, "type", "text");
		j_str(oom, part, "text", buf_str(&b));
		p[0] = it->letter;
		p[1] = '\0';
		j_str(oom, r, "correct_option", p);
	}
	buf_release(&b);
	return r;
}

/* The review outcome of a QA: status, reviewers, every decision, notes. */
static int review_outcome(struct exporter *x, const struct item *it, cJSON *r)
{
	int *oom = &x->oom;
	cJSON *q = NULL, *rv, *names, *notes;
	const cJSON *e;
	int rc = store_qa_get(x->st, it->qa->id, STORE_GET_REVIEWS, &q);

	if (rc)
		return rc;
	rv = j_add(oom, r, "review", cJSON_CreateObject());
	j_str(oom, rv, "status", it->qa->status);
	names = j_add(oom, rv, "reviewers", cJSON_CreateArray());
	notes = j_add(oom, rv, "notes", cJSON_CreateArray());
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(q, "reviews")) {
		const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "reviewer"));
		const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "note"));
		const cJSON *n;
		int seen = 0;

		cJSON_ArrayForEach(n, names)
			seen |= who && !strcmp(n->valuestring, who);
		if (who && !seen)
			j_str(oom, names, NULL, who);
		if (note)
			j_str(oom, notes, NULL, note);
	}
	j_dup(oom, rv, "decisions", cJSON_GetObjectItemCaseSensitive(q, "reviews"));
	cJSON_Delete(q);
	return 0;
}

static cJSON *rec_jsonl(struct exporter *x, const struct item *it, int *rc)
{
	const struct store_qa *qa = it->qa;
	int *oom = &x->oom, i;
	cJSON *r = cJSON_CreateObject(), *a, *v;
	char l[2] = { it->letter, 0 };

	j_str(oom, r, "id", qa->id);
	j_str(oom, r, "group", it->group);
	j_str(oom, r, "source", it->source);
	j_str(oom, r, "recording_id", qa->recording_id);
	if (qa->run_id > 0)
		j_i64(oom, r, "run_id", qa->run_id);
	else
		j_add(oom, r, "run_id", cJSON_CreateNull());
	j_str(oom, r, "category", qa->category);
	j_str(oom, r, "subtask", qa->subtask);
	j_str(oom, r, "metric", qa->metric);
	j_i64(oom, r, "t_ns", qa->t_ns);
	j_i64(oom, r, "clip_start_ns", qa->clip_start_ns);
	j_i64(oom, r, "clip_end_ns", qa->clip_end_ns);
	a = j_add(oom, r, "frame_times_ns", cJSON_CreateArray());
	for (i = 0; a && i < it->nframes; i++) {
		char b[32];

		snprintf(b, sizeof(b), "%" PRId64, it->times[i]);
		j_add(oom, a, NULL, cJSON_CreateRaw(b));
	}
	j_add(oom, r, "frames", frame_list(oom, it));
	j_add(oom, r, "frames_extracted", cJSON_CreateBool(it->extracted));
	j_str(oom, r, "target", qa->target);
	j_str(oom, r, "question", it->question);
	j_str(oom, r, "question_original", qa->question);
	j_add(oom, r, "edited", cJSON_CreateBool(qa->question_edited != NULL));
	j_dup(oom, r, "options", it->options);
	j_str(oom, r, "answer_letter", it->chain ? NULL : l);
	j_num(oom, r, "answer_index", it->chain ? -1 : qa->answer_index);
	j_dup(oom, r, "answer", it->answer);
	if (it->chain)
		j_dup(oom, r, "correct_answer", it->correct);
	v = NULL;
	*rc = parse_json(qa->gt_json, qa->id, "gt_json", &v);
	j_add(oom, r, "gt", v ? v : cJSON_CreateNull());
	v = NULL;
	*rc = *rc ? *rc : parse_json(qa->qc_json, qa->id, "qc_json", &v);
	j_add(oom, r, "qc", v ? v : cJSON_CreateNull());
	*rc = *rc ? *rc : review_outcome(x, it, r);
	j_str(oom, r, "created_at", qa->created_at);
	j_str(oom, r, "updated_at", qa->updated_at);
	return r;
}

/* lmms-eval question_type: the group with '.' and '/' turned into '_'. */
static void question_type(const struct item *it, char *out, size_t size)
{
	size_t i;

	snprintf(out, size, "%s", it->group);
	for (i = 0; out[i]; i++)
		if (out[i] == '.' || out[i] == '/')
			out[i] = '_';
}

static cJSON *lettered_options(int *oom, const struct item *it, int numbered)
{
	cJSON *a = cJSON_CreateArray();
	const cJSON *o;
	struct buf b;
	int i = 0;

	if (!a) {
		*oom = 1;
		return NULL;
	}
	buf_init(&b, 1 << 20);
	cJSON_ArrayForEach(o, it->options) {
		buf_reset(&b);
		if (numbered ? buf_addf(&b, "%d. %s", i + 1, o->valuestring)
			     : buf_addf(&b, "%c. %s", 'A' + i, o->valuestring))
			*oom = 1;
		j_str(oom, a, NULL, buf_str(&b));
		i++;
	}
	buf_release(&b);
	return a;
}

static cJSON *rec_lmms(struct exporter *x, const struct item *it)
{
	int *oom = &x->oom;
	cJSON *r = cJSON_CreateObject();
	char b[300], l[2] = { it->letter, 0 };
	struct buf q;

	j_str(oom, r, "id", it->qa->id);
	j_str(oom, r, "dataset", "proxima");
	j_str(oom, r, "scene_name", it->qa->recording_id);
	frame_dir(it, b, sizeof(b));
	j_str(oom, r, "video", b);
	j_add(oom, r, "frames", frame_list(oom, it));
	question_type(it, b, sizeof(b));
	j_str(oom, r, "question_type", b);
	j_str(oom, r, "group", it->group);
	j_str(oom, r, "source", it->source);
	if (it->chain) {
		char *t;

		j_str(oom, r, "instruction", chain_system_prompt);
		buf_init(&q, 1 << 20);
		if (chain_prompt(it, &q))
			*oom = 1;
		j_str(oom, r, "question", buf_str(&q));
		buf_release(&q);
		j_add(oom, r, "options", lettered_options(oom, it, 1));
		t = chain_text(oom, it);
		j_str(oom, r, "ground_truth", t);
		cJSON_free(t);
		j_dup(oom, r, "correct_answer", it->correct);
	} else {
		/* every document has every field: the json builder infers one schema */
		j_str(oom, r, "instruction", "");
		j_str(oom, r, "question", it->question);
		j_add(oom, r, "options", lettered_options(oom, it, 0));
		j_str(oom, r, "ground_truth", l);
		j_add(oom, r, "correct_answer", cJSON_CreateNull());
	}
	return r;
}

/* The video's nominal frame rate, or 24 (Label Studio's default) when unknown. */
static double video_fps(const struct video *v)
{
	struct video_info vi;

	video_get_info(v, &vi);
	return vi.fps > 0 ? vi.fps : 24;
}

/* Appends s percent-encoded for a query value: unreserved characters and '/' stay. */
static int url_escape(struct buf *b, const char *s)
{
	int rc = 0;

	for (; !rc && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c))
			rc = buf_add(b, s, 1);
		else
			rc = buf_addf(b, "%%%02X", c);
	}
	return rc;
}

/*
 * The URL Label Studio loads the clip's video from, opening at the clip
 * (a media fragment #t=START,END, in video seconds): with --media-url,
 * proxima review serve's route /media/<QA id>; otherwise Label Studio's
 * local-files route /data/local-files/?d=PATH, PATH relative to its
 * LOCAL_FILES_DOCUMENT_ROOT (--local-files-root, default "/", Label
 * Studio's default). Returns 0, ENG_EINVAL (the video is not under the
 * root) or a buf error.
 */
static int labelstudio_url(struct exporter *x, const struct item *it, double s0, double s1,
			   struct buf *b)
{
	const char *root = x->p->local_files_root ? x->p->local_files_root : "/";
	char real[PATH_MAX], rroot[PATH_MAX];
	size_t n;
	int rc;

	if (x->p->media_url) {
		n = strlen(x->p->media_url);
		while (n && x->p->media_url[n - 1] == '/')
			n--;
		rc = buf_addf(b, "%.*s/media/%s", (int)n, x->p->media_url, it->qa->id);
	} else {
		if (!realpath(it->video, real))
			snprintf(real, sizeof(real), "%s", it->video);
		if (!realpath(root, rroot))
			return err_set(ENG_EINVAL, "--local-files-root '%s': no such folder", root);
		n = strcmp(rroot, "/") ? strlen(rroot) : 0;
		if (strncmp(real, rroot, n) || real[n] != '/')
			return err_set(ENG_EINVAL, "qa '%s': video '%s' is not under --local-files-root "
				       "'%s' (Label Studio serves local files from there only)",
				       it->qa->id, real, rroot);
		rc = buf_adds(b, "/data/local-files/?d=");
		rc = rc ? rc : url_escape(b, real + n + 1);
	}
	return rc ? rc : buf_addf(b, "#t=%.3f,%.3f", s0, s1);
}

/*
 * A Label Studio task (config.xml below): the question, the options as
 * dynamic choices, the key for comparison after a blind labelling, the
 * video as a URL opening at the clip, the clip window and frame rate.
 */
/* True when the video file is a VRS file (by its name, as the loaders attach them). */
static bool is_vrs(const char *file)
{
	size_t n = strlen(file);

	return n >= 4 && !strcasecmp(file + n - 4, ".vrs");
}

static cJSON *rec_labelstudio(struct exporter *x, const struct item *it, int *rc)
{
	int *oom = &x->oom;
	cJSON *r = cJSON_CreateObject(), *d, *opts, *o;
	const cJSON *e;
	char l[2] = { it->letter, 0 };
	struct buf b;
	int i = 0;

	buf_init(&b, 1 << 20);
	d = j_add(oom, r, "data", cJSON_CreateObject());
	j_str(oom, d, "qa_id", it->qa->id);
	j_str(oom, d, "group", it->group);
	j_str(oom, d, "recording_id", it->qa->recording_id);
	j_str(oom, d, "question", it->question);
	opts = j_add(oom, d, "options", cJSON_CreateArray());
	cJSON_ArrayForEach(e, it->options) {
		buf_reset(&b);
		if (buf_addf(&b, "%c. %s", 'A' + i, e->valuestring))
			*oom = 1;
		o = j_add(oom, opts, NULL, cJSON_CreateObject());
		j_str(oom, o, "value", buf_str(&b));
		if (i == it->qa->answer_index)
			j_str(oom, d, "answer", buf_str(&b));
		i++;
	}
	j_str(oom, d, "answer_letter", l);
	buf_reset(&b);
	if (it->video && is_vrs(it->video)) {
		/* a VRS file is no format a browser plays: the frames stand in */
		j_str(oom, d, "video", "");
		j_add(oom, d, "clip_start_s", cJSON_CreateNull());
		j_add(oom, d, "clip_end_s", cJSON_CreateNull());
		j_str(oom, d, "clip_text", "The video is a VRS file, which a browser cannot play: see "
		      "the frames (export --frames N)");
	} else if (it->video) {
		double s0 = (double)(it->qa->clip_start_ns - it->video_t0) / 1e9;
		double s1 = (double)(it->qa->clip_end_ns - it->video_t0) / 1e9;

		s0 = s0 < 0 ? 0 : s0;
		*rc = labelstudio_url(x, it, s0, s1, &b);
		j_str(oom, d, "video", buf_str(&b));
		j_num(oom, d, "clip_start_s", s0);
		j_num(oom, d, "clip_end_s", s1);
		buf_reset(&b);
		if (!*rc && buf_addf(&b, "Clip: %.2f s to %.2f s of the video; its end is the "
				     "current moment", s0, s1))
			*oom = 1;
		j_str(oom, d, "clip_text", buf_str(&b));
	} else {
		j_str(oom, d, "video", "");
		j_add(oom, d, "clip_start_s", cJSON_CreateNull());
		j_add(oom, d, "clip_end_s", cJSON_CreateNull());
		j_str(oom, d, "clip_text", "No video: see the frames");
	}
	/* the video's rate, else Label Studio's own default */
	j_num(oom, d, "fps", it->video && x->vc.v ? video_fps(x->vc.v) : 24);
	j_add(oom, d, "frames", frame_list(oom, it));
	buf_release(&b);
	return r;
}

/*
 * LLaVA-NeXT's LazySupervisedDataset (llava/train/train.py, _get_item):
 * "image" as a list of paths under --image_folder (DIR), each loaded by
 * process_image; the human turn holds one <image> token per frame, the
 * model's prepare_inputs_labels_for_multimodal matching tokens to images
 * in order. A "video" entry would be read with decord as a video file.
 */
static cJSON *rec_llava(struct exporter *x, const struct item *it)
{
	int *oom = &x->oom;
	cJSON *r = cJSON_CreateObject(), *conv, *m;
	char l[2] = { it->letter, 0 };
	struct buf q;
	const cJSON *o;
	int i = 0, rc = 0;

	buf_init(&q, 1 << 20);
	j_str(oom, r, "id", it->qa->id);
	j_add(oom, r, "image", frame_list(oom, it));
	conv = j_add(oom, r, "conversations", cJSON_CreateArray());
	m = j_add(oom, conv, NULL, cJSON_CreateObject());
	j_str(oom, m, "from", "human");
	for (i = 0; !rc && i < it->nframes; i++)
		rc = buf_adds(&q, "<image>\n");
	if (it->chain) {
		char *t;

		rc = rc ? rc : buf_addf(&q, "%s\n", chain_system_prompt);
		rc = rc ? rc : chain_prompt(it, &q);
		if (rc)
			*oom = 1;
		j_str(oom, m, "value", buf_str(&q));
		m = j_add(oom, conv, NULL, cJSON_CreateObject());
		j_str(oom, m, "from", "gpt");
		t = chain_text(oom, it);
		j_str(oom, m, "value", t);
		cJSON_free(t);
	} else {
		rc = rc ? rc : buf_addf(&q, "%s\n", it->question);
		i = 0;
		cJSON_ArrayForEach(o, it->options) {
			rc = rc ? rc : buf_addf(&q, "%c. %s\n", 'A' + i, o->valuestring);
			i++;
		}
		rc = rc ? rc : buf_adds(&q, "Answer with the option's letter from the given choices "
					"directly.");
		if (rc)
			*oom = 1;
		j_str(oom, m, "value", buf_str(&q));
		m = j_add(oom, conv, NULL, cJSON_CreateObject());
		j_str(oom, m, "from", "gpt");
		j_str(oom, m, "value", l);
	}
	buf_release(&q);
	return r;
}

/* ---------- VLMEvalKit ---------- */

/* The dataset name (--data NAME), the TSV's base name and the images' folder. */
#define VLM_NAME "Proxima"

/*
 * The strings pandas' read_csv turns into NaN by default (its
 * STR_NA_VALUES), as VLMEvalKit's load() reads a TSV (vlmeval/smp/file.py
 * load_tsv: pd.read_csv(f, sep='\t'), keep_default_na left on).
 */
static bool pandas_na(const char *s)
{
	static const char *const na[] = {
		"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
		"1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(na); i++)
		if (!strcmp(s ? s : "", na[i]))
			return true;
	return false;
}

/*
 * QAs VLMEvalKit would read wrong: a question or option that pandas reads
 * as NaN (ImageMCQDataset.build_prompt drops NaN options), or, in an
 * export with frames, a QA whose frames could not be extracted (its row
 * would have no image and ImageBaseDataset drops it).
 */
static const char *vlm_refuse(const struct exporter *x, const struct item *it)
{
	const cJSON *o;

	if (x->p->frames > 0 && !it->extracted)
		return "no_frames_extracted";
	if (pandas_na(it->question))
		return "vlmevalkit_na_text";
	cJSON_ArrayForEach(o, it->options)
		if (pandas_na(o->valuestring))
			return "vlmevalkit_na_text";
	return NULL;
}

/* Writes frame i of QA id as base64 to out and links it under images/NAME/<id>/. */
static int vlm_image(struct exporter *x, const char *id, int i, FILE *out)
{
	char src[PATH_MAX], dst[PATH_MAX];
	struct buf f;
	unsigned char *enc = NULL;
	int rc, n, e;

	snprintf(src, sizeof(src), "%s/Frames/%s/%03d.jpg", x->dir, id, i + 1);
	snprintf(dst, sizeof(dst), "%s/images/" VLM_NAME "/%s", x->dir, id);
	buf_init(&f, (size_t)64 << 20);
	rc = buf_read_file(&f, src);
	if (rc) {
		rc = err_set(rc, "'%s': cannot read the frame", src);
		goto out;
	}
	if (f.len > (size_t)INT_MAX / 2) {
		rc = err_set(ENG_ETOOBIG, "'%s': frame too large", src);
		goto out;
	}
	enc = malloc(4 * ((f.len + 2) / 3) + 1);
	if (!enc) {
		rc = ENG_ENOMEM;
		goto out;
	}
	n = EVP_EncodeBlock(enc, (const unsigned char *)f.ptr, (int)f.len);
	if (fwrite(enc, 1, (size_t)n, out) != (size_t)n) {
		e = errno;
		rc = err_set(ENG_EIO, "'%s': write failed: %s", x->final_path, strerror(e));
		goto out;
	}
	rc = mkdirs(dst);
	if (rc)
		goto out;
	snprintf(dst, sizeof(dst), "%s/images/" VLM_NAME "/%s/%03d.jpg", x->dir, id, i + 1);
	unlink(dst);
	/* a hard link costs no space; a file system without links gets a copy */
	if (link(src, dst) && write_file_bytes(dst, f.ptr, f.len)) {
		e = errno;
		rc = err_set(ENG_EIO, "'%s': cannot write: %s", dst, strerror(e));
	}
out:
	free(enc);
	buf_release(&f);
	return rc;
}

/* Copies n bytes (all that is left when n < 0) from in to out. */
static int copy_bytes(FILE *in, FILE *out, long n)
{
	char b[65536];

	while (n != 0) {
		size_t want = n < 0 || n > (long)sizeof(b) ? sizeof(b) : (size_t)n;
		size_t got = fread(b, 1, want, in);

		if (!got)
			return n < 0 && !ferror(in) ? 0 : -1;
		if (fwrite(b, 1, got, out) != got)
			return -1;
		if (n > 0)
			n -= (long)got;
	}
	return 0;
}

/*
 * The image cells, once the frames exist: copies the TSV with each
 * placeholder ("@") replaced by its frames' base64 (a Python list literal
 * of them for several frames), linking each frame under images/NAME/.
 */
static int vlm_fill(struct exporter *x)
{
	char tmp[PATH_MAX + 16];
	FILE *in = NULL, *out = NULL;
	long at = 0;
	size_t h;
	int rc = 0, e, i;

	if (!x->nholes)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.images", x->final_path);
	in = fopen(x->final_path, "rbe");
	out = in ? fopen(tmp, "wbe") : NULL;
	if (!in || !out) {
		e = errno;
		rc = err_set(ENG_EIO, "'%s': cannot rewrite: %s", x->final_path, strerror(e));
		goto out;
	}
	for (h = 0; !rc && h < x->nholes; h++) {
		const struct vlm_hole *o = &x->holes[h];

		if (copy_bytes(in, out, o->offset - at) || fgetc(in) != '@') {
			rc = err_set(ENG_EIO, "'%s': the file changed while it was written",
				     x->final_path);
			break;
		}
		at = o->offset + 1;
		if (o->nframes > 1 && fputs("['", out) < 0)
			rc = ENG_EIO;
		for (i = 0; !rc && i < o->nframes; i++) {
			if (i && fputs("', '", out) < 0)
				rc = ENG_EIO;
			rc = rc ? rc : vlm_image(x, o->id, i, out);
		}
		if (!rc && o->nframes > 1 && fputs("']", out) < 0)
			rc = ENG_EIO;
	}
	if (!rc && copy_bytes(in, out, -1))
		rc = ENG_EIO;
	e = fclose(out) ? errno : 0;
	out = NULL;
	if (!rc && e)
		rc = err_set(ENG_EIO, "'%s': write failed: %s", tmp, strerror(e));
	if (!rc && rename(tmp, x->final_path)) {
		e = errno;
		rc = err_set(ENG_EIO, "'%s': cannot rename: %s", x->final_path, strerror(e));
	}
	if (rc == ENG_EIO && !*err_msg())
		rc = err_set(rc, "'%s': write failed", tmp);
out:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (rc)
		unlink(tmp);
	return rc;
}

/* Records that the image cell of this row starts `skip` bytes into it. */
static int vlm_hole_add(struct exporter *x, const struct item *it, size_t skip)
{
	long at = ftell(x->fp);
	struct vlm_hole *o;

	if (at < 0)
		return err_set(ENG_EIO, "'%s': %s", x->final_path, strerror(errno));
	if (x->nholes == x->capholes) {
		size_t cap = x->capholes ? 2 * x->capholes : 64;

		o = realloc(x->holes, cap * sizeof(*o));
		if (!o)
			return ENG_ENOMEM;
		x->holes = o;
		x->capholes = cap;
	}
	o = &x->holes[x->nholes++];
	o->offset = at + (long)skip;
	snprintf(o->id, sizeof(o->id), "%s", it->qa->id);
	o->nframes = it->nframes;
	return 0;
}

/* A Python list literal of quoted items (VLMEvalKit's toliststr evaluates it). */
static int vlm_paths(const struct item *it, struct buf *b)
{
	int i, rc = buf_add(b, "[", 1);

	for (i = 0; !rc && i < it->nframes; i++)
		rc = buf_addf(b, "%s'%s/%03d.jpg'", i ? ", " : "", it->qa->id, i + 1);
	return rc ? rc : buf_add(b, "]", 1);
}

/*
 * One row of VLMEvalKit's MCQ TSV (or the header when it is NULL), laid
 * out for vlmeval/dataset/image_base.py ImageBaseDataset: the export
 * folder is an LMUData root (LMUDataRoot(): $LMUData), the TSV is
 * NAME.tsv, `image` holds the frames as base64 (a Python list literal of
 * them for several frames, which toliststr evaluates; more than 64
 * characters, or the kit takes it for another row's index) and
 * `image_path` their names, which dump_image() resolves under
 * LMUData/images/NAME/ (it decodes `image` there only when a file is
 * missing or unreadable: the frames are linked there already; vlm_fill
 * writes both once the frames exist). Without
 * extracted frames there is no `image` column: the kit then reads
 * image_path as it is (meta_only), and the rows are not runnable.
 * Columns A..: ImageMCQDataset.build_prompt's options (an empty cell is
 * NaN and left out); answer, category, l2-category as its MCQ datasets.
 */
static int row_vlmevalkit(struct exporter *x, const struct item *it, struct buf *b)
{
	int i, rc = 0, images = x->p->frames > 0;

	buf_reset(b);
	if (!it) {
		rc = buf_adds(b, images ? "index\timage\timage_path\tquestion" :
			      "index\timage_path\tquestion");
		for (i = 0; !rc && i < x->max_options; i++)
			rc = buf_addf(b, "\t%c", 'A' + i);
		return rc ? rc : buf_adds(b, "\tanswer\tcategory\tl2-category\tqa_id\n");
	}
	rc = buf_addf(b, "%zu\t", x->n);
	/* the frames are written after their recording's rows: vlm_fill puts them in */
	if (images) {
		rc = rc ? rc : vlm_hole_add(x, it, b->len);
		rc = rc ? rc : buf_adds(b, "@\t");
	}
	rc = rc ? rc : vlm_paths(it, b);
	rc = rc ? rc : buf_add(b, "\t", 1);
	rc = rc ? rc : export_tsv_field(b, it->question);
	for (i = 0; !rc && i < x->max_options; i++) {
		const cJSON *o = cJSON_GetArrayItem(it->options, i);

		rc = buf_add(b, "\t", 1);
		rc = rc ? rc : export_tsv_field(b, o ? o->valuestring : "");
	}
	rc = rc ? rc : buf_addf(b, "\t%c\t", it->letter);
	rc = rc ? rc : export_tsv_field(b, it->source ? it->source : it->group);
	rc = rc ? rc : buf_add(b, "\t", 1);
	rc = rc ? rc : export_tsv_field(b, it->group);
	rc = rc ? rc : buf_addf(b, "\t%s\n", it->qa->id);
	return rc;
}

static cJSON *egoprox_record(struct exporter *x, const struct item *it, int *rc)
{
	(void)rc;
	return rec_egoprox(x, it);
}

static cJSON *lmms_record(struct exporter *x, const struct item *it, int *rc)
{
	(void)rc;
	return rec_lmms(x, it);
}

static cJSON *labelstudio_record(struct exporter *x, const struct item *it, int *rc)
{
	return rec_labelstudio(x, it, rc);
}

static cJSON *llava_record(struct exporter *x, const struct item *it, int *rc)
{
	(void)rc;
	return rec_llava(x, it);
}

static int write_lmms_task(struct exporter *x);
static int write_labelstudio_config(struct exporter *x);

static const struct export_ops formats[EXPORT_NFORMAT] = {
	[EXPORT_EGOPROX] = { .name = "egoprox", .file = "egoprox.json", .array = true,
			     .needs_source = true, .record = egoprox_record },
	[EXPORT_JSONL] = { .name = "jsonl", .file = "records.jsonl", .record = rec_jsonl },
	[EXPORT_LMMS_EVAL] = { .name = "lmms-eval", .file = "proxima.jsonl", .record = lmms_record,
			       .extra = write_lmms_task,
			       .extra_files = { "proxima.yaml", "utils.py" } },
	[EXPORT_VLMEVALKIT] = { .name = "vlmevalkit", .file = VLM_NAME ".tsv", .mc_only = true,
				.counts_first = true, .refuse = vlm_refuse,
				.row = row_vlmevalkit, .extra = vlm_fill },
	[EXPORT_LABELSTUDIO] = { .name = "labelstudio", .file = "tasks.json", .array = true,
				 .mc_only = true, .record = labelstudio_record,
				 .extra = write_labelstudio_config,
				 .extra_files = { "config.xml" } },
	[EXPORT_LLAVA] = { .name = "llava", .file = "llava.json", .array = true,
			   .record = llava_record },
};

static const struct export_ops *ops_of(enum export_format f)
{
	return &formats[(unsigned)f < EXPORT_NFORMAT ? f : EXPORT_JSONL];
}

/* ============================== Writing ============================== */

static int is_array_format(enum export_format f)
{
	return ops_of(f)->array;
}

static int put_text(struct exporter *x, const char *s, size_t n)
{
	if (fwrite(s, 1, n, x->fp) != n) {
		int e = errno;

		return err_set(ENG_EIO, "'%s': write failed: %s", x->final_path, strerror(e));
	}
	return 0;
}

static int remember_id(struct exporter *x, const char *id)
{
	if (x->nids == x->capids) {
		size_t cap = x->capids ? x->capids * 2 : 64;
		char **n = realloc(x->ids, cap * sizeof(*n));

		if (!n)
			return ENG_ENOMEM;
		x->ids = n;
		x->capids = cap;
	}
	x->ids[x->nids] = strdup(id);
	if (!x->ids[x->nids])
		return ENG_ENOMEM;
	x->nids++;
	return 0;
}

/* The SEEN_* bit of an EgoProx MC source (0 for none). */
static unsigned source_bit(const char *source)
{
	static const char *const mc[] = { "Intention_Approx", "Intention_Relative",
					  "Exploration_Approx", "Exploration_Relative",
					  "Exploitation_Approx", "Exploitation_Relative" };
	size_t i;

	for (i = 0; source && i < ARRAY_SIZE(mc); i++)
		if (!strcmp(source, mc[i]))
			return 1u << i;
	return 0;
}

/* Counts the QA's recording (QAs come grouped by recording) and its run, for the manifest. */
static int remember_source(struct exporter *x, const struct store_qa *qa)
{
	size_t i;

	if (!x->last_rec || strcmp(x->last_rec, qa->recording_id)) {
		free(x->last_rec);
		x->last_rec = strdup(qa->recording_id);
		if (!x->last_rec)
			return ENG_ENOMEM;
		x->nrecordings++;
	}
	if (qa->run_id <= 0)
		return 0;
	for (i = 0; i < x->nruns; i++)
		if (x->runs[i] == qa->run_id)
			return 0;
	if (x->nruns == x->capruns) {
		size_t cap = x->capruns ? 2 * x->capruns : 8;
		int64_t *v = realloc(x->runs, cap * sizeof(*v));

		if (!v)
			return ENG_ENOMEM;
		x->runs = v;
		x->capruns = cap;
	}
	x->runs[x->nruns++] = qa->run_id;
	return 0;
}

static int write_item(struct exporter *x, const struct item *it)
{
	enum export_format f = x->p->format;
	cJSON *r = NULL;
	char *s = NULL, key[8];
	int rc = 0;

	if (ops_of(f)->record)
		r = ops_of(f)->record(x, it, &rc);
	else
		rc = ops_of(f)->row(x, it, &x->line);
	if (rc)
		goto out;
	if (ops_of(f)->record) {
		s = r && !x->oom ? cJSON_PrintUnformatted(r) : NULL;
		if (!s) {
			rc = ENG_ENOMEM;
			goto out;
		}
		buf_reset(&x->line);
		if (is_array_format(f))
			rc = buf_adds(&x->line, x->n ? ",\n" : "");
		rc = rc ? rc : buf_adds(&x->line, s);
		if (!is_array_format(f))
			rc = rc ? rc : buf_add(&x->line, "\n", 1);
		if (rc)
			goto out;
	}
	rc = put_text(x, x->line.ptr, x->line.len);
	rc = rc ? rc : remember_id(x, it->qa->id);
	if (rc)
		goto out;
	x->n++;
	x->seen |= it->chain ? SEEN_CHAIN : (source_bit(it->source) | SEEN_MC);
	count(x, x->groups, it->group);
	count(x, x->by_status, it->qa->status ? it->qa->status : "pending");
	rc = remember_source(x, it->qa);
	rc = rc ? rc : report_add_qa(x->rep, it->qa);
	if (rc)
		goto out;
	snprintf(key, sizeof(key), "%d", it->nopt);
	count(x, it->chain ? x->cands : x->options, key);
out:
	cJSON_free(s);
	cJSON_Delete(r);
	return rc ? rc : (x->oom ? ENG_ENOMEM : 0);
}

static int on_qa(const struct store_qa *qa, void *ctx)
{
	struct exporter *x = ctx;
	enum export_format f = x->p->format;
	struct item *it;
	int rc;

	if (!export_tasks_match(x->p->tasks, qa->category, qa->subtask, qa->metric))
		return 0;
	it = calloc(1, sizeof(*it));
	if (!it)
		return ENG_ENOMEM;
	rc = item_init(x, qa, it);
	if (rc)
		goto out;
	if (ops_of(f)->needs_source && !it->source) {
		skip(x, "no_egoprox_source");
		rc = 1;
		goto out;
	}
	if (it->chain && ops_of(f)->mc_only) {
		skip(x, "chain_not_multiple_choice");
		rc = 1;
		goto out;
	}
	if (x->counting) {
		if (it->nopt > x->max_options)
			x->max_options = it->nopt;
		goto out;
	}
	rc = item_frames(x, it);
	if (!rc && ops_of(f)->refuse && ops_of(f)->refuse(x, it)) {
		skip(x, ops_of(f)->refuse(x, it));
		rc = 1;
		goto out;
	}
	rc = rc ? rc : write_item(x, it);
out:
	item_release(it);
	free(it);
	return rc == 1 ? 0 : rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ids_digest(struct exporter *x)
{
	struct hash *h = NULL;
	size_t i;
	int rc;

	if (x->nids) /* qsort(NULL, 0, ...) is undefined */
		qsort(x->ids, x->nids, sizeof(*x->ids), cmp_str);
	rc = hash_new(&h);
	for (i = 0; !rc && i < x->nids; i++) {
		rc = hash_add(h, x->ids[i], strlen(x->ids[i]));
		rc = rc ? rc : hash_add(h, "\n", 1);
	}
	if (rc) {
		hash_free(h);
		return rc;
	}
	return hash_finish(h, x->sum.ids_sha256);
}

/* Writes text to DIR/name (through a .tmp file renamed at the end). */
static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	size_t n = strlen(text);
	FILE *fp;
	int rc = 0, e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fp = fopen(tmp, "we");
	if (!fp) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot write: %s", path, strerror(e));
	}
	if (fwrite(text, 1, n, fp) != n)
		rc = ENG_EIO;
	if (fclose(fp))
		rc = ENG_EIO;
	if (!rc && rename(tmp, path))
		rc = ENG_EIO;
	if (rc) {
		e = errno;
		unlink(tmp);
		return err_set(ENG_EIO, "'%s': cannot write: %s", path, strerror(e));
	}
	return 0;
}

/* The hooks' source, embedded from engine/out/lmms_eval_utils.py. */
#define LMMS_UTILS "engine/out/lmms_eval_utils.py"

/* lmms-eval metrics (utils.proxima_NAME aggregates each), by the QAs they need. */
static const struct {
	unsigned need;        /* SEEN_* bits, any of which makes the metric present */
	const char *name;
} lmms_metrics[] = {
	{ SEEN_MC, "mc_accuracy" }, { SEEN_MC, "mc_lenient_accuracy" },
	{ 1u << 0, "intention_approx" }, { 1u << 1, "intention_relative" },
	{ 1u << 2, "exploration_approx" }, { 1u << 3, "exploration_relative" },
	{ 1u << 4, "exploitation_approx" }, { 1u << 5, "exploitation_relative" },
	{ SEEN_CHAIN, "act_acc" }, { SEEN_CHAIN, "rel_acc_s" }, { SEEN_CHAIN, "rel_acc_l" },
	{ SEEN_CHAIN, "strict_act_acc" },
};

/* YAML double-quoted scalar of s. */
static int yaml_quoted(struct buf *b, const char *s)
{
	int rc = buf_add(b, "\"", 1);

	for (; !rc && *s; s++)
		rc = (*s == '"' || *s == '\\') ? buf_addf(b, "\\%c", *s) : buf_add(b, s, 1);
	return rc ? rc : buf_add(b, "\"", 1);
}

/*
 * proxima.yaml and utils.py beside proxima.jsonl: a task folder that
 * works where it is copied. lmms-eval reads data_files relative to the
 * yaml's folder (lmms_eval/utils.py load_yaml_config ->
 * _resolve_local_data_files, for the json builder; releases up to v0.7.2
 * pass it to datasets.load_dataset as it is, relative to the working
 * directory) and imports each !function from utils.py next to the yaml
 * (lmms_eval/utils.py import_function). The metric list holds the
 * metrics of the groups this export has.
 */
static int write_lmms_task(struct exporter *x)
{
	const struct embed_file *utils = embed_find(LMMS_UTILS);
	struct buf b;
	size_t i;
	int rc, k = 0;

	if (!utils)
		return err_set(ENG_EINVAL, "'%s' is not embedded in this build", LMMS_UTILS);
	buf_init(&b, 1 << 20);
	rc = buf_adds(&b, "# lmms-eval task for a proxima export; see docs/export.md in proxima.\n"
		      "# data_files is relative to this file (lmms-eval after v0.7.2 reads it so;\n"
		      "# with older releases run lmms-eval from this folder).\n"
		      "task: proxima\n"
		      "dataset_path: json\n"
		      "dataset_kwargs:\n"
		      "  data_files:\n"
		      "    test: proxima.jsonl\n"
		      "test_split: test\n"
		      "output_type: generate_until\n"
		      "doc_to_visual: !function utils.proxima_doc_to_visual\n"
		      "doc_to_text: !function utils.proxima_doc_to_text\n"
		      "doc_to_target: \"ground_truth\"\n"
		      "generation_kwargs:\n"
		      "  max_new_tokens: 1024\n"
		      "  temperature: 0\n"
		      "  top_p: 1.0\n"
		      "  num_beams: 1\n"
		      "  do_sample: false\n"
		      "process_results: !function utils.proxima_process_results\n"
		      "metric_list:\n");
	for (i = 0; !rc && i < ARRAY_SIZE(lmms_metrics); i++)
		if (x->seen & lmms_metrics[i].need)
			rc = buf_addf(&b, "  - metric: %s\n"
				      "    aggregation: !function utils.proxima_%s\n"
				      "    higher_is_better: true\n", lmms_metrics[i].name,
				      lmms_metrics[i].name);
	rc = rc ? rc : buf_adds(&b, "lmms_eval_specific_kwargs:\n"
				"  default:\n"
				"    pre_prompt: \"\"\n"
				"    post_prompt: ");
	rc = rc ? rc : yaml_quoted(&b, EXPORT_MC_INSTRUCTION);
	rc = rc ? rc : buf_adds(&b, "\nmetadata:\n  - version: 0.0\n");
	rc = rc ? rc : write_file(x->dir, "proxima.yaml", buf_str(&b));
	buf_reset(&b);
	rc = rc ? rc : buf_add(&b, utils->data, utils->len);
	rc = rc ? rc : buf_adds(&b, "\n# written by proxima export: the metrics proxima.yaml lists\n"
				"METRICS = [");
	for (i = 0; !rc && i < ARRAY_SIZE(lmms_metrics); i++)
		if (x->seen & lmms_metrics[i].need)
			rc = buf_addf(&b, "%s\"%s\"", k++ ? ", " : "", lmms_metrics[i].name);
	rc = rc ? rc : buf_adds(&b, "]\n");
	rc = rc ? rc : write_file(x->dir, "utils.py", buf_str(&b));
	buf_release(&b);
	return rc;
}

/*
 * The labelling config, checked against Label Studio's tag docs
 * (labelstud.io/tags/video: name, value, frameRate from task data;
 * /tags/choices: value= loads the choices from a task field that is a
 * list of {"value"}; /tags/header). Its player (web/libs/editor/src/
 * components/VideoCanvas/VirtualVideo.tsx) loads the URL into a <video>
 * with crossOrigin "anonymous".
 */
static const char labelstudio_config[] =
	"<!-- Label Studio labelling config for a proxima export (tasks.json); see\n"
	"     docs/export.md in proxima. The choices come from each task's options;\n"
	"     the key (answer, answer_letter) is not shown, so the labelling is blind. -->\n"
	"<View>\n"
	"  <Header value=\"$question\"/>\n"
	"  <Video name=\"video\" value=\"$video\" frameRate=\"$fps\"/>\n"
	"  <Header value=\"$clip_text\" size=\"5\"/>\n"
	"  <Choices name=\"answer\" toName=\"video\" choice=\"single\" required=\"true\" value=\"$options\"/>\n"
	"  <TextArea name=\"note\" toName=\"video\" placeholder=\"Note (optional)\" maxSubmissions=\"1\"/>\n"
	"</View>\n";

static int write_labelstudio_config(struct exporter *x)
{
	return write_file(x->dir, "config.xml", labelstudio_config);
}

/* The settings of a generation run worth telling (no host, no process id). */
static cJSON *run_settings(const cJSON *config)
{
	static const char *const keep[] = {
		"tasks", "per_task", "options", "max_turns", "key_cap", "regenerate", "shard"
	};
	cJSON *o = cJSON_CreateObject();
	size_t i;

	for (i = 0; o && i < ARRAY_SIZE(keep); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, keep[i]);
		cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;

		if (v && (!c || !cJSON_AddItemToObject(o, keep[i], c))) {
			cJSON_Delete(c);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

/* manifest "runs": the generation runs of the QAs written, oldest first. */
static int manifest_runs(struct exporter *x, cJSON *m)
{
	cJSON *all = NULL, *runs;
	const cJSON *r;
	size_t i;
	int rc;

	runs = j_add(&x->oom, m, "runs", cJSON_CreateArray());
	if (!runs)
		return ENG_ENOMEM;
	rc = store_run_list(x->st, &all);
	if (rc)
		return rc;
	cJSON_ArrayForEach(r, all) {
		double id = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "id"));
		cJSON *o;

		for (i = 0; i < x->nruns && (double)x->runs[i] != id; i++)
			;
		if (i == x->nruns)
			continue;
		o = j_add(&x->oom, runs, NULL, cJSON_CreateObject());
		j_num(&x->oom, o, "id", id);
		j_dup(&x->oom, o, "brain", cJSON_GetObjectItemCaseSensitive(r, "brain"));
		j_dup(&x->oom, o, "model", cJSON_GetObjectItemCaseSensitive(r, "model"));
		j_dup(&x->oom, o, "seed", cJSON_GetObjectItemCaseSensitive(r, "seed"));
		j_dup(&x->oom, o, "engine_version", cJSON_GetObjectItemCaseSensitive(r, "engine_version"));
		j_dup(&x->oom, o, "started_at", cJSON_GetObjectItemCaseSensitive(r, "started_at"));
		j_dup(&x->oom, o, "finished_at", cJSON_GetObjectItemCaseSensitive(r, "finished_at"));
		j_dup(&x->oom, o, "status", cJSON_GetObjectItemCaseSensitive(r, "status"));
		j_add(&x->oom, o, "settings",
		      run_settings(cJSON_GetObjectItemCaseSensitive(r, "config")));
	}
	cJSON_Delete(all);
	return x->oom ? ENG_ENOMEM : 0;
}

/*
 * The blind audit of the groups written: manifest "audit" (the best solver
 * of each group) in m, and the audit JSON cut to those groups in *cut for
 * the charts. Nothing when the caller gave no audit.
 */
static int manifest_audit(struct exporter *x, cJSON *m, const cJSON *groups, cJSON **cut)
{
	const cJSON *a = x->p->audit, *g, *sv, *b;
	cJSON *o, *og, *cg;

	*cut = NULL;
	if (!a) {
		j_add(&x->oom, m, "audit", cJSON_CreateNull());
		return x->oom ? ENG_ENOMEM : 0;
	}
	o = j_add(&x->oom, m, "audit", cJSON_CreateObject());
	j_str(&x->oom, o, "status", x->p->status ? x->p->status : EXPORT_DEFAULT_STATUS);
	j_dup(&x->oom, o, "rule_margin", cJSON_GetObjectItemCaseSensitive(a, "rule_margin"));
	j_dup(&x->oom, o, "learned_margin", cJSON_GetObjectItemCaseSensitive(a, "learned_margin"));
	og = j_add(&x->oom, o, "groups", cJSON_CreateObject());
	*cut = cJSON_CreateObject();
	j_dup(&x->oom, *cut, "rule_margin", cJSON_GetObjectItemCaseSensitive(a, "rule_margin"));
	j_dup(&x->oom, *cut, "learned_margin", cJSON_GetObjectItemCaseSensitive(a, "learned_margin"));
	cg = j_add(&x->oom, *cut, "groups", cJSON_CreateArray());
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(a, "groups")) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "group"));
		const char *best = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "best"));
		cJSON *e;

		if (!name || !cJSON_GetObjectItemCaseSensitive(groups, name))
			continue;
		j_add(&x->oom, cg, NULL, cJSON_Duplicate(g, 1));
		e = j_add(&x->oom, og, name, cJSON_CreateObject());
		j_dup(&x->oom, e, "n", cJSON_GetObjectItemCaseSensitive(g, "n"));
		j_dup(&x->oom, e, "options", cJSON_GetObjectItemCaseSensitive(g, "options"));
		j_dup(&x->oom, e, "chance", cJSON_GetObjectItemCaseSensitive(g, "chance"));
		j_dup(&x->oom, e, "flagged", cJSON_GetObjectItemCaseSensitive(g, "flagged"));
		j_str(&x->oom, e, "best", best);
		b = NULL;
		cJSON_ArrayForEach(sv, cJSON_GetObjectItemCaseSensitive(g, "solvers")) {
			const char *sn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sv, "name"));

			if (best && sn && !strcmp(sn, best))
				b = sv;
		}
		/* null when the group had too few QAs for any solver */
		j_dup(&x->oom, e, "accuracy", b ? cJSON_GetObjectItemCaseSensitive(b, "accuracy") : NULL);
		j_dup(&x->oom, e, "lower_95", b ? cJSON_GetObjectItemCaseSensitive(b, "lower_95") : NULL);
		j_dup(&x->oom, e, "upper_95", b ? cJSON_GetObjectItemCaseSensitive(b, "upper_95") : NULL);
	}
	return x->oom ? ENG_ENOMEM : 0;
}

/* The charts of the QAs written into DIR/plots, and the card from the manifest m. */
static int write_card(struct exporter *x, const cJSON *m, const cJSON *audit)
{
	struct report_info info;
	struct buf b;
	char dir[PATH_MAX];
	int rc;

	memset(&info, 0, sizeof(info));
	info.title = "Proxima export";
	info.store = store_path(x->st);
	info.status = x->p->status ? x->p->status : EXPORT_DEFAULT_STATUS;
	info.tasks = x->p->tasks && *x->p->tasks ? x->p->tasks : NULL;
	info.engine_version = x->p->engine_version;
	rc = report_finish(x->rep, &info, NULL, audit);
	snprintf(dir, sizeof(dir), "%s/%s", x->dir, CARD_PLOTS);
	if (!rc && report_nplots(x->rep))
		rc = report_write_svgs(x->rep, dir);
	if (rc)
		return rc;
	buf_init(&b, 64u << 20);
	rc = card_render(m, x->rep, CARD_PLOTS, &b);
	rc = rc ? rc : write_file(x->dir, "README.md", buf_str(&b));
	buf_release(&b);
	return rc;
}

static int write_manifest(struct exporter *x)
{
	int *oom = &x->oom;
	cJSON *m = x->manifest, *c, *fr, *files, *groups, *audit = NULL;
	size_t i;
	char now[96], *text;
	int rc;

	now_iso(now, sizeof(now));
	j_str(oom, m, "format", export_format_name(x->p->format));
	j_str(oom, m, "engine_version", x->p->engine_version);
	j_str(oom, m, "created_at", now);
	j_str(oom, m, "store", store_path(x->st));
	c = j_add(oom, m, "filters", cJSON_CreateObject());
	j_str(oom, c, "status", x->p->status ? x->p->status : EXPORT_DEFAULT_STATUS);
	j_str(oom, c, "tasks", x->p->tasks && *x->p->tasks ? x->p->tasks : NULL);
	c = j_add(oom, m, "counts", cJSON_CreateObject());
	j_num(oom, c, "total", (double)x->n);
	groups = j_add(oom, c, "groups", x->groups);
	x->groups = NULL;
	j_add(oom, c, "by_status", x->by_status);
	x->by_status = NULL;
	j_num(oom, c, "recordings", (double)x->nrecordings);
	j_num(oom, c, "skipped_total", (double)x->sum.skipped);
	j_add(oom, c, "skipped", x->skipped);
	x->skipped = NULL;
	c = j_add(oom, m, "config", cJSON_CreateObject());
	j_add(oom, c, "options", x->options);
	x->options = NULL;
	j_add(oom, c, "chain_candidates", x->cands);
	x->cands = NULL;
	j_str(oom, c, "image_base_dir", ".");
	j_str(oom, c, "mc_instruction", EXPORT_MC_INSTRUCTION);
	fr = j_add(oom, m, "frames", cJSON_CreateObject());
	if (x->p->frames > 0)
		j_num(oom, fr, "per_qa", x->p->frames);
	else
		j_str(oom, fr, "per_qa", "stored frame times of each QA");
	j_str(oom, fr, "names", "Frames/<id>/001.jpg ...");
	j_add(oom, fr, "extracted", cJSON_CreateBool(x->sum.frames_written > 0));
	j_num(oom, fr, "written", (double)x->sum.frames_written);
	j_num(oom, fr, "qas_without_video", (double)x->sum.no_video);
	if (x->p->frames <= 0)
		j_str(oom, fr, "note", "frames were not extracted (export with --frames N): the "
		      "records list the intended file names and the frame times");
	else if (x->sum.no_video)
		j_str(oom, fr, "note", "some recordings have no usable video (see recordings): "
		      "their QAs list the intended file names and the frame times");
	j_add(oom, fr, "recordings", x->recordings);
	x->recordings = NULL;
	files = j_add(oom, m, "files", cJSON_CreateArray());
	j_str(oom, files, NULL, export_format_file(x->p->format));
	for (i = 0; i < ARRAY_SIZE(ops_of(x->p->format)->extra_files); i++)
		if (ops_of(x->p->format)->extra_files[i])
			j_str(oom, files, NULL, ops_of(x->p->format)->extra_files[i]);
	j_str(oom, files, NULL, "README.md");
	if (x->n)
		j_str(oom, files, NULL, CARD_PLOTS "/");
	j_str(oom, m, "ids_sha256", x->sum.ids_sha256);
	j_str(oom, m, "ids_sha256_rule", "SHA-256 of the exported ids sorted bytewise, each "
	      "followed by a newline");
	if (x->oom)
		return ENG_ENOMEM;
	rc = manifest_runs(x, m);
	rc = rc ? rc : manifest_audit(x, m, groups, &audit);
	/* the card is written from the manifest as it stands, so its numbers are the manifest's */
	rc = rc ? rc : write_card(x, m, audit);
	cJSON_Delete(audit);
	if (rc)
		return rc;
	text = cJSON_Print(m);
	if (!text)
		return ENG_ENOMEM;
	rc = write_file(x->dir, "manifest.json", text);
	cJSON_free(text);
	return rc;
}

static int open_main(struct exporter *x)
{
	const char *name = export_format_file(x->p->format);
	size_t n = strlen(x->dir) + strlen(name) + 8;
	int e;

	x->final_path = malloc(n);
	x->tmp_path = malloc(n);
	if (!x->final_path || !x->tmp_path)
		return ENG_ENOMEM;
	snprintf(x->final_path, n, "%s/%s", x->dir, name);
	snprintf(x->tmp_path, n, "%s/%s.tmp", x->dir, name);
	x->fp = fopen(x->tmp_path, "we");
	if (!x->fp) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot write: %s", x->final_path, strerror(e));
	}
	return 0;
}

static int close_main(struct exporter *x)
{
	int rc = 0, e;

	if (is_array_format(x->p->format))
		rc = put_text(x, x->n ? "\n]\n" : "]\n", x->n ? 3 : 2);
	e = fclose(x->fp) ? errno : 0;
	x->fp = NULL;
	if (!rc && e)
		rc = err_set(ENG_EIO, "'%s': write failed: %s", x->final_path, strerror(e));
	if (!rc && rename(x->tmp_path, x->final_path)) {
		e = errno;
		rc = err_set(ENG_EIO, "'%s': cannot rename: %s", x->final_path, strerror(e));
	}
	return rc;
}

int export_run(struct store *st, const struct export_params *p,
	       struct export_summary *out)
{
	struct exporter *x;
	struct store_filter flt;
	size_t i;
	int rc = 0;

	if (!st || !p || !p->dir || !*p->dir || !p->engine_version ||
	    (unsigned)p->format >= EXPORT_NFORMAT)
		return err_set(ENG_EINVAL, "export: missing parameters");
	if (p->frames < 0 || p->frames > EXPORT_MAX_FRAMES)
		return err_set(ENG_EINVAL, "export: --frames must be in 0..%d", EXPORT_MAX_FRAMES);
	rc = export_tasks_check(p->tasks);
	if (rc)
		return rc;
	x = calloc(1, sizeof(*x));
	if (!x)
		return ENG_ENOMEM;
	x->st = st;
	x->p = p;
	buf_init(&x->line, 64u << 20);
	x->dir = strdup(p->dir);
	x->manifest = cJSON_CreateObject();
	x->groups = cJSON_CreateObject();
	x->skipped = cJSON_CreateObject();
	x->options = cJSON_CreateObject();
	x->cands = cJSON_CreateObject();
	x->recordings = cJSON_CreateObject();
	x->by_status = cJSON_CreateObject();
	if (!x->dir || !x->manifest || !x->groups || !x->skipped || !x->options ||
	    !x->cands || !x->recordings || !x->by_status || report_new(&x->rep)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	while (strlen(x->dir) > 1 && x->dir[strlen(x->dir) - 1] == '/')
		x->dir[strlen(x->dir) - 1] = '\0';
	memset(&flt, 0, sizeof(flt));
	flt.status = p->status ? p->status : EXPORT_DEFAULT_STATUS;
	rc = mkdirs(x->dir);
	if (rc)
		goto out;
	if (ops_of(p->format)->counts_first) {
		x->counting = 1;
		rc = store_qa_iter(st, &flt, 0, on_qa, x);
		x->counting = 0;
		if (rc)
			goto out;
	}
	rc = open_main(x);
	if (!rc && is_array_format(p->format))
		rc = put_text(x, "[\n", 2);
	if (!rc && ops_of(p->format)->row) {
		rc = ops_of(p->format)->row(x, NULL, &x->line);
		rc = rc ? rc : put_text(x, x->line.ptr, x->line.len);
	}
	rc = rc ? rc : store_qa_iter(st, &flt, 0, on_qa, x);
	rc = rc ? rc : frames_flush(x);
	rc = rc ? rc : close_main(x);
	rc = rc ? rc : ids_digest(x);
	if (!rc && ops_of(p->format)->extra)
		rc = ops_of(p->format)->extra(x);
	x->sum.exported = x->n;
	rc = rc ? rc : write_manifest(x);
	if (!rc && out)
		*out = x->sum;
out:
	if (x->fp) {
		fclose(x->fp);
		unlink(x->tmp_path);
	}
	for (i = 0; i < x->nids; i++)
		free(x->ids[i]);
	free(x->ids);
	free(x->holes);
	for (i = 0; i < x->vc.njobs; i++) /* left over after an error: not written */
		free(x->vc.jobs[i].path);
	x->vc.njobs = 0;
	video_drop(x);
	free(x->tmp_path);
	free(x->final_path);
	free(x->dir);
	cJSON_Delete(x->manifest);
	cJSON_Delete(x->groups);
	cJSON_Delete(x->skipped);
	cJSON_Delete(x->options);
	cJSON_Delete(x->cands);
	cJSON_Delete(x->recordings);
	cJSON_Delete(x->by_status);
	report_free(x->rep);
	free(x->last_rec);
	free(x->runs);
	buf_release(&x->line);
	free(x);
	return rc;
}
