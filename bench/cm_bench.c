/* cm_bench: cmtime's connection steps in one process, host A connecting to host B of
 * fixtures/rxe-ref2.fabric through the emulated kernel CM, the CM agents and the RoCE wire.
 * Like rdma-core's cmtime, each step runs for all N connections before the next, and within a
 * step the call is issued for all N ids first and then the N events are read (cmtime's event
 * thread reaps them), so events queue in bursts:
 *   create id      rdma_create_id
 *   resolve addr   rdma_resolve_addr x N; N ADDR_RESOLVED (the neighbour module: ARP once,
 *                  then the neighbour cache)
 *   resolve route  rdma_resolve_route x N; N ROUTE_RESOLVED (the RoCE path the kernel builds)
 *   connect        rdma_connect x W (REQ); B: W CONNECT_REQUEST, each followed by rdma_accept
 *                  (REP); A: W CONNECT_RESPONSE; W = --window, default 1024, the listener's
 *                  backlog (below)
 *   established    A: rdma_establish x N (RTU); B: N ESTABLISHED
 *   disconnect     A: rdma_disconnect x N (DREQ); B: N DISCONNECTED; B: rdma_disconnect x N
 *                  (DREP); A: N DISCONNECTED
 *   destroy        rdma_destroy_id on both sides
 * --serial runs each connection's call and reads its event(s) before the next connection's
 * call: every event is queued on an empty channel and read at once, so the channel's eventfd
 * toggles twice an event. Every event is checked: its type, that it is for one of the step's
 * ids, and that no id gets two (so N events = each id one). Ids have no QP (cmtime's default
 * moves external QPs; here none). Wall-clock us per connection per step and in total. --standin resolves the address with the stand-in module
 * and sets the route with RDMA_OPTION_IB_PATH (lib/tests/cma_conn_test.h), leaving the
 * neighbour and route modules out.
 *
 *   LD_LIBRARY_PATH=emu/verbs/.libs:emu/.libs bench/cm_bench [--serial] [--standin]
 *                                                              [--window W] [N...]
 *   (default N: 1000 10000) */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_clock.h"
#include <sys/resource.h>

#include "util/kmem.h"
#include "lib/tests/cma_conn_test.h"
#include "rdmaemu/ctl.h"

enum { S_CREATE, S_ADDR, S_ROUTE, S_CONNECT, S_ESTABLISHED, S_DISCONNECT, S_DESTROY, S_N };
static const char *const step_name[S_N] = { "create id", "resolve addr", "resolve route",
					    "connect", "established", "disconnect", "destroy" };
static int standin;

/* page faults of this process so far: the steps' own are printed (faults=) */
static long faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static double now_us(void)
{
	return (double)bench_clock_ns() / 1e3;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The expected event of a step: its type and the ids it may come for. Every event must be for
 * one of the step's ids and every id gets exactly one (seen[] holds the step's stamp). */
struct want {
	enum rdma_cm_event_type type;
	struct rdma_cm_id **ids; /* indexed by connection; NULL: a CONNECT_REQUEST's new id */
	unsigned *seen;
	unsigned stamp;
	int n;
};

static unsigned stamp;
static int port_conn[65536]; /* A's source port -> connection index + 1 */

static void bad(const struct rdma_cm_event *ev, const char *why)
{
	fprintf(stderr, "event %s for id %p: %s\n", rdma_event_str(ev->event), (void *)ev->id, why);
	exit(1);
}

/* Reads the next event of the step on ch and returns the connection index it is for. */
static int next(struct rdma_event_channel *ch, struct want *w, struct rdma_cm_event **evp)
{
	struct rdma_cm_event *ev;
	uintptr_t i;

	/* timewait of earlier connections ends while later ones run: not a step's event */
	do {
		if (rdma_get_cm_event(ch, &ev))
			die("rdma_get_cm_event");
	} while (ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT && w->type != ev->event &&
		 !rdma_ack_cm_event(ev));
	if (ev->event != w->type) {
		fprintf(stderr, "event %s, expected %s\n", rdma_event_str(ev->event),
			rdma_event_str(w->type));
		exit(1);
	}
	/* a's ids carry their index as context; b's get it from the peer's port (below) */
	i = (uintptr_t)ev->id->context;
	if (w->ids && (i >= (uintptr_t)w->n || w->ids[i] != ev->id))
		bad(ev, "not an id of this step");
	if (!w->ids) {
		/* the peer's (A's) port names the connection: ports are unique while ids live */
		i = (uintptr_t)port_conn[ntohs(rdma_get_dst_port(ev->id))] - 1;
		if (i >= (uintptr_t)w->n)
			bad(ev, "request from an unknown port");
		ev->id->context = (void *)i;
	}
	if (w->seen[i] == w->stamp)
		bad(ev, "second event for this id");
	w->seen[i] = w->stamp;
	if (evp)
		*evp = ev;
	else
		rdma_ack_cm_event(ev);
	return (int)i;
}

static struct want want(enum rdma_cm_event_type type, struct rdma_cm_id **ids, unsigned *seen,
			int n)
{
	return (struct want){ .type = type, .ids = ids, .seen = seen, .stamp = ++stamp, .n = n };
}

/* CM MADs resent (the MAD layer's retries) by both hosts: every message kind that is resent
 * until answered. Not an engine call that changes anything; read between steps. */
static uint64_t cm_retries(void)
{
	static const char *const kind[] = { "REQ", "REP", "DREQ" };
	static const char *const host[] = { "A", "B" };
	uint64_t sum = 0, c[4];

	for (int h = 0; h < 2; h++)
		for (int k = 0; k < 3; k++)
			if (!rdmaemu_ctl_cm_counters(host[h], kind[k], c))
				sum += c[1];
	return sum;
}

static uint64_t vnow_ns(void)
{
	uint64_t ns = 0;

	rdmaemu_ctl_now_ns(&ns);
	return ns;
}

static uint32_t qpn;
static int serial;
/* rdma_connect calls issued before B reads their CONNECT_REQUESTs. rdma_listen(id, 0) gets
 * the kernel's maximum backlog, net.rdma_ucm.max_backlog = 1024 (ucma_listen: a backlog <= 0
 * or above max_backlog is max_backlog; Linux 6.1 drivers/infiniband/core/ucma.c). A REQ that
 * finds the backlog full is dropped without a REJ (cm_destroy_id(-ENOMEM)) and the active
 * side resends it after its CM response timeout: all 10,000 at once still connect, but ~50,000
 * REQ and ~10,000 REP resends later (--window 0). 0: all n at once. */
static int window = 1024;

/* One step for all n connections: cmtime issues the call for every id, then reaps the n events
 * (its event thread), so events queue in bursts; --serial reads each connection's event(s)
 * before the next call. */
static void run(int n, struct rdma_event_channel *ca, struct rdma_event_channel *cb)
{
	struct rdma_cm_id **a = calloc((size_t)n, sizeof *a), **b = calloc((size_t)n, sizeof *b);
	/* one stamp array a channel: the disconnect step reads both in turn */
	unsigned *sa = calloc((size_t)n, sizeof *sa), *sb = calloc((size_t)n, sizeof *sb);
	struct rdma_conn_param cp = { .qp_num = 1, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct sockaddr_in dst;
	struct want wa, wb;
	double t[S_N + 1], book; /* from t[4] on, the times less the bookkeeping before connect */
	long f0, fbook;
	struct emu_kmem_stats km, km0;
	uint64_t retries, vt;
	int k = serial ? 1 : n; /* calls issued before their events are read */
	/* connect: at most the listener's backlog at once (see window) */
	int kc = serial ? 1 : window && window < n ? window : n;

	if (!a || !b || !sa || !sb)
		die("calloc");
	/* the benchmark's own arrays faulted in before the clock starts: calloc of fresh
	 * memory leaves the pages untouched, and their ~80 faults a round at N = 10,000 (~12 us
	 * each here) fell in the first steps */
	memset(a, 0, (size_t)n * sizeof *a);
	memset(b, 0, (size_t)n * sizeof *b);
	memset(sa, 0, (size_t)n * sizeof *sa);
	memset(sb, 0, (size_t)n * sizeof *sb);
	standin_dst(&dst, "192.0.2.66", 7471);
	retries = cm_retries();
	vt = vnow_ns();
	emu_kmem_get_stats(&km0);
	f0 = faults();
	t[0] = now_us();
	for (int i = 0; i < n; i++)
		if (rdma_create_id(ca, &a[i], (void *)(uintptr_t)i, RDMA_PS_TCP))
			die("rdma_create_id");
	t[1] = now_us();
	wa = want(RDMA_CM_EVENT_ADDR_RESOLVED, a, sa, n);
	for (int i = 0; i < n; i += k) {
		for (int j = i; j < i + k; j++)
			if (rdma_resolve_addr(a[j], NULL, (struct sockaddr *)&dst, 2000))
				die("rdma_resolve_addr");
		for (int j = i; j < i + k; j++)
			next(ca, &wa, NULL);
	}
	t[2] = now_us();
	wa = want(RDMA_CM_EVENT_ROUTE_RESOLVED, a, sa, n);
	for (int i = 0; i < n; i += k) {
		for (int j = i; j < i + k; j++)
			if (standin ? standin_route(a[j]) : rdma_resolve_route(a[j], 2000))
				die(standin ? "rdma_set_option" : "rdma_resolve_route");
		for (int j = i; j < i + k; j++)
			next(ca, &wa, NULL);
	}
	t[3] = now_us();
	/* the benchmark's own bookkeeping, outside the timed steps: the map's 256 KiB of
	 * BSS took 64 first-touch page faults (~0.65 ms) inside "resolve route" of a fresh
	 * process's first round */
	fbook = faults();
	memset(port_conn, 0, sizeof port_conn);
	for (int i = 0; i < n; i++)
		port_conn[ntohs(rdma_get_src_port(a[i]))] = i + 1;
	book = now_us() - t[3];
	fbook = faults() - fbook;
	wb = want(RDMA_CM_EVENT_CONNECT_REQUEST, NULL, sb, n);
	wa = want(RDMA_CM_EVENT_CONNECT_RESPONSE, a, sa, n);
	for (int i = 0; i < n; i += kc) {
		int e = i + kc < n ? i + kc : n;

		for (int j = i; j < e; j++) {
			/* distinct QPNs, also across runs: the CM takes a REQ (or REP) with the QPN of
			 * a connection it still remembers for a stale one; B's accept uses its
			 * connection's number too */
			cp.qp_num = qpn + (uint32_t)j + 1;
			if (rdma_connect(a[j], &cp))
				die("rdma_connect");
		}
		for (int j = i; j < e; j++) {
			struct rdma_cm_event *ev;
			int c = next(cb, &wb, &ev);

			b[c] = ev->id;
			rdma_ack_cm_event(ev);
			cp.qp_num = qpn + (uint32_t)c + 1;
			if (rdma_accept(b[c], &cp))
				die("rdma_accept");
		}
		for (int j = i; j < e; j++)
			next(ca, &wa, NULL);
	}
	qpn += (uint32_t)n;
	t[4] = now_us() - book;
	wb = want(RDMA_CM_EVENT_ESTABLISHED, b, sb, n);
	for (int i = 0; i < n; i += k) {
		for (int j = i; j < i + k; j++)
			if (rdma_establish(a[j]))
				die("rdma_establish");
		for (int j = i; j < i + k; j++)
			next(cb, &wb, NULL);
	}
	t[5] = now_us() - book;
	wb = want(RDMA_CM_EVENT_DISCONNECTED, b, sb, n);
	wa = want(RDMA_CM_EVENT_DISCONNECTED, a, sa, n);
	for (int i = 0; i < n; i += k) {
		for (int j = i; j < i + k; j++)
			if (rdma_disconnect(a[j]))
				die("rdma_disconnect");
		for (int j = i; j < i + k; j++)
			next(cb, &wb, NULL);
		for (int j = i; j < i + k; j++)
			if (rdma_disconnect(b[j]))
				die("rdma_disconnect");
		for (int j = i; j < i + k; j++)
			next(ca, &wa, NULL);
	}
	t[6] = now_us() - book;
	for (int i = 0; i < n; i++) {
		rdma_destroy_id(a[i]);
		rdma_destroy_id(b[i]);
	}
	t[7] = now_us() - book;
	f0 = faults() - f0 - fbook;
	/* virtual time the run took and the CM's resends: a burst larger than the listener's
	 * backlog, or waits long enough for CM timers to fire, show here */
	emu_kmem_get_stats(&km);
	printf("cm_bench mode=%s window=%d n=%d virtual_ms=%.3f cm_resends=%llu "
	       "total_us_per_conn=%.2f", serial ? "serial" : "pipelined", kc, n,
	       (double)(vnow_ns() - vt) / 1e6, (unsigned long long)(cm_retries() - retries),
	       (t[S_N] - t[0]) / n);
	for (int s = 0; s < S_N; s++)
		printf(" \"%s\"=%.2f", step_name[s], (t[s + 1] - t[s]) / n);
	/* the emulated kernel's object memory so far (util/kmem.h): 2 MiB chunks; the page
	 * faults taken in the steps (1.4-12 us each on the VMs this project runs on) */
	printf(" kmem_mib=%zu faults=%ld", km.chunks * 2, f0);
	/* the fresh memory the steps faulted in, and its share of total_us_per_conn: the memory's
	 * cost, not the emulator's work (emu_kmem_stats; on this VM ~0.1 ms a 2 MiB huge page,
	 * ~4.6 ms where the host has not backed it yet, as in a fresh process after a few idle
	 * seconds, ~0.6 ms for 2 MiB of 4 KiB pages); huge: 1 while kmem takes huge pages */
	printf(" fresh_mib=%.2f fresh_us_per_conn=%.2f huge=%d\n",
	       (double)(km.fresh_bytes - km0.fresh_bytes) / (1 << 20),
	       (double)(km.fresh_ns - km0.fresh_ns) / 1e3 / n, km.huge);
	free(a);
	free(b);
	free(sa);
	free(sb);
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ca, *cb;
	struct rdma_cm_id *listen;
	struct sockaddr_in any;
	char *fabric;
	const char *src = getenv("RDMAEMU_TOP_SRCDIR");

	/* One thread that only waits inside the library: virtual time moves when it waits for
	 * an event nobody has sent yet (engine rule 1), never by the real-time quiescence rule,
	 * which on a loaded machine jumped the clock by a CM timeout mid-run (resends in the
	 * figures). As run-verbs-bench; the environment may still set it. */
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	if (asprintf(&fabric, "%s/fixtures/rxe-ref2.fabric", src ? src : RDMAEMU_SRCDIR) < 0 ||
	    rdmaemu_ctl_attach(fabric, "A") || rdmaemu_ctl_open_host_devices("B"))
		die("attach");
	/* the system's libibverbs.so.1 (no emulated devices) answers ADDR_ERROR to everything */
	{
		int ndev = 0;
		struct ibv_device **dl = ibv_get_device_list(&ndev);

		if (dl)
			ibv_free_device_list(dl);
		if (ndev < 1) {
			fprintf(stderr, "cm_bench: no RDMA device: put the emulated libibverbs first "
					"on LD_LIBRARY_PATH (emu/verbs/.libs:emu/.libs; bench/README)\n");
			return 2;
		}
	}
	free(fabric);
	for (; argc > 1 && !strncmp(argv[1], "--", 2); argv++, argc--) {
		if (!strcmp(argv[1], "--standin"))
			standin = 1;
		else if (!strcmp(argv[1], "--serial"))
			serial = 1;
		else if (!strcmp(argv[1], "--window") && argc > 2) {
			window = atoi(argv[2]);
			argv++;
			argc--;
		}
		else {
			fprintf(stderr, "usage: cm_bench [--serial] [--standin] [--window W] [N...]\n");
			return 2;
		}
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
