/* The MAD layer on the wire: a MAD as a UD SEND_ONLY packet to/from QP1, the QP1 receive
 * checks, and the RoCE destination MAC seam (emu/ib/gsi.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/ib/gsi_priv.h"
#include "emu/hca/gid_table.h"
#include "emu/hca/pkt.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"
#include "util/failnth.h"

int emu_gsi_mac_from_fabric(struct emu_engine *e, const struct emu_gsi_port *from,
			    const uint8_t dgid[16], uint8_t mac[6])
{
	const struct emu_fabric *f = emu_engine_fabric(e);

	(void)from;
	for (size_t h = 0; h < f->nhosts; h++) {
		const struct emu_host *ho = &f->hosts[h];

		for (size_t d = 0; d < ho->ndevices; d++)
			for (size_t p = 0; p < ho->devices[d].nports; p++) {
				const struct emu_port *po = &ho->devices[d].ports[p];

				if (po->link_layer != 2)
					continue;
				for (size_t i = 0; i < po->ngids; i++) {
					int nd = po->gids[i].netdev;

					if (memcmp(po->gids[i].raw, dgid, 16) || nd < 0 ||
					    (size_t)nd >= ho->nnetdevs)
						continue;
					memcpy(mac, ho->netdevs[nd].hwaddr, 6);
					return 0;
				}
			}
	}
	return -EHOSTUNREACH;
}

/* RoCE: the port's RoCEv2 GID of the destination's kind (IPv4-mapped or not), as the CM picks
 * the source GID of the route; its netdev gives the source MAC. */
static int roce_source(const struct emu_gsi_port *p, const uint8_t dgid[16], uint8_t sgid[16],
		       uint8_t smac[6])
{
	const struct emu_port *po = p->port;
	const struct emu_host *h = po->dev->host;
	bool v4 = emu_gid_is_v4mapped(dgid);

	for (size_t i = 0; i < po->ngids; i++) {
		const struct emu_gid *g = &po->gids[i];

		if (g->type != EMU_GID_ROCE_V2 || emu_gid_is_v4mapped(g->raw) != v4)
			continue;
		memcpy(sgid, g->raw, 16);
		if (g->netdev >= 0 && (size_t)g->netdev < h->nnetdevs)
			memcpy(smac, h->netdevs[g->netdev].hwaddr, 6);
		return 0;
	}
	return -EADDRNOTAVAIL;
}

/* The RoCE addressing of a MAD to dgid: source GID and MAC, the destination MAC, and whether
 * dgid is one of the port's own (looped back). Kept for the port's last destination while no
 * GID table changed (emu_gid_table_generation) and the MACs come from the fabric file, the
 * one resolver whose answers depend on nothing else. */
static bool roce_own_gid(const struct emu_gsi_port *p, const uint8_t dgid[16]);

static int roce_route(struct emu_gsi_port *p, const uint8_t dgid[16], struct emu_pkt_addr *a,
		      bool *local)
{
	struct emu_engine *e = p->g->e;
	const struct emu_fabric *f = emu_engine_fabric(e);
	unsigned long gen = emu_gid_table_generation();
	bool cacheable = p->g->mac == emu_gsi_mac_from_fabric;
	int rc;

	if (cacheable && p->route.fabric == f && p->route.gen == gen &&
	    !memcmp(p->route.dgid, dgid, 16)) {
		memcpy(a->sgid, p->route.sgid, 16);
		memcpy(a->smac, p->route.smac, 6);
		memcpy(a->dmac, p->route.dmac, 6);
		*local = p->route.local;
		return 0;
	}
	rc = roce_source(p, dgid, a->sgid, a->smac);
	*local = !rc && roce_own_gid(p, dgid);
	if (*local)
		memcpy(a->dmac, a->smac, 6);
	else if (!rc)
		rc = p->g->mac(e, p, dgid, a->dmac);
	if (rc || !cacheable)
		return rc;
	p->route.local = *local;
	p->route.gen = gen;
	p->route.fabric = f;
	memcpy(p->route.dgid, dgid, 16);
	memcpy(p->route.sgid, a->sgid, 16);
	memcpy(p->route.smac, a->smac, 6);
	memcpy(p->route.dmac, a->dmac, 6);
	return 0;
}

/* rxe_net.c's loopback (prepare4/6 set RXE_LOOPBACK_MASK when the source and destination
 * addresses are equal; rxe_loopback hands the skb to rxe_rcv): a MAD a RoCE port addresses to
 * one of its own GIDs (an IB port: to one of its own LIDs) never reaches the wire and comes back into this port's QP1, at the same
 * virtual instant but after the sender's call returns (the kernel's receive is a softirq). */
struct gsi_loop {
	struct emu_list node;
	struct emu_timer t;
	struct emu_gsi_port *p;
	size_t len;
	uint8_t frame[];
};

static bool roce_own_gid(const struct emu_gsi_port *p, const uint8_t dgid[16])
{
	for (size_t i = 0; p->port && i < p->port->ngids; i++)
		if (!memcmp(p->port->gids[i].raw, dgid, 16))
			return true;
	return false;
}

static void loop_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct gsi_loop *l = arg;

	(void)t;
	emu_list_del(&l->node);
	emu_gsi_trace("rx: looped-back frame, %zu bytes", l->len);
	emu_engine_port_count(l->p->g->e, l->p->host, l->p->dev, l->p->num, true, l->frame, l->len);
	emu_gsi_port_rx(l->p, l->frame, l->len, emu_clock_now(clk));
	free(l);
}

static int loop_send(struct emu_gsi_port *p, const uint8_t *frame, size_t len)
{
	struct gsi_loop *l = emu_malloc(sizeof(*l) + len);

	if (!l)
		return -ENOMEM;
	l->p = p;
	l->len = len;
	memcpy(l->frame, frame, len);
	emu_engine_port_count(p->g->e, p->host, p->dev, p->num, false, frame, len);
	emu_list_add_tail(&p->loopback, &l->node);
	emu_timer_init(&l->t, loop_fire, l);
	emu_timer_arm_in(emu_engine_clock(p->g->e), &l->t, 0);
	return 0;
}

void emu_gsi_loopback_flush(struct emu_gsi_port *p)
{
	while (!emu_list_empty(&p->loopback)) {
		struct gsi_loop *l = emu_list_entry(p->loopback.next, struct gsi_loop, node);

		emu_timer_cancel(emu_engine_clock(p->g->e), &l->t);
		emu_list_del(&l->node);
		free(l);
	}
}

/* A MAD to another port of this process goes on the wire as its description (emu/sim/wire.h): the
 * frame is built only if a capture records it or the receiver is not QP1 of a RoCE port here
 * (then its bytes take the usual path); QP1 takes the MAD straight from the description, with
 * what it would read from the headers. Same counters, delivery instants, order and traces. */
struct gsi_frame {
	struct emu_pkt_addr a;
	struct emu_bth bth;
	struct emu_pkt_ext x;
	uint8_t mad[EMU_MAD_LEN];
};

static void frame_build(const void *obj, uint8_t *buf, size_t len)
{
	const struct gsi_frame *g = obj;

	emu_pkt_build(buf, len, &g->a, &g->bth, &g->x, g->mad, EMU_MAD_LEN, NULL);
}

static uint32_t frame_dqpn(const void *obj)
{
	return ((const struct gsi_frame *)obj)->bth.dqpn & EMU_QPN_MASK;
}

static const struct emu_wire_lazy frame_ops = { .build = frame_build, .dqpn = frame_dqpn };

/* RDMAEMU_CM_FASTPATH=0 sends every MAD as bytes (to measure or compare the two paths). */
static int lazy = -1;

static bool lazy_on(void)
{
	if (lazy < 0) {
		const char *v = getenv("RDMAEMU_CM_FASTPATH");

		lazy = !(v && !strcmp(v, "0"));
	}
	return lazy;
}

void emu_gsi_set_fastpath(bool on)
{
	lazy = on;
}

int emu_gsi_xmit(struct emu_gsi_port *p, const struct emu_gsi_addr *to, const uint8_t *mad)
{
	bool local = false;
	struct emu_engine *e = p->g->e;
	struct emu_pkt_addr a;
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY,
			       .pkey = to->pkey ? to->pkey : p->info.pkey,
			       .dqpn = to->qpn ? to->qpn : 1,
			       .psn = p->psn++ & EMU_PSN_MASK };
	struct emu_pkt_ext x = { .deth = { .qkey = to->qkey ? to->qkey : EMU_QP1_QKEY, .sqpn = 1 } };
	uint8_t buf[EMU_ETH_LEN + EMU_IPV6_LEN + EMU_UDP_LEN + EMU_BTH_LEN + EMU_DETH_LEN +
		    EMU_MAD_LEN + EMU_ICRC_LEN + EMU_GRH_LEN + 16];
	ssize_t n;
	int rc;

	memset(&a, 0, sizeof(a));
	a.link_layer = p->info.link_layer;
	a.tclass = to->tclass;
	a.flow_label = to->flow_label;
	a.hop_limit = to->hop_limit;
	memcpy(a.dgid, to->gid, 16);
	if (a.link_layer == EMU_LL_ETHERNET) {
		rc = roce_route(p, to->gid, &a, &local);
		if (rc) {
			emu_gsi_trace("xmit: no route to the destination GID: %d", rc);
			return rc;
		}
		a.sport = emu_roce_sport_rxe(1);
		/* rxe's QP1 is a GSI QP, not UD: its MADs leave with AckReq set (measured on
		 * Linux 6.1.y; the responder ignores it on a UD transport) */
		bth.ackreq = true;
	} else {
		/* An IB CA loops a packet for one of its own LIDs (base LID .. + 2^LMC - 1) back
		 * to itself instead of sending it into the subnet: the CM connects to the host's
		 * own IPoIB address as on RoCE. A switch's management port never does. */
		local = !p->is_switch && p->info.lid && to->lid >= p->info.lid &&
			(unsigned)(to->lid - p->info.lid) < (1u << p->info.lmc);
		a.slid = p->info.lid;
		a.dlid = to->lid;
		a.sl = to->sl;
		a.grh = to->grh;
		memcpy(a.sgid, p->info.gid, 16);
	}
	if (!local && !p->is_switch && a.link_layer == EMU_LL_ETHERNET && lazy_on()) {
		/* assigned, not initialised: an initialiser also clears the 256 MAD bytes the
		 * memcpy below writes */
		struct gsi_frame g;
		ssize_t *len = &p->lazy_frame_len[emu_gid_is_v4mapped(a.sgid) &&
						    emu_gid_is_v4mapped(a.dgid)];

		if (!*len) /* emu_pkt_frame_len lays the whole packet out: once a family */
			*len = emu_pkt_frame_len(&a, bth.opcode, EMU_MAD_LEN);
		n = *len;
		if (n < 0)
			return (int)n;
		g.a = a;
		g.bth = bth;
		g.x = x;
		memcpy(g.mad, mad, EMU_MAD_LEN);
		rc = emu_engine_port_send_lazy(e, p->host, p->dev, p->num, &frame_ops, &g,
					       sizeof(g), (size_t)n);
		goto sent;
	}
	n = emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, mad, EMU_MAD_LEN, NULL);
	if (n < 0)
		return (int)n;
	if (local)
		rc = loop_send(p, buf, (size_t)n);
	else if (p->is_switch)
		rc = emu_topology_switch_send(emu_engine_topology(e), p->sw, buf, (size_t)n);
	else
		rc = emu_engine_port_send(e, p->host, p->dev, p->num, buf, (size_t)n);
sent:
	if (rc) {
		if (rc == -ENOMEM) /* no skb for it: the MAD is lost, its sender's timer goes on */
			emu_fail_lost("MAD");
		return rc;
	}
	p->cnt.sent++;
	if (emu_gsi_trace_on())
		emu_gsi_trace("xmit class 0x%02x %s attr 0x%04x status 0x%04x tid 0x%016llx%s to LID %u",
			      mad[1], emu_mad_method_name(mad[3]), emu_be16_get(mad + 16),
			      emu_be16_get(mad + 4), (unsigned long long)emu_be64_get(mad + 8),
			      emu_gsi_class_is_rmpp(mad[1]) && (mad[26] & EMU_RMPP_FLAG_ACTIVE)
				      ? (mad[25] == EMU_RMPP_TYPE_ACK ? " RMPP ACK" : " RMPP DATA")
				      : "",
			      to->lid);
	if (local)
		emu_gsi_trace("xmit: to the port's own GID: looped back");
	return 0;
}

/* The HCA's P_Key check (IBTA 10.9.3): same 15-bit key, and not both limited members. */
static bool pkey_ok(const struct emu_gsi_port *p, uint16_t pkey)
{
	if (!p->port || !p->port->npkeys)
		return (pkey & 0x7fff) == 0x7fff;
	for (size_t i = 0; i < p->port->npkeys; i++) {
		uint16_t k = p->port->pkeys[i];

		if ((k & 0x7fff) == (pkey & 0x7fff) && ((k | pkey) & 0x8000))
			return true;
	}
	return false;
}

static struct emu_gsi_agent *find_agent(struct emu_gsi_port *p, const uint8_t *mad)
{
	struct emu_list *it, *tmp;
	bool resp = emu_gsi_mad_is_response(mad);
	uint32_t hi = (uint32_t)(emu_be64_get(mad + 8) >> 32);

	emu_list_for_each_safe(it, tmp, &p->agents)
	{
		struct emu_gsi_agent *a = emu_list_entry(it, struct emu_gsi_agent, link);

		if (resp ? a->hi_tid == hi
			 : ((a->flags & EMU_GSI_SERVER) && a->mgmt_class == mad[1] &&
			    a->class_version == mad[2]))
			return a;
	}
	return NULL;
}

/* QP1's receive after the packet checks: the DETH and BTH fields and the MAD of a UD SEND_ONLY
 * (emu_gsi_port_rx reads them from a frame, gsi_rx_lazy from a description); `from` has the
 * sender's address from the LRH/GRH or Ethernet/IP headers. */
static void rx_mad(struct emu_gsi_port *p, uint32_t dqpn, uint8_t opcode, const struct emu_deth *d,
		   uint16_t pkey, const uint8_t *mad, size_t paylen, struct emu_gsi_addr *from)
{
	struct emu_gsi_recv r;
	struct emu_gsi_agent *a;
	uint8_t *owned = NULL;

	/* a switch's port 0 receives everything for its LIDs: QP1 only here */
	if (dqpn != 1 || opcode != (EMU_OP_UD | EMU_OP_SEND_ONLY)) {
		p->cnt.dropped_bad_mad++;
		return;
	}
	if (d->qkey != EMU_QP1_QKEY) {
		p->cnt.dropped_qkey++;
		emu_gsi_trace("rx: Q_Key 0x%08x is not QP1's: dropped", d->qkey);
		return;
	}
	if (!pkey_ok(p, pkey)) {
		p->cnt.dropped_pkey++;
		emu_gsi_trace("rx: P_Key 0x%04x not in the port's table: dropped", pkey);
		return;
	}
	/* ib_mad's validate_mad: a whole MAD, base version 1, no SMP class on QP1 */
	if (paylen < EMU_MAD_LEN || mad[0] != EMU_MAD_BASE_VERSION || !mad[1] ||
	    mad[1] == 0x01 || mad[1] == 0x81) {
		p->cnt.dropped_bad_mad++;
		emu_gsi_trace("rx: not a GSI MAD (%zu bytes, version %u, class 0x%02x): dropped",
			      paylen, paylen ? mad[0] : 0, paylen > 1 ? mad[1] : 0);
		return;
	}
	p->cnt.received++;
	memset(&r, 0, sizeof(r));
	r.mad = mad;
	r.len = EMU_MAD_LEN;
	r.port = p;
	r.from = *from;
	r.from.qpn = d->sqpn;
	r.from.qkey = d->qkey;
	r.from.pkey = pkey;
	if (emu_gsi_trace_on())
		emu_gsi_trace("rx class 0x%02x %s attr 0x%04x status 0x%04x tid 0x%016llx from LID %u",
			      mad[1], emu_mad_method_name(mad[3]), emu_be16_get(mad + 16),
			      emu_be16_get(mad + 4), (unsigned long long)emu_be64_get(mad + 8),
			      r.from.lid);
	a = find_agent(p, mad);
	if (!a) {
		p->cnt.dropped_no_agent++;
		emu_gsi_trace("rx: no agent for class 0x%02x v%u %s: dropped", mad[1], mad[2],
			      emu_gsi_mad_is_response(mad) ? "response" : "request");
		return;
	}
	if ((a->flags & EMU_GSI_RMPP) && emu_gsi_class_is_rmpp(mad[1]) &&
	    (mad[26] & EMU_RMPP_FLAG_ACTIVE)) {
		if (!emu_gsi_rmpp_recv(a, &r, &owned))
			return;
	}
	emu_gsi_deliver(a, &r);
	free(owned);
}

void emu_gsi_port_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct emu_gsi_port *p = ctx;
	struct emu_gsi_addr from;
	struct emu_pkt_info pi;
	struct emu_deth d;
	int rc;

	(void)now;
	rc = emu_pkt_parse(frame, len, p->info.link_layer, &pi);
	if (rc) {
		p->cnt.dropped_parse++;
		if (!p->is_switch) /* a receive error of the port (PortRcvErrors) */
			emu_engine_port_count_rcv_error(p->g->e, p->host, p->dev, p->num);
		emu_gsi_trace("rx: dropped: %s", emu_pkt_strerror(-rc));
		return;
	}
	if (pi.dqpn != 1 || pi.opcode != (EMU_OP_UD | EMU_OP_SEND_ONLY)) {
		p->cnt.dropped_bad_mad++;
		return;
	}
	emu_deth_get(frame + pi.hdr_off[EMU_PKT_H_DETH], &d);
	memset(&from, 0, sizeof(from));
	if (pi.link_layer == EMU_LL_INFINIBAND) {
		struct emu_lrh l;

		emu_lrh_get(frame + pi.lrh_off, &l);
		from.lid = l.slid;
		from.sl = l.sl;
		if (pi.grh_off != EMU_PKT_NO_HDR) {
			struct emu_grh g;

			emu_grh_get(frame + pi.grh_off, &g);
			from.grh = true;
			memcpy(from.gid, g.sgid, 16);
			from.tclass = g.tclass;
			from.flow_label = g.flow_label;
			from.hop_limit = g.hoplmt;
		}
	} else {
		from.grh = true;
		memcpy(from.mac, frame + 6, 6);
		if (pi.net == EMU_PKT_NET_IPV4) {
			static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

			memcpy(from.gid, pfx, 12);
			memcpy(from.gid + 12, frame + pi.ip_off + 12, 4);
		} else {
			memcpy(from.gid, frame + pi.ip_off + 8, 16);
		}
	}
	rx_mad(p, pi.dqpn, pi.opcode, &d, pi.bth.pkey, frame + pi.hdr_off[EMU_PKT_H_PAYLOAD],
	       pi.paylen, &from);
}

/* A MAD described by a port of this process (emu_gsi_xmit): what emu_gsi_port_rx would read
 * from its RoCE frame (source MAC; source IP, which for RoCEv2 is the source GID, IPv4-mapped
 * or not) without building and parsing it. IB frames (LRH, GRH) come as bytes. */
static bool gsi_rx_lazy(void *ctx, const struct emu_wire_lazy *ops, const void *obj,
			uint64_t now)
{
	struct emu_gsi_port *p = ctx;
	const struct gsi_frame *g = obj;
	struct emu_gsi_addr from;

	(void)now;
	if (ops != &frame_ops || g->a.link_layer != EMU_LL_ETHERNET ||
	    p->info.link_layer != EMU_LL_ETHERNET)
		return false;
	memset(&from, 0, sizeof(from));
	from.grh = true;
	memcpy(from.mac, g->a.smac, 6);
	memcpy(from.gid, g->a.sgid, 16);
	p->cnt.received_described++;
	rx_mad(p, g->bth.dqpn & EMU_QPN_MASK, g->bth.opcode, &g->x.deth, g->bth.pkey, g->mad,
	       EMU_MAD_LEN, &from);
	return true;
}

emu_wire_rx_lazy_fn *const emu_gsi_port_rx_lazy = gsi_rx_lazy;
