/* Protocol timeouts across two processes on one virtual clock (test_daemon_vtime.sh, under
 * `rdmaemu run --virtual-time` on fixtures/rxe-ref2.fabric).
 *
 *   vtime_probe -s READY   host B: a listener on port 7471; READY is created once it listens.
 *                          It takes one connection, answers a 64-byte message with one of its
 *                          own, then waits 200 s in poll() on its channel.
 *   vtime_probe -c READY   host A, once READY exists: rdma_resolve_addr to a silent address
 *                          (20 s), a connect to a port nobody listens on, a connect to B and
 *                          the exchange, a 5 s poll() on the channel, then rdma_disconnect
 *                          with every DREQ of host A dropped (rdmaemu_ctl_cm_fault).
 *
 * Each step prints one line: the event, its status and the program's clock across the step
 * (clock_gettime(CLOCK_MONOTONIC), which the emulator puts on the virtual clock).
 * VTIME_PROBE_QUICK set: the client skips the silent address (for a run in real time). */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#define PORT_B 7471
#define PORT_NONE 7999
#define MSG 64

static struct rdma_event_channel *ch;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char buf[2 * MSG];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *who, const char *what, int status, uint64_t t0)
{
	uint64_t d = now_ns() - t0;

	printf("%s: %s %d %llu.%09llu s\n", who, what, status, (unsigned long long)(d / 1000000000),
	       (unsigned long long)(d % 1000000000));
	fflush(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "vtime_probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The next event: its type and status; the id it came on (for CONNECT_REQUEST) in *id. */
static enum rdma_cm_event_type next_event(int *status, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type t;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	t = ev->event;
	*status = ev->status;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	return t;
}

static void sockaddr_of(struct sockaddr_in *sa, const char *ip, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &sa->sin_addr);
}

static void qp_for(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	if (!pd) {
		pd = ibv_alloc_pd(id->verbs);
		cq = pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
		mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!mr)
			die("pd/cq/mr");
		qa.send_cq = qa.recv_cq = cq;
	}
	if (rdma_create_qp(id, pd, &qa))
		die("rdma_create_qp");
}

static void post_recv(struct rdma_cm_id *id)
{
	struct ibv_sge sge = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(id->qp, &wr, &bad))
		die("ibv_post_recv");
}

static void post_send(struct rdma_cm_id *id, char fill)
{
	struct ibv_sge sge = { (uintptr_t)buf + MSG, MSG, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memset(buf + MSG, fill, MSG);
	if (ibv_post_send(id->qp, &wr, &bad))
		die("ibv_post_send");
}

/* Both completions of the exchange (a send and a receive), each successful. */
static void two_completions(const char *who, uint64_t t0)
{
	struct ibv_wc wc;
	int got = 0;

	while (got < 2) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (!n)
			continue;
		got++;
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "vtime_probe: wr %llu: %s\n", (unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.wr_id == 1)
			say(who, "recv", (int)wc.byte_len, t0);
	}
}

/* poll() on the channel's fd: what it returns and how long it took */
static void channel_poll(const char *who, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	uint64_t t0 = now_ns();
	int r = poll(&p, 1, ms);

	say(who, "poll", r, t0);
}

static void server(void)
{
	struct rdma_cm_id *lid;
	struct sockaddr_in sa;

	sockaddr_of(&sa, "192.0.2.66", PORT_B);
	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) || rdma_bind_addr(lid, (void *)&sa) ||
	    rdma_listen(lid, 4))
		die("listen");
}

static int server_run(void)
{
	struct rdma_cm_id *id;
	const char *ev;
	uint64_t t0 = now_ns();
	int st;

	if (next_event(&st, &id) != RDMA_CM_EVENT_CONNECT_REQUEST)
		die("not a connect request");
	say("B", "CONNECT_REQUEST", st, t0);
	qp_for(id);
	post_recv(id);
	if (rdma_accept(id, &(struct rdma_conn_param){ .responder_resources = 1,
							.initiator_depth = 1 }))
		die("rdma_accept");
	ev = next_event(&st, NULL) == RDMA_CM_EVENT_ESTABLISHED ? "ESTABLISHED" : "?";
	say("B", ev, st, t0);
	/* the answer goes once A's message is in */
	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0 || (n && wc.status != IBV_WC_SUCCESS))
			die("ibv_poll_cq");
		if (n && wc.wr_id == 1) {
			say("B", "recv", (int)wc.byte_len, t0);
			break;
		}
	}
	post_send(id, 'b');
	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0 || (n && wc.status != IBV_WC_SUCCESS))
			die("ibv_poll_cq");
		if (n)
			break;
	}
	say("B", "sent", MSG, t0);
	channel_poll("B", 200000);
	return 0;
}

/* resolve address and route of a fresh id towards ip:port; the events' verdicts */
static struct rdma_cm_id *resolved(const char *ip, int port, int ms, int *st, const char **ev)
{
	struct rdma_cm_id *id;
	struct sockaddr_in sa;
	enum rdma_cm_event_type t;

	sockaddr_of(&sa, ip, port);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (void *)&sa, ms))
		die("rdma_resolve_addr");
	t = next_event(st, NULL);
	if (t != RDMA_CM_EVENT_ADDR_RESOLVED) {
		*ev = rdma_event_str(t);
		return id;
	}
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	*ev = rdma_event_str(next_event(st, NULL));
	return id;
}

static int client(void)
{
	int (*cm_fault)(const char *, const char *, const char *, const void *, void *);
	struct { unsigned dn, un, ln; double drop, dup, delay; uint64_t dns; } drop = { 0 };
	struct rdma_cm_id *id;
	const char *ev;
	uint64_t t0;
	int st;

	if (!getenv("VTIME_PROBE_QUICK")) {
		t0 = now_ns();
		id = resolved("192.0.2.70", PORT_B, 20000, &st, &ev);
		say("A", ev, st, t0);
		rdma_destroy_id(id);
	}

	t0 = now_ns();
	id = resolved("192.0.2.66", PORT_NONE, 2000, &st, &ev);
	qp_for(id);
	if (rdma_connect(id, &(struct rdma_conn_param){ .responder_resources = 1,
							 .initiator_depth = 1, .retry_count = 7 }))
		die("rdma_connect");
	ev = rdma_event_str(next_event(&st, NULL));
	say("A", ev, st, t0);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);

	t0 = now_ns();
	id = resolved("192.0.2.66", PORT_B, 2000, &st, &ev);
	qp_for(id);
	post_recv(id);
	if (rdma_connect(id, &(struct rdma_conn_param){ .responder_resources = 1,
							 .initiator_depth = 1, .retry_count = 7 }))
		die("rdma_connect");
	ev = rdma_event_str(next_event(&st, NULL));
	say("A", ev, st, t0);
	post_send(id, 'a');
	two_completions("A", t0);

	channel_poll("A", 5000);

	/* host A's CM loses every DREQ it sends: the disconnect runs out of retries */
	cm_fault = (int (*)(const char *, const char *, const char *, const void *, void *))
		dlsym(RTLD_DEFAULT, "rdmaemu_ctl_cm_fault");
	drop.drop = 1.0;
	if (cm_fault && cm_fault(NULL, NULL, "DREQ", &drop, NULL))
		die("rdmaemu_ctl_cm_fault");
	t0 = now_ns();
	if (rdma_disconnect(id))
		die("rdma_disconnect");
	ev = rdma_event_str(next_event(&st, NULL));
	say("A", ev, st, t0);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 3 || (strcmp(argv[1], "-s") && strcmp(argv[1], "-c"))) {
		fprintf(stderr, "usage: vtime_probe -s READY | -c READY\n");
		return 2;
	}
	if (!strcmp(argv[1], "-c")) {
		/* before anything of the fabric: the server listens first */
		while (access(argv[2], F_OK))
			usleep(1000);
	}
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (!strcmp(argv[1], "-c"))
		return client();
	server();
	f = fopen(argv[2], "w");
	if (!f)
		die(argv[2]);
	fclose(f);
	return server_run();
}
