/* devrm_probe: what Linux 6.1 + rdma-core 44 do when an rxe device goes (`rdma link delete
 * rxe0`) while rdma_cm ids and a verbs context use it; the facts behind the emulated
 * DEVICE_REMOVAL (docs/cma.md "Address changes and device removal"). Real stack only:
 *   cc -O2 -o devrm_probe probes/cma/devrm_probe.c -lrdmacm -libverbs
 *   scripts/rxe-vm run --copy devrm_probe -- /opt/rdmaemu/devrm_probe */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct sockaddr_in sin4(const char *a, int port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof s);
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

int main(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis, *other, *res, *idle;
	struct rdma_cm_event *ev;
	struct sockaddr_in a;
	struct ibv_context *own;
	struct ibv_device **dl;
	struct ibv_async_event aev;
	double t0;
	pid_t pid;
	int st, n;

	rdma_create_id(ch, &lis, "listener", RDMA_PS_TCP);
	a = sin4("192.0.2.1", 7000);
	printf("bind listener %d\n", rdma_bind_addr(lis, (struct sockaddr *)&a));
	printf("listen %d\n", rdma_listen(lis, 4));
	rdma_create_id(ch, &other, "other-dev", RDMA_PS_TCP);
	a = sin4("192.0.2.17", 7000);
	n = rdma_bind_addr(other, (struct sockaddr *)&a);
	printf("bind other %d (%s)\n", n,
	       other->verbs ? ibv_get_device_name(other->verbs->device) : "-");
	rdma_create_id(ch, &res, "resolved", RDMA_PS_TCP);
	a = sin4("192.0.2.1", 7001);
	printf("resolve %d\n", rdma_resolve_addr(res, NULL, (struct sockaddr *)&a, 2000));
	rdma_get_cm_event(ch, &ev);
	printf("  %s\n", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	rdma_create_id(ch, &idle, "idle", RDMA_PS_TCP);
	dl = ibv_get_device_list(&n);
	own = ibv_open_device(dl[0]);
	printf("own context on %s\n", ibv_get_device_name(dl[0]));

	t0 = now();
	pid = fork();
	if (!pid) {
		execlp("rdma", "rdma", "link", "delete", "rxe0", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = { ch->fd, POLLIN, 0 };

		if (poll(&p, 1, 3000) <= 0)
			break;
		if (rdma_get_cm_event(ch, &ev))
			break;
		printf("t+%.3f event %s status %d id %s\n", now() - t0, rdma_event_str(ev->event),
		       ev->status, (char *)ev->id->context);
		rdma_ack_cm_event(ev);
	}
	printf("t+%.3f after events: rdma link delete %s\n", now() - t0,
	       waitpid(pid, &st, WNOHANG) == pid ? "finished" : "still blocked");
	{
		struct pollfd p = { own->async_fd, POLLIN, 0 };

		if (poll(&p, 1, 100) > 0 && !ibv_get_async_event(own, &aev)) {
			printf("own context async event %s\n", ibv_event_type_str(aev.event_type));
			ibv_ack_async_event(&aev);
		} else {
			printf("own context: no async event\n");
		}
	}
	{
		struct ibv_pd *pd = ibv_alloc_pd(own);

		printf("alloc_pd on own context: %s errno %d\n", pd ? "ok" : "NULL", pd ? 0 : errno);
	}
	errno = 0;
	n = rdma_resolve_route(res, 2000);
	printf("resolve_route on the removed id %d errno %d\n", n, n ? errno : 0);
	errno = 0;
	n = rdma_listen(idle, 4);
	printf("listen on the idle id %d errno %d (%s)\n", n, n ? errno : 0,
	       idle->verbs ? "verbs" : "no verbs");
	n = rdma_destroy_id(lis);
	printf("destroy listener %d\n", n);
	n = rdma_destroy_id(res);
	printf("destroy resolved %d\n", n);
	printf("t+%.3f: rdma link delete %s\n", now() - t0,
	       waitpid(pid, &st, WNOHANG) == pid ? "finished" : "still blocked");
	printf("close own context %d\n", ibv_close_device(own));
	printf("other id still on %s\n", other->verbs ? ibv_get_device_name(other->verbs->device) : "-");
	sleep(1);
	printf("t+%.3f: rdma link delete %s\n", now() - t0,
	       waitpid(pid, &st, WNOHANG) == pid ? "finished" : "still blocked");
	ibv_free_device_list(dl);
	dl = ibv_get_device_list(&n);
	printf("devices now %d:", n);
	for (int i = 0; i < n; i++)
		printf(" %s", ibv_get_device_name(dl[i]));
	printf("\n");
	{
		int m = 0;
		struct ibv_context **l = rdma_get_devices(&m);

		printf("rdma_get_devices %d%s\n", m, l ? "" : " (NULL)");
	}
	a = sin4("192.0.2.1", 7002);
	errno = 0;
	rdma_create_id(ch, &res, "after", RDMA_PS_TCP);
	n = rdma_bind_addr(res, (struct sockaddr *)&a);
	printf("bind 192.0.2.1 after removal %d errno %d\n", n, n ? errno : 0);
	waitpid(pid, &st, 0);
	printf("t+%.3f: rdma link delete exit %d\n", now() - t0, WEXITSTATUS(st));
	return 0;
}
