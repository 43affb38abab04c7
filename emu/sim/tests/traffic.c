/* See traffic.h. Endpoints 0/1 (RoCE link 0), 2/3 (RoCE link 1), 4/5 (IB link 2); the even
 * endpoint of each link is a requester sending RC SEND_ONLY every `period`, the odd one answers
 * every SEND it receives with an RC ACK. Link 1 goes down from 100 to 120 us; link 0's loss
 * rises at 80 us, to exercise run-time fault changes. */
#include "traffic.h"

#include <errno.h>
#include <string.h>

#include "frames.h"

struct node {
	struct traffic *tr;
	int ep;
	struct emu_timer send_timer;
	unsigned sent;
	uint32_t psn;
	uint64_t period;
};

struct traffic {
	struct emu_clock clk;
	struct emu_wire *w;
	struct node nodes[TRAFFIC_EPS];
	struct emu_timer fault_timer[3];
	struct traffic_result *res;
	int err;
};

static const int link_layer[TRAFFIC_LINKS] = { EMU_LL_ETHERNET, EMU_LL_ETHERNET,
						EMU_LL_INFINIBAND };

static const struct emu_faults link_faults[TRAFFIC_LINKS] = {
	{ .delay_ns = 1000, .jitter_ns = 500, .loss = 0.05, .duplicate = 0.05, .reorder = 0.1 },
	{ .delay_ns = 2000, .loss = 0.02 },
	{ .delay_ns = 500, .jitter_ns = 200, .loss = 0.05, .duplicate = 0.05, .reorder = 0.1 },
};

static const uint64_t send_period[TRAFFIC_LINKS] = { 700, 1300, 900 };

static void addr_of(int ep, struct frame_roce_addr *ra, struct frame_ib_addr *ia)
{
	int self = ep, peer = ep ^ 1;
	static const uint8_t mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x00, 0x00 };

	memcpy(ra->smac, mac, 6);
	memcpy(ra->dmac, mac, 6);
	ra->smac[5] = (uint8_t)(self + 1);
	ra->dmac[5] = (uint8_t)(peer + 1);
	ra->saddr = 0xc0000240u + (uint32_t)self + 1; /* 192.0.2.65.. */
	ra->daddr = 0xc0000240u + (uint32_t)peer + 1;
	ra->sport = (uint16_t)(0xc000 + (self & ~1) * 16 + 0x11);
	ia->slid = (uint16_t)(self + 1);
	ia->dlid = (uint16_t)(peer + 1);
	ia->sl = 0;
	ia->vl = 0;
}

static size_t build(int ep, const struct frame_bth *bth, const void *ext, size_t extlen,
		    const void *payload, size_t plen, uint8_t *buf, size_t cap)
{
	struct frame_roce_addr ra;
	struct frame_ib_addr ia;

	addr_of(ep, &ra, &ia);
	if (link_layer[ep / 2] == EMU_LL_ETHERNET)
		return frame_build_roce(buf, cap, &ra, bth, ext, extlen, payload, plen);
	return frame_build_ib(buf, cap, &ia, bth, ext, extlen, payload, plen);
}

static void send_frame(struct traffic *tr, int ep, const uint8_t *buf, size_t len)
{
	int ret = emu_wire_send(tr->w, ep, buf, len);

	if (ret && !tr->err)
		tr->err = ret;
}

static void requester_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct node *n = arg;
	uint8_t payload[256], buf[512];
	/* Lengths 13..255: every pad count occurs. */
	size_t plen = 13 + (n->psn * 37) % 243, len;
	struct frame_bth bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .ack_req = true,
				 .pkey = 0xffff, .dqpn = 0x11 + (uint32_t)n->ep, .psn = n->psn };

	for (size_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(n->psn + i);
	len = build(n->ep, &bth, NULL, 0, payload, plen, buf, sizeof(buf));
	send_frame(n->tr, n->ep, buf, len);
	n->psn = (n->psn + 1) & 0xffffff;
	if (++n->sent < TRAFFIC_SENDS)
		emu_timer_arm_in(clk, t, n->period);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void node_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct node *n = ctx;
	struct traffic *tr = n->tr;
	int off = link_layer[n->ep / 2] == EMU_LL_ETHERNET ? FRAME_ROCE_BTH_OFF : FRAME_IB_BTH_OFF;
	struct frame_bth in, ack;
	uint8_t aeth[4], buf[64];
	size_t alen;

	tr->res->rx[n->ep]++;
	tr->res->rx_hash = fnv1a(tr->res->rx_hash, &n->ep, sizeof(n->ep));
	tr->res->rx_hash = fnv1a(tr->res->rx_hash, &now, sizeof(now));
	tr->res->rx_hash = fnv1a(tr->res->rx_hash, frame, len);
	frame_parse_bth(frame + off, &in);
	if (in.opcode != FRAME_OP_RC_SEND_ONLY)
		return;
	/* AETH: syndrome 0 (ACK, credits 0), MSN = PSN + 1. */
	aeth[0] = 0;
	aeth[1] = (uint8_t)((in.psn + 1) >> 16);
	aeth[2] = (uint8_t)((in.psn + 1) >> 8);
	aeth[3] = (uint8_t)(in.psn + 1);
	ack = (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .pkey = 0xffff,
				  .dqpn = 0x11 + (uint32_t)(n->ep ^ 1), .psn = in.psn };
	alen = build(n->ep, &ack, aeth, sizeof(aeth), NULL, 0, buf, sizeof(buf));
	send_frame(tr, n->ep, buf, alen);
}

static void loss_up_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct traffic *tr = arg;
	struct emu_faults f = link_faults[0];

	f.loss = 0.2;
	emu_wire_set_faults(tr->w, 0, &f);
}

static void set_down(struct traffic *tr, int link, bool down)
{
	struct emu_faults f;

	emu_wire_get_faults(tr->w, link, &f);
	f.down = down;
	emu_wire_set_faults(tr->w, link, &f);
}

static void link1_down_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	set_down(arg, 1, true);
}

static void link1_up_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	set_down(arg, 1, false);
}

int traffic_run(uint64_t seed, struct emu_pcap *eth, struct emu_pcap *ib,
		struct traffic_result *res)
{
	struct traffic tr = { .res = res };
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->rx_hash = 0xcbf29ce484222325ULL;
	emu_clock_init(&tr.clk, 0);
	tr.w = emu_wire_new(&tr.clk, seed);
	if (!tr.w)
		return -ENOMEM;
	if (emu_wire_set_tap(tr.w, EMU_LL_ETHERNET, eth) ||
	    emu_wire_set_tap(tr.w, EMU_LL_INFINIBAND, ib)) {
		ret = -EINVAL;
		goto out;
	}
	for (int i = 0; i < TRAFFIC_EPS; i++) {
		struct node *n = &tr.nodes[i];

		*n = (struct node){ .tr = &tr, .ep = i, .psn = 0x100 * (uint32_t)i,
				    .period = send_period[i / 2] };
		ret = emu_wire_add_endpoint(tr.w, 0x100 + (uint64_t)i, node_rx, n);
		if (ret != i) {
			ret = ret < 0 ? ret : -EIO;
			goto out;
		}
		emu_timer_init(&n->send_timer, requester_fire, n);
	}
	for (int l = 0; l < TRAFFIC_LINKS; l++) {
		ret = emu_wire_connect(tr.w, 2 * l, 2 * l + 1, link_layer[l], &link_faults[l]);
		if (ret != l) {
			ret = ret < 0 ? ret : -EIO;
			goto out;
		}
		/* Requesters start staggered so links interleave on the clock. */
		emu_timer_arm_at(&tr.clk, &tr.nodes[2 * l].send_timer, 100 * (uint64_t)l);
	}
	emu_timer_init(&tr.fault_timer[0], loss_up_fire, &tr);
	emu_timer_init(&tr.fault_timer[1], link1_down_fire, &tr);
	emu_timer_init(&tr.fault_timer[2], link1_up_fire, &tr);
	emu_timer_arm_at(&tr.clk, &tr.fault_timer[0], 80 * EMU_NSEC_PER_USEC);
	emu_timer_arm_at(&tr.clk, &tr.fault_timer[1], 100 * EMU_NSEC_PER_USEC);
	emu_timer_arm_at(&tr.clk, &tr.fault_timer[2], 120 * EMU_NSEC_PER_USEC);

	ret = emu_clock_run_idle(&tr.clk, 1000000, &res->timers_fired);
	if (ret == 0)
		ret = tr.err;
	res->end_ns = emu_clock_now(&tr.clk);
	for (int l = 0; l < TRAFFIC_LINKS; l++)
		for (int d = 0; d < 2; d++)
			emu_wire_counters(tr.w, l, (enum emu_wire_dir)d, &res->ctr[l][d]);
out:
	emu_wire_free(tr.w);
	emu_clock_fini(&tr.clk);
	return ret;
}
