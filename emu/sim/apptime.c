/* The time layer's clock and its binding into the program (emu/sim/apptime.h). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/apptime_priv.h"
#include "emu/sim/clock.h"
#include "emu/sim/engine.h"

struct emu_apptime_real emu_apptime_real;

/* Bases of the program's clocks: the machine's clocks when the engine was created, virtual
 * time 0. Written once per engine before it is published; read without a lock. */
static struct {
	uint64_t mono, boot, real, tai;
} base;
static bool bound;    /* the program's imports go to the layer */
static bool disabled; /* emu_apptime_disable */
static bool forked;   /* a child forked from a process with a virtual engine */
static int64_t fork_off[4]; /* in such a child: its clocks = the machine's + these */

/* A busy loop on the clock: this many reads at one virtual instant with no other call make
 * the thread idle, and time moves (emu_engine_note_clock_spin) by at most a quantum. */
#define SPIN_READS 1000
#define SPIN_QUANTUM_NS (1000ull * 1000)

static __thread uint64_t spin_at, spin_reads;

enum emu_apptime_mode emu_apptime_mode(void)
{
	const char *s = getenv("RDMAEMU_TIME");

	if (s && !strcmp(s, "real"))
		return EMU_APPTIME_REAL;
	if (s && *s && strcmp(s, "virtual")) {
		static bool said;

		if (!said)
			fprintf(stderr, "rdmaemu: RDMAEMU_TIME='%s' is neither 'virtual' nor 'real'; "
					"using virtual\n", s);
		said = true;
	}
	return EMU_APPTIME_VIRTUAL;
}

static uint64_t machine_ns(clockid_t c)
{
	struct timespec ts;

	if ((emu_apptime_real.clock_gettime ? emu_apptime_real.clock_gettime(c, &ts)
					    : clock_gettime(c, &ts)))
		return 0;
	return emu_ts_ns(&ts);
}

/* Which base a clock reads from: 0 mono, 1 boot, 2 real, 3 tai; -1 not the layer's. */
static int clock_kind(clockid_t c)
{
	switch (c) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
		return 0;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		return 1;
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_REALTIME_ALARM:
		return 2;
	case CLOCK_TAI:
		return 3;
	default:
		return -1;
	}
}

static uint64_t base_of(int kind)
{
	return kind == 0 ? base.mono : kind == 1 ? base.boot : kind == 2 ? base.real : base.tai;
}

bool emu_apptime_clock_at(clockid_t c, uint64_t vnow, uint64_t *ns)
{
	int k = clock_kind(c);

	if (k < 0)
		return false;
	*ns = base_of(k) + vnow;
	return true;
}

bool emu_apptime_instant(clockid_t c, const struct timespec *ts, uint64_t *vns)
{
	int k = clock_kind(c);
	uint64_t t;

	if (k < 0)
		return false;
	t = emu_ts_ns(ts);
	*vns = t > base_of(k) ? t - base_of(k) : 0;
	return true;
}

struct emu_engine *emu_apptime_engine(void)
{
	struct emu_engine *e;

	if (!__atomic_load_n(&bound, __ATOMIC_ACQUIRE) || forked)
		return NULL;
	e = emu_engine_current();
	return e && !emu_engine_is_realtime(e) ? e : NULL;
}

bool emu_apptime_bound(void)
{
	return __atomic_load_n(&bound, __ATOMIC_ACQUIRE);
}

/* ---- the clock ---- */

int emu_apptime_clock_gettime(clockid_t c, struct timespec *ts)
{
	struct emu_engine *e = emu_apptime_engine();
	int k = clock_kind(c);
	uint64_t v;

	if (k < 0 || !ts)
		return emu_apptime_real.clock_gettime(c, ts);
	if (!e) {
		int rc = emu_apptime_real.clock_gettime(c, ts);

		if (!rc && forked)
			*ts = emu_ns_ts((uint64_t)((int64_t)emu_ts_ns(ts) + fork_off[k]));
		return rc;
	}
	v = emu_engine_now_relaxed(e);
	if (v != spin_at) {
		spin_at = v;
		spin_reads = 0;
	} else if (++spin_reads >= SPIN_READS) {
		int saved = errno;

		spin_reads = 0;
		emu_engine_note_clock_spin(e, SPIN_QUANTUM_NS);
		v = emu_engine_now_relaxed(e);
		errno = saved;
	}
	*ts = emu_ns_ts(base_of(k) + v);
	return 0;
}

int emu_apptime_gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	if (!emu_apptime_engine() && !forked)
		return emu_apptime_real.gettimeofday(tv, tz);
	if (tz)
		memset(tz, 0, 2 * sizeof(int)); /* struct timezone: obsolete, zero as glibc does */
	if (!tv)
		return 0;
	emu_apptime_clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t emu_apptime_time(time_t *t)
{
	struct timespec ts;

	if (!emu_apptime_engine() && !forked)
		return emu_apptime_real.time(t);
	emu_apptime_clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

static void fork_prepare(void)
{
	struct emu_engine *e = emu_apptime_engine();
	static const clockid_t ids[4] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME,
					  CLOCK_TAI };

	if (!e)
		return;
	for (int k = 0; k < 4; k++)
		fork_off[k] = (int64_t)(base_of(k) + emu_engine_now_relaxed(e)) -
			      (int64_t)machine_ns(ids[k]);
}

/* A forked child has the engine's memory but none of its threads: its clock goes on from the
 * parent's virtual time at the machine's pace, and its waits are the kernel's. */
static void fork_child(void)
{
	if (emu_apptime_engine())
		forked = true;
}

void emu_apptime_start(void)
{
	pthread_atfork(fork_prepare, NULL, fork_child);
	__atomic_store_n(&bound, true, __ATOMIC_RELEASE);
}

bool emu_apptime_wanted(const struct emu_engine *e)
{
	return !disabled && !emu_engine_is_realtime(e);
}

void emu_apptime_set_bases(const struct emu_engine *e)
{
	/* the program's clock goes on from the machine's now, whatever instant the new engine
	 * starts at (0 alone; the fabric's under a daemon keeping virtual time) */
	uint64_t v = emu_engine_now_relaxed(e);

	base.mono = machine_ns(CLOCK_MONOTONIC) - v;
	base.boot = machine_ns(CLOCK_BOOTTIME) - v;
	base.real = machine_ns(CLOCK_REALTIME) - v;
	base.tai = machine_ns(CLOCK_TAI) - v;
}

void emu_apptime_disable(void)
{
	disabled = true;
}
