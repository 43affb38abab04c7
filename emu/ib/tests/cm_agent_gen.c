/* Runs two CM agents through a connection, a REQ nobody listens for, a SIDR exchange and a
 * disconnect, and writes every MAD they send to DIR/cm-agent.pcap as the RoCEv2 UD SEND from
 * QP1 to QP1 that the kernel's MAD layer would put on the wire, at its virtual send time. For
 * cm-agent-tshark.sh. Prints "FRAME ATTR LOCAL_COMM REMOTE_COMM" per frame (the manifest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/cm_agent.h"
#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"

struct host;
struct gen {
	struct emu_clock clk;
	struct emu_pcap *pcap;
	struct host *h[2];
	unsigned frames;
	int err;
};

struct host {
	struct gen *g;
	int idx;
	struct emu_cm_agent *a;
	struct emu_cm_addr addr;
	uint8_t mac[6];
	struct emu_cm_id *last;
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

static int send_mad(void *ctx, const struct emu_cm_addr *dst, const uint8_t mad[EMU_MAD_LEN])
{
	struct host *h = ctx, *to = h->g->h[1 - h->idx];
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = EMU_PKEY_DEFAULT,
			       .dqpn = EMU_CM_QP, .psn = h->g->frames };
	struct emu_pkt_ext x = { .deth = { .qkey = EMU_CM_QKEY, .sqpn = EMU_CM_QP } };
	uint8_t frame[512];
	struct emu_cm_msg m;
	uint16_t attr;
	ssize_t len;
	struct pkt *p;

	if (memcmp(dst->gid, to->addr.gid, 16))
		return -1;
	memcpy(a.smac, h->mac, 6);
	memcpy(a.dmac, to->mac, 6);
	memcpy(a.sgid, h->addr.gid, 16);
	memcpy(a.dgid, to->addr.gid, 16);
	a.sport = emu_roce_sport_rxe(EMU_CM_QP);
	a.ip_id = (uint16_t)(0x100 + h->g->frames);
	len = emu_pkt_build(frame, sizeof(frame), &a, &bth, &x, mad, EMU_MAD_LEN, NULL);
	if (len < 0 || emu_pcap_write(h->g->pcap, emu_clock_now(&h->g->clk), frame, (size_t)len) ||
	    emu_cm_unpack(mad, EMU_MAD_LEN, &attr, &m)) {
		h->g->err = 1;
		return -1;
	}
	h->g->frames++;
	printf("%u %u %u %u\n", h->g->frames, attr,
	       attr == EMU_CM_ATTR_SIDR_REQ || attr == EMU_CM_ATTR_SIDR_REP ? m.request_id :
									       m.local_comm_id,
	       m.remote_comm_id);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->to = to;
	p->src = h->addr;
	memcpy(p->mad, mad, EMU_MAD_LEN);
	emu_timer_init(&p->t, pkt_fire, p);
	emu_timer_arm_in(&h->g->clk, &p->t, 2 * EMU_NSEC_PER_USEC);
	return 0;
}

static int handler(struct emu_cm_id *id, const struct emu_cm_event *e)
{
	struct host *h = emu_cm_id_context(id);

	switch (e->type) {
	case EMU_CM_UE_REQ_RECEIVED: {
		struct emu_cm_rep_param p = { .qp_num = 0x12, .starting_psn = 0x123456,
					      .responder_resources = 4, .initiator_depth = 4,
					      .rnr_retry_count = 7 };

		h->last = id;
		return emu_cm_send_rep(id, &p) != 0;
	}
	case EMU_CM_UE_REP_RECEIVED:
		return emu_cm_send_rtu(id, NULL, 0) != 0;
	case EMU_CM_UE_DREQ_RECEIVED:
		return emu_cm_send_drep(id, NULL, 0) != 0;
	case EMU_CM_UE_SIDR_REQ_RECEIVED: {
		struct emu_cm_sidr_rep_param p = { .qp_num = 0x34, .qkey = 0x01234567 };

		emu_cm_send_sidr_rep(id, &p);
		return 1;
	}
	default:
		return 0;
	}
}

static const struct emu_cm_transport_ops ops = { .send_mad = send_mad };

int main(int argc, char **argv)
{
	static struct gen g;
	static struct host hs[2];
	struct emu_prng fabric;
	char path[4096];
	struct emu_cm_id *c, *c2, *c3, *l, *lu;
	struct emu_cm_path_rec path_ab = { .hop_limit = 64, .mtu = 3, .pkey = 0xffff,
					   .packet_life_time = EMU_CMA_IBOE_PACKET_LIFETIME };
	struct emu_cma_hdr ch = { .cma_version = EMU_CMA_VERSION, .ip_version = 4, .port = 0xc000 };
	uint8_t pd[EMU_CM_REQ_PRIVATE_DATA_SIZE] = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: cm_agent_gen DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cm-agent.pcap", argv[1]);
	g.pcap = emu_pcap_open(path, EMU_LL_ETHERNET);
	if (!g.pcap) {
		perror(path);
		return 1;
	}
	emu_clock_init(&g.clk, 0);
	emu_prng_seed(&fabric, 2026);
	for (int i = 0; i < 2; i++) {
		struct emu_cm_agent_cfg cfg = { .name = i ? "b" : "a",
						.ca_guid = 0x0002c90300a1b2c3ull + (uint64_t)i,
						.ack_delay = EMU_RXE_LOCAL_CA_ACK_DELAY,
						.hi_tid = 1 + (uint32_t)i, .prng = &fabric,
						.stream = (uint64_t)i };
		struct host *h = &hs[i];

		h->g = &g;
		h->idx = i;
		g.h[i] = h;
		h->addr.gid[10] = 0xff;
		h->addr.gid[11] = 0xff;
		h->addr.gid[12] = 192;
		h->addr.gid[14] = 2;
		h->addr.gid[15] = (uint8_t)(65 + i);
		h->addr.port = 1;
		memcpy(h->mac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0, 0, (uint8_t)(0x41 + i) }, 6);
		if (emu_cm_agent_create(&g.clk, &ops, h, &cfg, &h->a))
			return 1;
	}
	memcpy(path_ab.sgid, hs[0].addr.gid, 16);
	memcpy(path_ab.dgid, hs[1].addr.gid, 16);
	memcpy(ch.src + 12, hs[0].addr.gid + 12, 4);
	memcpy(ch.dst + 12, hs[1].addr.gid + 12, 4);
	emu_cma_hdr_pack(pd, &ch);
	memcpy(pd + EMU_CMA_HDR_LEN, "hello", 5);

	if (emu_cm_create_id(hs[1].a, handler, &hs[1], &l) ||
	    emu_cm_listen(l, emu_cma_service_id(EMU_RDMA_PS_TCP, 20000), 0) ||
	    emu_cm_create_id(hs[1].a, handler, &hs[1], &lu) ||
	    emu_cm_listen(lu, emu_cma_service_id(EMU_RDMA_PS_UDP, 20000), 0))
		return 1;
	/* 1-3: REQ, REP, RTU */
	struct emu_cm_req_param rp = {
		.primary_path = &path_ab, .dst = hs[1].addr,
		.service_id = emu_cma_service_id(EMU_RDMA_PS_TCP, 20000), .qp_num = 0x11,
		.qp_type = EMU_CM_TRANSPORT_RC, .starting_psn = 0xabcdef,
		.responder_resources = 4, .initiator_depth = 4,
		.remote_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT,
		.local_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT, .retry_count = 7,
		.rnr_retry_count = 7, .max_cm_retries = EMU_CMA_MAX_CM_RETRIES,
		.private_data = pd, .private_data_len = sizeof(pd),
	};
	if (emu_cm_create_id(hs[0].a, handler, &hs[0], &c) || emu_cm_send_req(c, &rp))
		return 1;
	emu_clock_run_until(&g.clk, 1 * EMU_NSEC_PER_MSEC, 1000, NULL);
	/* 4-5: REQ for a port nobody listens on, REJ 8 */
	rp.service_id = emu_cma_service_id(EMU_RDMA_PS_TCP, 20001);
	rp.qp_num = 0x13;
	if (emu_cm_create_id(hs[0].a, handler, &hs[0], &c2) || emu_cm_send_req(c2, &rp))
		return 1;
	emu_clock_run_until(&g.clk, 2 * EMU_NSEC_PER_MSEC, 1000, NULL);
	/* 6-7: SIDR_REQ, SIDR_REP */
	struct emu_cm_sidr_req_param sp = { .path = &path_ab, .dst = hs[1].addr,
					    .service_id = emu_cma_service_id(EMU_RDMA_PS_UDP, 20000),
					    .timeout_ms = 2000, .max_cm_retries = 3,
					    .private_data = pd, .private_data_len = sizeof(pd) };
	if (emu_cm_create_id(hs[0].a, handler, &hs[0], &c3) || emu_cm_send_sidr_req(c3, &sp))
		return 1;
	emu_clock_run_until(&g.clk, 3 * EMU_NSEC_PER_MSEC, 1000, NULL);
	/* 8-9: DREQ, DREP */
	if (emu_cm_send_dreq(c, NULL, 0))
		return 1;
	emu_clock_run_idle(&g.clk, 1000, NULL);
	for (int i = 0; i < 2; i++)
		emu_cm_agent_destroy(hs[i].a);
	emu_clock_fini(&g.clk);
	g.err |= emu_pcap_close(g.pcap) != 0;
	return g.err || g.frames != 9;
}
