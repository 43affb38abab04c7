/* timeout_probe: the protocol timeouts a two-host rdma_cm program meets, measured in seconds
 * of the program's own clock (docs/reference/timeouts-rxe.md). Two roles on fixtures/rxe-ref2
 * (A 192.0.2.65, B 192.0.2.66; 192.0.2.70 is in their /28 and answers no ARP):
 *   timeout_probe server DOWNCMD   (B) listen on 192.0.2.66:7471, take one connection,
 *       receive 64 bytes, send 64 back, then run DOWNCMD (taking its own link down) and wait
 *       100 s for a CM event;
 *   timeout_probe client           (A) an address resolution nobody answers (20 s), a connect
 *       to a port nobody listens on, a connect to B with 64 bytes each way, 5 s of the
 *       program's own deadline, then a disconnect whose DREQs B can no longer answer.
 * Every line is "t+S what", S the whole seconds (rounded) since the role started, so that
 * outputs compare with that field masked (TIMEOUT_PROBE_MS set: milliseconds, for measuring).
 * Built against the system's rdma-core only:
 *   cc -O2 -o timeout_probe probes/cma/timeout_probe.c -lrdmacm -libverbs
 *   scripts/rxe-vm run --two --copy timeout_probe \
 *       --b-cmd '/opt/rdmaemu/timeout_probe server "ip link set eth0 down"' \
 *       -- /opt/rdmaemu/timeout_probe client
 * Under rdmaemud: emu/daemon/tests/test_daemon_timeouts.sh. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#define MSG 64
#define PORT 7471

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[MSG];
};

static struct timespec t0;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	struct timespec t;
	va_list ap;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t);
	s = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	if (getenv("TIMEOUT_PROBE_MS"))
		printf("t+%.3f ", s);
	else
		printf("t+%.0f ", s);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
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

/* The next CM event within ms, printed with its status; NULL (printed) when none came. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };
	struct rdma_cm_event *ev;
	int n = poll(&p, 1, ms);

	if (n <= 0) {
		say("poll %d ms: %d%s", ms, n, n ? strerror(errno) : " (no event)");
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev)) {
		say("rdma_get_cm_event -1 errno %d", errno);
		return NULL;
	}
	say("event %s status %d", rdma_event_str(ev->event), ev->status);
	return ev;
}

/* Waits for one event and says whether it is the one wanted; acks it. */
static int expect_event(struct rdma_event_channel *ch, int ms, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch, ms);
	int ok;

	if (!ev)
		return 0;
	ok = ev->event == want;
	rdma_ack_cm_event(ev);
	return ok;
}

static void fill(unsigned char *b, unsigned char seed)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (unsigned char)(seed + 7 * i);
}

static int check(const unsigned char *b, unsigned char seed)
{
	for (int i = 0; i < MSG; i++)
		if (b[i] != (unsigned char)(seed + 7 * i))
			return i;
	return -1;
}

/* The PD, CQ, MR and QP of a connection on id's device. */
static int conn_setup(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa;

	c->id = id;
	c->pd = ibv_alloc_pd(id->verbs);
	c->cq = c->pd ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, MSG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!c->mr) {
		say("verbs setup failed errno %d", errno);
		return -1;
	}
	memset(&qa, 0, sizeof qa);
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->pd, &qa)) {
		say("rdma_create_qp -1 errno %d", errno);
		return -1;
	}
	return 0;
}

static void conn_free(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	c->mr = NULL;
	c->cq = NULL;
	c->pd = NULL;
}

static int post(struct conn *c, int send)
{
	struct ibv_sge sge = { (uintptr_t)c->buf, MSG, c->mr->lkey };
	struct ibv_send_wr swr, *sbad;
	struct ibv_recv_wr rwr, *rbad;
	int n;

	if (send) {
		memset(&swr, 0, sizeof swr);
		swr.wr_id = 1;
		swr.sg_list = &sge;
		swr.num_sge = 1;
		swr.opcode = IBV_WR_SEND;
		swr.send_flags = IBV_SEND_SIGNALED;
		n = ibv_post_send(c->id->qp, &swr, &sbad);
	} else {
		memset(&rwr, 0, sizeof rwr);
		rwr.wr_id = 2;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		n = ibv_post_recv(c->id->qp, &rwr, &rbad);
	}
	say("post %s %d", send ? "send" : "recv", n);
	return n;
}

/* One completion within 10 s, printed; its status, or -1 when none came. */
static int completion(struct conn *c)
{
	struct timespec a, b;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (;;) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n)
			break;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (b.tv_sec - a.tv_sec > 10) {
			say("no completion within 10 s");
			return -1;
		}
	}
	if (n < 0) {
		say("ibv_poll_cq %d", n);
		return -1;
	}
	if (wc.wr_id == 1)
		say("completion send status %d (%s)", wc.status, ibv_wc_status_str(wc.status));
	else
		say("completion recv status %d (%s) byte_len %u", wc.status,
		    ibv_wc_status_str(wc.status), wc.byte_len);
	return wc.status;
}

static void bytes(const struct conn *c, unsigned char seed)
{
	int bad = check(c->buf, seed);

	if (bad < 0)
		say("received bytes: the peer's pattern");
	else
		say("received bytes: wrong at %d", bad);
}

static int server(const char *downcmd)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct conn c = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lis;
	struct sockaddr_in a = sin4("192.0.2.66", PORT);
	int n;

	rdma_create_id(ch, &lis, NULL, RDMA_PS_TCP);
	n = rdma_bind_addr(lis, (struct sockaddr *)&a);
	say("bind 192.0.2.66:%d %d", PORT, n);
	say("listen %d", rdma_listen(lis, 4));
	say("listening");
	ev = next_event(ch, 300000);
	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	n = conn_setup(&c, ev->id);
	rdma_ack_cm_event(ev);
	if (n || post(&c, 0))
		return 1;
	say("accept %d", rdma_accept(c.id, &cp));
	if (!expect_event(ch, 10000, RDMA_CM_EVENT_ESTABLISHED))
		return 1;
	if (completion(&c))
		return 1;
	bytes(&c, 'A');
	fill(c.buf, 'B');
	if (post(&c, 1) || completion(&c))
		return 1;
	n = system(downcmd);
	say("system(DOWNCMD) %d", n);
	ev = next_event(ch, 100000);
	if (ev)
		rdma_ack_cm_event(ev);
	return 0;
}

/* resolve_addr, resolve_route, a QP and connect towards addr:port; the event the connect
 * ends with, acked, in *got. */
static int connect_to(struct rdma_event_channel *ch, struct conn *c, const char *addr, int port,
		      enum rdma_cm_event_type *got)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct sockaddr_in a = sin4(addr, port);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	rdma_create_id(ch, &id, NULL, RDMA_PS_TCP);
	c->id = id;
	say("resolve_addr %s %d", addr, rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000));
	if (!expect_event(ch, 5000, RDMA_CM_EVENT_ADDR_RESOLVED))
		return -1;
	say("resolve_route %d", rdma_resolve_route(id, 2000));
	if (!expect_event(ch, 5000, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	if (conn_setup(c, id) || post(c, 0))
		return -1;
	say("connect to port %d %d", port, rdma_connect(id, &cp));
	ev = next_event(ch, 200000);
	if (!ev)
		return -1;
	*got = ev->event;
	rdma_ack_cm_event(ev);
	return 0;
}

static int client(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in a = sin4("192.0.2.70", PORT);
	struct pollfd p = { ch->fd, POLLIN, 0 };
	enum rdma_cm_event_type got;
	struct rdma_cm_event *ev;
	struct conn c = { 0 };
	struct rdma_cm_id *id;
	int n;

	/* 1: nobody answers the ARP */
	rdma_create_id(ch, &id, NULL, RDMA_PS_TCP);
	say("resolve_addr 192.0.2.70 timeout 20000 ms %d",
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 20000));
	expect_event(ch, 60000, RDMA_CM_EVENT_ADDR_ERROR);
	say("destroy_id %d", rdma_destroy_id(id));
	/* 2: B's CM answers, nobody listens on the port */
	if (connect_to(ch, &c, "192.0.2.66", PORT + 1, &got))
		return 1;
	conn_free(&c);
	say("destroy_id %d", rdma_destroy_id(c.id));
	/* 3: the connection, 64 bytes each way */
	fill(c.buf, 'A');
	if (connect_to(ch, &c, "192.0.2.66", PORT, &got) || got != RDMA_CM_EVENT_ESTABLISHED)
		return 1;
	if (post(&c, 1))
		return 1;
	for (int i = 0; i < 2; i++)
		if (completion(&c))
			return 1;
	bytes(&c, 'B');
	/* 4: the program's own deadline: nothing may come within it */
	n = poll(&p, 1, 5000);
	say("poll on the CM channel 5000 ms: %d", n);
	/* 5: B's link is down: the DREQs go unanswered */
	say("disconnect %d", rdma_disconnect(c.id));
	ev = next_event(ch, 300000);
	if (ev)
		rdma_ack_cm_event(ev); /* rdma_destroy_id waits for every event's ack */
	/* 6 */
	conn_free(&c);
	say("destroy_id %d", rdma_destroy_id(c.id));
	rdma_destroy_event_channel(ch);
	say("done");
	return 0;
}

int main(int argc, char **argv)
{
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "client"))
		return client();
	fprintf(stderr, "usage: timeout_probe server DOWNCMD | timeout_probe client\n");
	return 2;
}
