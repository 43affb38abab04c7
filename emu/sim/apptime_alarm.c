/* The program's alarm on the virtual clock: alarm() and setitimer/getitimer(ITIMER_REAL) as a
 * clock timer whose expiry sends SIGALRM to the process (emu/sim/apptime.h). The other
 * interval timers (ITIMER_VIRTUAL, ITIMER_PROF) count CPU time and stay the kernel's. */
#include "config.h"

#include <errno.h>
#include <signal.h>

#include "emu/sim/apptime_priv.h"
#include "emu/sim/clock.h"
#include "emu/sim/engine.h"

/* Under the engine lock. */
static struct emu_timer alarm_tmr;
static struct emu_engine *alarm_engine; /* the engine alarm_tmr was made for */
static uint64_t alarm_interval;

static void alarm_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	if (alarm_interval)
		emu_timer_arm_in(clk, t, alarm_interval);
	emu_engine_raise(arg, SIGALRM);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * EMU_NSEC_PER_SEC + (uint64_t)tv->tv_usec * 1000;
}

static struct timeval ns_tv(uint64_t ns)
{
	/* the kernel rounds a remaining time up to the next microsecond */
	ns += 999;
	return (struct timeval){ (time_t)(ns / EMU_NSEC_PER_SEC),
				 (suseconds_t)(ns % EMU_NSEC_PER_SEC / 1000) };
}

/* Lock held. */
static void current(struct emu_engine *e, struct itimerval *cur)
{
	struct emu_clock *clk = emu_engine_clock(e);
	uint64_t now = emu_clock_now(clk);

	if (alarm_engine != e || !emu_timer_pending(&alarm_tmr)) {
		*cur = (struct itimerval){ { 0, 0 }, { 0, 0 } };
		return;
	}
	cur->it_interval = ns_tv(alarm_interval);
	cur->it_value = ns_tv(emu_timer_deadline(&alarm_tmr) > now
				      ? emu_timer_deadline(&alarm_tmr) - now : 0);
	if (!cur->it_value.tv_sec && !cur->it_value.tv_usec)
		cur->it_value.tv_usec = 1; /* due now: still pending, as the kernel reports it */
}

static bool tv_valid(const struct timeval *tv)
{
	return tv->tv_sec >= 0 && tv->tv_usec >= 0 && tv->tv_usec < 1000000;
}

int emu_apptime_setitimer(int which, const struct itimerval *nv, struct itimerval *ov)
{
	struct emu_engine *e = emu_apptime_engine();
	struct emu_clock *clk;
	int saved;

	if (!e || which != ITIMER_REAL)
		return emu_apptime_real.setitimer(which, nv, ov);
	if (nv && (!tv_valid(&nv->it_value) || !tv_valid(&nv->it_interval))) {
		errno = EINVAL;
		return -1;
	}
	saved = errno;
	emu_engine_lock(e);
	clk = emu_engine_clock(e);
	if (ov)
		current(e, ov);
	if (nv) {
		if (alarm_engine != e) {
			emu_timer_init(&alarm_tmr, alarm_fire, e);
			alarm_engine = e;
		}
		emu_timer_cancel(clk, &alarm_tmr);
		alarm_interval = tv_ns(&nv->it_interval);
		if (tv_ns(&nv->it_value))
			emu_timer_arm_in(clk, &alarm_tmr, tv_ns(&nv->it_value));
	}
	emu_engine_unlock(e);
	errno = saved;
	return 0;
}

int emu_apptime_getitimer(int which, struct itimerval *cur)
{
	struct emu_engine *e = emu_apptime_engine();

	int saved = errno;

	if (!e || which != ITIMER_REAL || !cur)
		return emu_apptime_real.getitimer(which, cur);
	emu_engine_lock(e);
	current(e, cur);
	emu_engine_unlock(e);
	errno = saved;
	return 0;
}

unsigned emu_apptime_alarm(unsigned s)
{
	struct itimerval nv = { { 0, 0 }, { (time_t)s, 0 } }, ov;
	unsigned left;

	if (!emu_apptime_engine())
		return emu_apptime_real.alarm(s);
	if (emu_apptime_setitimer(ITIMER_REAL, &nv, &ov))
		return 0;
	/* as the kernel's alarm: a pending alarm never reads 0; half a second rounds up */
	left = (unsigned)ov.it_value.tv_sec;
	if ((!left && ov.it_value.tv_usec) || ov.it_value.tv_usec >= 500000)
		left++;
	return left;
}
