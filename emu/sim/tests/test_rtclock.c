/* rtclock: a reading is CLOCK_MONOTONIC's; no reading is fresh before the counter's rate is
 * known; once it is (two readings 10 ms apart), a reading stays fresh for about 2 us and not
 * for 1 ms; a counter behind the last reading is not fresh. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/rtclock.h"

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
			      .tv_nsec = (long)(ns % 1000000000u)};

	while (nanosleep(&ts, &ts))
		;
}

static void test_reading_is_monotonic(void **state)
{
	struct emu_rtclock c = {0};
	uint64_t a, r, b;

	(void)state;
	a = mono();
	r = emu_rtclock_read(&c);
	b = mono();
	assert_true(a <= r && r <= b);
}

static void test_fresh_after_calibration(void **state)
{
	struct emu_rtclock c = {0};
	uint64_t ticks;

	(void)state;
	emu_rtclock_read(&c);
	if (c.usable < 0)
		skip(); /* no invariant counter here: every call reads the clock */
	/* one reading: the rate is not known, nothing is fresh */
	assert_int_equal(c.fresh_ticks, 0);
	assert_false(emu_rtclock_fresh(&c));
	sleep_ns(EMU_RTCLOCK_CALIBRATE_NS + 1000000);
	emu_rtclock_read(&c);
	ticks = c.fresh_ticks;
	/* a counter of 10 MHz to 100 GHz: 20 to 200,000 ticks in 2 us */
	assert_true(ticks >= 20 && ticks <= 200000);
	/* the calibration is made once */
	sleep_ns(1000000);
	emu_rtclock_read(&c);
	assert_int_equal(c.fresh_ticks, ticks);
	/* right after a reading it is fresh (a try or two: a preemption in between can take
	 * longer than 2 us) */
	{
		int fresh = 0;

		for (int i = 0; i < 100 && !fresh; i++) {
			emu_rtclock_read(&c);
			fresh = emu_rtclock_fresh(&c);
		}
		assert_true(fresh);
	}
	/* 1 ms later it is not */
	sleep_ns(1000000);
	assert_false(emu_rtclock_fresh(&c));
	/* a counter behind the reading (another CPU's) is not fresh either */
	emu_rtclock_read(&c);
	c.tsc += 1000000;
	assert_false(emu_rtclock_fresh(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reading_is_monotonic),
		cmocka_unit_test(test_fresh_after_calibration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
