/* fault_xfer: a transfer whose every byte is checked, for the fault matrix (faults/check-faults.sh,
 * docs/faults.md). Built against the system's rdma-core only; run by `rdmaemu run`.
 *   fault_xfer server PORT rc|ud N SIZE [AFTER DOWNCMD DOWN_MS UPCMD]
 *   fault_xfer client ADDR PORT rc|ud N SIZE
 * RC: the client sends N messages of SIZE bytes (up to 8 in flight); each carries its sequence
 * number and a checksum of its payload, which is a function of the sequence number. The server
 * checks that they arrive in order, each once, every byte as sent. With AFTER..., the server
 * runs DOWNCMD after AFTER messages, sleeps DOWN_MS, runs UPCMD (its link down and up).
 * UD: the client sends N datagrams, then an end marker (eight times); the server takes what
 * comes until the marker or 3 s of silence and checks each: no corrupt byte, no sequence
 * number twice. Output lines (exact, the driver compares them):
 *   server: rc: N messages in order, every byte checked
 *   server: ud: R of N received, 0 corrupt, 0 duplicate
 *   SIDE: error: <ibv_wc_status_str> after K messages     (exit 3)
 *   SIDE: event: <rdma_event_str> status S after K messages (exit 4)
 *   server: rc: no message for 120 s after K messages        (exit 6) */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#define WINDOW 8
#define RECVS 64
#define GRH 40

struct hdr {
	uint32_t seq, sum, end;
};

struct ctx {
	const char *side;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t slot;
	int ud;
	unsigned done;
	struct rdma_cm_event *ev; /* read, not yet reported: the CQ is polled once more first */
	uint32_t ud_qpn;	  /* the UD server's QP, which answers every SIDR request */
};

/* FAULT_XFER_STOP=POINT: at that point the process says "SIDE: stopped at POINT" and stops
 * itself (SIGSTOP), for the driver to kill it there: "connect" (the client right after
 * rdma_connect, the server right after reading the CONNECT_REQUEST) or "disconnect" (the
 * client right after rdma_disconnect, the server right after the last message); or to let
 * it go on later: "received" (the server right after its first message arrived). */
static void stop_at(const char *side, const char *point)
{
	const char *want = getenv("FAULT_XFER_STOP");

	if (!want || strcmp(want, point))
		return;
	printf("%s: stopped at %s\n", side, point);
	fflush(stdout);
	raise(SIGSTOP);
}

static void die(const char *what)
{
	fprintf(stderr, "fault_xfer: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t fill(uint8_t *p, size_t n, uint32_t seq)
{
	uint32_t sum = 2166136261u;

	for (size_t i = 0; i < n; i++) {
		p[i] = (uint8_t)(seq * 131 + i * 7);
		sum = (sum ^ p[i]) * 16777619u;
	}
	return sum;
}

static uint32_t sum_of(const uint8_t *p, size_t n)
{
	uint32_t sum = 2166136261u;

	for (size_t i = 0; i < n; i++)
		sum = (sum ^ p[i]) * 16777619u;
	return sum;
}

static struct rdma_cm_event *event(struct ctx *c, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *e = c->ev;

	c->ev = NULL;
	if (!e && rdma_get_cm_event(c->ch, &e))
		die("rdma_get_cm_event");
	if (e->event != want) {
		printf("%s: event: %s status %d after %u messages\n", c->side,
		       rdma_event_str(e->event), e->status, c->done);
		exit(4);
	}
	return e;
}

static void setup(struct ctx *c, struct rdma_cm_id *id, size_t size)
{
	struct ibv_qp_init_attr qa = { 0 };

	c->id = id;
	c->slot = sizeof(struct hdr) + size + GRH;
	c->pd = ibv_alloc_pd(id->verbs);
	c->cc = c->pd ? ibv_create_comp_channel(id->verbs) : NULL;
	c->cq = c->cc ? ibv_create_cq(id->verbs, 64, NULL, c->cc, 0) : NULL;
	c->buf = calloc(RECVS + WINDOW, c->slot);
	if (!c->cq || !c->buf)
		die("resources");
	c->mr = ibv_reg_mr(c->pd, c->buf, (RECVS + WINDOW) * c->slot, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		die("ibv_reg_mr");
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = c->ud ? IBV_QPT_UD : IBV_QPT_RC;
	qa.cap.max_send_wr = WINDOW + 8;
	qa.cap.max_recv_wr = RECVS;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->pd, &qa))
		die("rdma_create_qp");
}

static void post_recv(struct ctx *c, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)c->buf + i * c->slot, (uint32_t)c->slot, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

/* A CM event while completions are awaited (the peer gone, the device removed): the line,
 * exit 4, once a poll of the CQ after the event was read finds it empty. The emulator
 * delivers the frames before the event into the engine when the event is read (the frames
 * and the rdma_cm events come on different channels), so the completions of the messages
 * the peer saw acknowledged before it disconnected may appear only then. */
static void cm_check(struct ctx *c)
{
	struct pollfd p = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *e = c->ev;

	if (e) {
		printf("%s: event: %s status %d after %u messages\n", c->side,
		       rdma_event_str(e->event), e->status, c->done);
		exit(4);
	}
	if (poll(&p, 1, 0) != 1 || rdma_get_cm_event(c->ch, &e))
		return;
	if (c->ud_qpn && e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* the client resent its SIDR_REQ (the reply was lost) after the server's CM had
		 * answered it: a CM treats that as a new request (Linux's cm_sidr_req_handler
		 * drops a duplicate only while the first is unanswered), so it is answered again */
		struct rdma_conn_param cp = { .qp_num = c->ud_qpn };

		if (rdma_accept(e->id, &cp))
			die("rdma_accept");
		rdma_ack_cm_event(e);
		return;
	}
	c->ev = e;
}

/* One completion; -1 after timeout_ms of the program's own clock with none. An empty CQ is
 * waited for as an RDMA program waits: notification armed, then poll(2) on the completion
 * channel and the CM channel with what is left of the deadline. The kernel wakes the process
 * at a completion, a CM event or the deadline, whichever comes first; on the virtual clock the
 * wait is a deadline of the program's own, so the clock moves straight to the next protocol
 * timer (an ACK timeout of 2.1 s) or to the deadline (a receiver whose link is down). */
static int poll_wc(struct ctx *c, struct ibv_wc *wc, int timeout_ms)
{
	struct timespec t0, t;
	bool armed = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p[2] = { { .fd = c->cc->fd, .events = POLLIN },
				       { .fd = c->ch->fd, .events = POLLIN } };
		int n = ibv_poll_cq(c->cq, 1, wc), left = -1;

		if (n < 0)
			die("ibv_poll_cq");
		if (n) {
			if (wc->status != IBV_WC_SUCCESS) {
				printf("%s: error: %s after %u messages\n", c->side,
				       ibv_wc_status_str(wc->status), c->done);
				exit(3);
			}
			return 0;
		}
		cm_check(c);
		if (c->ev)
			continue; /* the CQ polled once more, then the event reported */
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout_ms >= 0) {
			left = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
						  (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0)
				return -1;
		}
		if (!armed) {
			/* armed, then polled once more: a completion between the empty poll
			 * and the arming raises no event */
			if (ibv_req_notify_cq(c->cq, 0))
				die("ibv_req_notify_cq");
			armed = true;
			continue;
		}
		if (poll(p, 2, left) < 0 && errno != EINTR)
			die("poll");
		if (p[0].revents & POLLIN) {
			struct ibv_cq *cq;
			void *ctx;

			if (ibv_get_cq_event(c->cc, &cq, &ctx))
				die("ibv_get_cq_event");
			ibv_ack_cq_events(cq, 1);
			armed = false;
		}
	}
}

static int server(int argc, char **argv)
{
	struct ctx c = { .side = "server" };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	unsigned n = (unsigned)atoi(argv[4]), after = argc == 10 ? (unsigned)atoi(argv[6]) : 0;
	size_t size = (size_t)atol(argv[5]);
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_cm_id *l;
	struct rdma_cm_event *e;
	unsigned char seen[65536] = { 0 };
	unsigned bad = 0, dups = 0;

	c.ud = !strcmp(argv[3], "ud");
	c.ch = rdma_create_event_channel();
	if (!c.ch || rdma_create_id(c.ch, &l, NULL, c.ud ? RDMA_PS_UDP : RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&a) || rdma_listen(l, 1))
		die("listen");
	printf("listening\n");
	fflush(stdout);
	e = event(&c, RDMA_CM_EVENT_CONNECT_REQUEST);
	stop_at("server", "connect");
	setup(&c, e->id, size);
	rdma_ack_cm_event(e);
	for (unsigned i = 0; i < RECVS; i++)
		post_recv(&c, i);
	if (c.ud)
		cp.qp_num = c.ud_qpn = c.id->qp->qp_num;
	if (rdma_accept(c.id, &cp))
		die("rdma_accept");
	if (!c.ud)
		rdma_ack_cm_event(event(&c, RDMA_CM_EVENT_ESTABLISHED));
	for (;;) {
		struct ibv_wc wc;
		const uint8_t *m;
		struct hdr h;

		if (!c.ud && c.done == n)
			break;
		/* UD: 3 s of silence ends the transfer, once it has begun; before the first
		 * datagram, the client may still be resending its SIDR_REQ (every 4.1 s) */
		if (poll_wc(&c, &wc, c.ud ? c.done || bad ? 3000 : 30000 : 120000)) {
			if (c.ud)
				break; /* silence: the end */
			/* a receiver learns of a dead peer only from its DREQ, which a down link
			 * loses: its own deadline ends the wait */
			printf("server: rc: no message for 120 s after %u messages\n", c.done);
			return 6;
		}
		m = c.buf + wc.wr_id * c.slot + (c.ud ? GRH : 0);
		memcpy(&h, m, sizeof(h));
		if (c.ud && h.end)
			break;
		if (c.done + bad == 0)
			stop_at("server", "received");
		if (sum_of(m + sizeof(h), size) != h.sum ||
		    wc.byte_len != sizeof(h) + size + (c.ud ? GRH : 0)) {
			bad++;
		} else if (c.ud) {
			if (h.seq < sizeof(seen) && seen[h.seq]++)
				dups++;
			c.done++;
		} else if (h.seq != c.done) {
			printf("server: rc: message %u arrived as number %u\n", h.seq, c.done);
			return 5;
		} else {
			c.done++;
		}
		if (!c.ud && bad) {
			printf("server: rc: message %u corrupt\n", c.done);
			return 5;
		}
		post_recv(&c, (unsigned)wc.wr_id);
		if (after && c.done == after) {
			if (system(argv[7]) || (usleep((useconds_t)atoi(argv[8]) * 1000), 0) ||
			    system(argv[9]))
				die("the link commands");
		}
	}
	if (c.ud)
		printf("server: ud: %u of %u received, %u corrupt, %u duplicate\n", c.done, n, bad,
		       dups);
	else
		printf("server: rc: %u messages in order, every byte checked\n", c.done);
	fflush(stdout);
	stop_at("server", "disconnect");
	if (!c.ud)
		rdma_ack_cm_event(event(&c, RDMA_CM_EVENT_DISCONNECTED));
	return 0;
}

static int client(char **argv)
{
	struct ctx c = { .side = "client" };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])) };
	unsigned n = (unsigned)atoi(argv[5]), sent = 0, inflight = 0;
	size_t size = (size_t)atol(argv[6]);
	/* retry_count 6: rxe retries for ever at 7 */
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 6, .rnr_retry_count = 7 };
	struct rdma_cm_event *e;
	struct ibv_ah *ah = NULL;
	uint32_t rqpn = 0, rqkey = 0;

	c.ud = !strcmp(argv[4], "ud");
	inet_pton(AF_INET, argv[2], &a.sin_addr);
	c.ch = rdma_create_event_channel();
	if (!c.ch || rdma_create_id(c.ch, &c.id, NULL, c.ud ? RDMA_PS_UDP : RDMA_PS_TCP) ||
	    rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&a, 2000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(event(&c, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c.id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(event(&c, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup(&c, c.id, size);
	if (rdma_connect(c.id, &cp))
		die("rdma_connect");
	stop_at("client", "connect");
	e = event(&c, RDMA_CM_EVENT_ESTABLISHED);
	if (c.ud) {
		ah = ibv_create_ah(c.pd, &e->param.ud.ah_attr);
		rqpn = e->param.ud.qp_num;
		rqkey = e->param.ud.qkey;
		if (!ah)
			die("ibv_create_ah");
	}
	rdma_ack_cm_event(e);
	while (c.done < n + (c.ud ? 8 : 0)) {
		struct ibv_wc wc;

		if (sent < n + (c.ud ? 8 : 0) && inflight < WINDOW) {
			unsigned s = sent % WINDOW;
			uint8_t *m = c.buf + (RECVS + s) * c.slot;
			struct hdr h = { .seq = sent, .end = sent >= n };
			struct ibv_sge sge = { (uintptr_t)m, (uint32_t)(sizeof(h) + size),
					       c.mr->lkey };
			struct ibv_send_wr wr = { .wr_id = sent, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;

			h.sum = fill(m + sizeof(h), size, sent);
			memcpy(m, &h, sizeof(h));
			if (c.ud) {
				wr.wr.ud.ah = ah;
				wr.wr.ud.remote_qpn = rqpn;
				wr.wr.ud.remote_qkey = rqkey;
			}
			if (ibv_post_send(c.id->qp, &wr, &bad))
				die("ibv_post_send");
			/* UD has no flow control: 100 us apart, the server's receives keep up */
			if (c.ud)
				usleep(100);
			sent++;
			inflight++;
			continue;
		}
		poll_wc(&c, &wc, -1);
		inflight--;
		c.done++;
	}
	if (!c.ud) {
		rdma_disconnect(c.id);
		stop_at("client", "disconnect");
		rdma_ack_cm_event(event(&c, RDMA_CM_EVENT_DISCONNECTED));
	}
	printf("client: %u messages sent\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((argc == 6 || argc == 10) && !strcmp(argv[1], "server"))
		return server(argc, argv);
	if (argc == 7 && !strcmp(argv[1], "client"))
		return client(argv);
	fprintf(stderr, "usage: fault_xfer server PORT rc|ud N SIZE [AFTER DOWNCMD DOWN_MS UPCMD]\n"
			"       fault_xfer client ADDR PORT rc|ud N SIZE\n");
	return 2;
}
