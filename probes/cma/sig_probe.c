/* How the kernel's blocking waits of the RDMA stack meet signals: rdma_get_cm_event on an
 * empty event channel and ibv_get_cq_event on an idle completion channel, each first with a
 * SIGALRM handler without SA_RESTART, then with one with SA_RESTART followed by a SIGUSR1
 * without it. Prints one line per wait: its return value, errno and the handlers' counts.
 * Build: cc -O2 -o sig_probe sig_probe.c -lrdmacm -libverbs -lpthread (docs/time.md). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

static volatile sig_atomic_t n_alrm, n_usr1;

static void on_alrm(int s) { (void)s; n_alrm++; }
static void on_usr1(int s) { (void)s; n_usr1++; }

static void handler(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static pthread_t main_thread;

static void *usr1_later(void *arg)
{
	(void)arg;
	usleep(600000);
	pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static void arm(int restart)
{
	struct itimerval it = { .it_value = { 0, 300000 } };
	pthread_t t;

	n_alrm = n_usr1 = 0;
	handler(SIGALRM, on_alrm, restart ? SA_RESTART : 0);
	handler(SIGUSR1, on_usr1, 0);
	setitimer(ITIMER_REAL, &it, NULL);
	if (restart) {
		pthread_create(&t, NULL, usr1_later, NULL);
		pthread_detach(t);
	}
}

int main(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev;
	struct ibv_device **dl = ibv_get_device_list(NULL);
	struct ibv_context *ctx = dl && dl[0] ? ibv_open_device(dl[0]) : NULL;
	struct ibv_comp_channel *cc = ctx ? ibv_create_comp_channel(ctx) : NULL;
	struct ibv_cq *cq = cc ? ibv_create_cq(ctx, 4, NULL, cc, 0) : NULL, *ecq;
	void *ectx;
	int r;

	main_thread = pthread_self();
	if (!ch || !cq) {
		printf("setup failed: %s\n", strerror(errno));
		return 1;
	}
	ibv_req_notify_cq(cq, 0);
	for (int restart = 0; restart < 2; restart++) {
		arm(restart);
		errno = 0;
		r = rdma_get_cm_event(ch, &ev);
		printf("rdma_get_cm_event %s: %d errno %s alrm %d usr1 %d\n",
		       restart ? "SA_RESTART" : "no SA_RESTART", r, strerror(errno), (int)n_alrm,
		       (int)n_usr1);
		usleep(700000);
		arm(restart);
		errno = 0;
		r = ibv_get_cq_event(cc, &ecq, &ectx);
		printf("ibv_get_cq_event %s: %d errno %s alrm %d usr1 %d\n",
		       restart ? "SA_RESTART" : "no SA_RESTART", r, strerror(errno), (int)n_alrm,
		       (int)n_usr1);
		usleep(700000);
	}
	return 0;
}
