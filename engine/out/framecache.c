/* SPDX-License-Identifier: MIT */
/*
 * Frames on demand for the review server: framecache.h. The recordings
 * open are a small LRU list; the files written are a ring, oldest first.
 */
#include "framecache.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "banned.h"
#include "err.h"
#include "hash.h"
#include "recording.h"
#include "video.h"

/* Digest characters kept in a file name. */
#define NAME_LEN 32

/* A recording looked up: its video open, or why it has none. */
struct fc_rec {
	char *rec_id, *root;
	struct video *v;          /* NULL when rc != 0 */
	struct framecache_video info;
	int rc;                   /* 0, or the error of the lookup */
	char *why;                /* err_msg() of that error */
	uint64_t used;            /* tick of the last use */
};

/* A file written. */
struct fc_file {
	char name[NAME_LEN + 1];
	int64_t frame_ns;
};

struct framecache {
	pthread_mutex_t lock;
	char *dir;
	struct fc_rec recs[FRAMECACHE_RECORDINGS];
	uint64_t tick;
	struct fc_file *files;    /* ring of max_files */
	size_t max_files, head, nfiles; /* oldest at head */
};

int framecache_new(size_t max_files, struct framecache **out)
{
	struct framecache *fc = calloc(1, sizeof(*fc));
	const char *tmp = getenv("TMPDIR");
	char tmpl[4096];
	int rc = 0;

	if (!fc)
		return ENG_ENOMEM;
	fc->max_files = max_files ? max_files : FRAMECACHE_FILES;
	fc->files = calloc(fc->max_files, sizeof(*fc->files));
	if (!fc->files) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/proxima-frames-XXXXXX", tmp);
	if (!mkdtemp(tmpl)) {
		rc = err_set(ENG_EIO, "review: cannot make a frame folder under '%s': %s", tmp,
			     strerror(errno));
		goto out;
	}
	fc->dir = strdup(tmpl);
	if (!fc->dir) {
		rmdir(tmpl);
		rc = ENG_ENOMEM;
		goto out;
	}
	pthread_mutex_init(&fc->lock, NULL);
out:
	if (rc) {
		free(fc->files);
		free(fc);
		return rc;
	}
	*out = fc;
	return 0;
}

static void file_path(const struct framecache *fc, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s.jpg", fc->dir, name);
}

static void rec_clear(struct fc_rec *r)
{
	video_close(r->v);
	free(r->rec_id);
	free(r->root);
	free(r->why);
	memset(r, 0, sizeof(*r));
}

void framecache_free(struct framecache *fc)
{
	char p[4096];
	size_t i;

	if (!fc)
		return;
	for (i = 0; i < fc->nfiles; i++) {
		file_path(fc, fc->files[(fc->head + i) % fc->max_files].name, p, sizeof(p));
		unlink(p);
	}
	for (i = 0; i < FRAMECACHE_RECORDINGS; i++)
		rec_clear(&fc->recs[i]);
	rmdir(fc->dir);
	pthread_mutex_destroy(&fc->lock);
	free(fc->dir);
	free(fc->files);
	free(fc);
}

/*
 * A native recording names its video in recording.json: it must resolve
 * inside the recording's folder, as the review server's /media route
 * requires, so that a recording.json cannot have the server decode any
 * file it can read. The other layouts attach their videos by fixed rules.
 */
static int video_inside(const struct recording *rec)
{
	char *root = NULL, *file = NULL, *joined = NULL;
	size_t n;
	int rc = 0;

	if (!rec->video.path || strcmp(rec->layout, "proxima-recording/1"))
		return 0;
	n = strlen(rec->root) + strlen(rec->video.path) + 2;
	joined = malloc(n);
	if (!joined)
		return ENG_ENOMEM;
	snprintf(joined, n, "%s/%s", rec->root, rec->video.path);
	root = realpath(rec->root, NULL);
	file = realpath(rec->video.path[0] == '/' ? rec->video.path : joined, NULL);
	if (!root || !file) {
		rc = err_set(ENG_ENOENT, "recording '%s': video '%s': %s", rec->id, rec->video.path,
			     strerror(errno));
	} else {
		n = strlen(root);
		if (strncmp(file, root, n) || file[n] != '/')
			rc = err_set(ENG_EINVAL, "recording '%s': video '%s' resolves outside the "
				     "recording folder", rec->id, rec->video.path);
	}
	free(root);
	free(file);
	free(joined);
	return rc;
}

/* Opens the video of the recording in root into r (r->rc says how it went). */
static int rec_open(struct fc_rec *r)
{
	struct recording *rec = NULL;
	struct video_info vi;
	int rc;

	err_clear();
	rc = recording_load(r->root, REC_LAYOUT_AUTO, &rec);
	if (!rc)
		rc = video_inside(rec);
	if (!rc)
		rc = video_open(rec, &r->v);
	if (rc == ENG_ENOMEM)
		goto out;
	if (rc) {
		r->rc = rc == ENG_EPARSE || rc == ENG_EINVAL ? rc : ENG_ENOENT;
		r->why = strdup(*err_msg() ? err_msg() : eng_strerror(rc));
		rc = r->why ? 0 : ENG_ENOMEM;
		goto out;
	}
	video_get_info(r->v, &vi);
	snprintf(r->info.file, sizeof(r->info.file), "%s",
		 rec->video.path ? rec->video.path : vi.file);
	snprintf(r->info.kind, sizeof(r->info.kind), "%s", vi.kind);
	r->info.nframes = vi.nframes;
	r->info.width = vi.width;
	r->info.height = vi.height;
	r->info.fps = vi.fps;
out:
	recording_free(rec);
	return rc;
}

/* The entry of rec_id in root, looked up now when it is not kept. Under the lock. */
static int rec_get(struct framecache *fc, const char *rec_id, const char *root,
		   struct fc_rec **out)
{
	struct fc_rec *r, *lru = &fc->recs[0];
	size_t i;
	int rc;

	for (i = 0; i < FRAMECACHE_RECORDINGS; i++) {
		r = &fc->recs[i];
		if (r->rec_id && !strcmp(r->rec_id, rec_id) && !strcmp(r->root, root))
			goto found;
		if (!r->rec_id || (lru->rec_id && r->used < lru->used))
			lru = r;
	}
	r = lru;
	rec_clear(r);
	r->rec_id = strdup(rec_id);
	r->root = strdup(root);
	if (!r->rec_id || !r->root) {
		rec_clear(r);
		return ENG_ENOMEM;
	}
	rc = rec_open(r);
	if (rc) {
		rec_clear(r);
		return rc;
	}
found:
	r->used = ++fc->tick;
	*out = r;
	if (r->rc)
		return err_set(r->rc, "%s", r->why);
	return 0;
}

int framecache_probe(struct framecache *fc, const char *rec_id, const char *root,
		     struct framecache_video *out)
{
	struct fc_rec *r;
	int rc;

	pthread_mutex_lock(&fc->lock);
	rc = rec_get(fc, rec_id, root, &r);
	if (!rc)
		*out = r->info;
	pthread_mutex_unlock(&fc->lock);
	return rc;
}

/* The file name of time t of recording r at width w. */
static int frame_name(const struct fc_rec *r, int64_t t, int w, char name[NAME_LEN + 1])
{
	char hex[HASH_HEX_LEN + 1], key[64];
	struct hash *h = NULL;
	int rc;

	snprintf(key, sizeof(key), "%" PRId64 "/%d", t, w);
	rc = hash_new(&h);
	if (!rc)
		rc = hash_add_field(h, r->rec_id);
	if (!rc)
		rc = hash_add_field(h, r->root);
	if (!rc)
		rc = hash_add_field(h, key);
	if (rc) {
		hash_free(h);
		return rc;
	}
	rc = hash_finish(h, hex);
	if (rc)
		return rc;
	memcpy(name, hex, NAME_LEN);
	name[NAME_LEN] = '\0';
	return 0;
}

static struct fc_file *file_find(struct framecache *fc, const char *name)
{
	size_t i;

	for (i = 0; i < fc->nfiles; i++) {
		struct fc_file *f = &fc->files[(fc->head + i) % fc->max_files];

		if (!strcmp(f->name, name))
			return f;
	}
	return NULL;
}

/* Notes a file written; the oldest goes when the ring is full. */
static void file_add(struct framecache *fc, const char *name, int64_t frame_ns)
{
	struct fc_file *f;
	char p[4096];

	if (!fc->max_files) /* framecache_new() never makes one, but keep the ring sound */
		return;
	if (fc->nfiles == fc->max_files) {
		f = &fc->files[fc->head];
		file_path(fc, f->name, p, sizeof(p));
		unlink(p);
		fc->head = (fc->head + 1) % fc->max_files;
		fc->nfiles--;
	}
	f = &fc->files[(fc->head + fc->nfiles) % fc->max_files];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->frame_ns = frame_ns;
	fc->nfiles++;
}

/*
 * Writes the frames of t[0..n) that are not in the cache, in one pass.
 * names[] holds their file names. Under the lock.
 */
static int write_missing(struct framecache *fc, struct fc_rec *r, const int64_t *t, size_t n,
			 int width, char (*names)[NAME_LEN + 1])
{
	const char **paths = calloc(n, sizeof(*paths));
	char (*pbuf)[4096] = calloc(n, sizeof(*pbuf));
	struct video_shot *shots = calloc(n, sizeof(*shots));
	int64_t *tw = calloc(n, sizeof(*tw));
	size_t i, m = 0, *which = calloc(n, sizeof(*which));
	int rc = 0;

	if (!paths || !pbuf || !shots || !tw || !which) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t j;

		if (file_find(fc, names[i]))
			continue;
		for (j = 0; j < m && strcmp(names[which[j]], names[i]); j++)
			;
		if (j < m)
			continue;
		file_path(fc, names[i], pbuf[m], sizeof(pbuf[m]));
		paths[m] = pbuf[m];
		tw[m] = t[i];
		which[m++] = i;
	}
	if (!m)
		goto out;
	rc = video_extract(r->v, tw, m, width, paths, shots);
	for (i = 0; i < m; i++)
		if (!access(paths[i], F_OK))
			file_add(fc, names[which[i]], shots[i].frame_ns);
out:
	free(paths);
	free(pbuf);
	free(shots);
	free(tw);
	free(which);
	return rc;
}

int framecache_open(struct framecache *fc, const char *rec_id, const char *root,
		    const int64_t *t_ns, size_t n, size_t k, int width, int *fd,
		    int64_t *frame_ns)
{
	char (*names)[NAME_LEN + 1] = NULL, p[4096];
	const struct fc_file *f;
	struct fc_rec *r;
	size_t i;
	int rc;

	if (k >= n)
		return err_set(ENG_EINVAL, "frame %zu of %zu", k, n);
	if (width <= 0)
		width = VIDEO_DEFAULT_WIDTH;
	names = calloc(n, sizeof(*names));
	if (!names)
		return ENG_ENOMEM;
	pthread_mutex_lock(&fc->lock);
	rc = rec_get(fc, rec_id, root, &r);
	for (i = 0; !rc && i < n; i++)
		rc = frame_name(r, t_ns[i], width, names[i]);
	if (!rc && !file_find(fc, names[k]))
		rc = write_missing(fc, r, t_ns, n, width, names);
	if (rc)
		goto out;
	f = file_find(fc, names[k]);
	if (!f) {
		rc = err_set(ENG_EIO, "recording '%s': frame %zu was not written", rec_id, k);
		goto out;
	}
	file_path(fc, f->name, p, sizeof(p));
	*fd = open(p, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		rc = err_set(ENG_EIO, "recording '%s': frame %zu: %s", rec_id, k, strerror(errno));
		goto out;
	}
	if (frame_ns)
		*frame_ns = f->frame_ns;
out:
	pthread_mutex_unlock(&fc->lock);
	free(names);
	return rc;
}
