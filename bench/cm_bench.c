/* cm_bench: cmtime's connection steps in one process, host A connecting to host B of
 * fixtures/rxe-ref2.fabric through the emulated kernel CM, the CM agents and the RoCE wire.
 * Like rdma-core's cmtime, each step runs for all N connections before the next:
 *   create id      rdma_create_id
 *   resolve addr   rdma_resolve_addr + ADDR_RESOLVED (the neighbour module: ARP once, then
 *                  the neighbour cache)
 *   resolve route  rdma_resolve_route + ROUTE_RESOLVED (the RoCE path the kernel builds)
 *   connect        rdma_connect (REQ); B: CONNECT_REQUEST, rdma_accept (REP); A:
 *                  CONNECT_RESPONSE
 *   established    A: rdma_establish (RTU); B: ESTABLISHED
 *   disconnect     A: rdma_disconnect (DREQ); B: DISCONNECTED, rdma_disconnect; A:
 *                  DISCONNECTED (DREP)
 *   destroy        rdma_destroy_id on both sides
 * Ids have no QP (cmtime's default moves external QPs; here none). Wall-clock µs per
 * connection per step and in total. --standin resolves the address with the stand-in module
 * and sets the route with RDMA_OPTION_IB_PATH (lib/tests/cma_conn_test.h), as the first
 * version of this benchmark did.
 *
 *   LD_LIBRARY_PATH=emu/verbs/.libs:emu/.libs bench/cm_bench [--standin] [N...]
 *   (default N: 1000 10000) */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/tests/cma_conn_test.h"
#include "rdmaemu/ctl.h"

enum { S_CREATE, S_ADDR, S_ROUTE, S_CONNECT, S_ESTABLISHED, S_DISCONNECT, S_DESTROY, S_N };
static const char *const step_name[S_N] = { "create id", "resolve addr", "resolve route",
					    "connect", "established", "disconnect", "destroy" };
static int standin;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct rdma_cm_event *next(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev;

	/* timewait of earlier connections ends while later ones run: not a step's event */
	do {
		if (rdma_get_cm_event(ch, &ev))
			die("rdma_get_cm_event");
	} while (ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT && t != ev->event &&
		 !rdma_ack_cm_event(ev));
	if (ev->event != t) {
		fprintf(stderr, "event %s, expected %s\n", rdma_event_str(ev->event),
			rdma_event_str(t));
		exit(1);
	}
	return ev;
}

static uint32_t qpn;

static void run(int n, struct rdma_event_channel *ca, struct rdma_event_channel *cb)
{
	struct rdma_cm_id **a = calloc((size_t)n, sizeof *a), **b = calloc((size_t)n, sizeof *b);
	struct rdma_conn_param cp = { .qp_num = 1, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct sockaddr_in dst;
	double t[S_N + 1];

	standin_dst(&dst, "192.0.2.66", 7471);
	t[0] = now_us();
	for (int i = 0; i < n; i++)
		if (rdma_create_id(ca, &a[i], NULL, RDMA_PS_TCP))
			die("rdma_create_id");
	t[1] = now_us();
	for (int i = 0; i < n; i++) {
		if (rdma_resolve_addr(a[i], NULL, (struct sockaddr *)&dst, 2000))
			die("rdma_resolve_addr");
		rdma_ack_cm_event(next(ca, RDMA_CM_EVENT_ADDR_RESOLVED));
	}
	t[2] = now_us();
	for (int i = 0; i < n; i++) {
		if (standin ? standin_route(a[i]) : rdma_resolve_route(a[i], 2000))
			die(standin ? "rdma_set_option" : "rdma_resolve_route");
		rdma_ack_cm_event(next(ca, RDMA_CM_EVENT_ROUTE_RESOLVED));
	}
	t[3] = now_us();
	for (int i = 0; i < n; i++) {
		struct rdma_cm_event *ev;

		/* distinct QPNs, also across runs: the CM takes a REQ with the QPN of a connection
		 * it still remembers for a stale one */
		cp.qp_num = ++qpn;
		if (rdma_connect(a[i], &cp))
			die("rdma_connect");
		ev = next(cb, RDMA_CM_EVENT_CONNECT_REQUEST);
		b[i] = ev->id;
		rdma_ack_cm_event(ev);
		if (rdma_accept(b[i], &cp))
			die("rdma_accept");
		rdma_ack_cm_event(next(ca, RDMA_CM_EVENT_CONNECT_RESPONSE));
	}
	t[4] = now_us();
	for (int i = 0; i < n; i++) {
		if (rdma_establish(a[i]))
			die("rdma_establish");
		rdma_ack_cm_event(next(cb, RDMA_CM_EVENT_ESTABLISHED));
	}
	t[5] = now_us();
	for (int i = 0; i < n; i++) {
		if (rdma_disconnect(a[i]))
			die("rdma_disconnect");
		rdma_ack_cm_event(next(cb, RDMA_CM_EVENT_DISCONNECTED));
		if (rdma_disconnect(b[i]))
			die("rdma_disconnect");
		rdma_ack_cm_event(next(ca, RDMA_CM_EVENT_DISCONNECTED));
	}
	t[6] = now_us();
	for (int i = 0; i < n; i++) {
		rdma_destroy_id(a[i]);
		rdma_destroy_id(b[i]);
	}
	t[7] = now_us();
	printf("cm_bench n=%d total_us_per_conn=%.2f", n, (t[S_N] - t[0]) / n);
	for (int s = 0; s < S_N; s++)
		printf(" \"%s\"=%.2f", step_name[s], (t[s + 1] - t[s]) / n);
	printf("\n");
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ca, *cb;
	struct rdma_cm_id *listen;
	struct sockaddr_in any;
	char *fabric;
	const char *src = getenv("RDMAEMU_TOP_SRCDIR");

	if (asprintf(&fabric, "%s/fixtures/rxe-ref2.fabric", src ? src : RDMAEMU_SRCDIR) < 0 ||
	    rdmaemu_ctl_attach(fabric, "A") || rdmaemu_ctl_open_host_devices("B"))
		die("attach");
	free(fabric);
	if (argc > 1 && !strcmp(argv[1], "--standin")) {
		standin = 1;
		argv++;
		argc--;
	}
	if (standin)
		emu_cma_set_addr_ops(&standin_addr_ops);
	ca = rdma_create_event_channel();
	rdmaemu_ctl_cm_host("B");
	cb = rdma_create_event_channel();
	rdmaemu_ctl_cm_host(NULL);
	if (!ca || !cb)
		die("rdma_create_event_channel");
	if (rdma_create_id(cb, &listen, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	standin_dst(&any, "0.0.0.0", 7471);
	if (rdma_bind_addr(listen, (struct sockaddr *)&any) || rdma_listen(listen, 0))
		die("listen");
	if (argc < 2) {
		run(1000, ca, cb);
		run(10000, ca, cb);
	}
	for (int i = 1; i < argc; i++)
		run(atoi(argv[i]), ca, cb);
	rdma_destroy_id(listen);
	rdma_destroy_event_channel(ca);
	rdma_destroy_event_channel(cb);
	return 0;
}
