/* SPDX-License-Identifier: MIT */
/*
 * The review page's approve-to-next at scale: a store of 100,000 pending
 * QAs (made with the store functions, rows shaped like generated ones),
 * the review server in this process, and over loopback the three requests
 * the page makes when the reviewer presses `a` (web/review.js act()):
 * POST approve, GET the pending queue (100 items and the counts), GET the
 * next item with its neighbours in the filter. Times the sequence 40
 * times and prints the median; target 50 ms.
 *
 * usage: bench_review [N_QAS]
 * Environment: BUILD (default build), BENCH_WORK (default $BUILD/bench/work).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "buf.h"
#include "err.h"
#include "review.h"
#include "store.h"

#define TARGET_MS 50.0
#define ROUNDS 40
#define DEFAULT_QAS 100000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A ground truth of the size generation writes (camera, target, a grid). */
static const char gt_json[] =
	"{\"camera\":{\"position\":[1,2,1.6],\"heading_deg\":90},"
	"\"spatial\":{\"target\":{\"kind\":\"object\",\"object\":{\"id\":\"mug_1\",\"name\":\"mug\"},"
	"\"position\":[-1,3,1.0]},\"distance_m\":2.315,\"yaw_deg\":63.43,\"direction\":\"front-left\"},"
	"\"occupancy\":{\"grid\":{\"w\":60,\"h\":40,\"cell_m\":0.1,\"x0\":0,\"y0\":0},"
	"\"rle\":[[0,400],[1,20],[0,40],[1,20],[0,40],[1,20],[0,1860]]},"
	"\"visible_at_t\":{\"objects\":[{\"id\":\"sink_1\",\"name\":\"sink\",\"position\":[2,3.5,0.9]},"
	"{\"id\":\"kettle_1\",\"name\":\"kettle\",\"position\":[2.5,1,1.1]}]}}";

static const char trace_json[] =
	"{\"brain\":\"local\",\"messages\":[{\"role\":\"system\",\"content\":\"You plan proximity"
	" questions.\"},{\"role\":\"user\",\"content\":\"Make one question.\"},{\"role\":"
	"\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"name\":\"spatial_relation\",\"arguments\":"
	"\"{}\"}]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"{\\\"yaw_deg\\\":63}\"}]}";

static int build_store(const char *path, long n)
{
	static const char *const subs[][3] = {
		{ "intention", "head_turn", "approx" }, { "intention", "gaze_target", "relative" },
		{ "exploration", "navigate", "relative" },
		{ "exploitation", "next_interaction", "approx" },
	};
	struct store_recording rec = { "rec_bench", "proxima-recording/1", NULL, 0,
				       (int64_t)n * 1000000000LL, "{}" };
	struct store *st = NULL;
	struct store_qa q;
	char id[24];
	long i;
	int rc;

	unlink(path);
	rc = store_open(path, 0, &st);
	if (!rc)
		rc = store_begin(st);
	if (!rc)
		rc = store_recording_put(st, &rec);
	for (i = 0; !rc && i < n; i++) {
		const char *const *s = subs[i % 4];

		memset(&q, 0, sizeof(q));
		snprintf(id, sizeof(id), "e%015lx", (unsigned long)i);
		q.id = id;
		q.recording_id = "rec_bench";
		q.category = s[0];
		q.subtask = s[1];
		q.metric = s[2];
		q.t_ns = 8000000000LL + (int64_t)i * 1000000000LL;
		q.clip_start_ns = q.t_ns - 8000000000LL;
		q.clip_end_ns = q.t_ns;
		q.frames_json = "[0,1142857142,2285714285,3428571428,4571428571,5714285714,"
				"6857142857,8000000000]";
		q.target = "mug_1";
		q.question = "Where will the wearer turn to look at the mug?";
		q.options_json = "[\"Turn right ~65\\u00b0\",\"Turn left ~65\\u00b0\","
				 "\"Keep facing forward\",\"Turn left ~120\\u00b0\",\"Turn around\"]";
		q.answer_index = (int)(i % 5);
		q.answer_json = "{\"direction\":\"left\",\"yaw_deg\":63.4}";
		q.gt_json = gt_json;
		q.qc_json = "{\"z\":0.2,\"qc\":{\"pass\":true,\"z\":0.2,\"max_similarity\":0.41}}";
		q.trace_json = trace_json;
		rc = store_qa_put(st, &q, NULL);
	}
	if (!rc)
		rc = store_commit(st);
	if (rc)
		fprintf(stderr, "bench_review: %s\n", err_msg());
	store_close(st);
	return rc;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	return buf_add(b, p, size * n) ? 0 : size * n;
}

/* One request on the shared handle c (keep-alive, as a browser does); the status or -1. */
static long request(CURL *c, const char *url, const char *body, const char *token,
		    struct buf *out)
{
	struct curl_slist *h = NULL;
	char tok[96];
	long status = -1;

	buf_reset(out);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (body) {
		snprintf(tok, sizeof(tok), "X-Proxima-Token: %s", token);
		h = curl_slist_append(h, tok);
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	} else {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	return status;
}

int main(int argc, char **argv)
{
	const char *b = getenv("BUILD"), *w = getenv("BENCH_WORK");
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : DEFAULT_QAS;
	char work[512], db[600], url[256], base[64], id[24];
	struct review_config cfg;
	struct review_server *srv = NULL;
	double ms[ROUNDS], parts[3][ROUNDS], t0, t1, t2, t3, build_s;
	struct buf out;
	cJSON *j;
	CURL *c;
	int i, k, bad = 0;

	if (n < ROUNDS + 1)
		n = DEFAULT_QAS;
	snprintf(work, sizeof(work), "%s", w ? w : "");
	if (!*work)
		snprintf(work, sizeof(work), "%s/bench/work", b ? b : "build");
	mkdir(work, 0755);
	snprintf(db, sizeof(db), "%s/review_bench.db", work);
	t0 = now_ms();
	if (build_store(db, n)) {
		printf("review approve-to-next at %ld QAs: n/a (cannot build the store)\n", n);
		return 1;
	}
	build_s = (now_ms() - t0) / 1e3;
	memset(&cfg, 0, sizeof(cfg));
	cfg.db_path = db;
	cfg.reviewer = "bench";
	if (review_server_start(&cfg, &srv)) {
		printf("review approve-to-next at %ld QAs: n/a (%s)\n", n, err_msg());
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	c = curl_easy_init();
	buf_init(&out, 1 << 24);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", review_server_port(srv));
	/* the page's first load: the queue, then its first item */
	snprintf(url, sizeof(url), "%s/api/queue?status=pending&offset=0&limit=100", base);
	request(c, url, NULL, NULL, &out);
	for (i = 0; i < ROUNDS; i++) {
		snprintf(id, sizeof(id), "e%015lx", (unsigned long)i);
		t0 = now_ms();
		snprintf(url, sizeof(url), "%s/api/qa/%s/approve", base, id);
		bad |= request(c, url, "{\"started_at\":1700000000000}", review_server_token(srv),
			       &out) != 200;
		t1 = now_ms();
		snprintf(url, sizeof(url), "%s/api/queue?status=pending&offset=0&limit=100", base);
		bad |= request(c, url, NULL, NULL, &out) != 200;
		t2 = now_ms();
		/* the next pending item, as the approved one's "next" names it */
		snprintf(id, sizeof(id), "e%015lx", (unsigned long)i + 1);
		snprintf(url, sizeof(url), "%s/api/qa/%s?status=pending", base, id);
		bad |= request(c, url, NULL, NULL, &out) != 200;
		t3 = now_ms();
		j = cJSON_ParseWithLength(out.ptr ? out.ptr : "", out.len);
		bad |= !j || strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")) ?
				    cJSON_GetStringValue(cJSON_GetObjectItem(j, "id")) : "", id);
		cJSON_Delete(j);
		ms[i] = t3 - t0;
		parts[0][i] = t1 - t0;
		parts[1][i] = t2 - t1;
		parts[2][i] = t3 - t2;
	}
	buf_release(&out);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	review_server_stop(srv);
	unlink(db);
	for (k = 0; k < 3; k++)
		qsort(parts[k], ROUNDS, sizeof(double), cmp_double);
	qsort(ms, ROUNDS, sizeof(double), cmp_double);
	printf("review: store of %ld QAs built in %.1f s; %d rounds of approve, queue, next item\n",
	       n, build_s, ROUNDS);
	printf("review: medians approve %.2f ms, queue %.2f ms, next item %.2f ms; slowest round %.1f ms\n",
	       parts[0][ROUNDS / 2], parts[1][ROUNDS / 2], parts[2][ROUNDS / 2], ms[ROUNDS - 1]);
	if (bad) {
		printf("review approve-to-next at %ld QAs: a request failed, target %.0f ms, FAIL\n", n,
		       TARGET_MS);
		return 1;
	}
	printf("review approve-to-next at %ld QAs: %.1f ms, target %.0f ms, %s\n", n,
	       ms[ROUNDS / 2], TARGET_MS, ms[ROUNDS / 2] <= TARGET_MS ? "PASS" : "FAIL");
	return 0;
}
