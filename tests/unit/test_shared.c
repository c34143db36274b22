/* SPDX-License-Identifier: MIT */
/*
 * The tool contexts' shared store (tools/registry.h): a value is made once
 * however many threads ask for it at once, every thread reads the same
 * value, a failed make is not stored, and without a store the caller owns
 * what make gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "registry.h"

static int makes;      /* calls of make_slow, under mk_lock */
static pthread_mutex_t mk_lock = PTHREAD_MUTEX_INITIALIZER;

static int make_slow(void *arg, void **data, void (**destroy)(void *data))
{
	int *v = malloc(sizeof(*v));

	if (!v)
		return ENG_ENOMEM;
	pthread_mutex_lock(&mk_lock);
	makes++;
	pthread_mutex_unlock(&mk_lock);
	usleep(20000); /* long enough for the other threads to arrive and wait */
	*v = *(const int *)arg;
	*data = v;
	*destroy = free;
	return 0;
}

static int make_fail(void *arg, void **data, void (**destroy)(void *data))
{
	(void)arg;
	(void)data;
	(void)destroy;
	pthread_mutex_lock(&mk_lock);
	makes++;
	pthread_mutex_unlock(&mk_lock);
	return ENG_EINVAL;
}

struct job {
	struct tool_shared *s;
	int *got;
	int rc;
	bool owned;
};

static void *asker(void *p)
{
	struct job *j = p;
	struct tool_ctx *ctx = NULL;
	int arg = 42;

	j->rc = tool_ctx_new(NULL, &ctx);
	if (!j->rc) {
		tool_ctx_share(ctx, j->s);
		j->rc = tool_shared_get(ctx, "answer", make_slow, &arg, (void **)&j->got, &j->owned);
	}
	tool_ctx_free(ctx);
	return NULL;
}

static void test_made_once(void **state)
{
	struct tool_shared *s = NULL;
	pthread_t th[8];
	struct job j[8];
	int i;

	(void)state;
	makes = 0;
	assert_int_equal(tool_shared_new(&s), 0);
	for (i = 0; i < 8; i++) {
		j[i].s = s;
		j[i].got = NULL;
		assert_int_equal(pthread_create(&th[i], NULL, asker, &j[i]), 0);
	}
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(makes, 1);
	for (i = 0; i < 8; i++) {
		assert_int_equal(j[i].rc, 0);
		assert_false(j[i].owned);
		assert_ptr_equal(j[i].got, j[0].got);
		assert_int_equal(*j[i].got, 42);
	}
	tool_shared_free(s);
}

static void test_failure_not_stored(void **state)
{
	struct tool_shared *s = NULL;
	struct tool_ctx *ctx = NULL;
	void *d = NULL;
	bool owned = true;
	int arg = 7;

	(void)state;
	makes = 0;
	assert_int_equal(tool_shared_new(&s), 0);
	assert_int_equal(tool_ctx_new(NULL, &ctx), 0);
	tool_ctx_share(ctx, s);
	assert_int_equal(tool_shared_get(ctx, "k", make_fail, &arg, &d, &owned), ENG_EINVAL);
	assert_int_equal(tool_shared_get(ctx, "k", make_fail, &arg, &d, &owned), ENG_EINVAL);
	assert_int_equal(makes, 2);
	/* after failures a working maker still runs, once */
	assert_int_equal(tool_shared_get(ctx, "k", make_slow, &arg, &d, &owned), 0);
	assert_int_equal(tool_shared_get(ctx, "k", make_slow, &arg, &d, &owned), 0);
	assert_int_equal(makes, 3);
	assert_int_equal(*(int *)d, 7);
	assert_false(owned);
	tool_ctx_free(ctx);
	tool_shared_free(s);
}

static void test_without_store(void **state)
{
	struct tool_ctx *ctx = NULL;
	void *d = NULL;
	bool owned = false;
	int arg = 3;

	(void)state;
	makes = 0;
	assert_int_equal(tool_ctx_new(NULL, &ctx), 0);
	assert_int_equal(tool_shared_get(ctx, "k", make_slow, &arg, &d, &owned), 0);
	assert_true(owned);
	assert_int_equal(*(int *)d, 3);
	free(d);
	assert_int_equal(tool_shared_get(ctx, "k", make_slow, &arg, &d, &owned), 0);
	assert_int_equal(makes, 2);
	free(d);
	tool_ctx_free(ctx);
	tool_shared_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_once),
		cmocka_unit_test(test_failure_not_stored),
		cmocka_unit_test(test_without_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
