/* Virtual clock: firing order, FIFO ties, cancel/re-arm, step limits, time monotonicity, and
 * the order against a model while time moves between arms. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/clock.h"
#include "emu/sim/prng.h"

#define MAXLOG 4096

struct log {
	int ids[MAXLOG];
	uint64_t times[MAXLOG];
	size_t n;
};

struct tmr {
	struct emu_timer t;
	int id;
	struct log *log;
};

static void log_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct tmr *m = arg;

	assert_ptr_equal(&m->t, t);
	assert_false(emu_timer_pending(t));
	assert_true(m->log->n < MAXLOG);
	m->log->ids[m->log->n] = m->id;
	m->log->times[m->log->n] = emu_clock_now(clk);
	m->log->n++;
}

static void tmr_init(struct tmr *m, int id, struct log *log)
{
	m->id = id;
	m->log = log;
	emu_timer_init(&m->t, log_fire, m);
}

static void test_empty(void **state)
{
	struct emu_clock clk;
	uint64_t d, fired = 99;

	emu_clock_init(&clk, 1000);
	assert_int_equal(emu_clock_now(&clk), 1000);
	assert_false(emu_clock_next_deadline(&clk, &d));
	assert_false(emu_clock_run_next(&clk));
	assert_int_equal(emu_clock_now(&clk), 1000);
	assert_int_equal(emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, &fired), 0);
	assert_int_equal(fired, 0);
	assert_int_equal(emu_clock_now(&clk), 1000);
	/* run_until advances time with nothing to run, and never backwards. */
	assert_int_equal(emu_clock_run_until(&clk, 5000, EMU_CLOCK_NO_LIMIT, &fired), 0);
	assert_int_equal(emu_clock_now(&clk), 5000);
	assert_int_equal(emu_clock_run_until(&clk, 10, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(emu_clock_now(&clk), 5000);
	emu_clock_fini(&clk);
}

static void test_order_and_fifo(void **state)
{
	struct emu_clock clk;
	struct log log = { .n = 0 };
	struct tmr m[6];
	static const uint64_t at[6] = { 300, 100, 200, 100, 300, 100 };
	static const int want[6] = { 1, 3, 5, 2, 0, 4 };
	uint64_t d;

	emu_clock_init(&clk, 0);
	for (int i = 0; i < 6; i++) {
		tmr_init(&m[i], i, &log);
		emu_timer_arm_at(&clk, &m[i].t, at[i]);
	}
	assert_int_equal(emu_clock_pending(&clk), 6);
	assert_true(emu_clock_next_deadline(&clk, &d));
	assert_int_equal(d, 100);
	assert_true(emu_clock_run_next(&clk));
	assert_int_equal(emu_clock_now(&clk), 100);
	assert_int_equal(emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(log.n, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(log.ids[i], want[i]);
		assert_int_equal(log.times[i], at[want[i]]);
	}
	assert_int_equal(emu_clock_now(&clk), 300);
	assert_int_equal(clk.fired, 6);
	assert_int_equal(emu_clock_pending(&clk), 0);
}

static void test_cancel_rearm(void **state)
{
	struct emu_clock clk;
	struct log log = { .n = 0 };
	struct tmr m[4];

	emu_clock_init(&clk, 0);
	for (int i = 0; i < 4; i++) {
		tmr_init(&m[i], i, &log);
		emu_timer_arm_at(&clk, &m[i].t, 50);
	}
	/* Cancel a middle one, re-arm the first: it goes behind the others of the same instant. */
	assert_true(emu_timer_cancel(&clk, &m[2].t));
	assert_false(emu_timer_cancel(&clk, &m[2].t));
	assert_false(emu_timer_pending(&m[2].t));
	emu_timer_arm_at(&clk, &m[0].t, 50);
	assert_int_equal(emu_clock_pending(&clk), 3);
	/* Re-arm to an earlier time. */
	emu_timer_arm_in(&clk, &m[3].t, 10);
	assert_int_equal(emu_timer_deadline(&m[3].t), 10);
	assert_int_equal(emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(log.n, 3);
	assert_int_equal(log.ids[0], 3);
	assert_int_equal(log.times[0], 10);
	assert_int_equal(log.ids[1], 1);
	assert_int_equal(log.ids[2], 0);
	assert_int_equal(log.times[2], 50);
	/* Cancel the root (the earliest). */
	log.n = 0;
	emu_timer_arm_at(&clk, &m[0].t, 70);
	emu_timer_arm_at(&clk, &m[1].t, 60);
	assert_true(emu_timer_cancel(&clk, &m[1].t));
	assert_int_equal(emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.ids[0], 0);
	assert_int_equal(emu_clock_now(&clk), 70);
}

static void test_past_deadline_and_saturation(void **state)
{
	struct emu_clock clk;
	struct log log = { .n = 0 };
	struct tmr a, b, c;

	emu_clock_init(&clk, 1000);
	tmr_init(&a, 0, &log);
	tmr_init(&b, 1, &log);
	tmr_init(&c, 2, &log);
	emu_timer_arm_at(&clk, &a.t, 1000);
	emu_timer_arm_at(&clk, &b.t, 5); /* in the past: now, behind a */
	assert_int_equal(emu_timer_deadline(&b.t), 1000);
	emu_timer_arm_in(&clk, &c.t, UINT64_MAX);
	assert_int_equal(emu_timer_deadline(&c.t), UINT64_MAX);
	assert_int_equal(emu_clock_run_until(&clk, 2000, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ids[0], 0);
	assert_int_equal(log.ids[1], 1);
	assert_int_equal(log.times[1], 1000);
	assert_int_equal(emu_clock_now(&clk), 2000);
	assert_true(emu_timer_pending(&c.t));
	assert_true(emu_clock_run_next(&clk));
	assert_int_equal(emu_clock_now(&clk), UINT64_MAX);
}

struct selfarm {
	struct emu_timer t;
	uint64_t period;
	unsigned count;
};

static void selfarm_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct selfarm *s = arg;

	s->count++;
	emu_timer_arm_in(clk, t, s->period);
}

static void test_step_limit(void **state)
{
	struct emu_clock clk;
	struct selfarm s = { .period = 0 };
	uint64_t fired;

	emu_clock_init(&clk, 0);
	emu_timer_init(&s.t, selfarm_fire, &s);
	emu_timer_arm_at(&clk, &s.t, 7);
	/* Zero period: the timer re-arms itself at the same instant forever. */
	assert_int_equal(emu_clock_run_idle(&clk, 1000, &fired), -ELOOP);
	assert_int_equal(fired, 1000);
	assert_int_equal(s.count, 1000);
	assert_int_equal(emu_clock_now(&clk), 7);
	assert_int_equal(emu_clock_run_until(&clk, 100, 10, &fired), -ELOOP);
	assert_int_equal(fired, 10);
	assert_int_equal(emu_clock_now(&clk), 7); /* not advanced to 100: work was left */

	/* Period 10 from 7: run_until(100) fires at 17..97 (9 times) and stops at 100. */
	s.period = 10;
	s.count = 0;
	emu_timer_arm_at(&clk, &s.t, 17);
	assert_int_equal(emu_clock_run_until(&clk, 100, 9, &fired), 0);
	assert_int_equal(fired, 9);
	assert_int_equal(s.count, 9);
	assert_int_equal(emu_clock_now(&clk), 100);
	assert_int_equal(emu_timer_deadline(&s.t), 107);
	/* Exactly max_steps due: a limit of 0 with work due is -ELOOP, with none due is 0. */
	assert_int_equal(emu_clock_run_until(&clk, 106, 0, &fired), 0);
	assert_int_equal(emu_clock_run_until(&clk, 107, 0, &fired), -ELOOP);
	assert_int_equal(fired, 0);
	assert_int_equal(emu_clock_now(&clk), 106);
	emu_clock_fini(&clk);
	assert_false(emu_timer_pending(&s.t));
	assert_int_equal(emu_clock_pending(&clk), 0);
}

/* A callback that cancels a sibling due at the same instant and arms another one. */
struct chain {
	struct tmr a, b, c;
	struct emu_clock *clk;
};

static void chain_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct chain *ch = arg;

	log_fire(clk, t, &ch->a);
	assert_true(emu_timer_cancel(clk, &ch->b.t));
	emu_timer_arm_at(clk, &ch->c.t, emu_clock_now(clk)); /* same instant: runs in this pass */
}

static void test_callback_cancels_and_arms(void **state)
{
	struct emu_clock clk;
	struct log log = { .n = 0 };
	struct chain ch;
	uint64_t fired;

	emu_clock_init(&clk, 0);
	tmr_init(&ch.a, 0, &log);
	tmr_init(&ch.b, 1, &log);
	tmr_init(&ch.c, 2, &log);
	emu_timer_init(&ch.a.t, chain_fire, &ch);
	emu_timer_arm_at(&clk, &ch.a.t, 40);
	emu_timer_arm_at(&clk, &ch.b.t, 40);
	assert_int_equal(emu_clock_run_until(&clk, 40, EMU_CLOCK_NO_LIMIT, &fired), 0);
	assert_int_equal(fired, 2);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ids[0], 0);
	assert_int_equal(log.ids[1], 2);
	assert_int_equal(log.times[1], 40);
}

/* Random arm/re-arm/cancel against a reference model: the firing sequence must be exactly the
 * (deadline, last arming order) sort of what is left armed. */
#define NRAND 257

/* Runs clk idle and checks the callbacks against the model: the n timers armed[] (deadline
 * dl[], arming sequence sq[]) fire exactly, in (deadline, sequence) order, at their deadlines
 * (log.n starts at 0). Clears armed[]. */
static void run_idle_against_model(struct emu_clock *clk, const struct log *log, bool *armed,
				   const uint64_t *dl, const uint64_t *sq, int n)
{
	size_t want = 0;

	for (int i = 0; i < n; i++)
		want += armed[i];
	assert_int_equal(emu_clock_pending(clk), want);
	assert_int_equal(emu_clock_run_idle(clk, EMU_CLOCK_NO_LIMIT, NULL), 0);
	assert_int_equal(log->n, want);
	for (size_t k = 0; k < want; k++) {
		int best = -1;

		for (int i = 0; i < n; i++)
			if (armed[i] && (best < 0 || dl[i] < dl[best] ||
					 (dl[i] == dl[best] && sq[i] < sq[best])))
				best = i;
		assert_int_equal(log->ids[k], best);
		assert_int_equal(log->times[k], dl[best]);
		armed[best] = false;
	}
	assert_int_equal(emu_clock_pending(clk), 0);
}

static void test_random_against_model(void **state)
{
	struct emu_clock clk;
	struct log log = { .n = 0 };
	static struct tmr m[NRAND];
	uint64_t model_deadline[NRAND], model_seq[NRAND];
	bool armed[NRAND];
	struct emu_prng r;
	uint64_t seq = 0;

	emu_prng_seed(&r, 12345);
	for (int round = 0; round < 20; round++) {
		emu_clock_init(&clk, 0);
		log.n = 0;
		memset(armed, 0, sizeof(armed));
		for (int i = 0; i < NRAND; i++)
			tmr_init(&m[i], i, &log);
		for (int op = 0; op < 3000; op++) {
			int i = (int)emu_prng_below(&r, NRAND);

			if (emu_prng_below(&r, 4) == 0) {
				assert_int_equal(emu_timer_cancel(&clk, &m[i].t), armed[i]);
				armed[i] = false;
			} else {
				/* Few distinct deadlines, so ties are common. */
				uint64_t dl = emu_prng_below(&r, 16) * 10;

				emu_timer_arm_at(&clk, &m[i].t, dl);
				armed[i] = true;
				model_deadline[i] = dl;
				model_seq[i] = seq++;
			}
		}
		run_idle_against_model(&clk, &log, armed, model_deadline, model_seq, NRAND);
	}
}

/* Time moving between arms, as in a run: timers armed with emu_timer_arm_in from 24 delays
 * (zero included, several equal), cancelled, and runs to random later times. After every
 * run the callbacks must have fired exactly the model's timers due by then, in (deadline,
 * arming) order, at their deadlines; after every step the pending count and the next
 * deadline must be the model's. */
static void test_order_with_time_moving(void **state)
{
	enum { N = 400 };
	static const uint64_t delays[24] = {0,   0,   1,   5,    7,    10,    10,    33,
					    64,  64,  100, 250,  999,  1000,  1000,  4096,
					    5000, 7777, 10000, 12345, 65536, 100000, 999999, 1000000};
	struct emu_clock clk;
	struct log log = {.n = 0};
	static struct tmr m[N];
	uint64_t dl[N], sq[N], seq = 0;
	bool armed[N];
	struct emu_prng r;

	(void)state;
	emu_prng_seed(&r, 777);
	for (int round = 0; round < 10; round++) {
		emu_clock_init(&clk, 1000);
		memset(armed, 0, sizeof armed);
		for (int i = 0; i < N; i++)
			tmr_init(&m[i], i, &log);
		for (int op = 0; op < 20000; op++) {
			int i = (int)emu_prng_below(&r, N);
			unsigned k = (unsigned)emu_prng_below(&r, 16);

			if (k == 0) {
				assert_int_equal(emu_timer_cancel(&clk, &m[i].t), armed[i]);
				armed[i] = false;
			} else if (k == 1) {
				uint64_t until = emu_clock_now(&clk) + emu_prng_below(&r, 3000);

				log.n = 0;
				assert_int_equal(
					emu_clock_run_until(&clk, until, EMU_CLOCK_NO_LIMIT, NULL), 0);
				for (size_t f = 0; f < log.n; f++) {
					int best = -1;

					for (int j = 0; j < N; j++)
						if (armed[j] && dl[j] <= until &&
						    (best < 0 || dl[j] < dl[best] ||
						     (dl[j] == dl[best] && sq[j] < sq[best])))
							best = j;
					assert_int_equal(log.ids[f], best);
					assert_int_equal(log.times[f], dl[best]);
					armed[best] = false;
				}
				for (int j = 0; j < N; j++) /* nothing due was left behind */
					assert_false(armed[j] && dl[j] <= until);
				assert_int_equal(emu_clock_now(&clk), until);
			} else {
				uint64_t d = delays[emu_prng_below(&r, 24)];

				emu_timer_arm_in(&clk, &m[i].t, d);
				armed[i] = true;
				dl[i] = emu_clock_now(&clk) + d;
				sq[i] = seq++;
			}
			{
				size_t n = 0;
				uint64_t min = UINT64_MAX, next;

				for (int j = 0; j < N; j++)
					if (armed[j]) {
						n++;
						min = dl[j] < min ? dl[j] : min;
					}
				assert_int_equal(emu_clock_pending(&clk), n);
				assert_int_equal(emu_clock_next_deadline(&clk, &next), n > 0);
				if (n)
					assert_int_equal(next, min);
			}
		}
		emu_clock_fini(&clk);
		assert_int_equal(emu_clock_pending(&clk), 0);
		for (int j = 0; j < N; j++)
			assert_false(emu_timer_pending(&m[j].t));
	}
}

/* Lanes (clock.h): one more delay than there are lanes (the last goes to the heap), a timer
 * armed at an absolute deadline between lane timers of the same deadline, cancels of a lane's
 * head, middle and tail, a re-arm into another delay, and a freed lane taken by a new delay.
 * Every timer must fire at its deadline in (deadline, arming) order. */
static void test_lanes(void **state)
{
	enum { NL = EMU_CLOCK_LANES + 1, N = 3 * NL + 4 };
	struct emu_clock clk;
	struct log log = { .n = 0 };
	static struct tmr m[N];
	uint64_t dl[N], sq[N], seq = 0;
	bool armed[N] = { false };
	int k = 0;

	(void)state;
	emu_clock_init(&clk, 500);
	for (int i = 0; i < N; i++)
		tmr_init(&m[i], i, &log);
	/* three rounds of NL delays (100, 200, ... ), time moving by 1 between rounds: each delay's
	 * three timers share a lane (the last delay's are in the heap) */
	for (int r = 0; r < 3; r++) {
		for (int d = 0; d < NL; d++, k++) {
			emu_timer_arm_in(&clk, &m[k].t, 100 * (uint64_t)(d + 1));
			dl[k] = emu_clock_now(&clk) + 100 * (uint64_t)(d + 1);
			sq[k] = seq++;
			armed[k] = true;
		}
		assert_int_equal(emu_clock_run_until(&clk, emu_clock_now(&clk) + 1, EMU_CLOCK_NO_LIMIT,
						     NULL), 0);
		assert_int_equal(log.n, 0);
	}
	/* absolute deadlines equal to lane timers' (ties broken by arming order) */
	emu_timer_arm_at(&clk, &m[k].t, dl[0]);
	dl[k] = dl[0], sq[k] = seq++, armed[k++] = true;
	emu_timer_arm_at(&clk, &m[k].t, dl[NL + 1]);
	dl[k] = dl[NL + 1], sq[k] = seq++, armed[k++] = true;
	/* delay 100's lane: cancel its head; delay 200's: its middle; delay 300's: its tail */
	assert_true(emu_timer_cancel(&clk, &m[0].t));
	armed[0] = false;
	assert_true(emu_timer_cancel(&clk, &m[NL + 1].t));
	armed[NL + 1] = false;
	assert_true(emu_timer_cancel(&clk, &m[2 * NL + 2].t));
	armed[2 * NL + 2] = false;
	assert_false(emu_timer_cancel(&clk, &m[0].t));
	/* delay 400's head moves to delay 250 (a lane of its own is free only once one empties:
	 * here it goes to the heap) */
	emu_timer_arm_in(&clk, &m[3].t, 250);
	dl[3] = emu_clock_now(&clk) + 250, sq[3] = seq++;
	/* empty delay 500's lane, then a new delay takes it */
	for (int r = 0; r < 3; r++) {
		assert_true(emu_timer_cancel(&clk, &m[r * NL + 4].t));
		armed[r * NL + 4] = false;
	}
	emu_timer_arm_in(&clk, &m[k].t, 50);
	dl[k] = emu_clock_now(&clk) + 50, sq[k] = seq++, armed[k++] = true;
	emu_timer_arm_in(&clk, &m[k].t, 50);
	dl[k] = emu_clock_now(&clk) + 50, sq[k] = seq++, armed[k++] = true;
	assert_int_equal(k, N);
	run_idle_against_model(&clk, &log, armed, dl, sq, N);
	emu_clock_fini(&clk);
}

/* Zero-delay bursts: the first "after this call" timer goes to the heap, the ones armed while
 * it (or an absolute deadline at this instant) is due join a lane; mixed with absolute
 * deadlines at the same instant, a cancel in the burst, a re-arm of the first, and 50 more
 * than the lanes' count, they fire in (deadline, arming) order. */
static void test_zero_delay_burst(void **state)
{
	enum { N = 80 };
	struct emu_clock clk;
	struct log log = { .n = 0 };
	static struct tmr m[N];
	uint64_t dl[N], sq[N], seq = 0;
	bool armed[N] = { false };

	(void)state;
	emu_clock_init(&clk, 7000);
	for (int i = 0; i < N; i++) {
		tmr_init(&m[i], i, &log);
		if (i % 9 == 4)
			emu_timer_arm_at(&clk, &m[i].t, 7000);
		else
			emu_timer_arm_in(&clk, &m[i].t, 0);
		dl[i] = 7000, sq[i] = seq++, armed[i] = true;
	}
	assert_true(emu_timer_cancel(&clk, &m[10].t));
	armed[10] = false;
	assert_true(emu_timer_cancel(&clk, &m[1].t));
	armed[1] = false;
	emu_timer_arm_in(&clk, &m[0].t, 0); /* the first again: now behind the others */
	sq[0] = seq++;
	run_idle_against_model(&clk, &log, armed, dl, sq, N);
	assert_int_equal(emu_clock_now(&clk), 7000);
	emu_clock_fini(&clk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_order_and_fifo),
		cmocka_unit_test(test_cancel_rearm),
		cmocka_unit_test(test_past_deadline_and_saturation),
		cmocka_unit_test(test_step_limit),
		cmocka_unit_test(test_callback_cancels_and_arms),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_order_with_time_moving),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_zero_delay_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
