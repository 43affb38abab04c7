/* sweep_cm [rc|ud]: one connection's life through librdmacm, in one process on the emulator
 * (node A of rxe-ref2 connecting to itself), as the failure sweep's scenario
 * (docs/failure-sweep.md). ud: RDMA_PS_UDP, UD QPs, SIDR, the client's AH to the server's QP
 * from its ESTABLISHED, one 512-byte datagram, no disconnect.
 *
 * Phases: addrinfo (rdma_getaddrinfo of both sides), listen (channel, id, bind, listen),
 * client (channel, id, resolve_addr, resolve_route, PD, MR, rdma_create_qp), connect
 * (rdma_connect; on the server CONNECT_REQUEST, rdma_create_qp, a posted receive,
 * rdma_accept; ESTABLISHED on both), data (4 KiB whose every byte is checked) and close
 * (rdma_disconnect of the client, DISCONNECTED on the server, its rdma_disconnect,
 * DISCONNECTED on the client, every object destroyed).
 *
 * SWEEP_FAIL=kind:N (failnth.h kinds) makes the N-th call of that kind after the fabric is
 * attached fail, in the first of two connections made one after the other; the second,
 * with nothing failing, must succeed whole. The oracle, per failure a step sees: the error is the one the real stack
 * gives for that resource (errno ENOMEM for memory and mappings, EMFILE for eventfds and
 * sockets, EAGAIN for threads; EAI_MEMORY from rdma_getaddrinfo's resolver; an error event
 * whose status is that errno negated; the other forms wait_event() lists), then the phase's
 * objects are destroyed and the phase is run again, and it must succeed: the process goes
 * on. Exit 0 and the line
 * "sweep-result: ok" when the connection's every phase succeeded and every byte arrived;
 * 1 with "sweep-result: FAIL step: why" otherwise. The last line before it,
 * "sweep-count: alloc=A mmap=M eventfd=E socket=S thread=T", counts the calls of each
 * kind the run made after the attach: the range of N a sweep covers. A wait for an event
 * or a completion gives up after 120 s of the emulator's clock ("hang"): past the CM's
 * longest protocol timeout here, 15 DREQ retries of 4.3 s. */
#include "config.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <time.h>

#include "emu/verbs/tests/verbs_test.h"
#include "faults/sweep_common.h"

#define PORT "7471"
#define ADDR "192.0.2.65"
#define LEN 4096
#define WAIT_MS 120000 /* past a DREQ's 15 retries of 4.3 s */
#define TRIES 3

static int ud; /* argv[1] "ud": RDMA_PS_UDP, a UD QP, SIDR, a datagram, no disconnect */
#define UD_LEN 512 /* a datagram's payload, within the path MTU */
#define GRH 40
static struct rdma_ud_param est_ud; /* the client's ESTABLISHED: the server's QP */

/* Errors of rdma-core that stand for a resource failure underneath: where librdmacm
 * turns the failure of a call it makes into an errno of its own. */
static const struct sweep_translation translated[] = {
	/* sync_devices_list(): ibv_get_device_list() NULL is ENODEV; ucma_init_device():
	 * ibv_open_device() or ibv_alloc_pd() NULL is ENODEV (librdmacm/cma.c) */
	{ "bind_addr", ENODEV, "device list or open" },
	{ "resolve_addr", ENODEV, "device list or open" },
	{ "connect_request", ENODEV, "device list or open" },
};

/* A step failed with err: accept it (once per run: the injection fails one call) when it is
 * the injected resource's error or rdma-core's translation of it, else the run fails. */
static void accept_failure(const char *step, int err)
{
	sweep_accept(step, err, translated, sizeof(translated) / sizeof(*translated));
}

/* The same for a call that returns a pointer, NULL with errno. */
#define TRYP(step, lhs, expr)                                                                  \
	do {                                                                                   \
		errno = 0;                                                                     \
		if (!((lhs) = (expr))) {                                                       \
			accept_failure(step, errno);                                           \
			return -1;                                                             \
		}                                                                              \
	} while (0)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the next event on ch (non-blocking: a request that librdmacm consumed and
 * dropped leaves nothing to block on). 0 with it acked and its id in *id (when id is not
 * NULL) if it is `want` with status 0; -1 after an accepted failure: an error event whose
 * status is the injected errno negated (the emulated kernel's failure), or -1 with errno
 * that errno (librdmacm's own processing of the event, which rdma-core reports as status
 * -1), a REJECTED with reason 28 (the passive side's consumer-defined REJ: its librdmacm
 * could not take the request and destroyed it), or no event within the wait when the
 * injected failure lost one as the real stack loses it (emu_fail_lost_what()). A failed
 * rdma_get_cm_event leaves the event queued: it is read again. */
static int wait_event2(const char *step, struct rdma_event_channel *ch,
		       enum rdma_cm_event_type want, struct rdma_cm_id **id,
		       struct rdma_event_channel *other)
{
	long end = now_ms() + WAIT_MS;
	struct rdma_cm_event *ev;
	struct pollfd p[2] = { { .fd = ch->fd, .events = POLLIN },
			       { .fd = other ? other->fd : -1, .events = POLLIN } };
	enum rdma_cm_event_type type;
	int status, err;

	for (;;) {
		long left = end - now_ms();
		struct rdma_event_channel *from;

		if (left <= 0) {
			if (emu_fail_lost_what() && !sweep_failures) {
				printf("sweep-lost: %s: %s\n", step, emu_fail_lost_what());
				sweep_failures++;
				return -1;
			}
			sweep_verdict_fail(step, "hang: no %s within %d ms", rdma_event_str(want), WAIT_MS);
		}
		if (poll(p, 2, (int)left) <= 0)
			continue;
		from = (p[0].revents & POLLIN) ? ch : other;
		errno = 0;
		if (rdma_get_cm_event(from, &ev)) {
			if (errno != EAGAIN)
				accept_failure(step, errno);
			continue;
		}
		err = errno;
		type = ev->event;
		status = ev->status;
		if (id && from == ch)
			*id = ev->id;
		if (from == ch && type == RDMA_CM_EVENT_ESTABLISHED && ud)
			est_ud = ev->param.ud;
		rdma_ack_cm_event(ev);
		if (from == ch && type == want && status == 0)
			return 0;
		if (type == RDMA_CM_EVENT_REJECTED && status == 28) {
			accept_failure(step, sweep_expected_errno());
			return -1;
		}
		/* a lost CM MAD: the protocol's own timeout ends the wait with its error */
		if (emu_fail_lost_what() && !sweep_failures && status == -ETIMEDOUT &&
		    (type == want || type == RDMA_CM_EVENT_UNREACHABLE)) {
			printf("sweep-lost: %s: %s: %s ETIMEDOUT\n", step, emu_fail_lost_what(),
			       rdma_event_str(type));
			sweep_failures++;
			return -1;
		}
		/* UD: the server's CM answers a request its consumer failed with SIDR_REP status
		 * 2 (IB_SIDR_REJECT, cm_destroy_id), which the client's rdma_cm reports as
		 * UNREACHABLE with that status */
		if (ud && type == RDMA_CM_EVENT_UNREACHABLE && status == 2) {
			accept_failure(step, sweep_expected_errno());
			return -1;
		}
		if (status < 0 && (type == RDMA_CM_EVENT_ADDR_ERROR ||
				   type == RDMA_CM_EVENT_ROUTE_ERROR ||
				   type == RDMA_CM_EVENT_CONNECT_ERROR ||
				   type == RDMA_CM_EVENT_UNREACHABLE)) {
			accept_failure(step, status == -1 ? err : -status);
			return -1;
		}
		/* after a lost event, the ones that follow it in the real stack (TIMEWAIT_EXIT
		 * after a lost DISCONNECTED) come alone */
		if (emu_fail_lost_what() && status == 0)
			continue;
		sweep_verdict_fail(step, "%s status %d, expected %s", rdma_event_str(type), status,
			     rdma_event_str(want));
	}
}

static int wait_event(const char *step, struct rdma_event_channel *ch,
		      enum rdma_cm_event_type want, struct rdma_cm_id **id)
{
	return wait_event2(step, ch, want, id, NULL);
}

static int nonblock(struct rdma_event_channel *ch)
{
	int fl = fcntl(ch->fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
}

static struct rdma_addrinfo *srv_rai, *cli_rai;
static struct rdma_event_channel *sch, *cch;
static struct rdma_cm_id *lid, *cid, *sid;
static struct ibv_pd *cpd, *spd;
static struct ibv_mr *cmr, *smr;
static uint8_t cbuf[LEN], sbuf[LEN];
static struct ibv_ah *ah; /* UD: the client's to the server's QP */

static int gai(const char *step, const char *node, int flags, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo hints = { .ai_flags = flags,
				       .ai_port_space = ud ? RDMA_PS_UDP : RDMA_PS_TCP };
	int ret;

	errno = 0;
	ret = rdma_getaddrinfo(node, PORT, &hints, res);
	if (ret == 0)
		return 0;
	/* the resolver's own failure for memory is EAI_MEMORY, which rdma-core passes on */
	if (ret == EAI_MEMORY && sweep_fail_kind == EMU_FAIL_ALLOC)
		accept_failure(step, ENOMEM);
	else if (ret == -1)
		accept_failure(step, errno);
	else
		sweep_verdict_fail(step, "rdma_getaddrinfo %d (%s)", ret, gai_strerror(ret));
	return -1;
}

static int phase_addrinfo(void)
{
	if (gai("getaddrinfo-passive", ADDR, RAI_PASSIVE, &srv_rai))
		return -1;
	return gai("getaddrinfo", ADDR, 0, &cli_rai);
}

static void undo_addrinfo(void)
{
	if (srv_rai)
		rdma_freeaddrinfo(srv_rai);
	if (cli_rai)
		rdma_freeaddrinfo(cli_rai);
	srv_rai = cli_rai = NULL;
}

static int phase_listen(void)
{
	TRYP("create_event_channel-server", sch, rdma_create_event_channel());
	if (nonblock(sch))
		sweep_verdict_fail("fcntl", "%s", strerror(errno));
	TRY("create_id-listen", rdma_create_id(sch, &lid, NULL, ud ? RDMA_PS_UDP : RDMA_PS_TCP));
	TRY("bind_addr", rdma_bind_addr(lid, srv_rai->ai_src_addr));
	TRY("listen", rdma_listen(lid, 4));
	return 0;
}

static void undo_listen(void)
{
	if (lid)
		rdma_destroy_id(lid);
	if (sch)
		rdma_destroy_event_channel(sch);
	lid = NULL;
	sch = NULL;
}

static int make_qp(const char *step, struct rdma_cm_id *id, struct ibv_pd **pd,
		   struct ibv_mr **mr, uint8_t *buf)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, /* UD below */
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};

	if (ud)
		qa.qp_type = IBV_QPT_UD;
	TRYP(step, *pd, ibv_alloc_pd(id->verbs));
	TRYP(step, *mr, ibv_reg_mr(*pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE));
	TRY(step, rdma_create_qp(id, *pd, &qa));
	return 0;
}

static void undo_qp(struct rdma_cm_id *id, struct ibv_pd **pd, struct ibv_mr **mr)
{
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (*mr)
		ibv_dereg_mr(*mr);
	if (*pd)
		ibv_dealloc_pd(*pd);
	*mr = NULL;
	*pd = NULL;
}

static int phase_client(void)
{
	TRYP("create_event_channel-client", cch, rdma_create_event_channel());
	if (nonblock(cch))
		sweep_verdict_fail("fcntl", "%s", strerror(errno));
	TRY("create_id", rdma_create_id(cch, &cid, NULL, ud ? RDMA_PS_UDP : RDMA_PS_TCP));
	TRY("resolve_addr", rdma_resolve_addr(cid, NULL, cli_rai->ai_dst_addr, 2000));
	if (wait_event("resolve_addr-event", cch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return -1;
	TRY("resolve_route", rdma_resolve_route(cid, 2000));
	if (wait_event("resolve_route-event", cch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return -1;
	return make_qp("create_qp-client", cid, &cpd, &cmr, cbuf);
}

static void undo_server_side(void)
{
	undo_qp(sid, &spd, &smr);
	if (sid)
		rdma_destroy_id(sid);
	sid = NULL;
}

static void undo_client(void)
{
	if (ah)
		ibv_destroy_ah(ah);
	ah = NULL;
	undo_server_side();
	undo_qp(cid, &cpd, &cmr);
	if (cid)
		rdma_destroy_id(cid);
	if (cch)
		rdma_destroy_event_channel(cch);
	cid = NULL;
	cch = NULL;
}

static uint16_t port_of(const struct sockaddr *sa)
{
	return ((const struct sockaddr_in *)sa)->sin_port;
}

static int phase_connect(void)
{
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	TRY("connect", rdma_connect(cid, &cp));
	/* the client's channel too: a request the server's librdmacm cannot take comes back
	 * to it as a REJECTED */
	for (;;) {
		if (wait_event2("connect_request", sch, RDMA_CM_EVENT_CONNECT_REQUEST, &sid, cch))
			return -1;
		/* a request of a client given up before (its resend after a lost answer) is
		 * turned away: the one wanted comes from this client's port */
		if (port_of(rdma_get_peer_addr(sid)) == port_of(rdma_get_local_addr(cid)))
			break;
		rdma_destroy_id(sid);
		sid = NULL;
	}
	if (make_qp("create_qp-server", sid, &spd, &smr, sbuf))
		return -1;
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = ud ? GRH + UD_LEN : LEN,
				.lkey = smr->lkey };
	errno = 0;
	if (ibv_post_recv(sid->qp, &rwr, &bad))
		sweep_verdict_fail("post_recv", "failed with %d", errno);
	if (ud)
		cp.qp_num = sid->qp->qp_num;
	TRY("accept", rdma_accept(sid, &cp));
	/* the client's librdmacm sends the RTU when it reads the kernel's CONNECT_RESPONSE */
	if (wait_event("established-client", cch, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return -1;
	if (ud) { /* a SIDR_REP: the server has no ESTABLISHED; the client an AH to it */
		TRYP("create_ah", ah, ibv_create_ah(cpd, &est_ud.ah_attr));
		return 0;
	}
	return wait_event("established-server", sch, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

/* One completion of cq within the deadline: 0 when it succeeded; -1 when it is a send's
 * LOC_QP_OP_ERR after the injected failure of that packet's memory (rxe_requester's "Failed
 * allocating skb": the WQE completes with that status, the QP goes to the error state). */
static int poll_one(const char *step, struct ibv_cq *cq, enum ibv_wc_opcode op)
{
	long end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		if (now_ms() > end)
			sweep_verdict_fail(step, "hang: no completion within %d ms", WAIT_MS);
		usleep(100);
	}
	if (n == 1 && wc.status == IBV_WC_LOC_QP_OP_ERR && op == IBV_WC_SEND &&
	    sweep_fail_kind == EMU_FAIL_ALLOC && emu_fail_fired() && !sweep_failures) {
		sweep_failures++;
		printf("sweep-injected: %s LOC_QP_OP_ERR\n", step);
		return -1;
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.opcode != op)
		sweep_verdict_fail(step, "completion n %d status %s opcode %d", n,
			     n < 0 ? "-" : ibv_wc_status_str(wc.status), n < 0 ? -1 : (int)wc.opcode);
	if (op == IBV_WC_RECV && wc.byte_len != (ud ? GRH + UD_LEN : LEN))
		sweep_verdict_fail(step, "received %u bytes, sent %d", wc.byte_len, ud ? UD_LEN : LEN);
	return 0;
}

/* Posting asks for no memory (the WQEs are the QP's own); a packet's memory may fail
 * (poll_one); any other error fails the run. */
static int phase_data(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)cbuf, .length = ud ? UD_LEN : LEN,
			       .lkey = cmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	for (int i = 0; i < LEN; i++)
		cbuf[i] = (uint8_t)(i * 7 + 3);
	if (ud) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = est_ud.qp_num;
		wr.wr.ud.remote_qkey = est_ud.qkey;
	}
	if (ibv_post_send(cid->qp, &wr, &bad))
		sweep_verdict_fail("post_send", "failed with %d", errno);
	if (poll_one("send-completion", cid->send_cq, IBV_WC_SEND))
		return -1;
	poll_one("recv-completion", sid->recv_cq, IBV_WC_RECV);
	if (ud ? memcmp(cbuf, sbuf + GRH, UD_LEN) : memcmp(cbuf, sbuf, LEN))
		sweep_verdict_fail("data", "the received bytes differ from the sent ones");
	return 0;
}

/* rdma_disconnect of the client, DISCONNECTED on the server, its rdma_disconnect (which
 * sends the DREP the client waits for), DISCONNECTED on the client. After an accepted
 * failure the connection is torn down as it is, as an application gives up on it. */
static int phase_close(void)
{
	TRY("disconnect", rdma_disconnect(cid));
	if (wait_event("disconnected-server", sch, RDMA_CM_EVENT_DISCONNECTED, NULL))
		return -1;
	TRY("disconnect-server", rdma_disconnect(sid));
	return wait_event("disconnected-client", cch, RDMA_CM_EVENT_DISCONNECTED, NULL);
}

/* Runs phase; after an accepted failure undoes what undo names and runs it again, up to
 * TRIES times. */
static void run(const char *name, int (*phase)(void), void (*undo)(void))
{
	for (int t = 0; t < TRIES; t++) {
		if (!phase())
			return;
		if (undo)
			undo();
	}
	sweep_verdict_fail(name, "failed %d times", TRIES);
}

/* A failure while connecting leaves both sides to be made again. */
static int phase_client_connect(void)
{
	return phase_client() ? -1 : phase_connect();
}

/* One connection's life, every object gone at its end. */
static void connection(void)
{
	run("addrinfo", phase_addrinfo, undo_addrinfo);
	run("listen", phase_listen, undo_listen);
	run("client-connect", phase_client_connect, undo_client);
	if (phase_data()) { /* the QP is in the error state: a new connection carries it */
		undo_client();
		run("client-connect", phase_client_connect, undo_client);
		if (phase_data())
			sweep_verdict_fail("data", "failed again");
	}
	if (!ud)
		(void)phase_close();
	undo_client();
	undo_listen();
	undo_addrinfo();
}

int main(int argc, char **argv)
{
	ud = argc > 1 && !strcmp(argv[1], "ud");
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	sweep_count_begin();
	sweep_arm_from_env("sweep_cm");
	connection();
	sweep_count_print();
	/* the process goes on: a second connection, with nothing failing, must work whole */
	sweep_fail_kind = -1;
	connection();
	printf("sweep-result: ok\n");
	return 0;
}
