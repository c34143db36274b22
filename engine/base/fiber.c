/* SPDX-License-Identifier: MIT */
/* Fibers on one thread: ucontext switches, run by a loop on the thread's stack. */
#include "fiber.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "err.h"
#include "warm.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FIBER_ASAN 1
#else
#define FIBER_ASAN 0
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * The top of each stack faulted in at start, in one call (about 1 us a
 * page, against 10 for a fault): what warm_thread() touches of a thread's.
 */
#define FIBER_WARM_BYTES WARM_STACK_BYTES
/* How long a yielding fiber lets the idle function wait at most. */
#define FIBER_YIELD_MS 1

enum fiber_state { F_READY, F_RUNNING, F_SUSPENDED, F_YIELDED, F_SLEEPING, F_DONE };

struct fiber {
	ucontext_t uc;
	struct fiber_sched *s;
	fiber_fn *fn;
	void *arg;
	char *stack;          /* the usable stack, above its guard page */
	size_t stack_size;
	enum fiber_state state;
	struct fiber *next;   /* in the ready or the yielded queue */
	int64_t wake_ns;      /* F_SLEEPING: when */
	void *asan_fake;
	char err[1024];       /* its err_msg() while another runs */
};

struct fiber_queue {
	struct fiber *head, *tail;
};

struct fiber_sched {
	ucontext_t main;
	struct fiber *f;
	size_t n, live, sleeping;
	struct fiber_queue ready, yielded;
	struct fiber *cur;
	fiber_idle_fn *idle;
	void *idle_ctx;
	void *asan_fake;
	const void *main_bottom;
	size_t main_size;
	char err[1024];       /* the thread's err_msg() while a fiber runs */
};

static _Thread_local struct fiber_sched *thread_sched;

static void queue_push(struct fiber_queue *q, struct fiber *f)
{
	f->next = NULL;
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
}

static struct fiber *queue_pop(struct fiber_queue *q)
{
	struct fiber *f = q->head;

	if (f) {
		q->head = f->next;
		if (!q->head)
			q->tail = NULL;
		f->next = NULL;
	}
	return f;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void err_keep(char *dst, size_t size)
{
	const char *m = err_msg();
	size_t len = strlen(m);

	if (len >= size)
		len = size - 1;
	memcpy(dst, m, len);
	dst[len] = '\0';
}

static void err_bring(const char *src)
{
	if (*src)
		err_set(0, "%s", src);
	else
		err_clear();
}

/* From the running fiber back to the loop; returns when the loop runs it again. */
static void to_loop(struct fiber *f)
{
	struct fiber_sched *s = f->s;

	err_keep(f->err, sizeof(f->err));
#if FIBER_ASAN
	__sanitizer_start_switch_fiber(f->state == F_DONE ? NULL : &f->asan_fake,
				       s->main_bottom, s->main_size);
#endif
	swapcontext(&f->uc, &s->main);
#if FIBER_ASAN
	__sanitizer_finish_switch_fiber(f->asan_fake, &s->main_bottom, &s->main_size);
#endif
}

static void entry(void)
{
	struct fiber_sched *s = thread_sched;
	struct fiber *f = s->cur;

#if FIBER_ASAN
	__sanitizer_finish_switch_fiber(NULL, &s->main_bottom, &s->main_size);
#endif
	f->fn(f->arg);
	f->state = F_DONE;
	s->live--;
	to_loop(f);
	/* a finished fiber is never run again */
	abort();
}

/* From the loop into f, until f gives the thread back. */
static void run_one(struct fiber_sched *s, struct fiber *f)
{
	err_keep(s->err, sizeof(s->err));
	err_bring(f->err);
	s->cur = f;
	f->state = F_RUNNING;
#if FIBER_ASAN
	__sanitizer_start_switch_fiber(&s->asan_fake, f->stack, f->stack_size);
#endif
	swapcontext(&s->main, &f->uc);
#if FIBER_ASAN
	__sanitizer_finish_switch_fiber(s->asan_fake, NULL, NULL);
#endif
	s->cur = NULL;
	err_bring(s->err);
}

/* The sleepers whose time has come made ready; the milliseconds to the next one (-1: none). */
static long wake_sleepers(struct fiber_sched *s)
{
	int64_t now, next = INT64_MAX;
	size_t i;

	if (!s->sleeping)
		return -1;
	now = mono_ns();
	for (i = 0; i < s->n; i++) {
		struct fiber *f = &s->f[i];

		if (f->state != F_SLEEPING)
			continue;
		if (f->wake_ns <= now) {
			s->sleeping--;
			f->state = F_READY;
			queue_push(&s->ready, f);
		} else if (f->wake_ns < next) {
			next = f->wake_ns;
		}
	}
	return next == INT64_MAX ? -1 : (long)((next - now + 999999) / 1000000);
}

static void loop(struct fiber_sched *s)
{
	while (s->live) {
		struct fiber *f;
		long timeout;

		while ((f = queue_pop(&s->ready)))
			run_one(s, f);
		if (!s->live)
			break;
		timeout = wake_sleepers(s);
		if (s->ready.head)
			continue;
		if (s->yielded.head && (timeout < 0 || timeout > FIBER_YIELD_MS))
			timeout = FIBER_YIELD_MS;
		/* a fiber suspended with no idle function to wake it would wait forever */
		ENG_ASSERT(s->idle || timeout >= 0);
		if (s->idle)
			s->idle(s->idle_ctx, timeout);
		else
			sleep_ms(timeout > 0 ? timeout : 1);
		while ((f = queue_pop(&s->yielded))) {
			f->state = F_READY;
			queue_push(&s->ready, f);
		}
	}
}

/*
 * f's context, to start in entry() on its stack. Apart from fiber_run:
 * getcontext returns twice, which would leave that function's locals
 * unsafe to keep in registers.
 */
static __attribute__((noinline)) int context_make(struct fiber *f)
{
	if (getcontext(&f->uc))
		return err_set(ENG_ENOMEM, "fibers: getcontext: %s", strerror(errno));
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = f->stack_size;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, entry, 0);
	return 0;
}

int fiber_run(size_t n, fiber_fn *fn, void *const *args, size_t stack_bytes,
	      fiber_idle_fn *idle, void *idle_ctx)
{
	struct fiber_sched s;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), slot, i;
	char *map = MAP_FAILED;
	int rc = 0;

	ENG_ASSERT(!thread_sched);
	if (!n)
		return 0;
	if (!stack_bytes)
		stack_bytes = FIBER_STACK_BYTES;
	stack_bytes = (stack_bytes + page - 1) / page * page;
	slot = stack_bytes + page;
	memset(&s, 0, sizeof(s));
	s.f = calloc(n, sizeof(*s.f));
	if (!s.f) {
		rc = err_set(ENG_ENOMEM, "fibers: no memory for %zu", n);
		goto out;
	}
	/* one mapping for every stack, each above a guard page */
	map = mmap(NULL, slot * n, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (map == MAP_FAILED) {
		rc = err_set(ENG_ENOMEM, "fibers: cannot map %zu stacks of %zu bytes: %s", n,
			     stack_bytes, strerror(errno));
		goto out;
	}
	s.n = n;
	s.idle = idle;
	s.idle_ctx = idle_ctx;
	for (i = 0; i < n; i++) {
		struct fiber *f = &s.f[i];
		size_t warm = stack_bytes < FIBER_WARM_BYTES ? stack_bytes : FIBER_WARM_BYTES;

		f->s = &s;
		f->fn = fn;
		f->arg = args[i];
		f->stack = map + i * slot + page;
		f->stack_size = stack_bytes;
		if (mprotect(map + i * slot, page, PROT_NONE)) {
			rc = err_set(ENG_ENOMEM, "fibers: cannot protect a stack's guard page: %s",
				     strerror(errno));
			goto out;
		}
		/* best effort: an older kernel faults these pages in as they are used */
		(void)madvise(f->stack + stack_bytes - warm, warm, MADV_POPULATE_WRITE);
		rc = context_make(f);
		if (rc)
			goto out;
		f->state = F_READY;
		queue_push(&s.ready, f);
	}
	s.live = n;
	thread_sched = &s;
	loop(&s);
	thread_sched = NULL;
out:
	if (map != MAP_FAILED)
		munmap(map, slot * n);
	free(s.f);
	return rc;
}

struct fiber *fiber_self(void)
{
	struct fiber_sched *s = thread_sched;

	return s ? s->cur : NULL;
}

void fiber_suspend(void)
{
	struct fiber *f = fiber_self();

	ENG_ASSERT(f);
	f->state = F_SUSPENDED;
	to_loop(f);
}

void fiber_wake(struct fiber *f)
{
	if (f->state != F_SUSPENDED)
		return;
	f->state = F_READY;
	queue_push(&f->s->ready, f);
}

void fiber_yield(void)
{
	struct fiber *f = fiber_self();

	if (!f)
		return;
	f->state = F_YIELDED;
	queue_push(&f->s->yielded, f);
	to_loop(f);
}

void fiber_sleep_ms(long ms)
{
	struct fiber *f = fiber_self();

	if (ms <= 0)
		return;
	if (!f) {
		sleep_ms(ms);
		return;
	}
	f->wake_ns = mono_ns() + (int64_t)ms * 1000000;
	f->state = F_SLEEPING;
	f->s->sleeping++;
	to_loop(f);
}
