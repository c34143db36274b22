/* SPDX-License-Identifier: MIT */
/*
 * The report module and its SVG charts: the bins of each counted field
 * at their edges, the letters' chi-square worked by hand, the store's
 * figures and the blind audit handed in as JSON, hostile text escaped in
 * the charts and the page, one mark per value, the files written; the
 * dataset card's size categories and escaping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "card.h"
#include "err.h"
#include "report.h"
#include "store.h"
#include "svg.h"

#define XSS "<script>alert(1)</script>"

/* A QA of group cat.sub/metric with the given answer (and 5 options, key `key`). */
static struct store_qa qa(const char *id, const char *rec, const char *cat, const char *sub,
			  const char *metric, int key, const char *answer, const char *qc)
{
	struct store_qa q;

	memset(&q, 0, sizeof(q));
	q.id = id;
	q.recording_id = rec;
	q.category = cat;
	q.subtask = sub;
	q.metric = metric;
	q.question = "Where?";
	q.options_json = "[\"a\",\"b\",\"c\",\"d\",\"e\"]";
	q.answer_index = key;
	q.answer_json = answer;
	q.qc_json = qc;
	return q;
}

static void add(struct report *r, struct store_qa q)
{
	assert_int_equal(report_add_qa(r, &q), 0);
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *jstr(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(jget(o, k));

	return s ? s : "";
}

/* The chart called name in report.json, or NULL. */
static const cJSON *plot_of(const cJSON *rep, const char *name)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, jget(rep, "plots"))
		if (!strcmp(jstr(p, "name"), name))
			return p;
	return NULL;
}

/* "key=value,key=value" of a chart's values, for exact comparisons. */
static const char *values_of(const cJSON *rep, const char *name)
{
	static char out[4096];
	const cJSON *p = plot_of(rep, name), *v;
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return "(no chart)";
	cJSON_ArrayForEach(v, jget(p, "values"))
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s=%g", n ? "," : "", jstr(v, "key"),
				      jget(v, "value")->valuedouble);
	return out;
}

/* Occurrences of what in text. */
static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (text = strstr(text, what); text; text = strstr(text + 1, what))
		n++;
	return n;
}

/* Marks (class="mark") in text. */
static int marks(const char *text)
{
	return (int)count(text, "class=\"mark\"");
}

static void test_fields_and_bins(void **state)
{
	struct report *r = NULL;
	cJSON *j = NULL;
	char id[32];
	int i;

	assert_int_equal(report_new(&r), 0);
	/* turns at the edges of their bins */
	static const char *const yaws[] = { "-10", "15", "44.9", "45", "-90", "165", "170", "-135" };
	for (i = 0; i < 8; i++) {
		char a[128];

		snprintf(id, sizeof(id), "00000000000001%02d", i);
		snprintf(a, sizeof(a), "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":%s}", yaws[i]);
		add(r, qa(id, "rec_a", "intention", "head_turn", "approx", i % 5, a, NULL));
	}
	/* distances and z at their edges */
	static const char *const dists[] = { "0.1", "0.25", "0.99", "1", "7.9", "8" };
	static const char *const zs[] = { "-2.5", "-2", "-1.5", "0", "1.99", "2" };
	for (i = 0; i < 6; i++) {
		char a[160], z[32];

		snprintf(id, sizeof(id), "00000000000002%02d", i);
		snprintf(a, sizeof(a), "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"%s\","
			 "\"distance_m\":%s}", i < 4 ? "left" : "back-right", dists[i]);
		snprintf(z, sizeof(z), "{\"z\":%s}", zs[i]);
		add(r, qa(id, "rec_b", "exploration", "navigate", "approx", 0, a, z));
	}
	/* interactions: hands, verticals, verbs, objects (hostile ones included) */
	add(r, qa("0000000000000301", "rec_b", "exploitation", "next_interaction", "approx", 1,
		  "{\"direction\":\"front\",\"vertical\":\"down\",\"distance_m\":0.6,\"hand\":\"left\","
		  "\"verb\":\"pick up\",\"object\":\"" XSS "\"}", NULL));
	add(r, qa("0000000000000302", "rec_b", "exploitation", "next_interaction", "approx", 1,
		  "{\"direction\":\"front\",\"vertical\":\"up\",\"distance_m\":0.6,"
		  "\"verb\":\"pick up\",\"object\":\"cup \\u0001\\ud83d\\ude00 & \\\"mug\\\"\"}", NULL));
	/* navigation legs and a direction that is no sector */
	add(r, qa("0000000000000401", "rec_a", "exploration", "navigate", "relative", 2,
		  "{\"legs\":[\"left\",\"front-right\"]}", NULL));
	add(r, qa("0000000000000402", "rec_a", "exploration", "navigate", "relative", 3,
		  "{\"legs\":[\"left\",\"sideways\"]}", NULL));
	/* a chain: its answer holds the chain under "chain" */
	add(r, qa("0000000000000501", "rec_a", "chain", "actions", "relative", -1,
		  "{\"correct_answer\":[],\"chain\":{\"nodes\":[3,1,7,5],\"edges\":[\"B\",\"E\",\"B\"]},"
		  "\"k\":4}", NULL));
	add(r, qa("0000000000000502", "rec_a", "chain", "actions", "relative", -1, "not json", NULL));
	assert_int_equal(report_finish(r, NULL, NULL, NULL), 0);
	assert_int_equal(report_add_qa(r, NULL), ENG_EINVAL);
	assert_int_equal(report_qas(r), 20);
	assert_int_equal(report_unreadable(r), 2); /* "sideways" and "not json" */
	assert_int_equal(report_json(r, true, &j), 0);

	assert_string_equal(values_of(j, "intention.head_turn.approx.turn"),
			    "right 135-165=1,right 90-130=1,right 45-85=0,right 15-40=0,forward=1,"
			    "left 15-40=2,left 45-85=1,left 90-130=0,left 135-165=1,around=1");
	assert_string_equal(values_of(j, "exploration.navigate.approx.distance"),
			    "<0.25=1,0.25-0.5=1,0.5-1=1,1-2=1,2-4=0,4-8=1,>=8=1");
	assert_string_equal(values_of(j, "exploration.navigate.approx.z"),
			    "<-2=1,[-2,-1.5)=1,[-1.5,-1)=1,[-1,-0.5)=0,[-0.5,0)=0,[0,0.5)=1,"
			    "[0.5,1)=0,[1,1.5)=0,[1.5,2)=1,>=2=1");
	assert_string_equal(values_of(j, "exploration.navigate.approx.direction"),
			    "front=0,front-left=0,left=4,back-left=0,back=0,back-right=2,right=0,"
			    "front-right=0");
	/* the overall polar counts every group's directions */
	assert_string_equal(values_of(j, "all.direction"),
			    "front=2,front-left=0,left=4,back-left=0,back=0,back-right=2,right=0,"
			    "front-right=0");
	assert_string_equal(values_of(j, "exploration.navigate.relative.legs"),
			    "front=0,front-left=0,left=2,back-left=0,back=0,back-right=0,right=0,"
			    "front-right=1");
	assert_string_equal(values_of(j, "exploitation.next_interaction.approx.hand"),
			    "left=1,right=0,both=0,none=1");
	assert_string_equal(values_of(j, "exploitation.next_interaction.approx.vertical"),
			    "down=1,level=0,up=1");
	assert_string_equal(values_of(j, "all.verb"), "pick up=2");
	assert_string_equal(values_of(j, "chain.actions.relative.chain_length"), "4=1");
	assert_string_equal(values_of(j, "chain.actions.relative.edges"),
			    "A=0,B=2,C=0,D=0,E=1,F=0,G=0,H=0");
	assert_string_equal(values_of(j, "all.recordings"), "rec_a=12,rec_b=8");
	/* no chart without its data: no status chart without the store's figures */
	assert_null(plot_of(j, "all.status"));
	assert_null(plot_of(j, "intention.head_turn.approx.distance"));
	assert_null(plot_of(j, "chain.actions.relative.letters-5"));

	/* head_turn letters: keys 0..4,0..2 of 5 -> A2 B2 C2 D1 E1, E = 1.6:
	 * chi2 = (3 * 0.16 + 2 * 0.36) / 1.6 = 0.75, df 4 */
	{
		const cJSON *p = plot_of(j, "intention.head_turn.approx.letters-5");

		assert_non_null(p);
		assert_string_equal(values_of(j, "intention.head_turn.approx.letters-5"),
				    "A=2,B=2,C=2,D=1,E=1");
		assert_true(fabs(jget(p, "chi2")->valuedouble - 0.75) < 1e-12);
		assert_true(jget(p, "df")->valuedouble == 4);
		assert_true(fabs(jget(p, "p")->valuedouble - store_chi2_sf(0.75, 4)) < 1e-15);
		assert_true(jget(p, "ref")->valuedouble == 1.6);
	}
	/* every chart: one mark per value, nothing hostile left unescaped */
	{
		const cJSON *p;

		cJSON_ArrayForEach(p, jget(j, "plots")) {
			const char *svg = jstr(p, "svg");

			assert_int_equal(marks(svg), cJSON_GetArraySize(jget(p, "values")));
			assert_null(strstr(svg, "<script"));
			assert_null(strchr(svg, '\x01'));
		}
		p = plot_of(j, "all.object");
		assert_non_null(strstr(jstr(p, "svg"), "&lt;script&gt;alert(1)&lt;/script&gt;"));
		/* a control character becomes U+FFFD; the emoji and the quotes stay, escaped */
		assert_non_null(strstr(jstr(p, "svg"),
				       "data-key=\"cup \xef\xbf\xbd\xf0\x9f\x98\x80 &amp; &quot;mug&quot;\""));
	}
	cJSON_Delete(j);
	report_free(r);
}

static void test_top_and_other(void **state)
{
	struct report *r = NULL;
	cJSON *j = NULL;
	char id[32], a[96];
	int i;

	assert_int_equal(report_new(&r), 0);
	/* verb v00 once, v01 twice, ... v24 25 times: the top 20 shown, 5 in "other" */
	for (i = 0; i < 25; i++) {
		int k;

		for (k = 0; k <= i; k++) {
			snprintf(id, sizeof(id), "%08d%08d", i, k);
			snprintf(a, sizeof(a), "{\"direction\":\"front\",\"verb\":\"v%02d\",\"object\":\"o\"}", i);
			add(r, qa(id, "rec", "exploitation", "next_interaction", "relative", 0, a, NULL));
		}
	}
	assert_int_equal(report_finish(r, NULL, NULL, NULL), 0);
	assert_int_equal(report_json(r, false, &j), 0);
	{
		const cJSON *p = plot_of(j, "all.verb");
		const cJSON *last = cJSON_GetArrayItem(jget(p, "values"), REPORT_TOP);

		assert_int_equal(cJSON_GetArraySize(jget(p, "values")), REPORT_TOP + 1);
		assert_string_equal(jstr(cJSON_GetArrayItem(jget(p, "values"), 0), "key"), "v24");
		assert_string_equal(jstr(last, "key"), "other (5 more)");
		assert_true(jget(last, "value")->valuedouble == 1 + 2 + 3 + 4 + 5);
	}
	cJSON_Delete(j);
	report_free(r);
}

/* A store with two recordings, drops, reviews; its report with an audit handed in. */
static void test_store_figures_and_files(void **state)
{
	char dir[] = "/tmp/test_report.XXXXXX", db[128], out[160], path[256], cmd[300];
	struct store_recording rec = { "rec1", "native", NULL, 0, 1000, NULL };
	struct store_drop d = { 0, "rec1", "intention", "head_turn", "approx", "ambiguous", 5, NULL,
				NULL };
	struct store_review rv;
	struct store_qa q;
	struct report_info info;
	struct report *r = NULL;
	struct store *st = NULL;
	cJSON *j = NULL, *audit;
	struct buf b;
	struct stat sb;
	long i;

	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/s.db", dir);
	assert_int_equal(store_open(db, 0, &st), 0);
	assert_int_equal(store_recording_put(st, &rec), 0);
	q = qa("00000000000000a1", "rec1", "intention", "head_turn", "relative", 0,
	       "{\"direction\":\"left\"}", "{\"z\":0.5}");
	assert_int_equal(store_qa_put(st, &q, NULL), 0);
	q = qa("00000000000000a2", "rec1", "intention", "head_turn", "relative", 1,
	       "{\"direction\":\"right\"}", "{\"z\":-0.5}");
	assert_int_equal(store_qa_put(st, &q, NULL), 0);
	q = qa("00000000000000a3", "rec1", "intention", "head_turn", "relative", 1,
	       "{\"direction\":\"back\"}", NULL);
	assert_int_equal(store_qa_put(st, &q, NULL), 0);
	assert_int_equal(store_drop_put(st, &d), 0);
	memset(&rv, 0, sizeof(rv));
	rv.qa_id = "00000000000000a3";
	rv.reviewer = "ana <b>";
	rv.decision = "reject";
	rv.blind_answer_index = -1;
	assert_int_equal(store_review_add(st, &rv, NULL), 0);
	audit = cJSON_Parse("{\"rule_margin\":0.05,\"learned_margin\":0.1,\"groups\":[{\"group\":"
			    "\"intention.head_turn/relative\",\"n\":2,\"options\":5,\"chance\":0.2,"
			    "\"flagged\":true,\"best\":\"longest\",\"solvers\":[{\"name\":\"longest\","
			    "\"learned\":false,\"n\":2,\"accuracy\":1,\"lower_95\":0.4,"
			    "\"upper_95\":1}]}]}");
	assert_non_null(audit);
	memset(&info, 0, sizeof(info));
	info.title = "Kitchen " XSS;
	info.engine_version = "0.0.1";
	assert_int_equal(report_build(st, "nonsense", &info, audit, &r), ENG_EINVAL);
	assert_int_equal(report_build(st, NULL, &info, audit, &r), 0);
	store_close(st);
	cJSON_Delete(audit);
	assert_int_equal(report_qas(r), 2); /* the rejected one is not live */
	assert_int_equal(report_json(r, false, &j), 0);
	assert_string_equal(jstr(j, "status"), REPORT_DEFAULT_STATUS);
	assert_string_equal(jstr(j, "store"), db);
	assert_string_equal(values_of(j, "all.status"),
			    "pending=2,approved=0,edited=0,conflict=0,rejected=1,dropped=0,superseded=0");
	assert_string_equal(values_of(j, "intention.head_turn.relative.direction"),
			    "front=0,front-left=0,left=1,back-left=0,back=0,back-right=0,right=1,"
			    "front-right=0");
	assert_string_equal(values_of(j, "all.drops"), "ambiguous=1");
	assert_null(plot_of(j, "intention.head_turn.relative.drops")); /* the drop is approx's */
	/* a group with only drops gets its charts too */
	assert_string_equal(values_of(j, "intention.head_turn.approx.drops"), "ambiguous=1");
	assert_string_equal(values_of(j, "intention.head_turn.approx.status"),
			    "pending=0,approved=0,edited=0,conflict=0,rejected=0,dropped=0,superseded=0");
	assert_string_equal(values_of(j, "intention.head_turn.relative.audit"), "longest=1");
	assert_string_equal(values_of(j, "all.audit"), "intention.head_turn/relative=1");
	assert_string_equal(values_of(j, "all.acceptance"), "intention.head_turn/relative=0");
	assert_string_equal(values_of(j, "all.reviewers"), "ana <b>=1");
	assert_true(jget(plot_of(j, "intention.head_turn.relative.z"), "mean")->valuedouble == 0);
	cJSON_Delete(j);

	/* the page: every text escaped, no script, every chart inline */
	buf_init(&b, 64u << 20);
	assert_int_equal(report_html(r, &b), 0);
	assert_null(strstr(buf_str(&b), "<script"));
	assert_non_null(strstr(buf_str(&b), "<title>Kitchen &lt;script&gt;alert(1)&lt;/script&gt;</title>"));
	assert_non_null(strstr(buf_str(&b), "ana &lt;b&gt;"));
	/* nothing fetched: the only address is the SVG namespace of each chart */
	assert_int_equal(count(buf_str(&b), "http"), count(buf_str(&b), "xmlns=\"http://www.w3.org/2000/svg\""));
	assert_int_equal(count(buf_str(&b), "<svg "), report_nplots(r));
	assert_int_equal(count(buf_str(&b), "src="), 0);
	buf_release(&b);

	/* the files */
	snprintf(out, sizeof(out), "%s/out", dir);
	assert_int_equal(report_write(r, out), 0);
	snprintf(path, sizeof(path), "%s/index.html", out);
	assert_int_equal(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/report.json", out);
	assert_int_equal(stat(path, &sb), 0);
	for (i = 0; i < (long)report_nplots(r); i++) {
		struct report_plot_info pi;

		assert_int_equal(report_plot(r, (size_t)i, &pi), 0);
		assert_int_equal(report_plot_find(r, pi.name), i);
		snprintf(path, sizeof(path), "%s/%s", out, pi.file);
		assert_int_equal(stat(path, &sb), 0);
	}
	assert_int_equal(report_plot(r, report_nplots(r), &(struct report_plot_info){ 0 }), ENG_EINVAL);
	snprintf(out, sizeof(out), "%s/no/such/folder", dir);
	err_clear();
	assert_int_equal(report_write(r, out), ENG_EIO);
	assert_non_null(strstr(err_msg(), "no/such/folder"));
	report_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_svg_escape_and_render(void **state)
{
	struct svg_value v[8];
	struct svg_plot p;
	struct buf b;
	int i;

	buf_init(&b, 1u << 20);
	assert_int_equal(svg_escape(&b, "a<b>&\"c'\x7f\xff\xc3\xa9", 0), 0);
	assert_string_equal(buf_str(&b), "a&lt;b&gt;&amp;&quot;c&#39;\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9");
	buf_reset(&b);
	assert_int_equal(svg_escape(&b, "abcdef", 3), 0);
	assert_string_equal(buf_str(&b), "abc\xe2\x80\xa6");
	buf_reset(&b);
	memset(v, 0, sizeof(v));
	memset(&p, 0, sizeof(p));
	for (i = 0; i < 8; i++) {
		v[i].key = "k";
		v[i].value = i;
	}
	p.kind = SVG_POLAR;
	p.name = "t";
	p.title = "polar";
	p.values = v;
	p.n = 7;
	assert_int_equal(svg_render(&p, &b), ENG_EINVAL);
	p.n = 8;
	assert_int_equal(svg_render(&p, &b), 0);
	assert_int_equal(marks(buf_str(&b)), 8);
	assert_non_null(strstr(buf_str(&b), "data-value=\"7\""));
	buf_reset(&b);
	p.kind = SVG_BARS;
	p.n = 0;
	assert_int_equal(svg_render(&p, &b), 0);
	assert_int_equal(marks(buf_str(&b)), 0);
	assert_non_null(strstr(buf_str(&b), "no values"));
	buf_release(&b);
}

static void test_card(void **state)
{
	static const char manifest[] =
		"{\"format\":\"jsonl\",\"engine_version\":\"9.9\",\"filters\":{\"status\":\"approved\","
		"\"tasks\":null},\"counts\":{\"total\":1500,\"groups\":{\"intention.head_turn/approx\":1000,"
		"\"odd|group\":500},\"by_status\":{\"approved\":1500},\"recordings\":2},"
		"\"runs\":[{\"id\":3,\"brain\":\"openai\",\"model\":\"<script>|x\",\"seed\":7,"
		"\"settings\":{\"per_task\":70,\"options\":5}}],\"audit\":null,"
		"\"files\":[\"records.jsonl\",\"README.md\"],\"ids_sha256\":\"ab\"}";
	cJSON *m = cJSON_Parse(manifest), *bad = cJSON_Parse("{\"files\":[\"x\"]}");
	struct buf b;

	assert_string_equal(card_size_category(0), "n<1K");
	assert_string_equal(card_size_category(999), "n<1K");
	assert_string_equal(card_size_category(1000), "1K<n<10K");
	assert_string_equal(card_size_category(99999), "10K<n<100K");
	assert_string_equal(card_size_category(2e12), "n>1T");
	buf_init(&b, 1u << 20);
	assert_int_equal(card_render(bad, NULL, NULL, &b), ENG_EINVAL);
	buf_reset(&b);
	assert_int_equal(card_render(m, NULL, NULL, &b), 0);
	assert_true(!strncmp(buf_str(&b), "---\n", 4));
	assert_non_null(strstr(buf_str(&b), "size_categories:\n- 1K<n<10K\n"));
	assert_non_null(strstr(buf_str(&b), "    path: \"records.jsonl\"\n"));
	assert_non_null(strstr(buf_str(&b), "license: other  # set this"));
	/* store text is escaped for Markdown tables and inline HTML */
	assert_non_null(strstr(buf_str(&b), "| 3 | openai | &lt;script&gt;\\|x | 7 | \xe2\x80\x94 | 70 | 5 |"));
	assert_non_null(strstr(buf_str(&b), "| odd\\|group | 500 |"));
	assert_null(strstr(buf_str(&b), "<script"));
	assert_non_null(strstr(buf_str(&b), "| **total** | 1500 |"));
	assert_non_null(strstr(buf_str(&b), "- 1500 QAs from 2 recordings"));
	assert_non_null(strstr(buf_str(&b), "without the blind audit"));
	buf_release(&b);
	cJSON_Delete(m);
	cJSON_Delete(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_and_bins),
		cmocka_unit_test(test_top_and_other),
		cmocka_unit_test(test_store_figures_and_files),
		cmocka_unit_test(test_svg_escape_and_render),
		cmocka_unit_test(test_card),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
