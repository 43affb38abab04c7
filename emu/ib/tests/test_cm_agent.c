/* The CM agent against the kernel's ib_cm behaviour: agents wired by an in-test transport that
 * delivers every MAD one microsecond later through the virtual clock; exact virtual times of
 * every event, retry and timeout (the kernel's formulas, computed independently below). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/ib/cm_agent.h"

#define LAT_NS 1000ull		 /* one-way latency of the test transport */
#define MS EMU_NSEC_PER_MSEC
#define SID_TCP(port) (0x0000000001060000ull | (port)) /* RDMA_PS_TCP << 16 | port */
#define SID_UDP(port) (0x0000000001110000ull | (port))
#define MAXH 3
#define MAXLOG 256

enum on_req { REQ_ACCEPT, REQ_REJECT, REQ_MRA, REQ_NOTHING, REQ_DESTROY };

struct ev_rec {
	uint64_t t;
	int type;
	struct emu_cm_id *id;
	int status;
	uint16_t reason;
	uint8_t ari_len, ari[8];
	uint8_t service_timeout, sidr_status;
	uint32_t qpn, qkey, vendor_id, attr_mod, starting_psn, remote_comm;
	uint8_t pd_len, pd[16];
};

struct tx_rec {
	uint64_t t;
	int from;
	uint16_t attr;
	struct emu_cm_msg m;
};

struct net;
struct host {
	struct net *net;
	int idx;
	struct emu_cm_agent *a;
	struct emu_cm_addr addr;
	bool down; /* drops everything addressed to it */
	enum on_req on_req;
	uint8_t mra_timeout;
	unsigned rej_reason;
	bool auto_rtu, auto_drep;
	int destroy_on_exit;
	struct emu_cm_id *last_new;
	struct ev_rec ev[MAXLOG];
	int nev;
};

struct net {
	struct emu_clock clk;
	struct emu_prng fabric;
	struct host h[MAXH];
	int nh;
	struct tx_rec tx[MAXLOG];
	int ntx;
	bool sync; /* deliver inside send_mad (a loopback transport) */
	char trace[256][128];
	uint64_t trace_t[256];
	int ntrace;
};

struct pkt {
	struct emu_timer t;
	struct host *to;
	struct emu_cm_addr src;
	uint8_t mad[EMU_MAD_LEN];
};

static void pkt_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct pkt *p = arg;

	(void)clk;
	(void)t;
	emu_cm_agent_rx(p->to->a, &p->src, p->mad, sizeof(p->mad));
	free(p);
}

static int t_send(void *ctx, const struct emu_cm_addr *dst, const uint8_t mad[EMU_MAD_LEN])
{
	struct host *h = ctx;
	struct net *n = h->net;
	struct pkt *p;
	uint16_t attr;

	if (n->ntx < MAXLOG) {
		struct tx_rec *r = &n->tx[n->ntx++];

		r->t = emu_clock_now(&n->clk);
		r->from = h->idx;
		assert_int_equal(emu_cm_unpack(mad, EMU_MAD_LEN, &attr, &r->m), 0);
		r->attr = attr;
	}
	for (int i = 0; i < n->nh; i++) {
		if (n->h[i].addr.lid != dst->lid || n->h[i].down)
			continue;
		if (n->sync) {
			emu_cm_agent_rx(n->h[i].a, &h->addr, mad, EMU_MAD_LEN);
			return 0;
		}
		p = calloc(1, sizeof(*p));
		assert_non_null(p);
		p->to = &n->h[i];
		p->src = h->addr;
		memcpy(p->mad, mad, EMU_MAD_LEN);
		emu_timer_init(&p->t, pkt_fire, p);
		emu_timer_arm_in(&n->clk, &p->t, LAT_NS);
		return 0;
	}
	return 0; /* nobody there: lost on the wire */
}

static void t_trace(void *ctx, const char *line)
{
	struct net *n = ((struct host *)ctx)->net;

	if (n->ntrace < 256) {
		n->trace_t[n->ntrace] = emu_clock_now(&n->clk);
		snprintf(n->trace[n->ntrace++], 128, "%s", line);
	}
}

static const struct emu_cm_transport_ops ops = { .send_mad = t_send, .trace = t_trace };

static int handler(struct emu_cm_id *id, const struct emu_cm_event *e)
{
	struct host *h = emu_cm_id_context(id);
	struct ev_rec *r;

	assert_true(h->nev < MAXLOG);
	r = &h->ev[h->nev++];
	memset(r, 0, sizeof(*r));
	r->t = emu_clock_now(&h->net->clk);
	r->type = e->type;
	r->id = id;
	r->status = e->status;
	if (e->msg) {
		r->reason = e->msg->reason;
		r->ari_len = e->msg->reject_info_len;
		memcpy(r->ari, e->msg->ari, 8);
		r->service_timeout = e->msg->service_timeout;
		r->sidr_status = e->msg->sidr_status;
		r->qpn = e->type == EMU_CM_UE_SIDR_REP_RECEIVED ? e->msg->qpn : e->msg->local_qpn;
		r->qkey = e->msg->qkey;
		r->vendor_id = e->msg->vendor_id;
		r->attr_mod = e->msg->attr_mod;
		r->starting_psn = e->msg->starting_psn;
		r->remote_comm = e->msg->local_comm_id;
		r->pd_len = e->private_data_len;
		memcpy(r->pd, e->private_data, sizeof(r->pd));
	}
	switch (e->type) {
	case EMU_CM_UE_REQ_RECEIVED:
		assert_non_null(e->listen_id);
		h->last_new = id;
		switch (h->on_req) {
		case REQ_ACCEPT: {
			struct emu_cm_rep_param p = { .qp_num = 0x200 + (uint32_t)h->idx,
						      .starting_psn = 0xabcdef,
						      .responder_resources = 4, .initiator_depth = 2,
						      .rnr_retry_count = 7, .ece_vendor_id = 0x02c9,
						      .ece_attr_mod = 5,
						      .private_data = "accepted", .private_data_len = 8 };
			assert_int_equal(emu_cm_send_rep(id, &p), 0);
			break;
		}
		case REQ_REJECT:
			assert_int_equal(emu_cm_send_rej(id, h->rej_reason, NULL, 0, "no thanks", 9), 0);
			return 1; /* the consumer is done with it: the agent frees it */
		case REQ_MRA:
			assert_int_equal(emu_cm_send_mra(id, h->mra_timeout, NULL, 0), 0);
			break;
		case REQ_DESTROY:
			emu_cm_destroy_id(id); /* deferred: this is the id being handled */
			break;
		case REQ_NOTHING:
			break;
		}
		break;
	case EMU_CM_UE_REP_RECEIVED:
		if (h->auto_rtu)
			assert_int_equal(emu_cm_send_rtu(id, NULL, 0), 0);
		break;
	case EMU_CM_UE_DREQ_RECEIVED:
		if (h->auto_drep)
			assert_int_equal(emu_cm_send_drep(id, NULL, 0), 0);
		break;
	case EMU_CM_UE_SIDR_REQ_RECEIVED: {
		struct emu_cm_sidr_rep_param p = { .qp_num = 0x345, .qkey = 0x01234567,
						   .status = EMU_CM_SIDR_SUCCESS,
						   .private_data = "ud", .private_data_len = 2 };

		h->last_new = id;
		if (h->on_req == REQ_NOTHING)
			break; /* held: the test answers it */
		assert_int_equal(emu_cm_send_sidr_rep(id, &p), 0);
		return 1;
	}
	case EMU_CM_UE_TIMEWAIT_EXIT:
		return h->destroy_on_exit;
	default:
		break;
	}
	return 0;
}

static struct net *net_new(int nh, uint64_t seed)
{
	struct net *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	emu_clock_init(&n->clk, 0);
	emu_prng_seed(&n->fabric, seed);
	n->nh = nh;
	for (int i = 0; i < nh; i++) {
		struct host *h = &n->h[i];
		char name[16]; /* "h" and any int: no truncation for the compiler to see */
		struct emu_cm_agent_cfg cfg = { .name = name, .ca_guid = 0x0002c90300a0b000ull + i,
						.ack_delay = EMU_RXE_LOCAL_CA_ACK_DELAY,
						.hi_tid = 0x100 + (uint32_t)i, .prng = &n->fabric,
						.stream = (uint64_t)i };

		snprintf(name, sizeof(name), "h%d", i);
		h->net = n;
		h->idx = i;
		h->addr.lid = (uint16_t)(1 + i);
		h->addr.gid[0] = 0xfe;
		h->addr.gid[1] = 0x80;
		h->addr.gid[15] = (uint8_t)(1 + i);
		h->addr.port = 1;
		h->auto_rtu = true;
		h->auto_drep = true;
		assert_int_equal(emu_cm_agent_create(&n->clk, &ops, h, &cfg, &h->a), 0);
	}
	return n;
}

static void net_free(struct net *n)
{
	/* deliver what is in flight and let every retry and timewait run out (all bounded) */
	assert_int_equal(emu_clock_run_idle(&n->clk, 1000000, NULL), 0);
	for (int i = 0; i < n->nh; i++)
		emu_cm_agent_destroy(n->h[i].a);
	assert_int_equal(emu_clock_pending(&n->clk), 0);
	emu_clock_fini(&n->clk);
	free(n);
}

static void run_to(struct net *n, uint64_t t)
{
	assert_int_equal(emu_clock_run_until(&n->clk, t, 100000, NULL), 0);
}

static struct emu_cm_path_rec path_to(struct net *n, int from, int to, uint8_t plt)
{
	struct emu_cm_path_rec p = { .slid = n->h[from].addr.lid, .dlid = n->h[to].addr.lid,
				     .hop_limit = 1, .mtu = 3, .pkey = 0xffff, .rate = 3,
				     .packet_life_time = plt };

	memcpy(p.sgid, n->h[from].addr.gid, 16);
	memcpy(p.dgid, n->h[to].addr.gid, 16);
	return p;
}

static struct emu_cm_req_param req_param(struct net *n, int from, int to,
					 const struct emu_cm_path_rec *path, uint8_t retries)
{
	struct emu_cm_req_param p = {
		.primary_path = path, .dst = n->h[to].addr, .service_id = SID_TCP(7471),
		.qp_num = 0x100 + (uint32_t)from, .qp_type = EMU_CM_TRANSPORT_RC,
		.starting_psn = 0x123456, .responder_resources = 2, .initiator_depth = 4,
		.remote_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT,
		.local_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT, .retry_count = 7,
		.rnr_retry_count = 7, .max_cm_retries = retries, .ece_vendor_id = 0x15b3,
		.ece_attr_mod = 3, .private_data = "hello", .private_data_len = 5,
	};
	return p;
}

static struct emu_cm_id *listen_on(struct host *h, uint64_t sid)
{
	struct emu_cm_id *l;

	assert_int_equal(emu_cm_create_id(h->a, handler, h, &l), 0);
	assert_int_equal(emu_cm_listen(l, sid, 0), 0);
	return l;
}

static int count_tx(const struct net *n, int from, uint16_t attr)
{
	int c = 0;

	for (int i = 0; i < n->ntx; i++)
		c += n->tx[i].from == from && n->tx[i].attr == attr;
	return c;
}

/* the i-th (0-based) MAD of a class sent by a host */
static const struct tx_rec *nth_tx(const struct net *n, int from, uint16_t attr, int nth)
{
	for (int i = 0; i < n->ntx; i++)
		if (n->tx[i].from == from && n->tx[i].attr == attr && nth-- == 0)
			return &n->tx[i];
	fail_msg("no MAD %d of attr 0x%x from host %d", nth, attr, from);
	return NULL;
}

static bool traced(const struct net *n, const char *s)
{
	for (int i = 0; i < n->ntrace; i++)
		if (strstr(n->trace[i], s))
			return true;
	return false;
}

/* virtual time of the nth trace line containing s */
static uint64_t trace_time(const struct net *n, const char *s, int nth)
{
	for (int i = 0; i < n->ntrace; i++)
		if (strstr(n->trace[i], s) && nth-- == 0)
			return n->trace_t[i];
	fail_msg("no trace line %d with \"%s\"", nth, s);
	return 0;
}

/* The kernel's formulas, written again here (cm.c cm_convert_to_ms, ib_send_cm_req). */
static uint64_t conv_ms(unsigned t)
{
	return 1ull << (t > 8 ? t - 8 : 0);
}

/* Active side connects host 0 -> host 1 (listener), both establish; returns the client id. */
static struct emu_cm_id *connect01(struct net *n, struct emu_cm_path_rec *path, uint8_t retries)
{
	struct emu_cm_id *c;
	struct emu_cm_req_param p = req_param(n, 0, 1, path, retries);

	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, emu_clock_now(&n->clk) + 3 * LAT_NS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_ESTABLISHED);
	return c;
}

/* ---- tests ---- */

static void test_connect_disconnect(void **state)
{
	struct net *n = net_new(2, 42);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_id *l = listen_on(&n->h[1], SID_TCP(7471)), *c, *s;
	struct emu_cm_counters c0, c1;
	const struct tx_rec *req;
	uint64_t t0;

	(void)state;
	c = connect01(n, &path, 15);
	s = n->h[1].last_new;
	/* passive: REQ_RECEIVED at 1 us with the REQ's fields and 92 bytes of private data */
	assert_int_equal(n->h[1].nev, 2);
	assert_int_equal(n->h[1].ev[0].type, EMU_CM_UE_REQ_RECEIVED);
	assert_int_equal(n->h[1].ev[0].t, LAT_NS);
	assert_int_equal(n->h[1].ev[0].qpn, 0x100);
	assert_int_equal(n->h[1].ev[0].starting_psn, 0x123456);
	assert_int_equal(n->h[1].ev[0].vendor_id, 0x15b3);
	assert_int_equal(n->h[1].ev[0].attr_mod, 3);
	assert_int_equal(n->h[1].ev[0].pd_len, EMU_CM_REQ_PRIVATE_DATA_SIZE);
	assert_memory_equal(n->h[1].ev[0].pd, "hello\0\0", 7);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_RTU_RECEIVED);
	assert_int_equal(n->h[1].ev[1].t, 3 * LAT_NS);
	assert_int_equal(n->h[1].ev[1].pd_len, EMU_CM_RTU_PRIVATE_DATA_SIZE);
	/* active: REP_RECEIVED at 2 us */
	assert_int_equal(n->h[0].nev, 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REP_RECEIVED);
	assert_int_equal(n->h[0].ev[0].t, 2 * LAT_NS);
	assert_int_equal(n->h[0].ev[0].qpn, 0x201);
	assert_int_equal(n->h[0].ev[0].starting_psn, 0xabcdef);
	assert_int_equal(n->h[0].ev[0].vendor_id, 0x02c9);
	assert_int_equal(n->h[0].ev[0].attr_mod, 5);
	assert_int_equal(n->h[0].ev[0].pd_len, EMU_CM_REP_PRIVATE_DATA_SIZE);
	assert_memory_equal(n->h[0].ev[0].pd, "accepted", 8);
	/* comm IDs cross, TIDs: REQ = hi_tid << 32 | local ID; the REP answers with it */
	assert_int_equal(emu_cm_id_remote_id(c), emu_cm_id_local_id(s));
	assert_int_equal(emu_cm_id_remote_id(s), emu_cm_id_local_id(c));
	req = nth_tx(n, 0, EMU_CM_ATTR_REQ, 0);
	assert_int_equal(req->m.tid, (0x100ull << 32) | emu_cm_id_local_id(c));
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_REP, 0)->m.tid, req->m.tid);
	/* REQ: local ACK timeout = cm_ack_timeout(15, 0) = 15; remote/local response timeouts,
	 * retries as given; REP: target ACK delay = the CA's */
	assert_int_equal(req->m.primary.local_ack_timeout, 15);
	assert_int_equal(req->m.remote_cm_response_timeout, 20);
	assert_int_equal(req->m.max_cm_retries, 15);
	assert_int_equal(req->m.local_ca_guid, 0x0002c90300a0b000ull);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_REP, 0)->m.target_ack_delay, 15);
	/* av.timeout: active = cm_ack_timeout(15, 0) after the REP; passive = REQ's 15 */
	assert_int_equal(emu_cm_id_av_timeout(c), 15);
	assert_int_equal(emu_cm_id_av_timeout(s), 15);
	assert_int_equal(emu_cm_id_timeout_ms(c), 2 * conv_ms(0) + conv_ms(20));
	assert_int_equal(emu_cm_id_timeout_ms(s), conv_ms(20));
	assert_true(traced(n, "REQ_SENT --REP--> REP_RCVD"));
	assert_true(traced(n, "REP_SENT --RTU--> ESTABLISHED"));

	/* disconnect at 1 ms: DREQ -> DREP -> timewait (convert(15) = 128 ms) -> exit */
	run_to(n, 1 * MS);
	t0 = emu_clock_now(&n->clk);
	assert_int_equal(emu_cm_send_dreq(c, NULL, 0), 0);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_DREQ_SENT);
	run_to(n, t0 + 2 * LAT_NS);
	assert_int_equal(n->h[1].ev[2].type, EMU_CM_UE_DREQ_RECEIVED);
	assert_int_equal(n->h[1].ev[2].t, t0 + LAT_NS);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_TIMEWAIT);
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_DREP_RECEIVED);
	assert_int_equal(n->h[0].ev[1].t, t0 + 2 * LAT_NS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_TIMEWAIT);
	/* the DREP answers the DREQ's TID */
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_DREP, 0)->m.tid,
			 nth_tx(n, 0, EMU_CM_ATTR_DREQ, 0)->m.tid);
	run_to(n, t0 + LAT_NS + 128 * MS - 1);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_TIMEWAIT);
	run_to(n, t0 + LAT_NS + 128 * MS);
	assert_int_equal(n->h[1].ev[3].type, EMU_CM_UE_TIMEWAIT_EXIT);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_IDLE);
	run_to(n, t0 + 2 * LAT_NS + 128 * MS);
	assert_int_equal(n->h[0].ev[2].type, EMU_CM_UE_TIMEWAIT_EXIT);
	assert_int_equal(n->h[0].ev[2].t, t0 + 2 * LAT_NS + 128 * MS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_IDLE);
	assert_true(traced(n, "TIMEWAIT --timewait_exit--> IDLE"));

	/* nothing else ever happens: the REQ/REP/DREQ timers were cancelled */
	run_to(n, 200000 * MS);
	assert_int_equal(n->h[0].nev, 3);
	assert_int_equal(n->h[1].nev, 4);
	emu_cm_agent_counters(n->h[0].a, &c0);
	emu_cm_agent_counters(n->h[1].a, &c1);
	assert_int_equal(c0.tx[emu_cm_class(EMU_CM_ATTR_REQ)], 1);
	assert_int_equal(c0.tx[emu_cm_class(EMU_CM_ATTR_RTU)], 1);
	assert_int_equal(c0.tx[emu_cm_class(EMU_CM_ATTR_DREQ)], 1);
	assert_int_equal(c1.tx[emu_cm_class(EMU_CM_ATTR_REP)], 1);
	assert_int_equal(c1.tx[emu_cm_class(EMU_CM_ATTR_DREP)], 1);
	assert_int_equal(c1.rx[emu_cm_class(EMU_CM_ATTR_REQ)], 1);
	/* idle ids can connect no more until destroyed; destroy frees them silently */
	emu_cm_destroy_id(c);
	emu_cm_destroy_id(s);
	emu_cm_destroy_id(l);
	assert_int_equal(emu_cm_agent_nids(n->h[0].a), 0);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 0);
	assert_int_equal(n->ntx, 5);
	net_free(n);
}

static void test_rej_no_listener(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c;
	const struct tx_rec *rej;

	(void)state;
	listen_on(&n->h[1], SID_TCP(1)); /* another port: no match */
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 100000 * MS);
	assert_int_equal(n->h[0].nev, 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(n->h[0].ev[0].t, 2 * LAT_NS);
	assert_int_equal(n->h[0].ev[0].reason, EMU_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(n->h[0].ev[0].pd_len, EMU_CM_REJ_PRIVATE_DATA_SIZE);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_IDLE);
	/* cm_issue_rej: REJected REQ, comm IDs swapped from the REQ, its TID */
	rej = nth_tx(n, 1, EMU_CM_ATTR_REJ, 0);
	assert_int_equal(rej->m.message_rejected, EMU_CM_MSG_RESPONSE_REQ);
	assert_int_equal(rej->m.remote_comm_id, emu_cm_id_local_id(c));
	assert_int_equal(rej->m.local_comm_id, 0);
	assert_int_equal(rej->m.tid, nth_tx(n, 0, EMU_CM_ATTR_REQ, 0)->m.tid);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 1); /* the REJ stopped the retries */
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1);	/* no id was left behind */
	net_free(n);
}

static void test_consumer_reject(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c;
	const struct tx_rec *rej;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	n->h[1].on_req = REQ_REJECT;
	n->h[1].rej_reason = EMU_CM_REJ_CONSUMER_DEFINED;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 10 * MS);
	assert_int_equal(n->h[0].nev, 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(n->h[0].ev[0].reason, 28);
	assert_int_equal(n->h[0].ev[0].pd_len, 148);
	assert_memory_equal(n->h[0].ev[0].pd, "no thanks\0", 10);
	rej = nth_tx(n, 1, EMU_CM_ATTR_REJ, 0);
	assert_int_equal(rej->m.local_comm_id, 0); /* cm_format_rej in REQ_RCVD */
	assert_int_equal(rej->m.message_rejected, EMU_CM_MSG_RESPONSE_REQ);
	/* the handler returned 1: the passive id is gone, no second REJ from its destroy */
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_REJ), 1);

	/* ECE reject: reason 35 */
	n->h[1].rej_reason = EMU_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED;
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 20 * MS);
	assert_int_equal(n->h[0].nev, 2);
	assert_int_equal(n->h[0].ev[1].reason, 35);
	net_free(n);
}

static void test_mra_extends_timeout(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c, *s;
	struct emu_cm_counters c1;
	struct emu_cm_rep_param rep = { .qp_num = 0x201 };
	uint64_t mra_wait = conv_ms(24) + conv_ms(1); /* service timeout 24, av.timeout 0 + 1 */
	uint64_t t_retry = 2 * LAT_NS + mra_wait * MS;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	n->h[1].on_req = REQ_MRA;
	n->h[1].mra_timeout = 24;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 2 * LAT_NS);
	s = n->h[1].last_new;
	assert_int_equal(emu_cm_id_state(s), EMU_CM_MRA_REQ_SENT);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_MRA_RECEIVED);
	assert_int_equal(n->h[0].ev[0].service_timeout, 24);
	assert_int_equal(n->h[0].ev[0].pd_len, EMU_CM_MRA_PRIVATE_DATA_SIZE);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_MRA_REQ_RCVD);
	/* the REQ's 4098 ms timeout no longer applies: the next REQ leaves 65537 ms after the MRA */
	run_to(n, t_retry - 1);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 1);
	run_to(n, t_retry);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 2);
	/* the passive side answers the duplicate REQ with its MRA again (cm_dup_req_handler) */
	run_to(n, t_retry + 2 * LAT_NS);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_MRA), 2);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_MRA, 1)->t, t_retry + LAT_NS);
	emu_cm_agent_counters(n->h[1].a, &c1);
	assert_int_equal(c1.rx_dup[emu_cm_class(EMU_CM_ATTR_REQ)], 1);
	assert_int_equal(n->h[0].nev, 1); /* the second MRA is a duplicate: no event */
	/* the consumer accepts 10 ms later: connected, no REQ_ERROR ever */
	run_to(n, t_retry + 10 * MS);
	assert_int_equal(emu_cm_send_rep(s, &rep), 0);
	run_to(n, t_retry + 10 * MS + 3 * LAT_NS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_ESTABLISHED);
	run_to(n, 1000000 * MS);
	assert_int_equal(n->h[0].nev, 2);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 2);
	net_free(n);
}

static void test_rep_dropped_req_error(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 3);
	struct emu_cm_fault f = { .p_drop = 1.0 };
	struct emu_cm_id *c, *s;
	struct emu_cm_counters c1;
	uint64_t treq = 2 * conv_ms(0) + conv_ms(20); /* 4098 ms */
	uint64_t trep = conv_ms(20);		       /* the REQ's local response timeout */

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_fault_set(n->h[1].a, EMU_CM_ATTR_REP, &f), 0);
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 1000000 * MS);
	s = n->h[1].last_new;
	/* the REQ left at 0, 4098, 8196, 12294 ms; REQ_ERROR at 4 * 4098 ms */
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(nth_tx(n, 0, EMU_CM_ATTR_REQ, i)->t, i * treq * MS);
	assert_int_equal(n->h[0].nev, 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REQ_ERROR);
	assert_int_equal(n->h[0].ev[0].status, -ETIMEDOUT);
	assert_int_equal(n->h[0].ev[0].t, 4 * treq * MS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_IDLE);
	/* the REP was retried 3 times (the REQ's Max CM Retries) every 4096 ms, all dropped;
	 * REP_ERROR at 1 us + 4 * 4096 ms; the REQ retries were duplicates in REP_SENT */
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_REP), 0); /* none reached the wire */
	assert_int_equal(trace_time(n, "h1: fault: REP dropped", 0), LAT_NS);
	for (int i = 1; i < 4; i++)
		assert_int_equal(trace_time(n, "h1: fault: REP dropped", i), LAT_NS + i * trep * MS);
	assert_int_equal(n->h[1].nev, 2);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_REP_ERROR);
	assert_int_equal(n->h[1].ev[1].status, -ETIMEDOUT);
	assert_int_equal(n->h[1].ev[1].t, LAT_NS + 4 * trep * MS);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_IDLE);
	emu_cm_agent_counters(n->h[1].a, &c1);
	assert_int_equal(c1.tx[emu_cm_class(EMU_CM_ATTR_REP)], 4);
	assert_int_equal(c1.tx_retries[emu_cm_class(EMU_CM_ATTR_REP)], 3);
	assert_int_equal(c1.dropped[emu_cm_class(EMU_CM_ATTR_REP)], 4);
	assert_int_equal(c1.rx_dup[emu_cm_class(EMU_CM_ATTR_REQ)], 3);
	assert_true(traced(n, "REP_SENT --response_timeout--> IDLE"));
	assert_true(traced(n, "REQ_SENT --response_timeout--> IDLE"));
	net_free(n);
}

/* rdma_cm's own values on a RoCE path: CMA_CM_RESPONSE_TIMEOUT 20, CMA_MAX_CM_RETRIES 15,
 * CMA_IBOE_PACKET_LIFETIME 16, a peer that never answers: the REQ goes out 16 times and
 * REQ_ERROR comes 16 * (2 * 256 + 4096) ms = 73.728 s after the rdma_connect. */
static void test_req_unanswered_rdma_cm_defaults(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, EMU_CMA_IBOE_PACKET_LIFETIME);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, EMU_CMA_MAX_CM_RETRIES);
	struct emu_cm_id *c;

	(void)state;
	n->h[1].down = true;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 73728 * MS - 1);
	assert_int_equal(n->h[0].nev, 0);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 16);
	assert_int_equal(nth_tx(n, 0, EMU_CM_ATTR_REQ, 15)->t, 15 * 4608 * MS);
	run_to(n, 73728 * MS);
	assert_int_equal(n->h[0].nev, 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REQ_ERROR);
	assert_int_equal(n->h[0].ev[0].status, -ETIMEDOUT);
	/* the RoCE REQ's Local ACK Timeout: cm_ack_timeout(15, 16) = 17 (15 is not within
	 * 50% of 17, so no rounding up) */
	assert_int_equal(nth_tx(n, 0, EMU_CM_ATTR_REQ, 0)->m.primary.local_ack_timeout, 17);
	net_free(n);
}

static void test_rtu_dropped_rep_retried(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_fault f = { .drop_next = 1 };
	struct emu_cm_id *c, *s;
	struct emu_cm_counters c0;
	uint64_t trep = conv_ms(20) * MS;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_fault_set(n->h[0].a, EMU_CM_ATTR_RTU, &f), 0);
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 3 * LAT_NS);
	s = n->h[1].last_new;
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_REP_SENT);
	/* the REP goes again 4096 ms later; the established side answers the duplicate REP
	 * with its RTU (cm_dup_rep_handler), which lands 2 us later */
	run_to(n, LAT_NS + trep + 2 * LAT_NS);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_REP, 1)->t, LAT_NS + trep);
	assert_int_equal(emu_cm_id_state(s), EMU_CM_ESTABLISHED);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_RTU_RECEIVED);
	assert_int_equal(n->h[1].ev[1].t, LAT_NS + trep + 2 * LAT_NS);
	emu_cm_agent_counters(n->h[0].a, &c0);
	assert_int_equal(c0.rx_dup[emu_cm_class(EMU_CM_ATTR_REP)], 1);
	assert_int_equal(c0.dropped[emu_cm_class(EMU_CM_ATTR_RTU)], 1);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_RTU), 1); /* the first never left */
	assert_int_equal(c0.tx[emu_cm_class(EMU_CM_ATTR_RTU)], 2);
	assert_int_equal(n->h[0].nev, 1); /* no second REP_RECEIVED */
	assert_true(traced(n, "ESTABLISHED --REP--> ESTABLISHED (dup)"));
	run_to(n, 1000000 * MS);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_REP), 2);
	net_free(n);
}

static void test_duplicate_req(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_fault f = { .dup_next = 1 };
	struct emu_cm_id *c;
	struct emu_cm_counters c1;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_fault_set(n->h[0].a, EMU_CM_ATTR_REQ, &f), 0);
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 10 * MS);
	/* both copies arrive at 1 us: one REQ_RECEIVED, the second a duplicate in REP_SENT,
	 * dropped without answer */
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(n->h[1].ev[0].type, EMU_CM_UE_REQ_RECEIVED);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_RTU_RECEIVED);
	assert_int_equal(n->h[1].nev, 2);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_REP), 1);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 2);
	emu_cm_agent_counters(n->h[1].a, &c1);
	assert_int_equal(c1.rx_dup[emu_cm_class(EMU_CM_ATTR_REQ)], 1);
	assert_int_equal(c1.rx[emu_cm_class(EMU_CM_ATTR_REQ)], 2);
	net_free(n);

	/* rdma_cm's delayed MRA (CMA_CM_MRA_SETTING): nothing is sent until a duplicate REQ
	 * comes, which is answered with the MRA (service timeout 24) */
	n = net_new(2, 1);
	path = path_to(n, 0, 1, 0);
	p = req_param(n, 0, 1, &path, 15);
	listen_on(&n->h[1], SID_TCP(7471));
	n->h[1].on_req = REQ_MRA;
	n->h[1].mra_timeout = EMU_CMA_CM_MRA_SETTING;
	assert_int_equal(emu_cm_fault_set(n->h[0].a, EMU_CM_ATTR_REQ, &f), 0);
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 2 * LAT_NS);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_MRA), 1);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_MRA, 0)->m.service_timeout, 24);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_MRA, 0)->m.message_mraed, EMU_CM_MSG_RESPONSE_REQ);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_MRA_REQ_RCVD);
	net_free(n);
}

static void test_stale_connection(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c, *c2, *s;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	c = connect01(n, &path, 15);
	s = n->h[1].last_new;
	/* a new REQ from another comm ID but the same QPN and CA GUID: REJ 10 to it, and a
	 * DREQ on the old connection (cm_match_req) */
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c2), 0);
	assert_int_equal(emu_cm_send_req(c2, &p), 0);
	run_to(n, emu_clock_now(&n->clk) + 2 * LAT_NS);
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(n->h[0].ev[1].id, c2);
	assert_int_equal(n->h[0].ev[1].reason, EMU_CM_REJ_STALE_CONN);
	assert_int_equal(emu_cm_id_state(c2), EMU_CM_TIMEWAIT); /* REJ(stale) -> timewait */
	assert_int_equal(emu_cm_id_state(s), EMU_CM_DREQ_SENT);
	assert_int_equal(n->h[0].ev[2].type, EMU_CM_UE_DREQ_RECEIVED);
	assert_int_equal(n->h[0].ev[2].id, c);
	assert_true(traced(n, "REQ_SENT --REJ(stale)--> TIMEWAIT"));
	net_free(n);
}

static void test_dreq_peer_gone(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_id *c;
	uint64_t t0, to = 2 * conv_ms(0) + conv_ms(20);

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	c = connect01(n, &path, 2);
	n->h[1].down = true;
	run_to(n, 5 * MS);
	t0 = emu_clock_now(&n->clk);
	assert_int_equal(emu_cm_send_dreq(c, "bye", 3), 0);
	/* the DREQ uses the id's response timeout (the REQ's 4098 ms) and Max CM Retries (2) */
	run_to(n, t0 + 3 * to * MS - 1);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_DREQ), 3);
	assert_int_equal(n->h[0].nev, 1);
	run_to(n, t0 + 3 * to * MS);
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_DREQ_ERROR);
	assert_int_equal(n->h[0].ev[1].status, -ETIMEDOUT);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_TIMEWAIT);
	run_to(n, t0 + 3 * to * MS + 128 * MS);
	assert_int_equal(n->h[0].ev[2].type, EMU_CM_UE_TIMEWAIT_EXIT);
	assert_int_equal(n->h[0].ev[2].t, t0 + 3 * to * MS + 128 * MS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_IDLE);
	net_free(n);
}

static void test_dreq_for_no_id(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_id *c;
	struct emu_cm_counters c1;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	c = connect01(n, &path, 15);
	/* the passive id vanishes without a word (its host's agent forgets it) */
	n->h[0].down = true;
	emu_cm_destroy_id(n->h[1].last_new); /* its DREQ is lost on the way */
	n->h[0].down = false;
	assert_int_equal(emu_cm_send_dreq(c, NULL, 0), 0);
	run_to(n, emu_clock_now(&n->clk) + 2 * LAT_NS);
	/* cm_dreq_handler: no id -> cm_issue_drep, counted as a duplicate */
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_DREP_RECEIVED);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_TIMEWAIT);
	emu_cm_agent_counters(n->h[1].a, &c1);
	assert_int_equal(c1.rx_dup[emu_cm_class(EMU_CM_ATTR_DREQ)], 1);
	net_free(n);
}

static void test_destroy_sends(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c;
	const struct tx_rec *rej;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	n->h[1].on_req = REQ_NOTHING;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 1 * MS);
	/* the active side gives up with the REQ outstanding: REJ 4 with its CA GUID as ARI;
	 * the passive side finds its id by (remote ID, GUID) */
	emu_cm_destroy_id(c);
	run_to(n, 1 * MS + LAT_NS);
	rej = nth_tx(n, 0, EMU_CM_ATTR_REJ, 0);
	assert_int_equal(rej->m.reason, EMU_CM_REJ_TIMEOUT);
	assert_int_equal(rej->m.reject_info_len, 8);
	assert_memory_equal(rej->m.ari, "\x00\x02\xc9\x03\x00\xa0\xb0\x00", 8);
	assert_int_equal(rej->m.message_rejected, EMU_CM_MSG_RESPONSE_OTHER);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(n->h[1].ev[1].reason, EMU_CM_REJ_TIMEOUT);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_IDLE);
	run_to(n, 1000000 * MS);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_REQ), 1); /* no retry after destroy */
	net_free(n);

	/* a handler that destroys its own id: deferred, then REJ 28 for the unfinished request */
	n = net_new(2, 1);
	path = path_to(n, 0, 1, 0);
	p = req_param(n, 0, 1, &path, 15);
	listen_on(&n->h[1], SID_TCP(7471));
	n->h[1].on_req = REQ_DESTROY;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 2 * LAT_NS);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_REJ_RECEIVED);
	assert_int_equal(n->h[0].ev[0].reason, EMU_CM_REJ_CONSUMER_DEFINED);
	net_free(n);

	/* destroying an established connection: one DREQ, never retried; the peer answers */
	n = net_new(2, 1);
	path = path_to(n, 0, 1, 0);
	listen_on(&n->h[1], SID_TCP(7471));
	c = connect01(n, &path, 15);
	emu_cm_destroy_id(c);
	run_to(n, 1000000 * MS);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_DREQ), 1);
	assert_int_equal(n->h[1].ev[2].type, EMU_CM_UE_DREQ_RECEIVED);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_DREP), 1);
	net_free(n);
}

static void test_sidr(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_sidr_req_param p = { .path = &path, .dst = n->h[1].addr,
					   .service_id = SID_UDP(7174), .timeout_ms = 2000,
					   .max_cm_retries = 2, .private_data = "udp",
					   .private_data_len = 3 };
	struct emu_cm_id *c;

	(void)state;
	listen_on(&n->h[1], SID_UDP(7174));
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_sidr_req(c, &p), 0);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_SIDR_REQ_SENT);
	run_to(n, 2 * LAT_NS);
	assert_int_equal(n->h[1].ev[0].type, EMU_CM_UE_SIDR_REQ_RECEIVED);
	assert_int_equal(n->h[1].ev[0].pd_len, EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE);
	assert_memory_equal(n->h[1].ev[0].pd, "udp", 3);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_SIDR_REP_RECEIVED);
	assert_int_equal(n->h[0].ev[0].t, 2 * LAT_NS);
	assert_int_equal(n->h[0].ev[0].sidr_status, EMU_CM_SIDR_SUCCESS);
	assert_int_equal(n->h[0].ev[0].qpn, 0x345);
	assert_int_equal(n->h[0].ev[0].qkey, 0x01234567);
	assert_int_equal(n->h[0].ev[0].pd_len, EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_IDLE);
	assert_int_equal(nth_tx(n, 1, EMU_CM_ATTR_SIDR_REP, 0)->m.request_id, emu_cm_id_local_id(c));
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1); /* the served SIDR id is gone */

	/* no listener: SIDR_REP status 1 (UNSUPPORTED) */
	p.service_id = SID_UDP(1);
	assert_int_equal(emu_cm_send_sidr_req(c, &p), 0);
	run_to(n, 10 * MS);
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_SIDR_REP_RECEIVED);
	assert_int_equal(n->h[0].ev[1].sidr_status, EMU_CM_SIDR_UNSUPPORTED);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1);

	/* nobody there: SIDR_REQ_ERROR after (2 + 1) * 2000 ms */
	n->h[1].down = true;
	assert_int_equal(emu_cm_send_sidr_req(c, &p), 0);
	run_to(n, 10 * MS + 6000 * MS);
	assert_int_equal(n->h[0].ev[2].type, EMU_CM_UE_SIDR_REQ_ERROR);
	assert_int_equal(n->h[0].ev[2].t, 10 * MS + 6000 * MS);
	assert_int_equal(n->h[0].ev[2].status, -ETIMEDOUT);
	net_free(n);
}

/* A SIDR_REQ resent while the first is still being served is a duplicate, dropped and
 * counted (cm_insert_remote_sidr); once answered, the served request leaves the table and
 * the same Request ID is a new request again. */
static void test_sidr_duplicate(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_sidr_req_param p = { .path = &path, .dst = n->h[1].addr,
					   .service_id = SID_UDP(7174), .timeout_ms = 2000,
					   .max_cm_retries = 2 };
	struct emu_cm_sidr_rep_param rep = { .qp_num = 0x345, .qkey = 0x01234567,
					     .status = EMU_CM_SIDR_SUCCESS };
	const int cls = emu_cm_class(EMU_CM_ATTR_SIDR_REQ);
	struct emu_cm_counters cnt;
	struct emu_cm_id *c, *held;

	(void)state;
	listen_on(&n->h[1], SID_UDP(7174));
	n->h[1].on_req = REQ_NOTHING;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_sidr_req(c, &p), 0);
	/* the first arrives after LAT_NS, the resend 2000 ms later */
	run_to(n, 2000 * MS + 2 * LAT_NS);
	assert_int_equal(count_tx(n, 0, EMU_CM_ATTR_SIDR_REQ), 2);
	assert_int_equal(n->h[1].nev, 1);
	assert_int_equal(n->h[1].ev[0].type, EMU_CM_UE_SIDR_REQ_RECEIVED);
	emu_cm_agent_counters(n->h[1].a, &cnt);
	assert_int_equal(cnt.rx_dup[cls], 1);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 2); /* the listener and the held request */
	/* answered: the requester is done, the request leaves the table (the id stays) */
	held = n->h[1].last_new;
	assert_int_equal(emu_cm_send_sidr_rep(held, &rep), 0);
	run_to(n, 2000 * MS + 4 * LAT_NS);
	assert_int_equal(n->h[0].ev[0].type, EMU_CM_UE_SIDR_REP_RECEIVED);
	assert_int_equal(n->h[0].ev[0].qpn, 0x345);
	/* the same Request ID (the same requesting id) again: a new request, not a duplicate */
	n->h[1].on_req = REQ_ACCEPT;
	assert_int_equal(emu_cm_send_sidr_req(c, &p), 0);
	run_to(n, 2000 * MS + 6 * LAT_NS);
	assert_int_equal(n->h[1].nev, 2);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_SIDR_REQ_RECEIVED);
	assert_int_equal(n->h[0].ev[1].type, EMU_CM_UE_SIDR_REP_RECEIVED);
	emu_cm_agent_counters(n->h[1].a, &cnt);
	assert_int_equal(cnt.rx_dup[cls], 1);
	emu_cm_destroy_id(held);
	assert_int_equal(emu_cm_agent_nids(n->h[1].a), 1);
	net_free(n);
}

static void test_three_agents_demux(void **state)
{
	struct net *n = net_new(3, 7);
	struct emu_cm_path_rec p0 = path_to(n, 0, 1, 0), p2 = path_to(n, 2, 1, 0);
	struct emu_cm_req_param r0 = req_param(n, 0, 1, &p0, 15);
	struct emu_cm_req_param r2 = req_param(n, 2, 1, &p2, 15);
	struct emu_cm_agent_cfg cfg = { .name = "h2", .ca_guid = 0x0002c90300a0b002ull,
					.ack_delay = 15, .hi_tid = 0x102, .prng = &n->fabric,
					.stream = 0 };
	struct emu_cm_id *c0, *c2, *s0, *s2;

	(void)state;
	/* host 2 draws from host 0's stream: both hand out the same local comm IDs, and both
	 * use QPN 0x100; only the CA GUID tells their connections apart at host 1 */
	emu_cm_agent_destroy(n->h[2].a);
	assert_int_equal(emu_cm_agent_create(&n->clk, &ops, &n->h[2], &cfg, &n->h[2].a), 0);
	r2.qp_num = r0.qp_num;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c0), 0);
	assert_int_equal(emu_cm_create_id(n->h[2].a, handler, &n->h[2], &c2), 0);
	assert_int_equal(emu_cm_id_local_id(c0), emu_cm_id_local_id(c2));
	assert_int_equal(emu_cm_send_req(c0, &r0), 0);
	run_to(n, 3 * LAT_NS);
	s0 = n->h[1].last_new;
	assert_int_equal(emu_cm_send_req(c2, &r2), 0);
	run_to(n, 6 * LAT_NS);
	s2 = n->h[1].last_new;
	assert_ptr_not_equal(s0, s2);
	assert_int_equal(emu_cm_id_state(c0), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(c2), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(s0), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(s2), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_remote_id(s0), emu_cm_id_remote_id(s2));
	assert_int_not_equal(emu_cm_id_local_id(s0), emu_cm_id_local_id(s2));
	/* host 2 disconnects: only its connection at host 1 goes */
	assert_int_equal(emu_cm_send_dreq(c2, NULL, 0), 0);
	run_to(n, 8 * LAT_NS);
	assert_int_equal(emu_cm_id_state(s2), EMU_CM_TIMEWAIT);
	assert_int_equal(emu_cm_id_state(s0), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(c0), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(c2), EMU_CM_TIMEWAIT);
	net_free(n);
}

static void test_api_errors(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c, *l, *l2, *l3;
	uint8_t big[255] = { 0 };
	struct emu_cm_rep_param rep = { .private_data = big, .private_data_len = 197 };
	struct emu_cm_sidr_req_param sp = { .path = &path, .private_data = big,
					    .private_data_len = 217 };

	(void)state;
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	/* private-data limits (spec §9) */
	p.private_data = big;
	p.private_data_len = 93;
	assert_int_equal(emu_cm_send_req(c, &p), -EINVAL);
	p.private_data_len = 92;
	p.primary_path = NULL;
	assert_int_equal(emu_cm_send_req(c, &p), -EINVAL);
	p.primary_path = &path;
	p.qp_type = EMU_CM_TRANSPORT_RD;
	assert_int_equal(emu_cm_send_req(c, &p), -EINVAL);
	p.qp_type = EMU_CM_TRANSPORT_RC;
	assert_int_equal(emu_cm_send_rep(c, &rep), -EINVAL);
	assert_int_equal(emu_cm_send_rtu(c, big, 225), -EINVAL);
	assert_int_equal(emu_cm_send_rej(c, 28, NULL, 0, big, 149), -EINVAL);
	assert_int_equal(emu_cm_send_rej(c, 28, big, 73, NULL, 0), -EINVAL);
	assert_int_equal(emu_cm_send_mra(c, 0, big, 223), -EINVAL);
	assert_int_equal(emu_cm_send_dreq(c, big, 221), -EINVAL);
	assert_int_equal(emu_cm_send_drep(c, big, 225), -EINVAL);
	assert_int_equal(emu_cm_send_sidr_req(c, &sp), -EINVAL);
	/* calls the state does not allow */
	rep.private_data_len = 0;
	assert_int_equal(emu_cm_send_rep(c, &rep), -EINVAL);
	assert_int_equal(emu_cm_send_rtu(c, NULL, 0), -EINVAL);
	assert_int_equal(emu_cm_send_dreq(c, NULL, 0), -EINVAL);
	assert_int_equal(emu_cm_send_rej(c, 28, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(emu_cm_establish(c), -EINVAL);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	assert_int_equal(emu_cm_send_req(c, &p), -EINVAL);
	assert_int_equal(emu_cm_listen(c, 1, 0), -EINVAL);
	/* listen collisions */
	assert_int_equal(emu_cm_create_id(n->h[1].a, handler, &n->h[1], &l), 0);
	assert_int_equal(emu_cm_listen(l, EMU_RDMA_IB_IP_PS_TCP, EMU_RDMA_IB_IP_PS_MASK), 0);
	assert_int_equal(emu_cm_create_id(n->h[1].a, handler, &n->h[1], &l2), 0);
	assert_int_equal(emu_cm_listen(l2, SID_TCP(5), 0), -EBUSY);
	assert_int_equal(emu_cm_listen(l2, SID_UDP(5), 0), 0);
	/* the masked listener takes any TCP port; REP then COMM_EST before the RTU */
	n->h[1].on_req = REQ_ACCEPT;
	n->h[0].auto_rtu = false;
	run_to(n, 2 * LAT_NS);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_REP_SENT);
	assert_int_equal(emu_cm_establish(n->h[1].last_new), 0);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_establish(n->h[1].last_new), -EISCONN);
	run_to(n, 3 * LAT_NS);
	assert_int_equal(n->h[1].ev[1].type, EMU_CM_UE_USER_ESTABLISHED);
	assert_int_equal(n->h[1].ev[1].t, 2 * LAT_NS);
	run_to(n, 1000000 * MS);
	assert_int_equal(count_tx(n, 1, EMU_CM_ATTR_REP), 1); /* the work cancelled the REP */
	/* a destroyed listener leaves the listeners: its services are free again, the other
	 * listener stays */
	emu_cm_destroy_id(l);
	assert_int_equal(emu_cm_create_id(n->h[1].a, handler, &n->h[1], &l), 0);
	assert_int_equal(emu_cm_listen(l, SID_TCP(5), 0), 0);
	assert_int_equal(emu_cm_create_id(n->h[1].a, handler, &n->h[1], &l3), 0);
	assert_int_equal(emu_cm_listen(l3, SID_UDP(5), 0), -EBUSY);
	assert_int_equal(emu_cm_listen(l3, SID_TCP(6), 0), 0);
	/* fault setter */
	assert_int_equal(emu_cm_fault_set(n->h[0].a, 0x10 - 1, &(struct emu_cm_fault){ 0 }), -EINVAL);
	assert_int_equal(emu_cm_fault_set(n->h[0].a, EMU_CM_ATTR_APR + 1, &(struct emu_cm_fault){ 0 }),
			 -EINVAL);
	net_free(n);
}

/* Probabilistic drops: the same fabric seed gives the same drops; another seed others. */
static uint64_t drop_pattern(uint64_t seed)
{
	struct net *n = net_new(2, seed);
	struct emu_cm_fault f = { .p_drop = 0.5 };
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c;
	uint64_t bits = 0;

	n->h[1].down = true;
	assert_int_equal(emu_cm_fault_set(n->h[0].a, EMU_CM_ATTR_REQ, &f), 0);
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	run_to(n, 1000000 * MS);
	/* the transport sees only the REQs that survived: which of the 16 went out */
	for (int i = 0; i < n->ntx; i++)
		if (n->tx[i].attr == EMU_CM_ATTR_REQ)
			bits |= 1ull << (n->tx[i].t / (4098 * MS));
	net_free(n);
	return bits;
}

static void test_fault_reproducible(void **state)
{
	uint64_t a = drop_pattern(1234), b = drop_pattern(1234), c = drop_pattern(99);

	(void)state;
	assert_int_equal(a, b);
	assert_int_not_equal(a, 0);
	assert_int_not_equal(a, 0xffff);
	assert_int_not_equal(a, c);
}

static void test_delay_fault(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_fault f = { .delay_next = 1, .delay_ns = 7 * MS };
	struct emu_cm_id *c;

	(void)state;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_fault_set(n->h[1].a, EMU_CM_ATTR_REP, &f), 0);
	c = NULL;
	{
		struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);

		assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
		assert_int_equal(emu_cm_send_req(c, &p), 0);
	}
	run_to(n, 7 * MS + 2 * LAT_NS - 1);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_REQ_SENT);
	run_to(n, 7 * MS + 2 * LAT_NS);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(n->h[0].ev[0].t, 7 * MS + 2 * LAT_NS);
	net_free(n);
}

/* A transport that delivers inside send_mad: the REP comes back while host 0 is still inside
 * emu_cm_send_req; it is queued and handled when the call returns, never nested. */
static void test_sync_transport_reentrancy(void **state)
{
	struct net *n = net_new(2, 1);
	struct emu_cm_path_rec path = path_to(n, 0, 1, 0);
	struct emu_cm_req_param p = req_param(n, 0, 1, &path, 15);
	struct emu_cm_id *c;

	(void)state;
	n->sync = true;
	listen_on(&n->h[1], SID_TCP(7471));
	assert_int_equal(emu_cm_create_id(n->h[0].a, handler, &n->h[0], &c), 0);
	assert_int_equal(emu_cm_send_req(c, &p), 0);
	/* all of REQ -> REP -> RTU happened at time 0, in order */
	assert_int_equal(emu_cm_id_state(c), EMU_CM_ESTABLISHED);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_ESTABLISHED);
	assert_int_equal(n->ntx, 3);
	assert_int_equal(n->tx[0].attr, EMU_CM_ATTR_REQ);
	assert_int_equal(n->tx[1].attr, EMU_CM_ATTR_REP);
	assert_int_equal(n->tx[2].attr, EMU_CM_ATTR_RTU);
	assert_int_equal(n->h[0].ev[0].t, 0);
	/* the REQ's timer was stopped by the REP handled after the call, not re-armed by it */
	run_to(n, 100000 * MS);
	assert_int_equal(n->ntx, 3);
	assert_int_equal(n->h[0].nev, 1);
	/* a handler-driven teardown: DREQ -> DREP -> both in timewait */
	assert_int_equal(emu_cm_send_dreq(c, NULL, 0), 0);
	assert_int_equal(emu_cm_id_state(c), EMU_CM_TIMEWAIT);
	assert_int_equal(emu_cm_id_state(n->h[1].last_new), EMU_CM_TIMEWAIT);
	net_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_disconnect),
		cmocka_unit_test(test_rej_no_listener),
		cmocka_unit_test(test_consumer_reject),
		cmocka_unit_test(test_mra_extends_timeout),
		cmocka_unit_test(test_rep_dropped_req_error),
		cmocka_unit_test(test_req_unanswered_rdma_cm_defaults),
		cmocka_unit_test(test_rtu_dropped_rep_retried),
		cmocka_unit_test(test_duplicate_req),
		cmocka_unit_test(test_stale_connection),
		cmocka_unit_test(test_dreq_peer_gone),
		cmocka_unit_test(test_dreq_for_no_id),
		cmocka_unit_test(test_destroy_sends),
		cmocka_unit_test(test_sidr),
		cmocka_unit_test(test_sidr_duplicate),
		cmocka_unit_test(test_three_agents_demux),
		cmocka_unit_test(test_api_errors),
		cmocka_unit_test(test_fault_reproducible),
		cmocka_unit_test(test_delay_fault),
		cmocka_unit_test(test_sync_transport_reentrancy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
