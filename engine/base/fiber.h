/* SPDX-License-Identifier: MIT */
/*
 * Fibers: many sequential jobs on one thread, each with a stack of its
 * own, switching only where a job says it waits. For work that spends
 * most of its time waiting (a remote brain's request takes seconds, its
 * session a millisecond of CPU): 64 sessions as fibers on two threads
 * share two warm allocator heaps and two stacks' worth of scheduler, where
 * 64 threads took 64 heaps' first page faults and woke 64 times per wave.
 *
 * fiber_run() runs its jobs on the calling thread until all of them have
 * returned. A job gives the thread up only in fiber_suspend(),
 * fiber_yield() or fiber_sleep_ms(); between those it runs alone on the
 * thread, so it must not block on a lock or condition that another fiber
 * of the same thread would release. When no fiber can run, the thread
 * calls the run's idle function, which waits for outside events (sockets,
 * the time given) and wakes the fibers they were for with fiber_wake().
 *
 * Each fiber keeps its own err_msg(): a switch saves the detail message of
 * the fiber leaving and restores that of the one coming.
 */
#ifndef PROXIMA_FIBER_H
#define PROXIMA_FIBER_H

#include <stddef.h>

struct fiber;

/* A fiber's job: runs until it returns, with arg. */
typedef void fiber_fn(void *arg);

/*
 * Called on the thread's own stack when no fiber is ready: waits at most
 * timeout_ms (-1: no limit, 0: not at all) for what the fibers wait on
 * and calls fiber_wake() for those whose wait is over. Returning early
 * with none woken is allowed: the run calls it again.
 */
typedef void fiber_idle_fn(void *ctx, long timeout_ms);

/*
 * The default stack of a fiber, a thread's default: address space, paid
 * for only where touched.
 */
#define FIBER_STACK_BYTES (8u << 20)

/*
 * Runs fn(args[i]) for i < n, each on a fiber with a stack of stack_bytes
 * (0: FIBER_STACK_BYTES), on the calling thread, and returns when every
 * one has returned. idle may be NULL when no fiber suspends for outside
 * events. Returns 0, or ENG_ENOMEM (no job started) with err_msg() set.
 * Must not be called from a fiber.
 */
int fiber_run(size_t n, fiber_fn *fn, void *const *args, size_t stack_bytes,
	      fiber_idle_fn *idle, void *idle_ctx);

/* The fiber running on this thread, or NULL when the thread is not on one. */
struct fiber *fiber_self(void);

/*
 * Parks the calling fiber until fiber_wake() on it (from this thread's
 * idle function or another fiber of the thread). On a fiber only.
 */
void fiber_suspend(void);

/* Makes a fiber of this thread parked in fiber_suspend() ready to run. */
void fiber_wake(struct fiber *f);

/*
 * Lets the thread's other fibers run, and the idle function poll for at
 * most a millisecond, then comes back: for a fiber waiting for a state that
 * another thread changes. Off a fiber, returns at once.
 */
void fiber_yield(void);

/* Sleeps ms milliseconds, letting the other fibers run; off a fiber, nanosleep. */
void fiber_sleep_ms(long ms);

#endif
