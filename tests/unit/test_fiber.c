/* SPDX-License-Identifier: MIT */
/*
 * Fibers (engine/base/fiber.c): the order in which fibers that yield,
 * suspend, wake and sleep run, written out by hand for each case; each
 * fiber's err_msg() kept across switches, and the thread's own; the idle
 * function called only when no fiber can run, with the wait asked for;
 * deep stacks; many fibers; and off a fiber, the calls that must still
 * work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fiber.h"

/* What the fibers of a case write, in the order they ran. */
struct trace {
	char s[512];
	size_t n;
};

static void put(struct trace *t, const char *what)
{
	size_t len = strlen(what);

	assert_true(t->n + len + 1 < sizeof(t->s));
	memcpy(t->s + t->n, what, len);
	t->n += len;
	t->s[t->n++] = ' ';
	t->s[t->n] = '\0';
}

struct job {
	struct trace *t;
	const char *name;
	int steps;
	long sleep_ms;
	struct fiber *self;
	struct job *wakes;  /* another job this one wakes when it runs */
};

static void yielder(void *arg)
{
	struct job *j = arg;
	char w[32];
	int i;

	for (i = 0; i < j->steps; i++) {
		snprintf(w, sizeof(w), "%s%d", j->name, i);
		put(j->t, w);
		fiber_yield();
	}
}

/* three fibers that yield after each step: each round runs each once, in order */
static void test_yield_rounds(void **state)
{
	struct trace t = { "", 0 };
	struct job j[3] = { { &t, "a", 3, 0, NULL, NULL }, { &t, "b", 2, 0, NULL, NULL },
			    { &t, "c", 3, 0, NULL, NULL } };
	void *args[3] = { &j[0], &j[1], &j[2] };

	(void)state;
	assert_int_equal(fiber_run(3, yielder, args, 0, NULL, NULL), 0);
	assert_string_equal(t.s, "a0 b0 c0 a1 b1 c1 a2 c2 ");
}

static void suspender(void *arg)
{
	struct job *j = arg;

	j->self = fiber_self();
	assert_non_null(j->self);
	put(j->t, j->name);
	if (j->wakes) {
		/* the other was parked before this one ran: wake it, then go on */
		fiber_wake(j->wakes->self);
		put(j->t, "woke");
		return;
	}
	fiber_suspend();
	put(j->t, "back");
}

/* a parked fiber runs again only after another wakes it, and a wake of a running fiber is no-op */
static void test_suspend_wake(void **state)
{
	struct trace t = { "", 0 };
	struct job a = { &t, "a", 0, 0, NULL, NULL }, b = { &t, "b", 0, 0, NULL, &a };
	void *args[2] = { &a, &b };

	(void)state;
	assert_int_equal(fiber_run(2, suspender, args, 0, NULL, NULL), 0);
	assert_string_equal(t.s, "a b woke back ");
}

static void sleeper(void *arg)
{
	struct job *j = arg;

	fiber_sleep_ms(j->sleep_ms);
	put(j->t, j->name);
}

/* sleepers come back in the order of their times, not of their start */
static void test_sleep_order(void **state)
{
	struct trace t = { "", 0 };
	struct job j[4] = { { &t, "s40", 0, 40, NULL, NULL }, { &t, "s0", 0, 0, NULL, NULL },
			    { &t, "s10", 0, 10, NULL, NULL }, { &t, "s25", 0, 25, NULL, NULL } };
	void *args[4] = { &j[0], &j[1], &j[2], &j[3] };

	(void)state;
	assert_int_equal(fiber_run(4, sleeper, args, 0, NULL, NULL), 0);
	assert_string_equal(t.s, "s0 s10 s25 s40 ");
}

struct errjob {
	const char *mine;
	int ok;
};

static void err_keeper(void *arg)
{
	struct errjob *e = arg;
	char want[64];
	int i;

	for (i = 0; i < 3; i++) {
		err_set(ENG_EIO, "%s %d", e->mine, i);
		/* the others set theirs meanwhile */
		fiber_yield();
		snprintf(want, sizeof(want), "%s %d", e->mine, i);
		e->ok += !strcmp(err_msg(), want);
	}
}

/* each fiber reads back its own message after the others set theirs; the thread's survives */
static void test_err_per_fiber(void **state)
{
	struct errjob e[3] = { { "first", 0 }, { "second", 0 }, { "third", 0 } };
	void *args[3] = { &e[0], &e[1], &e[2] };

	(void)state;
	err_set(ENG_EINVAL, "the thread's own");
	assert_int_equal(fiber_run(3, err_keeper, args, 0, NULL, NULL), 0);
	assert_int_equal(e[0].ok, 3);
	assert_int_equal(e[1].ok, 3);
	assert_int_equal(e[2].ok, 3);
	assert_string_equal(err_msg(), "the thread's own");
	err_clear();
}

struct idle_case {
	struct fiber *parked;
	int calls;
	long timeouts[8];
	struct trace t;
};

static void parker(void *arg)
{
	struct idle_case *c = arg;

	c->parked = fiber_self();
	put(&c->t, "park");
	fiber_suspend();
	put(&c->t, "resumed");
}

static void idle_waker(void *ctx, long timeout_ms)
{
	struct idle_case *c = ctx;

	if (c->calls < 8)
		c->timeouts[c->calls] = timeout_ms;
	/* the outside event comes on the third wait */
	if (++c->calls == 3)
		fiber_wake(c->parked);
}

/* with only a parked fiber the idle function waits without a limit, until it wakes it */
static void test_idle(void **state)
{
	struct idle_case c;
	void *args[1] = { &c };

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(fiber_run(1, parker, args, 0, idle_waker, &c), 0);
	assert_int_equal(c.calls, 3);
	assert_int_equal(c.timeouts[0], -1);
	assert_int_equal(c.timeouts[2], -1);
	assert_string_equal(c.t.s, "park resumed ");
}

static void yield_twice(void *arg)
{
	(void)arg;
	fiber_yield();
	fiber_yield();
}

/* a yielding fiber lets the idle function wait a millisecond at most */
static void test_idle_after_yield(void **state)
{
	struct idle_case c;
	void *args[1] = { NULL };

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(fiber_run(1, yield_twice, args, 0, idle_waker, &c), 0);
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.timeouts[0], 1);
	assert_int_equal(c.timeouts[1], 1);
}

static uint64_t deep(int depth, uint64_t x)
{
	volatile unsigned char block[1024];
	size_t i;

	for (i = 0; i < sizeof(block); i++)
		block[i] = (unsigned char)(x + i);
	if (depth > 0)
		x = deep(depth - 1, x * 6364136223846793005ull + 1442695040888963407ull);
	return x + block[depth % sizeof(block)];
}

struct deep_job {
	int depth;
	uint64_t got;
};

static void deep_fiber(void *arg)
{
	struct deep_job *d = arg;

	d->got = deep(d->depth, 1);
	fiber_yield();
	d->got += deep(d->depth, 2);
}

/* 600 KB of frames on each of two fibers, interleaved, give what the thread's own stack gives */
static void test_deep_stacks(void **state)
{
	struct deep_job d[2] = { { 600, 0 }, { 600, 0 } };
	void *args[2] = { &d[0], &d[1] };
	uint64_t want = deep(600, 1) + deep(600, 2);

	(void)state;
	assert_int_equal(fiber_run(2, deep_fiber, args, 0, NULL, NULL), 0);
	assert_true(d[0].got == want);
	assert_true(d[1].got == want);
}

static void counter(void *arg)
{
	int *n = arg;
	int i;

	for (i = 0; i < 3; i++) {
		(*n)++;
		fiber_yield();
	}
}

/* a thousand fibers with small stacks each run to the end */
static void test_many(void **state)
{
	enum { N = 1000 };
	int *n = calloc(N, sizeof(*n));
	void **args = calloc(N, sizeof(*args));
	size_t i;

	(void)state;
	assert_non_null(n);
	assert_non_null(args);
	for (i = 0; i < N; i++)
		args[i] = &n[i];
	assert_int_equal(fiber_run(N, counter, args, 64u << 10, NULL, NULL), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(n[i], 3);
	free(n);
	free(args);
}

/* off a fiber: no self, yield returns, a sleep sleeps, and no job is no run */
static void test_off_fiber(void **state)
{
	(void)state;
	assert_null(fiber_self());
	fiber_yield();
	fiber_sleep_ms(1);
	assert_int_equal(fiber_run(0, counter, NULL, 0, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yield_rounds),
		cmocka_unit_test(test_suspend_wake),
		cmocka_unit_test(test_sleep_order),
		cmocka_unit_test(test_err_per_fiber),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_idle_after_yield),
		cmocka_unit_test(test_deep_stacks),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_off_fiber),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
