/* The engine's real-time mode (docs/engine.md, "Real time"): the clock follows CLOCK_MONOTONIC,
 * waits sleep until real deadlines and never fail with EDEADLK, frames posted from another
 * thread are delivered, and port
 * sends go to the tx hook. Real-time assertions are lower bounds only (a loaded machine is
 * late, never early). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <cmocka.h>

#include "emu/sim/engine.h"
#include "emu/hca/engine_rx.h"
#include "emu/sim/process.h"
#include "emu/sim/topology.h"
#include "rdmaemu/ctl.h"

#define MS EMU_NSEC_PER_MSEC

static struct emu_engine *eng;

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * EMU_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int setup(void **state)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/rxe-ref2.fabric", top ? top : RDMAEMU_SRCDIR);
	if (rdmaemu_ctl_attach(path, "A"))
		return -1;
	eng = emu_engine_get();
	if (!eng)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	emu_process_reset();
	eng = NULL;
	return 0;
}

/* what the tx hook and the HCA-class receiver saw */
static struct {
	int ntx, nrx;
	int ep;
	size_t host, dev, len;
	unsigned port;
	uint8_t bytes[64];
} seen;

static int tx_hook(void *ctx, int ep, size_t host, size_t dev, unsigned port, const void *frame,
		   size_t len)
{
	(void)ctx;
	seen.ntx++;
	seen.ep = ep;
	seen.host = host;
	seen.dev = dev;
	seen.port = port;
	seen.len = len;
	memcpy(seen.bytes, frame, len < sizeof(seen.bytes) ? len : sizeof(seen.bytes));
	return 0;
}

static void hca_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)ctx;
	(void)now;
	seen.nrx++;
	seen.len = len;
	memcpy(seen.bytes, frame, len < sizeof(seen.bytes) ? len : sizeof(seen.bytes));
}

static bool timer_done;

static void timer_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	(void)clk;
	(void)t;
	(void)arg;
	timer_done = true;
}

static bool is_done(void *arg)
{
	return *(bool *)arg;
}

static bool never(void *arg)
{
	(void)arg;
	return false;
}

static void switch_on(void)
{
	memset(&seen, 0, sizeof(seen));
	emu_engine_lock(eng);
	emu_engine_set_realtime(eng, tx_hook, NULL);
	assert_true(emu_engine_is_realtime(eng));
	assert_int_equal(emu_engine_port_set_rx(eng, 0, 0, 1, hca_rx, NULL), 0);
	emu_engine_unlock(eng);
}

/* A timer 20 ms ahead fires when the real clock gets there, not before; the wait returns 0
 * with the clock at or past the deadline. */
static void test_timer_real_time(void **state)
{
	struct emu_timer t;
	uint64_t r0, v0;

	(void)state;
	switch_on();
	timer_done = false;
	emu_engine_lock(eng);
	v0 = emu_engine_now(eng);
	r0 = real_ns();
	emu_timer_init(&t, timer_fire, NULL);
	emu_timer_arm_in(emu_engine_clock(eng), &t, 20 * MS);
	assert_int_equal(emu_engine_wait(eng, "timer", is_done, &timer_done, EMU_ENGINE_FOREVER), 0);
	assert_true(real_ns() - r0 >= 20 * MS);
	assert_true(emu_engine_now(eng) >= v0 + 20 * MS);
	emu_engine_unlock(eng);
}

/* With nothing pending, a wait does not give up (EDEADLK in virtual time): a frame may come
 * from another process. Its timeout ends it, in real time. */
static void test_no_deadlock(void **state)
{
	uint64_t r0;

	(void)state;
	switch_on();
	emu_engine_lock(eng);
	r0 = real_ns();
	assert_int_equal(emu_engine_wait(eng, "nothing", never, NULL, 10 * MS), ETIMEDOUT);
	assert_true(real_ns() - r0 >= 10 * MS);
	emu_engine_unlock(eng);
}

/* Port sends go to the tx hook with the port's endpoint, not to the wire. */
static void test_tx_hook(void **state)
{
	static const uint8_t frame[20] = { 1, 2, 3, 4, 5 };

	(void)state;
	switch_on();
	emu_engine_lock(eng);
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, frame, sizeof(frame)), 0);
	assert_int_equal(seen.ntx, 1);
	assert_int_equal(seen.ep, emu_topology_port_endpoint(emu_engine_topology(eng), 0, 0, 1));
	assert_int_equal(seen.host, 0);
	assert_int_equal(seen.dev, 0);
	assert_int_equal(seen.port, 1);
	assert_int_equal(seen.len, sizeof(frame));
	assert_memory_equal(seen.bytes, frame, sizeof(frame));
	assert_int_equal(seen.nrx, 0); /* nothing went round the wire to B and back */
	emu_engine_unlock(eng);
}

static void *poster(void *arg)
{
	uint8_t *buf = malloc(8); /* shorter than an Ethernet header: malformed, for the HCA */

	(void)arg;
	memset(buf, 0xab, 8);
	emu_engine_post_frame(eng, emu_topology_port_endpoint(emu_engine_topology(eng), 0, 0, 1),
			      buf, 8);
	return NULL;
}

/* A frame posted while the lock is free is delivered by the poster before post_frame
 * returns; posted while another thread holds the lock, it is delivered by the time both the
 * holder has unlocked and the poster has returned. Short garbage reaches the HCA class, as a
 * port hands the HCA what it cannot parse. */
static void test_post_frame(void **state)
{
	static const uint8_t want[8] = { 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab };
	pthread_t th;

	(void)state;
	switch_on();
	assert_int_equal(pthread_create(&th, NULL, poster, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(seen.nrx, 1);
	assert_int_equal(seen.len, 8);
	assert_memory_equal(seen.bytes, want, 8);
	emu_engine_lock(eng);
	assert_int_equal(pthread_create(&th, NULL, poster, NULL), 0);
	emu_engine_unlock(eng);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(seen.nrx, 2);
}

/* The link's receive thread: queue a frame, try once to deliver it, and (with `retry`) try
 * again every millisecond until the inbox is empty, as rx_main does. Returns what the first
 * try said. */
static bool queue_retry;

static void *queuer(void *arg)
{
	uint8_t *buf = malloc(8);
	bool *first = arg;

	memset(buf, 0xcd, 8);
	emu_engine_queue_frame(eng, emu_topology_port_endpoint(emu_engine_topology(eng), 0, 0, 1),
			       buf, 8);
	*first = emu_engine_try_deliver(eng);
	while (queue_retry && !emu_engine_try_deliver(eng))
		usleep(1000);
	return NULL;
}

static bool one_rx(void *arg)
{
	(void)arg;
	return seen.nrx == 1;
}

/* queue_frame + try_deliver never block on the engine lock: with the lock held here, the
 * receiver returns at once with the frame left in the inbox (pending), and the unlock
 * delivers it. Then a holder asleep in a wait for that frame: the wait releases the lock, the
 * receiver's next try delivers, the wait returns 0 long before its 5 s. Before, the receive
 * thread blocked on the lock, and a holder blocked sending to the daemon starved it. */
static void test_queue_frame_never_blocks(void **state)
{
	pthread_t th;
	bool first = true;

	(void)state;
	switch_on();
	queue_retry = false;
	emu_engine_lock(eng);
	assert_int_equal(pthread_create(&th, NULL, queuer, &first), 0);
	{
		/* returned with the lock still held (a receiver blocking on it fails here,
		 * after 5 s, and then finishes once the lock is released below) */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_timedjoin_np(th, NULL, &ts)) {
			emu_engine_unlock(eng);
			pthread_join(th, NULL);
			fail_msg("queue_frame/try_deliver blocked on the engine lock");
		}
	}
	assert_false(first);
	assert_true(emu_engine_inbox_pending(eng));
	assert_int_equal(seen.nrx, 0);
	emu_engine_unlock(eng);
	assert_int_equal(seen.nrx, 1);
	assert_false(emu_engine_inbox_pending(eng));
	assert_int_equal(seen.bytes[0], 0xcd);

	seen.nrx = 0;
	queue_retry = true;
	emu_engine_lock(eng);
	assert_int_equal(pthread_create(&th, NULL, queuer, &first), 0);
	assert_int_equal(emu_engine_wait(eng, "a frame", one_rx, NULL, 5000 * MS), 0);
	emu_engine_unlock(eng);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(seen.nrx, 1);
	assert_false(emu_engine_inbox_pending(eng));
}

/* emu_engine_lock_short: in virtual time the full lock (false back); in real time the mutex
 * alone (true back), as exclusive as the full lock: a frame queued while it is held stays in
 * the inbox, and the short unlock delivers it. */
static void test_short_lock(void **state)
{
	pthread_t th;
	bool first = true, short_lock;

	(void)state;
	memset(&seen, 0, sizeof(seen));
	short_lock = emu_engine_lock_short(eng);
	assert_false(short_lock);
	emu_engine_unlock_short(eng, short_lock);

	switch_on();
	queue_retry = false;
	short_lock = emu_engine_lock_short(eng);
	assert_true(short_lock);
	assert_int_equal(pthread_create(&th, NULL, queuer, &first), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(first);
	assert_true(emu_engine_inbox_pending(eng));
	assert_int_equal(seen.nrx, 0);
	emu_engine_unlock_short(eng, short_lock);
	assert_int_equal(seen.nrx, 1);
	assert_false(emu_engine_inbox_pending(eng));
	assert_int_equal(seen.len, 8);
	assert_int_equal(seen.bytes[0], 0xcd);
}

/* emu_engine_trylock: in virtual time the full lock (true); in real time false at once while
 * another thread holds the lock, true while the holder waits in emu_engine_wait (which lets
 * it go), and the full lock when it is free (the clock read). */
static bool try_result;

static void *trier(void *arg)
{
	(void)arg;
	try_result = emu_engine_trylock(eng);
	if (try_result)
		emu_engine_unlock(eng);
	return NULL;
}

static bool waiter_done;
static int waiter_rc = -1;

static void *waiter(void *arg)
{
	(void)arg;
	emu_engine_lock(eng);
	waiter_rc = emu_engine_wait(eng, "the test's flag", is_done, &waiter_done, 5000 * MS);
	emu_engine_unlock(eng);
	return NULL;
}

static void test_trylock(void **state)
{
	pthread_t th;
	uint64_t v0;

	(void)state;
	assert_true(emu_engine_trylock(eng));
	emu_engine_unlock(eng);

	switch_on();
	emu_engine_lock(eng);
	try_result = true;
	assert_int_equal(pthread_create(&th, NULL, trier, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(try_result);
	emu_engine_unlock(eng);
	assert_int_equal(pthread_create(&th, NULL, trier, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(try_result);

	/* a holder waiting in emu_engine_wait has let the lock go: trylock takes it */
	waiter_done = false;
	assert_int_equal(pthread_create(&th, NULL, waiter, NULL), 0);
	usleep(20000);
	assert_true(emu_engine_trylock(eng));
	waiter_done = true;
	emu_engine_unlock(eng);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(waiter_rc, 0);

	/* taken when free: the clock read, as at emu_engine_lock */
	emu_engine_lock(eng);
	v0 = emu_engine_now(eng);
	emu_engine_unlock(eng);
	usleep(3000);
	assert_true(emu_engine_trylock(eng));
	assert_true(emu_engine_now(eng) >= v0 + 3 * MS);
	emu_engine_unlock(eng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timer_real_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_deadlock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_post_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_frame_never_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trylock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
