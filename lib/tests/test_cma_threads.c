/* Threads the engine has not met yet. A program hands the active side of a connection to a
 * thread it has just started and at once waits for the request in its main thread (rping's
 * CM thread, server loops with workers do the same): the new thread has made no call yet, so
 * the engine knows one thread only, waiting with nothing pending. It must not conclude that
 * nothing can ever happen (EDEADLK): the thread can be seen in /proc/self/task, and kernel rxe
 * accepts the connection. On rxe-ref.fabric, loopback to 192.0.2.1, RDMAEMU_QUIESCE_US=0 so
 * that only the all-threads-settled rule moves time (docs/engine.md). Re-executes itself on
 * the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "emu/sim/engine.h"
#include "emu/verbs/tests/verbs_test.h"
#include "lib/tests/ep_test.h"

struct active {
	int connect_ret;
	int connect_errno;
	struct rdma_cm_id *id;
};

static void *active_main(void *arg)
{
	struct active *a = arg;
	struct rdma_addrinfo *ai = ep_test_addrinfo("7471", 0);
	struct ibv_qp_init_attr qa = ep_test_qp_attr();

	if (rdma_create_ep(&a->id, ai, NULL, &qa)) {
		a->connect_ret = -2;
		a->connect_errno = errno;
	} else {
		errno = 0;
		a->connect_ret = rdma_connect(a->id, NULL);
		a->connect_errno = errno;
	}
	rdma_freeaddrinfo(ai);
	return NULL;
}

static void test_request_while_peer_thread_starts(void **state)
{
	struct rdma_addrinfo *ai = ep_test_addrinfo("7471", 1);
	struct ibv_qp_init_attr qa = ep_test_qp_attr();
	struct rdma_cm_id *listen_id, *conn;
	struct active a = { 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(rdma_create_ep(&listen_id, ai, NULL, &qa), 0);
	rdma_freeaddrinfo(ai);
	assert_int_equal(rdma_listen(listen_id, 1), 0);
	assert_int_equal(pthread_create(&t, NULL, active_main, &a), 0);
	assert_int_equal(rdma_get_request(listen_id, &conn), 0);
	assert_non_null(conn->qp);
	assert_int_equal(rdma_accept(conn, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(a.connect_ret, 0);
	assert_int_equal(a.connect_errno, 0);
	rdma_destroy_ep(a.id);
	rdma_destroy_ep(conn);
	rdma_destroy_ep(listen_id);
}

/* A true deadlock still ends: one thread waits for a request nobody will send while another
 * thread sits in the kernel (a read of a pipe nobody writes) and never calls in. The engine
 * sees that thread asleep without CPU for a grace period, then rdma_get_request returns
 * EDEADLK with the diagnostic. */
static void *sleeper_main(void *arg)
{
	char c;

	return read(*(int *)arg, &c, 1) < 0 ? NULL : arg;
}

static void test_true_deadlock_with_idle_thread(void **state)
{
	struct rdma_addrinfo *ai = ep_test_addrinfo("7472", 1);
	struct ibv_qp_init_attr qa = ep_test_qp_attr();
	struct rdma_cm_id *listen_id, *conn = NULL;
	pthread_t t;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pthread_create(&t, NULL, sleeper_main, &p[0]), 0);
	assert_int_equal(rdma_create_ep(&listen_id, ai, NULL, &qa), 0);
	rdma_freeaddrinfo(ai);
	assert_int_equal(rdma_listen(listen_id, 1), 0);
	errno = 0;
	assert_int_equal(rdma_get_request(listen_id, &conn), -1);
	assert_int_equal(errno, EDEADLK);
	assert_null(conn);
	close(p[1]);
	assert_int_equal(pthread_join(t, NULL), 0);
	close(p[0]);
	rdma_destroy_ep(listen_id);
}

/* A blocking rdma_get_cm_event is the kernel's interruptible read of the rdma_cm file: a
 * signal whose handler has SA_RESTART lets it go on, one without ends it with -1/EINTR (the
 * way programs bound it with alarm()). The signals come from a thread the engine knows, busy
 * meanwhile, so that the wait is no deadlock. */
static volatile sig_atomic_t n_alrm, n_usr1;

static void on_alrm(int sig)
{
	(void)sig;
	n_alrm++;
}

static void on_usr1(int sig)
{
	(void)sig;
	n_usr1++;
}

struct signaller {
	pthread_t target;
	volatile int stop;
};

static void spin_ms(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void *signaller_main(void *arg)
{
	struct signaller *g = arg;
	struct emu_engine *e = emu_engine_get();

	/* a thread the engine knows, busy outside the library: the wait is no deadlock */
	emu_engine_lock(e);
	emu_engine_unlock(e);
	spin_ms(30);
	pthread_kill(g->target, SIGALRM);
	spin_ms(30);
	pthread_kill(g->target, SIGUSR1);
	while (!g->stop)
		spin_ms(1);
	return NULL;
}

static void handler(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(sig, &sa, NULL), 0);
}

static void test_get_event_interrupted(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct signaller g = { .target = pthread_self() };
	struct rdma_cm_event *ev = NULL;
	pthread_t t;

	(void)state;
	assert_non_null(ch);
	handler(SIGALRM, on_alrm, SA_RESTART);
	handler(SIGUSR1, on_usr1, 0);
	n_alrm = n_usr1 = 0;
	assert_int_equal(pthread_create(&t, NULL, signaller_main, &g), 0);
	errno = 0;
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(n_alrm, 1);
	assert_int_equal(n_usr1, 1);
	g.stop = 1;
	assert_int_equal(pthread_join(t, NULL), 0);
	signal(SIGALRM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	rdma_destroy_event_channel(ch);
}

/* An alarm the program armed is a deadline of its own, not a deadlock: alone in the process,
 * with nothing pending, a blocking rdma_get_cm_event waits for it. Its SIGALRM without
 * SA_RESTART ends the call with EINTR; with SA_RESTART the wait looks again, finds no alarm
 * left and nothing that can happen: EDEADLK. */
static void alarm_in_ms(long ms)
{
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };

	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

static void test_get_event_alarm(void **state)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev = NULL;

	(void)state;
	assert_non_null(ch);
	handler(SIGALRM, on_alrm, 0);
	n_alrm = 0;
	alarm_in_ms(300);
	errno = 0;
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(n_alrm, 1);

	handler(SIGALRM, on_alrm, SA_RESTART);
	n_alrm = 0;
	alarm_in_ms(300);
	errno = 0;
	assert_int_equal(rdma_get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, EDEADLK);
	assert_int_equal(n_alrm, 1);
	signal(SIGALRM, SIG_DFL);
	rdma_destroy_event_channel(ch);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_while_peer_thread_starts),
		cmocka_unit_test(test_true_deadlock_with_idle_thread),
		cmocka_unit_test(test_get_event_interrupted),
		cmocka_unit_test(test_get_event_alarm),
	};

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
