/* rtclock: the real clock for real-time mode, read at most once in EMU_RTCLOCK_FRESH_NS.
 *
 * Every engine lock in real-time mode catches the virtual clock up with CLOCK_MONOTONIC
 * (engine.c, rt_catch_up_slow). The vDSO read costs ~21 ns on this project's machines, one
 * in ten of a cross-process 8-byte RDMA WRITE's ~190 ns (bench/run-all's rate row). The
 * processor's invariant time-stamp counter costs ~9 ns: while it says that less than
 * EMU_RTCLOCK_FRESH_NS passed since the last read, the clock keeps that reading. The engine's
 * clock is then up to 2 us behind the real one, as if the lock came that much earlier; the
 * kernel's own timers (rxe's retransmission and RNR timers) count in jiffies of 1-4 ms. A
 * timer due within that window makes the engine read the clock all the same (engine.c).
 *
 * The counter's rate is learned from two clock reads at least 10 ms apart; until then, and
 * where the counter is not invariant (CPUID 0x80000007 EDX bit 8) or on other processors,
 * every call reads the clock. A counter that went backwards (another CPU's, unsynchronized)
 * reads the clock too. Called under the engine lock: no atomics. */
#ifndef RDMAEMU_EMU_SIM_RTCLOCK_H
#define RDMAEMU_EMU_SIM_RTCLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#define EMU_RTCLOCK_TSC 1
#endif

#define EMU_RTCLOCK_FRESH_NS 2000u
#define EMU_RTCLOCK_CALIBRATE_NS 10000000u

struct emu_rtclock {
	uint64_t tsc;             /* the counter at the last read */
	uint64_t cal_tsc, cal_ns; /* the first read: the rate's base */
	uint64_t fresh_ticks;     /* ticks in EMU_RTCLOCK_FRESH_NS; 0 while not known */
	int usable;               /* 0: not asked yet; 1: invariant counter; -1: none */
};

static inline uint64_t emu_rtclock_counter(void)
{
#ifdef EMU_RTCLOCK_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

/* True when the last reading is still fresh: fewer than fresh_ticks since it. */
static inline bool emu_rtclock_fresh(const struct emu_rtclock *c)
{
	return c->fresh_ticks && emu_rtclock_counter() - c->tsc < c->fresh_ticks;
}

static inline int emu_rtclock_usable(void)
{
#ifdef EMU_RTCLOCK_TSC
	unsigned a, b, cx, d;

	return __get_cpuid(0x80000007, &a, &b, &cx, &d) && (d & (1u << 8)) ? 1 : -1;
#else
	return -1;
#endif
}

/* CLOCK_MONOTONIC in ns, read now; the counter beside it, and its rate once known. */
static inline uint64_t emu_rtclock_read(struct emu_rtclock *c)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!c->usable)
		c->usable = emu_rtclock_usable();
	if (c->usable < 0)
		return ns;
	c->tsc = emu_rtclock_counter();
	if (!c->cal_ns) {
		c->cal_tsc = c->tsc;
		c->cal_ns = ns;
	} else if (!c->fresh_ticks && ns - c->cal_ns >= EMU_RTCLOCK_CALIBRATE_NS &&
		   c->tsc > c->cal_tsc) {
		/* ticks per ns times the window; the product fits: < 2^64 for any counter rate
		 * below 10^9 GHz over 10 ms, and the window is 2 us */
		c->fresh_ticks = (c->tsc - c->cal_tsc) / ((ns - c->cal_ns) / EMU_RTCLOCK_FRESH_NS);
	}
	return ns;
}

#endif
