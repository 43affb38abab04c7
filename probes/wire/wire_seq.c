/* wire_seq: a fixed sequence of RoCEv2 exchanges between two hosts, one operation in flight
 * at a time, so that the frames on the link come in one order on any stack: the capture of
 * kernel rxe (scripts/rxe-vm run --two --pcap) and the emulator's (rdmaemud --pcap) are then
 * compared field by field (probes/wire/wire-diff.sh, docs/reference/wire-rxe.md).
 *   wire_seq server [loss] [-w]
 *                          listen (RC on 7471, UD on 7472), print "listening", take the RC
 *                          connection, then the UD one; exits 0 when both are done
 *   wire_seq client ADDR [loss] [-w]
 *                          -w on both sides: the server also listens on TCP 7474 and the
 *                          client first waits until it accepts there (for hosts with no other
 *                          way to know the server is up: two VMs)
 * The client, over RC: SEND 64, SEND 4000 (four packets at MTU 1024), SEND with immediate,
 * RDMA WRITE 100 and 3000, WRITE with immediate, RDMA READ 2500, compare-and-swap,
 * fetch-and-add, then a SEND the server has no receive for: the server advertised an RNR timer
 * of 491.52 ms and posts the receive 300 ms later, so exactly one RNR NAK comes before the
 * retry succeeds; then a disconnect (DREQ, DREP). Then a connect to 7473, where nobody
 * listens (REJ), and over UD a SIDR exchange and one 48-byte UD SEND.
 * With "loss" on both sides, the loss sequence instead (client_loss). Every payload byte is a
 * function of its offset and the operation, so the bytes compare too.
 * Built against the system's rdma-core only:
 *   cc -O2 -o wire_seq probes/wire/wire_seq.c -lrdmacm -libverbs */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

#define PORT_RC 7471
#define PORT_UD 7472
#define PORT_NONE 7473
#define PORT_SYNC 7474
#define BUF 8192
#define RNR_TIMER_491MS 31
#define RNR_POST_DELAY_MS 300

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* What the server tells the client in its REP: where its buffer is. */
struct remote {
	uint64_t addr;
	uint32_t rkey;
} __attribute__((packed));

static void die(const char *what)
{
	fprintf(stderr, "wire_seq: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static void fill(uint8_t *p, size_t n, uint8_t op)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(op * 16 + i);
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(ch, &e))
		die("rdma_get_cm_event");
	if (e->event != t) {
		fprintf(stderr, "wire_seq: got %s (status %d), wanted %s\n",
			rdma_event_str(e->event), e->status, rdma_event_str(t));
		exit(1);
	}
	return e;
}

static void resources(struct side *s, struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = { 0 };

	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd ? ibv_create_cq(id->verbs, 32, NULL, NULL, 0) : NULL;
	s->buf = aligned_alloc(4096, BUF);
	if (!s->cq || !s->buf)
		die("pd/cq/buffer");
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		die("ibv_reg_mr");
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = type;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, s->pd, &qa))
		die("rdma_create_qp");
}

static void post_recv(struct side *s, size_t off, size_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, (uint32_t)len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

static struct ibv_wc wait_wc(struct side *s)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		;
	if (n < 0)
		die("ibv_poll_cq");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "wire_seq: completion %s (opcode %d)\n",
			ibv_wc_status_str(wc.status), wc.opcode);
		exit(1);
	}
	return wc;
}

/* The address vector rdma_cm gave the RC QP: what a RoCE v2 stack may derive its UDP source
 * port from. */
static void print_av(const char *who, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_AV | IBV_QP_DEST_QPN, &ia))
		die("ibv_query_qp");
	printf("%s: RC QP %#x to %#x, flow label %#x, hop limit %u\n", who, qp->qp_num,
	       a.dest_qp_num, a.ah_attr.grh.flow_label, a.ah_attr.grh.hop_limit);
}

/* ---- server ---- */

static int sync_listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT_SYNC) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The loss sequence's server: receives for the three SENDs, then the disconnect. */
static void server_loss(struct side *s, struct rdma_cm_event *req)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };

	s->id = req->id;
	resources(s, s->id, IBV_QPT_RC);
	rdma_ack_cm_event(req);
	post_recv(s, 0, 4096);
	post_recv(s, 4096, 64);
	post_recv(s, 4160, 64);
	if (rdma_accept(s->id, &cp))
		die("rdma_accept");
	rdma_ack_cm_event(expect(s->ch, RDMA_CM_EVENT_ESTABLISHED));
	for (int i = 0; i < 3; i++) {
		struct ibv_wc wc = wait_wc(s);

		printf("server: receive of %u bytes\n", wc.byte_len);
	}
	rdma_ack_cm_event(expect(s->ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(s->id);
	printf("server: disconnected\n");
}

static void server_rc(struct side *s, struct rdma_cm_event *req)
{
	struct remote r;
	struct rdma_conn_param cp = { .private_data = &r, .private_data_len = sizeof(r),
				      .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct ibv_qp_attr qa = { .min_rnr_timer = RNR_TIMER_491MS };

	s->id = req->id;
	resources(s, s->id, IBV_QPT_RC);
	rdma_ack_cm_event(req);
	/* receives for SEND 64, SEND 4000, SEND with immediate, WRITE with immediate */
	post_recv(s, 0, 64);
	post_recv(s, 64, 4096);
	post_recv(s, 4160, 64);
	post_recv(s, 4224, 64);
	r.addr = (uintptr_t)s->buf + 4096 + 256;
	r.rkey = s->mr->rkey;
	if (rdma_accept(s->id, &cp))
		die("rdma_accept");
	rdma_ack_cm_event(expect(s->ch, RDMA_CM_EVENT_ESTABLISHED));
	if (ibv_modify_qp(s->id->qp, &qa, IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp min_rnr_timer");
	print_av("server", s->id->qp);
	for (int i = 0; i < 4; i++)
		wait_wc(s);
	printf("server: 4 receives done\n");
	/* the client's next SEND finds no receive: RNR NAK, retried after 491.52 ms */
	sleep_ms(RNR_POST_DELAY_MS);
	post_recv(s, 4288, 64);
	wait_wc(s);
	printf("server: the RNR-retried SEND arrived\n");
	rdma_ack_cm_event(expect(s->ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(s->id);
	printf("server: disconnected\n");
}

static void server_ud(struct side *s, struct rdma_cm_event *req)
{
	struct rdma_conn_param cp = { .qp_num = 0 };
	struct ibv_wc wc;

	s->id = req->id;
	resources(s, s->id, IBV_QPT_UD);
	rdma_ack_cm_event(req);
	post_recv(s, 0, 40 + 48);
	cp.qp_num = s->id->qp->qp_num;
	if (rdma_accept(s->id, &cp))
		die("rdma_accept (UD)");
	wc = wait_wc(s);
	printf("server: UD receive of %u bytes\n", wc.byte_len - 40);
}

static int server(int sync, int loss)
{
	struct side rc = { 0 }, ud = { 0 };
	struct rdma_cm_id *lrc, *lud;
	struct sockaddr_in a = { .sin_family = AF_INET };
	int sfd;

	/* two channels: the RC connection's late events (TIMEWAIT_EXIT) stay off the UD one */
	rc.ch = rdma_create_event_channel();
	ud.ch = rdma_create_event_channel();
	if (!rc.ch || !ud.ch || rdma_create_id(rc.ch, &lrc, NULL, RDMA_PS_TCP) ||
	    rdma_create_id(ud.ch, &lud, NULL, RDMA_PS_UDP))
		die("rdma_create_id");
	a.sin_port = htons(PORT_RC);
	if (rdma_bind_addr(lrc, (struct sockaddr *)&a) || rdma_listen(lrc, 1))
		die("listen RC");
	a.sin_port = htons(PORT_UD);
	if (rdma_bind_addr(lud, (struct sockaddr *)&a) || rdma_listen(lud, 1))
		die("listen UD");
	sfd = sync ? sync_listener() : -1;
	printf("listening\n");
	fflush(stdout);
	if (loss) {
		server_loss(&rc, expect(rc.ch, RDMA_CM_EVENT_CONNECT_REQUEST));
	} else {
		server_rc(&rc, expect(rc.ch, RDMA_CM_EVENT_CONNECT_REQUEST));
		server_ud(&ud, expect(ud.ch, RDMA_CM_EVENT_CONNECT_REQUEST));
	}
	if (sfd >= 0)
		close(sfd);
	return 0;
}

/* ---- client ---- */

static void wait_server(const char *addr)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT_SYNC) };

	inet_pton(AF_INET, addr, &a.sin_addr);
	for (int i = 0; i < 1200; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			close(fd);
			return;
		}
		if (fd >= 0)
			close(fd);
		sleep_ms(100);
	}
	fprintf(stderr, "wire_seq: %s never listened on %d\n", addr, PORT_SYNC);
	exit(1);
}

static struct rdma_cm_id *resolve(struct rdma_event_channel *ch, const char *addr, int port,
				  enum rdma_port_space ps)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct rdma_cm_id *id;

	inet_pton(AF_INET, addr, &a.sin_addr);
	if (rdma_create_id(ch, &id, NULL, ps) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	return id;
}

static void send_wr(struct side *s, enum ibv_wr_opcode op, size_t off, size_t len,
		    const struct remote *r, size_t roff)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, (uint32_t)len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(0x11223344u + (uint32_t)op);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = r->addr + roff;
		wr.wr.atomic.rkey = r->rkey;
		wr.wr.atomic.compare_add = op == IBV_WR_ATOMIC_CMP_AND_SWP ? 0 : 5;
		wr.wr.atomic.swap = 0x1111;
	} else if (r) {
		wr.wr.rdma.remote_addr = r->addr + roff;
		wr.wr.rdma.rkey = r->rkey;
	}
	if (op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    op != IBV_WR_ATOMIC_FETCH_AND_ADD)
		fill(s->buf + off, len, (uint8_t)(op + 1));
	if (ibv_post_send(s->id->qp, &wr, &bad))
		die("ibv_post_send");
	wait_wc(s);
}

static void client_rc(const char *addr)
{
	struct side s = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *e;
	struct remote r;

	s.ch = rdma_create_event_channel();
	s.id = resolve(s.ch, addr, PORT_RC, RDMA_PS_TCP);
	resources(&s, s.id, IBV_QPT_RC);
	if (rdma_connect(s.id, &cp))
		die("rdma_connect");
	e = expect(s.ch, RDMA_CM_EVENT_ESTABLISHED);
	memcpy(&r, e->param.conn.private_data, sizeof(r));
	rdma_ack_cm_event(e);
	print_av("client", s.id->qp);
	send_wr(&s, IBV_WR_SEND, 0, 64, NULL, 0);
	send_wr(&s, IBV_WR_SEND, 0, 4000, NULL, 0);
	send_wr(&s, IBV_WR_SEND_WITH_IMM, 0, 16, NULL, 0);
	send_wr(&s, IBV_WR_RDMA_WRITE, 0, 100, &r, 0);
	send_wr(&s, IBV_WR_RDMA_WRITE, 0, 3000, &r, 128);
	send_wr(&s, IBV_WR_RDMA_WRITE_WITH_IMM, 0, 8, &r, 3200);
	send_wr(&s, IBV_WR_RDMA_READ, 4096, 2500, &r, 0);
	send_wr(&s, IBV_WR_ATOMIC_CMP_AND_SWP, 7000, 8, &r, 3584);
	send_wr(&s, IBV_WR_ATOMIC_FETCH_AND_ADD, 7008, 8, &r, 3584);
	printf("client: read back %02x..%02x, swapped-in value %#llx, fetched %#llx\n",
	       s.buf[4096], s.buf[4096 + 2499], (unsigned long long)*(uint64_t *)(s.buf + 7000),
	       (unsigned long long)*(uint64_t *)(s.buf + 7008));
	send_wr(&s, IBV_WR_SEND, 0, 32, NULL, 0);
	printf("client: the SEND after the RNR NAK completed\n");
	if (rdma_disconnect(s.id))
		die("rdma_disconnect");
	rdma_ack_cm_event(expect(s.ch, RDMA_CM_EVENT_DISCONNECTED));
	printf("client: disconnected\n");
}

/* The loss sequence: the link drops the first SEND_MIDDLE and the first SEND_ONLY the client
 * sends, and the fourth ACK the server sends (fixtures/wire-loss.fabric, the VMs' relay):
 * a PSN sequence error NAK and the resend from its PSN; a retransmission after the timeout; a
 * duplicate SEND after a lost ACK, which the responder ACKs again. */
static void client_loss(const char *addr)
{
	struct side s = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };

	s.ch = rdma_create_event_channel();
	s.id = resolve(s.ch, addr, PORT_RC, RDMA_PS_TCP);
	resources(&s, s.id, IBV_QPT_RC);
	if (rdma_connect(s.id, &cp))
		die("rdma_connect");
	rdma_ack_cm_event(expect(s.ch, RDMA_CM_EVENT_ESTABLISHED));
	send_wr(&s, IBV_WR_SEND, 0, 4000, NULL, 0);
	printf("client: SEND 4000 completed after its lost middle packet\n");
	send_wr(&s, IBV_WR_SEND, 0, 64, NULL, 0);
	printf("client: SEND 64 completed after its loss\n");
	send_wr(&s, IBV_WR_SEND, 0, 32, NULL, 0);
	printf("client: SEND 32 completed after its lost ACK\n");
	if (rdma_disconnect(s.id))
		die("rdma_disconnect");
	rdma_ack_cm_event(expect(s.ch, RDMA_CM_EVENT_DISCONNECTED));
	printf("client: disconnected\n");
}

static void client_rej(const char *addr)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_id *id = resolve(ch, addr, PORT_NONE, RDMA_PS_TCP);
	struct side s = { .ch = ch, .id = id };
	struct rdma_cm_event *e;

	resources(&s, id, IBV_QPT_RC);
	if (rdma_connect(id, &cp))
		die("rdma_connect");
	e = expect(ch, RDMA_CM_EVENT_REJECTED);
	printf("client: connect to %d rejected, status %d\n", PORT_NONE, e->status);
	rdma_ack_cm_event(e);
}

static void client_ud(const char *addr)
{
	struct side s = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *e;
	struct ibv_ah *ah;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;

	s.ch = rdma_create_event_channel();
	s.id = resolve(s.ch, addr, PORT_UD, RDMA_PS_UDP);
	resources(&s, s.id, IBV_QPT_UD);
	if (rdma_connect(s.id, &cp))
		die("rdma_connect (UD)");
	e = expect(s.ch, RDMA_CM_EVENT_ESTABLISHED);
	ah = ibv_create_ah(s.pd, &e->param.ud.ah_attr);
	if (!ah)
		die("ibv_create_ah");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = e->param.ud.qp_num;
	wr.wr.ud.remote_qkey = e->param.ud.qkey;
	rdma_ack_cm_event(e);
	fill(s.buf, 48, 0x7);
	sge = (struct ibv_sge){ (uintptr_t)s.buf, 48, s.mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(s.id->qp, &wr, &bad))
		die("ibv_post_send (UD)");
	wait_wc(&s);
	printf("client: UD SEND of 48 bytes done\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	int sync = 0, loss = 0, i;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-w"))
			sync = 1;
		else if (!strcmp(argv[i], "loss"))
			loss = 1;
		else if (strcmp(argv[1], "client") || i != 2)
			break;
	}
	if (argc >= 2 && i == argc && !strcmp(argv[1], "server"))
		return server(sync, loss);
	if (argc >= 3 && i == argc && !strcmp(argv[1], "client")) {
		if (sync)
			wait_server(argv[2]);
		if (loss) {
			client_loss(argv[2]);
			return 0;
		}
		client_rc(argv[2]);
		client_rej(argv[2]);
		client_ud(argv[2]);
		return 0;
	}
	fprintf(stderr, "usage: wire_seq server [loss] [-w] | wire_seq client ADDR [loss] [-w]\n");
	return 2;
}
