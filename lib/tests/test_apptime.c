/* The program's own deadlines on the virtual clock (docs/time.md): a program that waits in its
 * own poll(), sleep, select, epoll_wait, condition wait or alarm sees protocol time and its
 * own clock move together, as on a real host: a protocol timer due later than its deadline
 * has not fired when its wait ends, one due earlier has, and the clock it reads says exactly
 * how long it waited. On rxe-ref.fabric; re-executes itself on the emulated libraries
 * (verbs_test.h), whose engine binds the time layer into this program. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdmaemu/ctl.h>

#include "emu/sim/apptime.h"
#include "emu/sim/engine.h"
#include "emu/verbs/tests/verbs_test.h"
#include "lib/tests/ep_test.h"

#define SILENT "192.0.2.30" /* on s0 of rxe-ref (192.0.2.16/28); nobody answers its ARP */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t vnow(void)
{
	return emu_engine_peek_now(emu_engine_get());
}

/* An ADDR_ERROR due at `ms` on a fresh channel: the resolution of an address nobody answers. */
static struct rdma_event_channel *pending_addr_error(struct rdma_cm_id **id, int ms)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(7000) };

	assert_non_null(ch);
	inet_pton(AF_INET, SILENT, &dst.sin_addr);
	assert_int_equal(rdma_create_id(ch, id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(*id, NULL, (struct sockaddr *)&dst, ms), 0);
	return ch;
}

static void expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, type);
	assert_int_equal(ev->status, status);
	rdma_ack_cm_event(ev);
}

static void test_bound(void **state)
{
	(void)state;
	assert_non_null(emu_engine_get());
	assert_true(emu_apptime_bound());
}

/* The program polls the channel with a timeout shorter than the protocol's: nothing yet, and
 * its clock moved by its own timeout exactly; then a longer one: the event, at the
 * protocol's instant. */
static void test_poll_deadline_before_protocol_timer(void **state)
{
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	uint64_t v0, t0;
	struct pollfd p;

	(void)state;
	ch = pending_addr_error(&id, 2000);
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	v0 = vnow();
	t0 = mono_ns();
	errno = 0;
	assert_int_equal(poll(&p, 1, 1500), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(p.revents, 0);
	assert_int_equal(mono_ns() - t0, 1500ull * 1000000);
	assert_int_equal(vnow() - v0, 1500ull * 1000000);
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(p.revents, POLLIN);
	assert_int_equal(vnow() - v0, 2000ull * 1000000);
	assert_int_equal(mono_ns() - t0, 2000ull * 1000000);
	expect_event(ch, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* Sleeps of every kind take exactly their time on the program's clock; protocol timers due
 * meanwhile fire in order. */
static void test_sleeps(void **state)
{
	struct timespec req = { 0, 250 * 1000000 }, abs;
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	uint64_t t0;
	struct pollfd p;

	(void)state;
	ch = pending_addr_error(&id, 1000);
	t0 = mono_ns();
	assert_int_equal(sleep(1), 0);
	assert_int_equal(mono_ns() - t0, 1000000000ull);
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 1); /* fired during the sleep */
	expect_event(ch, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
	t0 = mono_ns();
	errno = EBADF; /* a call that succeeds leaves errno alone */
	assert_int_equal(usleep(1500), 0);
	assert_int_equal(errno, EBADF);
	assert_int_equal(mono_ns() - t0, 1500000ull);
	t0 = mono_ns();
	assert_int_equal(nanosleep(&req, NULL), 0);
	assert_int_equal(mono_ns() - t0, 250000000ull);
	t0 = mono_ns();
	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &abs), 0);
	abs.tv_sec += 2;
	assert_int_equal(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL), 0);
	assert_int_equal(mono_ns() - t0, 2000000000ull);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* select and epoll_wait: the same deadline rule; select leaves the time not slept. */
static void test_select_epoll(void **state)
{
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	struct timeval tv = { 0, 700000 };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	uint64_t t0;
	fd_set r;
	int ep;

	(void)state;
	ch = pending_addr_error(&id, 1000);
	FD_ZERO(&r);
	FD_SET(ch->fd, &r);
	t0 = mono_ns();
	assert_int_equal(select(ch->fd + 1, &r, NULL, NULL, &tv), 0);
	assert_false(FD_ISSET(ch->fd, &r));
	assert_int_equal(tv.tv_sec, 0);
	assert_int_equal(tv.tv_usec, 0);
	assert_int_equal(mono_ns() - t0, 700000000ull);
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	ev.data.u32 = 7;
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 200), 0);
	assert_int_equal(mono_ns() - t0, 900000000ull);
	assert_int_equal(epoll_wait(ep, &out, 1, 5000), 1);
	assert_int_equal(out.data.u32, 7);
	assert_int_equal(mono_ns() - t0, 1000000000ull);
	expect_event(ch, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT);
	close(ep);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* A thread of the program wakes another through a pipe after a sleep of its own: the poller's
 * longer deadline does not come first. */
static int pipe_fds[2];

static void *writer_main(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
	assert_int_equal(write(pipe_fds[1], "x", 1), 1);
	return NULL;
}

static void test_two_threads(void **state)
{
	struct pollfd p;
	pthread_t t;
	uint64_t t0;
	char c;

	(void)state;
	assert_int_equal(pipe(pipe_fds), 0);
	p = (struct pollfd){ .fd = pipe_fds[0], .events = POLLIN };
	t0 = mono_ns();
	assert_int_equal(pthread_create(&t, NULL, writer_main, NULL), 0);
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(mono_ns() - t0, 100000000ull);
	assert_int_equal(read(pipe_fds[0], &c, 1), 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

/* A thread the engine has not met (it never calls the emulated libraries or the time layer)
 * works for 50 ms of its own CPU time, then wakes the poller through a pipe: the poller's
 * deadline does not come first, and the clock has not moved meanwhile (rule 2 waits for a
 * thread not met yet that is at work, as rule 1 does). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
	uint64_t c0 = thread_cpu_ns();
	volatile uint64_t spins = 0;
	ssize_t n;

	(void)arg;
	while (thread_cpu_ns() - c0 < 50ull * 1000000)
		spins++;
	n = write(pipe_fds[1], "w", 1);
	(void)n;
	return NULL;
}

static void test_unmet_thread_at_work(void **state)
{
	struct pollfd p;
	pthread_t t;
	uint64_t v0;
	char c;

	(void)state;
	assert_int_equal(pipe(pipe_fds), 0);
	p = (struct pollfd){ .fd = pipe_fds[0], .events = POLLIN };
	v0 = vnow();
	assert_int_equal(pthread_create(&t, NULL, worker_main, NULL), 0);
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(vnow() - v0, 0);
	assert_int_equal(read(pipe_fds[0], &c, 1), 1);
	assert_int_equal(c, 'w');
	assert_int_equal(pthread_join(t, NULL), 0);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

/* A condition wait on CLOCK_MONOTONIC and on CLOCK_REALTIME times out at its deadline. */
static void test_cond_timedwait(void **state)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_condattr_t ca;
	pthread_cond_t c;
	struct timespec abs;
	uint64_t t0;

	(void)state;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c, &ca);
	pthread_mutex_lock(&m);
	t0 = mono_ns();
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_sec += 3;
	assert_int_equal(pthread_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
	assert_int_equal(mono_ns() - t0, 3000000000ull);
	pthread_cond_destroy(&c);
	pthread_cond_init(&c, NULL);
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 400 * 1000000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	t0 = mono_ns();
	assert_int_equal(pthread_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
	assert_int_equal(mono_ns() - t0, 400000000ull);
	pthread_mutex_unlock(&m);
	pthread_cond_destroy(&c);
	pthread_condattr_destroy(&ca);
}

/* A semaphore and a mutex held elsewhere: their timed waits end at the virtual deadline. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void *holder_main(void *arg)
{
	sem_t *done = arg;

	pthread_mutex_lock(&held);
	sem_wait(done);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void test_sem_mutex_timed(void **state)
{
	struct timespec abs;
	sem_t sem, done;
	pthread_t t;
	uint64_t t0;

	(void)state;
	assert_int_equal(sem_init(&sem, 0, 0), 0);
	assert_int_equal(sem_init(&done, 0, 0), 0);
	t0 = mono_ns();
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += 2;
	errno = 0;
	assert_int_equal(sem_timedwait(&sem, &abs), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_int_equal(mono_ns() - t0, 2000000000ull);
	assert_int_equal(sem_post(&sem), 0);
	assert_int_equal(sem_timedwait(&sem, &abs), 0);

	assert_int_equal(pthread_create(&t, NULL, holder_main, &done), 0);
	while (pthread_mutex_trylock(&held) == 0) { /* until the holder has it */
		pthread_mutex_unlock(&held);
		usleep(100);
	}
	t0 = mono_ns();
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += 1;
	assert_int_equal(pthread_mutex_timedlock(&held, &abs), ETIMEDOUT);
	assert_int_equal(mono_ns() - t0, 1000000000ull);
	assert_int_equal(sem_post(&done), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	sem_destroy(&sem);
	sem_destroy(&done);
}

/* alarm(): its SIGALRM comes at its virtual instant and interrupts a poll without timeout
 * (EINTR, whatever SA_RESTART says: poll is never restarted). */
static volatile sig_atomic_t n_alrm;

static void on_alrm(int sig)
{
	(void)sig;
	n_alrm++;
}

static void test_alarm(void **state)
{
	struct sigaction sa;
	struct pollfd p;
	int fds[2];
	uint64_t t0;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(pipe(fds), 0);
	p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	n_alrm = 0;
	t0 = mono_ns();
	assert_int_equal(alarm(2), 0);
	assert_int_equal(alarm(2), 2);
	errno = 0;
	assert_int_equal(poll(&p, 1, -1), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(n_alrm, 1);
	assert_int_equal(mono_ns() - t0, 2000000000ull);
	assert_int_equal(alarm(0), 0);
	signal(SIGALRM, SIG_DFL);
	close(fds[0]);
	close(fds[1]);
}

/* The program waits in its own poll() for 5 s after rdma_disconnect while the peer never
 * answers its DREQs (every DREQ the host's CM sends is dropped): on a real host nothing
 * arrives in those 5 s, the retries run out a minute later. The program's clock says so. */
static void *connect_main(void *arg)
{
	struct rdma_addrinfo *ai = ep_test_addrinfo("7481", 0);
	struct ibv_qp_init_attr qa = ep_test_qp_attr();
	struct rdma_cm_id **id = arg;

	assert_int_equal(rdma_create_ep(id, ai, NULL, &qa), 0);
	assert_int_equal(rdma_connect(*id, NULL), 0);
	rdma_freeaddrinfo(ai);
	return NULL;
}

static void test_disconnect_then_own_poll(void **state)
{
	struct rdma_addrinfo *ai = ep_test_addrinfo("7481", 1);
	struct ibv_qp_init_attr qa = ep_test_qp_attr();
	struct rdmaemu_cm_fault drop = { .drop = 1.0 }, none = { 0 };
	struct rdma_cm_id *lid, *conn, *act = NULL;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	uint64_t t0, counts[4];
	struct pollfd p;
	pthread_t t;

	(void)state;
	assert_int_equal(rdma_create_ep(&lid, ai, NULL, &qa), 0);
	rdma_freeaddrinfo(ai);
	assert_int_equal(rdma_listen(lid, 1), 0);
	assert_int_equal(pthread_create(&t, NULL, connect_main, &act), 0);
	assert_int_equal(rdma_get_request(lid, &conn), 0);
	assert_int_equal(rdma_accept(conn, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	ch = rdma_create_event_channel();
	assert_non_null(ch);
	assert_int_equal(rdma_migrate_id(conn, ch), 0);
	assert_int_equal(rdmaemu_ctl_cm_fault(NULL, NULL, "DREQ", &drop, NULL), 0);

	t0 = mono_ns();
	assert_int_equal(rdma_disconnect(conn), 0);
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 5000), 0);
	assert_int_equal(mono_ns() - t0, 5000000000ull);
	assert_int_equal(rdmaemu_ctl_cm_counters(NULL, "DREQ", counts), 0);
	assert_int_equal(counts[0], 2); /* the first DREQ and one retry (4.096 s) so far */
	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
	/* 16 sends 4.096 s apart (CMA_CM_RESPONSE_TIMEOUT 20: 2^(20-8) ms; 15 retries) */
	assert_int_equal(mono_ns() - t0, 16ull * 4096000000ull);
	assert_int_equal(rdmaemu_ctl_cm_counters(NULL, "DREQ", counts), 0);
	assert_int_equal(counts[0], 16);
	assert_int_equal(rdmaemu_ctl_cm_fault(NULL, NULL, "DREQ", &none, NULL), 0);
	rdma_destroy_ep(act);
	rdma_destroy_ep(conn);
	rdma_destroy_ep(lid);
	rdma_destroy_event_channel(ch);
}

/* A busy loop on the clock ends: time passes for a program that waits for it. */
static void test_busy_loop_on_clock(void **state)
{
	uint64_t t0 = mono_ns();

	(void)state;
	while (mono_ns() - t0 < 50000000ull)
		;
	assert_true(mono_ns() - t0 >= 50000000ull);
	assert_true(mono_ns() - t0 < 52000000ull);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_poll_deadline_before_protocol_timer),
		cmocka_unit_test(test_sleeps),
		cmocka_unit_test(test_select_epoll),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_unmet_thread_at_work),
		cmocka_unit_test(test_cond_timedwait),
		cmocka_unit_test(test_sem_mutex_timed),
		cmocka_unit_test(test_alarm),
		cmocka_unit_test(test_disconnect_then_own_poll),
		cmocka_unit_test(test_busy_loop_on_clock),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
