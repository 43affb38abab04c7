/* devrm_probe2: more of what Linux 6.1 + rdma-core 44 do when an rxe device goes (`rdma link
 * delete rxe0`), beyond devrm_probe.c (docs/cma.md "Address changes and device removal").
 * Real stack only:
 *   cc -O2 -o devrm_probe2 probes/cma/devrm_probe2.c -lrdmacm -libverbs
 *   scripts/rxe-vm run --copy devrm_probe2 -- /opt/rdmaemu/devrm_probe2
 *     one VM: a multicast membership, a wildcard listener, the port of a removed id;
 *   scripts/rxe-vm run --two --copy devrm_probe2 -- /opt/rdmaemu/devrm_probe2
 *     two VMs: B removes rxe0 under an established connection and a request it read but did
 *     not accept; A prints what it sees.
 * It also runs unchanged under rdmaemud (emu/daemon/tests/test_daemon_devrm.sh), where an
 * `rdma` on PATH maps `rdma link delete DEV` to `rdmaemu daemon remove-device`, and
 * DEVRM_PROBE_DRAIN_MS shortens A's final wait (default 120000: long enough for a REQ sent
 * after the removal to run out of retries). */
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

static double t0;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9 - t0;
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

/* The next event within ms, printed; NULL on timeout. */
static struct rdma_cm_event *next(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) <= 0 || rdma_get_cm_event(ch, &ev)) {
		printf("t+%.3f no event within %d ms\n", now(), ms);
		return NULL;
	}
	printf("t+%.3f event %s status %d id %s\n", now(), rdma_event_str(ev->event), ev->status,
	       ev->id->context ? (char *)ev->id->context : "(new)");
	return ev;
}

static void drain(struct rdma_event_channel *ch, int ms)
{
	struct rdma_cm_event *ev;

	while ((ev = next(ch, ms)))
		rdma_ack_cm_event(ev);
}

static pid_t delete_rxe0(void)
{
	pid_t pid = fork();

	if (!pid) {
		execlp("rdma", "rdma", "link", "delete", "rxe0", (char *)NULL);
		_exit(127);
	}
	printf("t+%.3f rdma link delete rxe0\n", now());
	return pid;
}

static int single(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lis, *res, *wild, *port, *cli, *ud;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct sockaddr_in a, mc;
	int n;

	rdma_create_id(ch, &lis, "listener", RDMA_PS_TCP);
	a = sin4("192.0.2.1", 7000);
	n = rdma_bind_addr(lis, (struct sockaddr *)&a);
	printf("bind listener %d", n);
	printf(", listen %d\n", rdma_listen(lis, 4));
	rdma_create_id(ch, &res, "resolved", RDMA_PS_TCP);
	a = sin4("192.0.2.1", 7001);
	printf("resolve %d\n", rdma_resolve_addr(res, NULL, (struct sockaddr *)&a, 2000));
	drain(ch, 500);
	mc = sin4("239.1.1.1", 0);
	errno = 0;
	n = rdma_join_multicast(res, (struct sockaddr *)&mc, NULL);
	printf("join on the TCP id %d errno %d\n", n, n ? errno : 0);
	rdma_create_id(ch, &ud, "udp", RDMA_PS_UDP);
	a = sin4("192.0.2.1", 7002);
	printf("resolve udp %d\n", rdma_resolve_addr(ud, NULL, (struct sockaddr *)&a, 2000));
	drain(ch, 500);
	errno = 0;
	n = rdma_join_multicast(ud, (struct sockaddr *)&mc, NULL);
	printf("join on the UDP id %d errno %d\n", n, n ? errno : 0);
	drain(ch, 500);
	rdma_create_id(ch, &wild, "wildcard", RDMA_PS_TCP);
	a = sin4("0.0.0.0", 7100);
	n = rdma_bind_addr(wild, (struct sockaddr *)&a);
	printf("bind wildcard %d", n);
	printf(", listen %d\n", rdma_listen(wild, 4));
	delete_rxe0();
	drain(ch, 3000);
	errno = 0;
	n = rdma_leave_multicast(ud, (struct sockaddr *)&mc);
	printf("leave_multicast on the removed id %d errno %d\n", n, n ? errno : 0);
	errno = 0;
	n = rdma_listen(lis, 4);
	printf("listen on the removed listener %d errno %d\n", n, n ? errno : 0);
	rdma_create_id(ch, &port, "port", RDMA_PS_TCP);
	a = sin4("0.0.0.0", 7000);
	errno = 0;
	n = rdma_bind_addr(port, (struct sockaddr *)&a);
	printf("bind 0.0.0.0:7000 while the removed listener exists %d errno %d\n", n,
	       n ? errno : 0);
	/* the wildcard listener, through rxe1 */
	rdma_create_id(ch, &cli, "client", RDMA_PS_TCP);
	a = sin4("192.0.2.17", 7100);
	printf("resolve 192.0.2.17 %d\n", rdma_resolve_addr(cli, NULL, (struct sockaddr *)&a, 2000));
	drain(ch, 500);
	printf("resolve_route %d\n", rdma_resolve_route(cli, 2000));
	drain(ch, 500);
	memset(&cp, 0, sizeof cp);
	printf("connect %d\n", rdma_connect(cli, &cp));
	ev = next(ch, 3000);
	if (ev && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		printf("  on %s, device %s\n", ev->listen_id == wild ? "the wildcard listener" : "?",
		       ev->id->verbs ? ibv_get_device_name(ev->id->verbs->device) : "-");
		rdma_reject(ev->id, NULL, 0);
		rdma_ack_cm_event(ev);
	} else if (ev) {
		rdma_ack_cm_event(ev);
	}
	drain(ch, 1000);
	return 0;
}

/* B listens; A connects twice (the first accepted, the second only read); B removes rxe0. */
static int two(const char *node, const char *peer)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7, .qp_num = 0x100 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in a;
	int i;

	if (!strcmp(node, "B")) {
		struct rdma_cm_id *b[2] = { NULL, NULL };

		rdma_create_id(ch, &id, "listener", RDMA_PS_TCP);
		a = sin4("0.0.0.0", 7471);
		i = rdma_bind_addr(id, (struct sockaddr *)&a);
		printf("bind %d", i);
		printf(" listen %d\n", rdma_listen(id, 4));
		/* 0: the first request, 1: its ESTABLISHED, 2: the second request */
		for (i = 0; i < 3;) {
			ev = next(ch, 60000);
			if (!ev)
				return 1;
			if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && i == 0) {
				b[0] = ev->id;
				b[0]->context = "established";
				printf("accept %d\n", rdma_accept(b[0], &cp));
				i = 1;
			} else if (ev->event == RDMA_CM_EVENT_ESTABLISHED && i == 1) {
				i = 2;
			} else if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && i == 2) {
				b[1] = ev->id;
				b[1]->context = "pending";
				i = 3;
			}
			rdma_ack_cm_event(ev);
		}
		sleep(1);
		delete_rxe0();
		drain(ch, 5000);
		errno = 0;
		i = rdma_accept(b[1], &cp);
		printf("accept the pending one after removal %d errno %d\n", i, i ? errno : 0);
		return 0;
	}
	for (i = 0; i < 2; i++) {
		struct rdma_cm_id *c;

		for (;;) {
			rdma_create_id(ch, &c, i ? "pending" : "established", RDMA_PS_TCP);
			a = sin4(peer, 7471);
			rdma_resolve_addr(c, NULL, (struct sockaddr *)&a, 2000);
			drain(ch, 2000);
			rdma_resolve_route(c, 2000);
			drain(ch, 2000);
			cp.qp_num = 0x200 + i;
			printf("t+%.3f connect", now());
			printf(" %d\n", rdma_connect(c, &cp));
			ev = next(ch, 10000);
			/* the other connection's events come in between: pass them */
			while (ev && ev->id != c) {
				rdma_ack_cm_event(ev);
				ev = next(ch, 10000);
			}
			if (ev && ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
				rdma_ack_cm_event(ev);
				printf("establish %d\n", rdma_establish(c));
				break;
			}
			if (!ev && i == 1)
				break; /* B read it and keeps it pending */
			if (ev)
				rdma_ack_cm_event(ev);
			rdma_destroy_id(c);
			sleep(1);
		}
	}
	/* long enough for a REQ sent after the removal to run out of retries */
	drain(ch, getenv("DEVRM_PROBE_DRAIN_MS") ? atoi(getenv("DEVRM_PROBE_DRAIN_MS")) : 120000);
	return 0;
}

int main(void)
{
	const char *node = getenv("RXEVM_NODE"), *peer = getenv("RXEVM_PEER");

	t0 = 0;
	t0 = now();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!node || !strcmp(node, "single"))
		return single();
	return two(node, peer ? peer : "");
}
