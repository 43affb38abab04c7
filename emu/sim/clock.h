/* The virtual clock: nanoseconds of emulated time and the timers that drive every protocol
 * engine of the emulator.
 *
 * Nothing here reads the wall clock. Time moves only when the caller runs timers
 * (emu_clock_run_next/run_until/run_idle), which is what makes a run reproducible: the same
 * timers armed in the same order fire in the same order at the same virtual times.
 *
 * Ordering: timers fire by (deadline, arming sequence). Two timers with the same deadline fire in
 * the order they were (last) armed, so re-arming a timer puts it behind the timers already
 * waiting for the same instant.
 *
 * Timers are intrusive: a struct emu_timer lives inside the caller's object (recover the object
 * with container_of), arming never allocates and cannot fail. The owner must cancel a pending
 * timer before freeing the memory that holds it.
 *
 * Not thread-safe: one clock belongs to one host engine, which serialises every call (including
 * those made from timer callbacks). A callback may arm, re-arm or cancel any timer, itself
 * included, but must not call the emu_clock_run_* functions (they are not re-entrant).
 */
#ifndef RDMAEMU_EMU_CLOCK_H
#define RDMAEMU_EMU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_NSEC_PER_USEC 1000ULL
#define EMU_NSEC_PER_MSEC 1000000ULL
#define EMU_NSEC_PER_SEC 1000000000ULL

/* Step limit meaning "no limit" for emu_clock_run_until/run_idle. */
#define EMU_CLOCK_NO_LIMIT UINT64_MAX

struct emu_clock;
struct emu_timer;

/* Called with the clock already advanced to the timer's deadline; the timer is no longer
 * pending, so the callback may re-arm it. */
typedef void emu_timer_fn(struct emu_clock *clk, struct emu_timer *t, void *arg);

struct emu_timer {
	/* Pairing-heap links: first child, next sibling, and prev (the left sibling, or the
	 * parent for a first child). Private to clock.c. */
	struct emu_timer *child, *next, *prev;
	uint64_t deadline;
	uint64_t seq;
	emu_timer_fn *fn;
	void *arg;
	bool pending;
	/* 0: in the heap; i + 1: in lane i (next/prev are then the lane's links). Private. */
	uint8_t lane;
};

/* Lanes: timers armed with emu_timer_arm_in and the same delay are armed in the order they
 * fire (time never goes back), so each such delay keeps its timers in a FIFO list and only
 * the list's head is in the heap (through the lane's proxy timer, keyed like the head).
 * Cancelling such a timer unlinks it from its list: the heap's merges walked other timers'
 * nodes for that, and with 10,000 connections' timers those were cache misses (docs/cma.md,
 * "Timer lanes"). Delays beyond EMU_CLOCK_LANES at a time go to the heap. Private. */
#define EMU_CLOCK_LANES 8

struct emu_clock_lanes {
	uint64_t delay[EMU_CLOCK_LANES];
	struct emu_timer *head[EMU_CLOCK_LANES], *tail[EMU_CLOCK_LANES];
	struct emu_timer proxy[EMU_CLOCK_LANES];
};

struct emu_clock {
	uint64_t now;     /* virtual time, ns */
	uint64_t seq;     /* arming sequence, breaks deadline ties */
	uint64_t fired;   /* callbacks run since init (statistics, tests) */
	size_t npending;
	struct emu_timer *root;
	bool running;     /* inside emu_clock_run_*: guards against re-entry */
	struct emu_clock_lanes lanes;
};

void emu_clock_init(struct emu_clock *clk, uint64_t start_ns);
/* Disarms every pending timer without running it. The timers' memory is the owners'. */
void emu_clock_fini(struct emu_clock *clk);

static inline uint64_t emu_clock_now(const struct emu_clock *clk)
{
	return clk->now;
}

/* Number of pending timers. */
static inline size_t emu_clock_pending(const struct emu_clock *clk)
{
	return clk->npending;
}

/* Deadline of the next timer to fire; false when no timer is pending. */
bool emu_clock_next_deadline(const struct emu_clock *clk, uint64_t *deadline);

void emu_timer_init(struct emu_timer *t, emu_timer_fn *fn, void *arg);

/* Arms t to fire at `deadline` (a deadline in the past means "now"). Re-arming a pending timer
 * moves it and gives it a new place in the FIFO order of its deadline. */
void emu_timer_arm_at(struct emu_clock *clk, struct emu_timer *t, uint64_t deadline);
/* Same, relative to now; saturates at UINT64_MAX instead of wrapping. */
void emu_timer_arm_in(struct emu_clock *clk, struct emu_timer *t, uint64_t delay_ns);
/* Returns whether t was pending. Cancelling an idle timer is a no-op. */
bool emu_timer_cancel(struct emu_clock *clk, struct emu_timer *t);

static inline bool emu_timer_pending(const struct emu_timer *t)
{
	return t->pending;
}

static inline uint64_t emu_timer_deadline(const struct emu_timer *t)
{
	return t->deadline;
}

/* Advances time to the earliest timer and runs it. Returns false (time unchanged) when no
 * timer is pending. */
bool emu_clock_run_next(struct emu_clock *clk);

/* Runs, in order, every timer whose deadline is <= t (including those armed by callbacks in the
 * meantime), then sets the time to t if it is later than now (time never goes back).
 * At most max_steps callbacks run: if more are due, returns -ELOOP with the time left at the
 * last deadline run, so a timer that re-arms itself forever cannot hang the caller.
 * Returns 0 otherwise. *fired (may be NULL) receives the number of callbacks run. */
int emu_clock_run_until(struct emu_clock *clk, uint64_t t, uint64_t max_steps, uint64_t *fired);

/* Runs timers until none is pending; the time stays at the last deadline run. Same step limit
 * and results as emu_clock_run_until. */
int emu_clock_run_idle(struct emu_clock *clk, uint64_t max_steps, uint64_t *fired);

#endif
