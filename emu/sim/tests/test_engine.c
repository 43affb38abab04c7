/* The per-process engine and its progress model: timers run in virtual time without wall time
 * (rule 1), exact timeouts, EDEADLK instead of a hang, two threads driving each other at exact
 * virtual instants, a thread blocked in poll() on an engine eventfd woken by the quiescence
 * path (rule 2), the busy-thread rule, frames between the two hosts of rxe-ref2 at the link
 * delay, determinism of a scripted multi-thread scenario, and the control API.
 *
 * Real time is asserted only as "well under" generous bounds; virtual times exactly. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/apptime.h"
#include "emu/sim/engine.h"
#include "emu/hca/engine_rx.h"
#include "emu/hca/pkt.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

#define MS EMU_NSEC_PER_MSEC
#define US EMU_NSEC_PER_USEC
#define SEC EMU_NSEC_PER_SEC

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* ---------- fixture: rxe-ref2 attached as A, a fresh engine per test ---------- */

static struct emu_engine *eng;

static int setup(void **state)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	(void)state;
	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/rxe-ref2.fabric",
		 top && *top ? top : RDMAEMU_SRCDIR);
	if (rdmaemu_ctl_attach(path, "A"))
		return -1;
	eng = emu_engine_get();
	return eng ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	emu_engine_reset();
	emu_process_reset();
	eng = NULL;
	return 0;
}

/* Sets the quiescence interval and leaves the calling (main) thread unknown, so that only the
 * test's own threads count for rule (1). */
static void configure(uint64_t quiesce_ns)
{
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, quiesce_ns);
	emu_engine_unlock(eng);
	emu_engine_thread_forget(eng);
}

/* ---------- an event trace shared by timers, receivers and threads ---------- */

struct trace {
	char buf[16384];
	size_t len;
	unsigned n;
};

static void trace_add(struct trace *tr, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tr->buf + tr->len, sizeof(tr->buf) - tr->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(tr->buf) - tr->len)
		tr->len += (size_t)n;
	tr->n++;
}

struct tev {
	struct emu_timer t;
	int id;
	uint64_t at;      /* when it fired */
	unsigned *count;  /* incremented when it fires (may be NULL) */
	struct trace *tr; /* may be NULL */
	int fd;           /* signalled when >= 0 */
};

static void tev_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct tev *v = arg;

	(void)t;
	v->at = emu_clock_now(clk);
	if (v->count)
		++*v->count;
	if (v->tr)
		trace_add(v->tr, "%llu:t%d ", (unsigned long long)v->at, v->id);
	if (v->fd >= 0)
		emu_engine_fd_signal(v->fd);
}

static void tev_arm(struct tev *v, int id, uint64_t at, unsigned *count, struct trace *tr)
{
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->count = count;
	v->tr = tr;
	v->fd = -1;
	emu_timer_init(&v->t, tev_fire, v);
	emu_timer_arm_at(emu_engine_clock(eng), &v->t, at);
}

struct atleast {
	const unsigned *v;
	unsigned n;
};

static bool atleast_done(void *arg)
{
	const struct atleast *a = arg;

	return *a->v >= a->n;
}

static bool never(void *arg)
{
	(void)arg;
	return false;
}

/* ---------- single thread ---------- */

/* Timers up to 2 s virtual fire in (deadline, arming) order and the wait costs no wall time. */
static void test_timers_in_order(void **state)
{
	struct tev v[5];
	struct trace tr = { .len = 0 };
	unsigned count = 0;
	struct atleast all = { &count, 5 };
	uint64_t t0;
	int rc;

	(void)state;
	emu_engine_lock(eng);
	tev_arm(&v[0], 0, 2 * SEC, &count, &tr);
	tev_arm(&v[1], 1, 500 * MS, &count, &tr);
	tev_arm(&v[2], 2, 1 * SEC, &count, &tr);
	tev_arm(&v[3], 3, 1 * SEC, &count, &tr);
	tev_arm(&v[4], 4, 1500 * MS, &count, &tr);
	t0 = real_ns();
	rc = emu_engine_wait(eng, "five timers", atleast_done, &all, EMU_ENGINE_FOREVER);
	t0 = real_ns() - t0;
	assert_int_equal(rc, 0);
	assert_int_equal(emu_engine_now(eng), 2 * SEC);
	emu_engine_unlock(eng);
	assert_string_equal(tr.buf, "500000000:t1 1000000000:t2 1000000000:t3 1500000000:t4 "
				    "2000000000:t0 ");
	/* Well under the 2 s of virtual time: nothing slept in real time. */
	assert_true(t0 < 1 * SEC);
}

/* A timeout is a virtual deadline: the wait ends exactly there, after the timers before it. */
static void test_timeout_exact(void **state)
{
	struct tev v[2];
	unsigned count = 0, five = 0;
	struct atleast at5 = { &five, 1 };

	(void)state;
	emu_engine_lock(eng);
	tev_arm(&v[0], 0, 1 * SEC, &count, NULL);
	assert_int_equal(emu_engine_wait(eng, "nothing", never, NULL, 3 * SEC), ETIMEDOUT);
	assert_int_equal(emu_engine_now(eng), 3 * SEC);
	assert_int_equal(count, 1);

	/* Timeout 0: look once, do not move time. */
	assert_int_equal(emu_engine_wait(eng, "nothing", never, NULL, 0), ETIMEDOUT);
	assert_int_equal(emu_engine_now(eng), 3 * SEC);

	/* A timer armed before the wait for the same instant as its deadline runs first: the
	 * condition it satisfies wins over the timeout. */
	tev_arm(&v[1], 1, 5 * SEC, &five, NULL);
	assert_int_equal(emu_engine_wait(eng, "t5", atleast_done, &at5, 2 * SEC), 0);
	assert_int_equal(emu_engine_now(eng), 5 * SEC);
	/* The timeout timer of a finished wait is gone. */
	assert_int_equal(emu_clock_pending(emu_engine_clock(eng)), 0);
	emu_engine_unlock(eng);
}

/* Captures stderr around fn into buf. */
static void capture_stderr(char *buf, size_t len, void (*fn)(void *), void *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = 0;
	fclose(tmp);
}

static void wait_forever(void *arg)
{
	*(int *)arg = emu_engine_wait(eng, "the-answer", never, NULL, EMU_ENGINE_FOREVER);
}

/* Nothing pending, nobody else: EDEADLK at once with a diagnostic naming the wait. */
static void test_deadlock(void **state)
{
	char msg[1024];
	int rc = -1;

	(void)state;
	emu_engine_lock(eng);
	capture_stderr(msg, sizeof(msg), wait_forever, &rc);
	assert_int_equal(rc, EDEADLK);
	assert_int_equal(emu_engine_now(eng), 0);
	assert_non_null(strstr(msg, "the-answer"));
	assert_non_null(strstr(msg, "wait forever"));
	assert_non_null(strchr(msg, '\n'));
	assert_true(strchr(msg, '\n') == msg + strlen(msg) - 1); /* one line */
	emu_engine_unlock(eng);
}

static void *register_and_exit(void *arg)
{
	emu_engine_lock(eng);
	emu_engine_unlock(eng);
	return arg;
}

/* A thread that exited is no longer one that could act: its key destructor forgot it. */
static void test_exited_thread_forgotten(void **state)
{
	pthread_t th;
	char msg[1024];
	int rc = -1;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, register_and_exit, NULL), 0);
	pthread_join(th, NULL);
	emu_engine_lock(eng);
	capture_stderr(msg, sizeof(msg), wait_forever, &rc);
	assert_int_equal(rc, EDEADLK);
	assert_non_null(strstr(msg, "0 other thread"));
	emu_engine_unlock(eng);
}

/* A single-threaded busy-poll loop: each empty poll reported with note_idle moves time to the
 * next timer, so the loop sees every timer at its instant in a few iterations. Quiescence off:
 * note_idle alone moves time here; with it on, an iteration slower than the quiescence
 * interval (valgrind, a loaded machine) lets the progress thread move past a timer first. */
static void test_note_idle_busy_poll(void **state)
{
	struct tev v[3];
	unsigned count = 0, seen = 0, iters = 0;
	uint64_t at[3];

	(void)state;
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, 0);
	tev_arm(&v[0], 0, 1 * MS, &count, NULL);
	tev_arm(&v[1], 1, 2 * MS, &count, NULL);
	tev_arm(&v[2], 2, 3 * MS, &count, NULL);
	emu_engine_unlock(eng);
	while (seen < 3 && iters < 100) {
		iters++;
		emu_engine_lock(eng);
		emu_engine_run_now(eng);
		if (count > seen) {
			at[seen++] = emu_engine_now(eng); /* "a completion": polled at this instant */
		} else {
			emu_engine_note_idle(eng);
		}
		emu_engine_unlock(eng);
	}
	assert_int_equal(seen, 3);
	assert_int_equal(at[0], 1 * MS);
	assert_int_equal(at[1], 2 * MS);
	assert_int_equal(at[2], 3 * MS);
	assert_true(iters <= 6);
}

/* A timer that re-arms itself at the same instant forever: run_now gives up with -ELOOP. */
static void runaway_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	(void)arg;
	emu_timer_arm_at(clk, t, emu_clock_now(clk));
}

static void run_now_into(void *arg)
{
	*(long *)arg = emu_engine_run_now(eng);
}

static void test_runaway(void **state)
{
	struct emu_timer t;
	char msg[1024];
	long rc = 0;

	(void)state;
	emu_engine_lock(eng);
	emu_timer_init(&t, runaway_fire, NULL);
	emu_timer_arm_at(emu_engine_clock(eng), &t, 0);
	capture_stderr(msg, sizeof(msg), run_now_into, &rc);
	assert_int_equal(rc, -ELOOP);
	assert_non_null(strstr(msg, "runaway"));
	emu_timer_cancel(emu_engine_clock(eng), &t);
	emu_engine_unlock(eng);
}

/* ---------- two threads driving each other (rule 1 only) ---------- */

#define ROUNDS 3

struct pingpong {
	pthread_barrier_t start;
	unsigned a, b;
	struct tev ta[ROUNDS], tb[ROUNDS];
	uint64_t t1_at[ROUNDS], t2_at[ROUNDS];
	int rc1[ROUNDS], rc2[ROUNDS];
};

/* T1 arms b in 100 ms and waits for a; T2 waits for b and arms a in 50 ms. */
static void *pp_t1(void *arg)
{
	struct pingpong *p = arg;

	emu_engine_lock(eng); /* become known before anyone waits */
	emu_engine_unlock(eng);
	pthread_barrier_wait(&p->start);
	for (unsigned i = 0; i < ROUNDS; i++) {
		struct atleast c = { &p->a, i + 1 };

		emu_engine_lock(eng);
		tev_arm(&p->tb[i], (int)i, emu_engine_now(eng) + 100 * MS, &p->b, NULL);
		p->rc1[i] = emu_engine_wait(eng, "a", atleast_done, &c, EMU_ENGINE_FOREVER);
		p->t1_at[i] = emu_engine_now(eng);
		emu_engine_unlock(eng);
	}
	return NULL;
}

static void *pp_t2(void *arg)
{
	struct pingpong *p = arg;

	emu_engine_lock(eng);
	emu_engine_unlock(eng);
	pthread_barrier_wait(&p->start);
	for (unsigned i = 0; i < ROUNDS; i++) {
		struct atleast c = { &p->b, i + 1 };

		emu_engine_lock(eng);
		p->rc2[i] = emu_engine_wait(eng, "b", atleast_done, &c, EMU_ENGINE_FOREVER);
		p->t2_at[i] = emu_engine_now(eng);
		tev_arm(&p->ta[i], (int)i, emu_engine_now(eng) + 50 * MS, &p->a, NULL);
		emu_engine_unlock(eng);
	}
	return NULL;
}

static void test_two_threads(void **state)
{
	struct pingpong *p = calloc(1, sizeof(*p));
	pthread_t t1, t2;

	(void)state;
	assert_non_null(p);
	configure(0); /* rule (1) only: exact instants whatever the machine's load */
	pthread_barrier_init(&p->start, NULL, 2);
	assert_int_equal(pthread_create(&t1, NULL, pp_t1, p), 0);
	assert_int_equal(pthread_create(&t2, NULL, pp_t2, p), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_barrier_destroy(&p->start);
	for (unsigned i = 0; i < ROUNDS; i++) {
		assert_int_equal(p->rc1[i], 0);
		assert_int_equal(p->rc2[i], 0);
		assert_int_equal(p->t2_at[i], 100 * MS + i * 150 * MS);
		assert_int_equal(p->t1_at[i], 150 * MS + i * 150 * MS);
	}
	free(p);
}

/* ---------- rule 2: threads the engine cannot see ---------- */

/* A thread blocked in poll() on an engine eventfd (it is known and RUNNING, so rule 1 cannot
 * move time): the progress thread advances to the 500 ms timer after the quiescence interval,
 * the timer signals the fd, poll returns. */
static void test_poll_woken_by_quiescence(void **state)
{
	struct tev v;
	struct pollfd p;
	uint64_t t0, now = 1;
	int fd, n;

	(void)state;
	fd = emu_engine_eventfd_new();
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* blocking, like the kernel's */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, EMU_ENGINE_QUIESCE_NS_DEFAULT);
	tev_arm(&v, 0, 500 * MS, NULL, NULL);
	v.fd = fd;
	emu_engine_unlock(eng);

	t0 = real_ns();
	p.fd = fd;
	p.events = POLLIN;
	do
		n = poll(&p, 1, 10000);
	while (n < 0 && errno == EINTR);
	t0 = real_ns() - t0;
	assert_int_equal(n, 1);
	assert_int_equal(rdmaemu_ctl_now_ns(&now), 0);
	assert_int_equal(now, 500 * MS);
	assert_int_equal(v.at, 500 * MS);
	assert_true(t0 < 2 * SEC);

	emu_engine_lock(eng);
	assert_int_equal(emu_engine_fd_clear(fd), 0);
	assert_int_equal(emu_engine_fd_clear(fd), 0); /* already clear: does not block */
	emu_engine_unlock(eng);
	assert_int_equal(poll(&p, 1, 0), 0);
	close(fd);
}

struct waiter {
	unsigned *count;
	uint64_t at;
	int rc;
	pthread_barrier_t *known;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct atleast c = { w->count, 1 };

	emu_engine_lock(eng);
	pthread_barrier_wait(w->known);
	w->rc = emu_engine_wait(eng, "timer", atleast_done, &c, EMU_ENGINE_FOREVER);
	w->at = emu_engine_now(eng);
	emu_engine_unlock(eng);
	return NULL;
}

/* The documented rule for a thread busy outside the engine: while it is known and RUNNING,
 * rule (1) never moves time under it (even with another thread waiting); with quiescence off
 * nothing does. Once it waits too, time moves at once. */
static void test_busy_thread_rule1(void **state)
{
	pthread_barrier_t known;
	struct waiter w = { .rc = -1 };
	unsigned count = 0;
	struct atleast c = { &count, 1 };
	struct tev v;
	pthread_t th;
	uint64_t t0;

	(void)state;
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, 0);
	tev_arm(&v, 0, 1 * SEC, &count, NULL);
	emu_engine_unlock(eng); /* main is known and RUNNING from here on */
	pthread_barrier_init(&known, NULL, 2);
	w.count = &count;
	w.known = &known;
	assert_int_equal(pthread_create(&th, NULL, waiter_main, &w), 0);
	pthread_barrier_wait(&known);
	t0 = real_ns();
	while (real_ns() - t0 < 20 * MS) /* busy outside the engine */
		assert_int_equal(emu_engine_peek_now(eng), 0);
	assert_int_equal(count, 0);
	emu_engine_lock(eng);
	assert_int_equal(emu_engine_wait(eng, "timer", atleast_done, &c, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(emu_engine_now(eng), 1 * SEC);
	emu_engine_unlock(eng);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&known);
	assert_int_equal(w.rc, 0);
	assert_int_equal(w.at, 1 * SEC);
}

/* ... but with quiescence on (the default), a thread busy outside the engine for longer than
 * the interval sees time jump to the next timer, exactly to its deadline. */
static void test_busy_thread_rule2(void **state)
{
	unsigned count = 0;
	struct tev v;
	uint64_t t0, now = 0;

	(void)state;
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, EMU_ENGINE_QUIESCE_NS_DEFAULT);
	tev_arm(&v, 0, 1 * SEC, &count, NULL);
	emu_engine_unlock(eng);
	t0 = real_ns();
	while (now == 0 && real_ns() - t0 < 5 * SEC) {
		/* Busy, but yielding: under valgrind's one-thread-at-a-time scheduler a tight
		 * loop on the engine mutex would starve the progress thread for seconds. */
		sched_yield();
		now = emu_engine_peek_now(eng);
	}
	assert_int_equal(now, 1 * SEC);
	assert_int_equal(count, 1);
	assert_true(real_ns() - t0 < 2 * SEC);
}

struct kpoll {
	int fd;
	int n;
	pthread_barrier_t *known;
};

static void *kernel_poller(void *arg)
{
	struct kpoll *k = arg;
	struct pollfd p = { .fd = k->fd, .events = POLLIN };

	emu_engine_lock(eng); /* known, and RUNNING from now on: invisible to rule (1) */
	emu_engine_unlock(eng);
	pthread_barrier_wait(k->known);
	do
		k->n = poll(&p, 1, 10000);
	while (k->n < 0 && errno == EINTR);
	return NULL;
}

/* One thread blocked in the kernel on an engine fd, another busy-polling with note_idle: rule
 * (1) cannot fire (the first is RUNNING) and the empty polls must not count as activity, or
 * time would stop for good. The timer at 1 s reaches both. */
static void test_busy_poll_beside_kernel_wait(void **state)
{
	pthread_barrier_t known;
	struct kpoll k = { .n = -1 };
	unsigned count = 0;
	struct tev v;
	pthread_t th;
	uint64_t t0, at = 0;

	(void)state;
	k.fd = emu_engine_eventfd_new();
	assert_true(k.fd >= 0);
	k.known = &known;
	pthread_barrier_init(&known, NULL, 2);
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, EMU_ENGINE_QUIESCE_NS_DEFAULT);
	tev_arm(&v, 0, 1 * SEC, &count, NULL);
	v.fd = k.fd;
	emu_engine_unlock(eng);
	assert_int_equal(pthread_create(&th, NULL, kernel_poller, &k), 0);
	pthread_barrier_wait(&known);
	t0 = real_ns();
	for (;;) {
		bool got;

		emu_engine_lock(eng);
		got = count > 0;
		if (got)
			at = emu_engine_now(eng);
		else
			emu_engine_note_idle(eng);
		emu_engine_unlock(eng);
		if (got || real_ns() - t0 > 5 * SEC)
			break;
	}
	assert_int_equal(at, 1 * SEC);
	assert_true(real_ns() - t0 < 2 * SEC);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&known);
	assert_int_equal(k.n, 1);
	close(k.fd);
}

/* ---------- frames ---------- */

struct rxlog {
	unsigned n;
	uint64_t at[8];
	uint8_t first[8];
	size_t len[8];
	struct trace *tr;
	const char *name;
};

static void rx_record(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct rxlog *r = ctx;

	if (r->n < 8) {
		r->at[r->n] = now;
		r->first[r->n] = frame[0];
		r->len[r->n] = len;
	}
	r->n++;
	if (r->tr)
		trace_add(r->tr, "%llu:%s%u ", (unsigned long long)now, r->name, frame[0]);
}

/* The port demultiplexer: a RoCEv2 UD packet for QP1 goes to the QP1 claim, one for QP 17 to
 * the HCA, an ARP frame to the network stack; a released claim falls back to the HCA. */
static ssize_t roce_ud_frame(uint8_t *buf, size_t cap, uint32_t dqpn)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = EMU_PKEY_DEFAULT,
			       .dqpn = dqpn, .psn = 5 };
	struct emu_pkt_ext ext = { .deth = { .qkey = 0x80010000u, .sqpn = 1 } };
	uint8_t mad[256] = { 1, 3, 2, 0x81 };

	/* ::ffff:192.0.2.65 -> ::ffff:192.0.2.66 */
	a.sgid[10] = a.sgid[11] = a.dgid[10] = a.dgid[11] = 0xff;
	a.sgid[12] = a.dgid[12] = 192; a.sgid[14] = a.dgid[14] = 2;
	a.sgid[15] = 65; a.dgid[15] = 66;
	a.sport = emu_roce_sport_rxe(1);
	return emu_pkt_build(buf, cap, &a, &bth, &ext, mad, sizeof(mad), NULL);
}

static void test_port_demux(void **state)
{
	struct rxlog hca = { .n = 0 }, gsi = { .n = 0 }, net = { .n = 0 };
	uint8_t f[512], arp[60], ib[64];
	ssize_t len;
	uint32_t q = 0;

	(void)state;
	len = roce_ud_frame(f, sizeof(f), 1);
	assert_true(len > 0);
	assert_int_equal(emu_rx_classify(EMU_LL_ETHERNET, f, (size_t)len, &q), EMU_RX_KIND_TRANSPORT);
	assert_int_equal(q, 1);
	assert_int_equal(emu_rx_classify(EMU_LL_ETHERNET, f, 40, &q), EMU_RX_KIND_MALFORMED);
	memset(arp, 0, sizeof(arp));
	arp[12] = 0x08; arp[13] = 0x06;
	assert_int_equal(emu_rx_classify(EMU_LL_ETHERNET, arp, sizeof(arp), NULL), EMU_RX_KIND_NET);
	/* IB: LRH with LNH 2 (BTH next), DestQP 0x000001 */
	memset(ib, 0, sizeof(ib));
	ib[1] = EMU_LNH_IBA_LOCAL;
	ib[EMU_LRH_LEN + 7] = 1;
	assert_int_equal(emu_rx_classify(EMU_LL_INFINIBAND, ib, sizeof(ib), &q), EMU_RX_KIND_TRANSPORT);
	assert_int_equal(q, 1);
	ib[1] = EMU_LNH_RAW;
	assert_int_equal(emu_rx_classify(EMU_LL_INFINIBAND, ib, sizeof(ib), NULL), EMU_RX_KIND_OTHER);
	assert_int_equal(emu_rx_classify(EMU_LL_INFINIBAND, ib, 4, NULL), EMU_RX_KIND_MALFORMED);

	emu_engine_lock(eng);
	assert_int_equal(emu_engine_port_set_rx(eng, 1, 0, 1, rx_record, &hca), 0);
	assert_int_equal(emu_engine_port_set_rx_class(eng, 1, 0, 1, EMU_RX_NET, rx_record, &net), 0);
	assert_int_equal(emu_engine_port_set_rx_class(eng, 1, 0, 1, EMU_RX_NCLASS, rx_record, &net),
			 -EINVAL);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, 1, rx_record, &gsi), 0);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, 1u << 24, rx_record, &gsi), -EINVAL);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 2, 1, rx_record, &gsi), -ENOENT);
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, f, (size_t)len), 0);
	len = roce_ud_frame(f, sizeof(f), 17);
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, f, (size_t)len), 0);
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, arp, sizeof(arp)), 0);
	emu_engine_unlock(eng);
	assert_int_equal(gsi.n, 1);
	assert_int_equal(hca.n, 1);
	assert_int_equal(net.n, 1);
	assert_int_equal(hca.len[0], (size_t)len);
	assert_int_equal(net.len[0], sizeof(arp));

	/* claims fill up, are replaced in place and released */
	emu_engine_lock(eng);
	for (uint32_t qpn = 2; qpn <= EMU_RX_MAX_QPN_CLAIMS; qpn++)
		assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, qpn, rx_record, &gsi), 0);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, 99, rx_record, &gsi), -ENOSPC);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, 1, rx_record, &gsi), 0);
	assert_int_equal(emu_engine_port_set_rx_qpn(eng, 1, 0, 1, 1, NULL, NULL), 0);
	len = roce_ud_frame(f, sizeof(f), 1);
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, f, (size_t)len), 0);
	emu_engine_unlock(eng);
	assert_int_equal(gsi.n, 1);
	assert_int_equal(hca.n, 2);
}

/* rxe-ref2: host A (0) rxe0 port 1 <-> host B (1) rxe0 port 1, link 0. */
static void test_frames_link_delay(void **state)
{
	struct rxlog ra = { .n = 0 }, rb = { .n = 0 };
	struct atleast c = { &rb.n, 1 }, ca = { &ra.n, 1 };
	struct emu_faults f;
	uint8_t frame[64];

	(void)state;
	memset(frame, 0, sizeof(frame));
	emu_engine_lock(eng);
	/* opaque frames (EtherType 0): the host network stack's class */
	assert_int_equal(emu_engine_port_set_rx_class(eng, 0, 0, 1, EMU_RX_NET, rx_record, &ra), 0);
	assert_int_equal(emu_engine_port_set_rx_class(eng, 1, 0, 1, EMU_RX_NET, rx_record, &rb), 0);
	assert_int_equal(emu_engine_port_set_rx(eng, 0, 0, 2, rx_record, &ra), -ENOENT);
	assert_int_equal(emu_engine_port_send(eng, 2, 0, 1, frame, 1), -ENOENT);

	/* The fixture's link has no delay: the frame is delivered by the unlock of the call
	 * that sent it, at the same instant. */
	frame[0] = 1;
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, frame, sizeof(frame)), 0);
	emu_engine_unlock(eng);
	assert_int_equal(rb.n, 1);
	assert_int_equal(rb.at[0], 0);

	/* 3 us of delay: A -> B arrives at 3 us, B's answer back at A at 6 us. */
	emu_engine_lock(eng);
	assert_int_equal(emu_wire_get_faults(emu_topology_wire(emu_engine_topology(eng)), 0, &f), 0);
	f.delay_ns = 3 * US;
	assert_int_equal(emu_wire_set_faults(emu_topology_wire(emu_engine_topology(eng)), 0, &f), 0);
	frame[0] = 2;
	assert_int_equal(emu_engine_port_send(eng, 0, 0, 1, frame, sizeof(frame)), 0);
	c.n = 2;
	assert_int_equal(emu_engine_wait(eng, "frame at B", atleast_done, &c, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(emu_engine_now(eng), 3 * US);
	assert_int_equal(rb.at[1], 3 * US);
	assert_int_equal(rb.first[1], 2);
	assert_int_equal(rb.len[1], sizeof(frame));
	frame[0] = 3;
	assert_int_equal(emu_engine_port_send(eng, 1, 0, 1, frame, 60), 0);
	assert_int_equal(emu_engine_wait(eng, "frame at A", atleast_done, &ca, EMU_ENGINE_FOREVER), 0);
	assert_int_equal(emu_engine_now(eng), 6 * US);
	assert_int_equal(ra.at[0], 6 * US);
	assert_int_equal(ra.first[0], 3);
	assert_int_equal(ra.len[0], 60);
	emu_engine_unlock(eng);
}

/* ---------- determinism ---------- */

/* Periodic timers with scripted periods each send a frame A -> B over a lossy, jittery link;
 * a second thread waits for batches of frames at B and answers B -> A; the main thread waits
 * until the script is over. Everything appends to one trace. */
#define DET_TIMERS 6
#define DET_FIRES 5

struct det {
	struct trace tr;
	struct tev tv[DET_TIMERS];
	unsigned fires[DET_TIMERS];
	unsigned total;
	struct rxlog ra, rb;
	pthread_barrier_t known;
	bool finished;
};

static struct det *det_cur;

static void det_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct tev *v = arg;
	struct det *d = det_cur;
	uint8_t frame[80];

	trace_add(&d->tr, "%llu:t%d ", (unsigned long long)emu_clock_now(clk), v->id);
	memset(frame, 0, sizeof(frame));
	frame[0] = (uint8_t)(v->id * 16 + d->fires[v->id]);
	emu_engine_port_send(eng, 0, 0, 1, frame, sizeof(frame));
	d->total++;
	if (++d->fires[v->id] < DET_FIRES)
		emu_timer_arm_in(clk, t, (uint64_t)(v->id + 1) * 7 * US + d->fires[v->id] * US);
}

static bool det_batch(void *arg)
{
	struct det *d = arg;

	return d->finished || d->rb.n >= 4;
}

static void *det_responder(void *arg)
{
	struct det *d = arg;
	uint8_t frame[64];

	emu_engine_lock(eng);
	pthread_barrier_wait(&d->known);
	for (;;) {
		int rc = emu_engine_wait(eng, "batch", det_batch, d, 40 * US);

		if (d->finished)
			break;
		trace_add(&d->tr, "%llu:w%d/%u ", (unsigned long long)emu_engine_now(eng), rc,
			  d->rb.n);
		memset(frame, 0, sizeof(frame));
		frame[0] = (uint8_t)d->rb.n;
		d->rb.n = 0;
		emu_engine_port_send(eng, 1, 0, 1, frame, sizeof(frame));
		emu_engine_unlock(eng);
		emu_engine_lock(eng);
	}
	emu_engine_unlock(eng);
	return NULL;
}

static bool det_over(void *arg)
{
	struct det *d = arg;

	return d->total == DET_TIMERS * DET_FIRES;
}

static void det_run(struct det *d)
{
	struct emu_faults f = { .delay_ns = 2 * US, .jitter_ns = 3 * US, .loss = 0.2 };
	pthread_t th;

	memset(d, 0, sizeof(*d));
	det_cur = d;
	d->ra.tr = d->rb.tr = &d->tr;
	d->ra.name = "A";
	d->rb.name = "B";
	pthread_barrier_init(&d->known, NULL, 2);
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, 0);
	assert_int_equal(emu_wire_set_faults(emu_topology_wire(emu_engine_topology(eng)), 0, &f), 0);
	emu_engine_port_set_rx_class(eng, 0, 0, 1, EMU_RX_NET, rx_record, &d->ra);
	emu_engine_port_set_rx_class(eng, 1, 0, 1, EMU_RX_NET, rx_record, &d->rb);
	for (int i = 0; i < DET_TIMERS; i++) {
		memset(&d->tv[i], 0, sizeof(d->tv[i]));
		d->tv[i].id = i;
		emu_timer_init(&d->tv[i].t, det_fire, &d->tv[i]);
		emu_timer_arm_at(emu_engine_clock(eng), &d->tv[i].t, (uint64_t)(i % 3) * 5 * US);
	}
	emu_engine_unlock(eng);
	assert_int_equal(pthread_create(&th, NULL, det_responder, d), 0);
	pthread_barrier_wait(&d->known);
	emu_engine_lock(eng);
	assert_int_equal(emu_engine_wait(eng, "script", det_over, d, EMU_ENGINE_FOREVER), 0);
	trace_add(&d->tr, "end:%llu", (unsigned long long)emu_engine_now(eng));
	d->finished = true;
	emu_engine_unlock(eng); /* wakes the responder */
	pthread_join(th, NULL);
	pthread_barrier_destroy(&d->known);
}

static void test_determinism(void **state)
{
	struct det *d1 = malloc(sizeof(*d1)), *d2 = malloc(sizeof(*d2));

	assert_non_null(d1);
	assert_non_null(d2);
	det_run(d1);
	teardown(state);
	assert_int_equal(setup(state), 0);
	det_run(d2);
	assert_true(d1->tr.n > DET_TIMERS * DET_FIRES);
	assert_non_null(strstr(d1->tr.buf, ":w")); /* the responder took part */
	assert_non_null(strstr(d1->tr.buf, ":A")); /* and its answers arrived */
	assert_string_equal(d1->tr.buf, d2->tr.buf);
	free(d1);
	free(d2);
}

/* ---------- control API ---------- */

static void test_ctl_time(void **state)
{
	struct tev v[3];
	unsigned count = 0;
	uint64_t now = 1;

	(void)state;
	assert_int_equal(rdmaemu_ctl_now_ns(&now), 0);
	assert_int_equal(now, 0);
	assert_int_equal(rdmaemu_ctl_now_ns(NULL), -1);
	assert_int_equal(errno, EINVAL);
	emu_engine_lock(eng);
	tev_arm(&v[0], 0, 1 * SEC, &count, NULL);
	tev_arm(&v[1], 1, 2500 * MS, &count, NULL);
	tev_arm(&v[2], 2, 3 * SEC, &count, NULL);
	emu_engine_unlock(eng);
	assert_int_equal(rdmaemu_ctl_advance_ns(2500 * MS), 0);
	assert_int_equal(rdmaemu_ctl_now_ns(&now), 0);
	assert_int_equal(now, 2500 * MS);
	assert_int_equal(count, 2); /* the timer at exactly now + delta fired too */
	assert_int_equal(v[1].at, 2500 * MS);
	assert_int_equal(rdmaemu_ctl_advance_ns(0), 0);
	assert_int_equal(count, 2);
	assert_int_equal(rdmaemu_ctl_advance_ns(10 * SEC), 0);
	assert_int_equal(rdmaemu_ctl_now_ns(&now), 0);
	assert_int_equal(now, 12500 * MS);
	assert_int_equal(v[2].at, 3 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timers_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadlock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exited_thread_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_note_idle_busy_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runaway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll_woken_by_quiescence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_thread_rule1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_thread_rule2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_poll_beside_kernel_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_link_delay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_demux, setup, teardown),
		cmocka_unit_test_setup_teardown(test_determinism, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctl_time, setup, teardown),
	};

	/* these tests time the engine against the machine's clock */
	emu_apptime_disable();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
