/* Frames out of the HCA (rxe_net.c in miniature): a packet's frame built for its path, then
 * handed to the wire, to another process of this host (through the shared-memory ring or
 * the daemon), or back into this HCA: a destination GID that is one of the port's own never
 * reaches the wire, it arrives through a zero-delay engine timer. Engine lock held
 * (emu/verbs/datapath.h). */
#include "config.h"

#include <string.h>

#include "emu/link/link.h"
#include "emu/verbs/datapath.h"

uint32_t emu_dp_mtu(const struct emu_vqp *q)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, q->attr.port_num ?
						   q->attr.port_num : 1);

	int m = q->qp.qp_type == IBV_QPT_UD ? emu_mtu_bytes(p ? p->active_mtu : IBV_MTU_1024) :
					       emu_mtu_bytes(q->attr.path_mtu);

	return m > 0 ? (uint32_t)m : 256; /* an invalid path_mtu: rxe falls back to 256 */
}

/* The receiving half of the HCA (emu/verbs/recv.c), which registers itself when the library
 * loads: where looped-back frames arrive. */
static emu_dp_rx_fn *loopback_rx;

void emu_dp_loopback_set_rx(emu_dp_rx_fn *rx)
{
	loopback_rx = rx;
}

static void frame_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_dp_frame *f = arg;

	(void)clk, (void)t;
	emu_engine_port_count(emu_dp_engine(), f->host, f->dev, f->port, true, f->data, f->len);
	loopback_rx(f->hca, f->link_layer, f->data, f->len, true);
	emu_dp_frame_put(f);
}

/* IB addressing (IBTA 7.7, 8.2): the source LID is the port's base LID with the path bits
 * within its LMC; VL 0 (one data VL, no SL-to-VL table); a GRH (LNH 3) when the path is
 * global. The HCA loops a packet back when the DLID is one of its own port's LIDs. */
static bool ib_addr(const struct emu_port *p, const struct emu_av *av, struct emu_pkt_addr *a)
{
	uint16_t lmc_mask = (uint16_t)((1u << p->lmc) - 1);

	a->link_layer = EMU_LL_INFINIBAND;
	a->slid = (uint16_t)(p->lid | (av->src_path_bits & lmc_mask));
	a->dlid = av->dlid;
	a->sl = av->sl & 0xf;
	a->vl = 0;
	a->grh = av->is_global;
	return p->lid && (av->dlid & (uint16_t)~lmc_mask) == p->lid;
}

/* RoCE v2 addressing: source MAC from the GID's netdev, destination MAC from the AV, the QP's UDP
 * source port. */
static int roce_addr(const struct emu_vqp *q, const struct emu_port *p, const struct emu_av *av,
		     struct emu_pkt_addr *a, bool *local)
{
	const struct emu_gid *g = &p->gids[av->sgid_index];
	const struct emu_host *h = p->dev->host;

	a->link_layer = EMU_LL_ETHERNET;
	if (g->netdev >= 0 && (size_t)g->netdev < h->nnetdevs)
		memcpy(a->smac, h->netdevs[g->netdev].hwaddr, 6);
	*local = false;
	for (size_t i = 0; i < p->ngids; i++)
		if (!memcmp(p->gids[i].raw, av->dgid.raw, 16))
			*local = true;
	/* The AV's MAC, resolved when the AH was created or the QP modified (emu/verbs/av.c).
	 * Not modelled: rxe hands its packets to ip_local_out, so on Linux the frame's MAC comes
	 * from the neighbour entry at send time (a STALE entry goes DELAY and PROBE with
	 * unicast ARPs during a long transfer); the two agree while the entry holds the MAC. */
	if (*local)
		memcpy(a->dmac, a->smac, 6);
	else if (av->dmac_valid)
		memcpy(a->dmac, av->dmac, 6);
	else if (emu_av_resolve_dmac(emu_engine_fabric(emu_dp_engine()), av, a->dmac))
		return -EHOSTUNREACH;
	a->sport = q->sport;
	return 0;
}

/* Where a frame's data comes from: flat bytes, or a WQE's gather list from an offset. */
struct xmit_src {
	const void *flat;
	const struct ibv_sge *sge;
	int nsge;
	uint64_t off;
};

/* The source's data into dst (NULL: the lkey checks only). */
static enum emu_mr_status src_copy(struct emu_vqp *q, const struct xmit_src *src, void *dst,
				   size_t len)
{
	if (src->sge)
		return emu_dp_copy_sge(q, src->sge, src->nsge, src->off, dst, len, false);
	if (dst && len)
		memcpy(dst, src->flat, len);
	return EMU_MR_OK;
}

/* A frame that is not built: a gather still has its lkeys checked, whose failure the
 * requester reports before anything else (it gathered before building, as rxe does). */
static int xmit_fail(struct emu_vqp *q, const struct xmit_src *src, size_t paylen,
		     enum emu_mr_status *gst, int err)
{
	if (src->sge)
		*gst = src_copy(q, src, NULL, paylen);
	return err;
}

/* The addresses of a frame for av out of port p, and whether it stays on this HCA. 0, or the
 * frame is not built: a negative error, or 1 with the gather's failure in *gst. */
static int frame_addr(struct emu_vqp *q, const struct emu_port *p, const struct emu_av *av,
		      const struct emu_bth *bth, const struct xmit_src *src, size_t paylen,
		      enum emu_mr_status *gst, struct emu_pkt_addr *a, bool *local)
{
	memset(a, 0, sizeof(*a));
	if (p->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		*local = ib_addr(p, av, a);
	} else if (av->sgid_index >= p->ngids) {
		return xmit_fail(q, src, paylen, gst, -EINVAL);
	} else if (roce_addr(q, p, av, a, local)) {
		xmit_fail(q, src, paylen, gst, 0);
		if (*gst != EMU_MR_OK)
			return 1;
		emu_dp_trace("qp %u xmit %s: no host owns the destination GID: dropped",
			     q->qp.qp_num, emu_pkt_opcode_name(bth->opcode));
		return -EHOSTUNREACH;
	}
	memcpy(a->sgid, av->sgid.raw, 16);
	memcpy(a->dgid, av->dgid.raw, 16);
	a->tclass = av->traffic_class;
	a->flow_label = av->flow_label;
	a->hop_limit = av->hop_limit;
	return 0;
}

/* A frame that left the HCA: out through the port's link (rxe_net.c's rxe_send), whose peer's
 * receiver (the data path of the host behind it) gets it after the link's delay; to the
 * process of this host that owns its DestQP; or back into this HCA. Frees f but for the
 * last. */
/* Where port p is in the engine's fabric: its host's index and its device's on that host. */
static size_t port_host(struct emu_engine *e, const struct emu_port *p)
{
	return (size_t)(p->dev->host - emu_engine_fabric(e)->hosts);
}

static size_t port_dev(const struct emu_port *p)
{
	return (size_t)(p->dev - p->dev->host->devices);
}

/* A frame that left the HCA: out through the port's link (rxe_net.c's rxe_send), whose peer's
 * receiver (the data path of the host behind it) gets it after the link's delay; to the
 * process of this host that owns its DestQP; or back into this HCA. Frees f but for the
 * last. */
static void frame_deliver(struct emu_vqp *q, const struct emu_port *p, unsigned port_num,
			  uint32_t dqpn, struct emu_dp_frame *f, bool local)
{
	int err;

	if (!local) {
		struct emu_engine *e = emu_dp_engine();

		err = emu_engine_port_send(e, port_host(e, p), port_dev(p), port_num, f->data,
					   f->len);
		if (err)
			emu_dp_trace("qp %u xmit: the wire refused the frame: %d", q->qp.qp_num,
				     err);
		if (dqpn != EMU_DP_MCAST_QPN || f->link_layer != EMU_LL_ETHERNET) {
			emu_dp_frame_put(f);
			return;
		}
		/* RoCE multicast: rxe_send hands the packet to ip_local_out, whose multicast
		 * output (ip_mc_output / ip6_finish_output2) also loops a copy back to this
		 * host; rxe's UDP tunnel takes it and rxe_rcv_mcast_pkt gives it to the QPs
		 * attached here (two mckey processes on one rxe host talk, checked in the
		 * reference VM): the same copy through the HCA's loopback below */
		emu_dp_trace("qp %u xmit: multicast, a copy to this host", q->qp.qp_num);
	}
	if (emu_link_qpn_elsewhere(dqpn)) {
		/* loopback to a QP of another process sharing this host (rdmaemud): the daemon
		 * hands it over, still off the wire */
		struct emu_engine *e = emu_dp_engine();

		err = emu_link_send_loopback(e, port_host(e, p), port_dev(p), port_num, dqpn,
					     f->data, f->len);
		if (err)
			emu_dp_trace("qp %u xmit: the daemon refused the frame: %d", q->qp.qp_num,
				     err);
		emu_dp_frame_put(f);
		return;
	}
	f->host = port_host(emu_dp_engine(), p);
	f->dev = port_dev(p);
	f->port = port_num;
	emu_timer_init(&f->t, frame_fire, f);
	emu_timer_arm_in(emu_engine_clock(emu_dp_engine()), &f->t, 0);
}

static int xmit(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		const struct emu_pkt_ext *ext, const struct xmit_src *src, size_t paylen,
		enum emu_mr_status *gst)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, av->port_num);
	struct emu_pkt_addr a;
	struct emu_pkt_info in;
	struct emu_dp_frame *f;
	struct emu_link_shm_resv rv;
	struct emu_engine *e = emu_dp_engine();
	uint8_t *buf;
	void *ring = NULL, *wire = NULL;
	ssize_t n;
	bool local;
	int err;

	*gst = EMU_MR_OK;
	if (!src->sge && paylen && !src->flat)
		return -EINVAL;
	if (!p || (av->is_global && av->sgid_index >= p->ngids))
		return xmit_fail(q, src, paylen, gst, -EINVAL);
	err = frame_addr(q, p, av, bth, src, paylen, gst, &a, &local);
	if (err)
		return err < 0 ? err : 0;
	n = emu_pkt_plan(&a, bth->opcode, paylen, SIZE_MAX, &in); /* once a frame */
	if (n < 0)
		return xmit_fail(q, src, paylen, gst, (int)n);
	/* a loopback frame for a QP of another process of this host: built straight into the
	 * shared-memory ring to that process when it has room (emu/link/link_shm.h), no copy */
	if (local && emu_link_qpn_elsewhere(bth->dqpn))
		ring = emu_link_loopback_reserve(e, port_host(e, p), port_dev(p), av->port_num,
						 bth->dqpn, (size_t)n, &rv);
	/* a frame for the wire: built straight into a packet of the wire's (no copy), unless a
	 * RoCE multicast one, of which this host gets a copy too (frame_deliver) */
	else if (!local && !(bth->dqpn == EMU_DP_MCAST_QPN && a.link_layer == EMU_LL_ETHERNET))
		wire = emu_engine_port_send_buf(e, port_host(e, p), port_dev(p), av->port_num,
						(size_t)n);
	if (ring) {
		f = NULL;
		a.no_crc = true; /* the ring's reader trusts it and nothing captures it */
		buf = ring;
	} else if (wire) {
		f = NULL;
		buf = wire;
	} else {
		f = emu_dp_frame_get((size_t)n);
		if (!f)
			return xmit_fail(q, src, paylen, gst, -ENOMEM);
		buf = f->data;
	}
	/* nothing is published before finish: a failed gather forgets the ring's reservation */
	*gst = src_copy(q, src, buf + in.hdr_off[EMU_PKT_H_PAYLOAD], paylen);
	if (*gst != EMU_MR_OK) {
		if (wire)
			emu_engine_port_send_abort(e, wire);
		emu_dp_frame_put(f);
		return 0;
	}
	n = emu_pkt_finish(buf, (size_t)n, &a, bth, ext, &in, NULL);
	/* a looped-back frame leaves the port's counters as sent here, as rxe_xmit_packet counts
	 * its loopback packets; arriving, as received (frame_fire, or the process it is for) */
	if (local)
		emu_engine_port_count(e, port_host(e, p), port_dev(p), av->port_num, false, buf,
				      (size_t)n);
	if (f) {
		f->len = (size_t)n;
		f->link_layer = a.link_layer;
		f->hca = emu_dp_hca(q);
	}
	emu_dp_trace("qp %u xmit %s psn %#x dqpn %u len %zu%s%s%s", q->qp.qp_num,
		     emu_pkt_opcode_name(bth->opcode), bth->psn, bth->dqpn, paylen,
		     bth->ackreq ? " ackreq" : "",
		     (bth->opcode & 0x1f) != EMU_OP_ACK ? "" :
		     (ext->aeth.syndrome & EMU_AETH_KIND_MASK) == EMU_AETH_NAK ? " NAK" :
		     (ext->aeth.syndrome & EMU_AETH_KIND_MASK) == EMU_AETH_RNR_NAK ? " RNR-NAK" : " ACK",
		     local ? " (loopback)" : " (wire)");
	if (ring) {
		emu_link_loopback_commit(&rv, (size_t)n);
	} else if (wire) {
		err = emu_engine_port_send_commit(e, port_host(e, p), port_dev(p), av->port_num,
						  wire, (size_t)n, true);
		if (err)
			emu_dp_trace("qp %u xmit: the wire refused the frame: %d", q->qp.qp_num,
				     err);
	} else {
		frame_deliver(q, p, av->port_num, bth->dqpn, f, local);
	}
	return 0;
}

int emu_dp_xmit(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		const struct emu_pkt_ext *ext, const void *payload, size_t paylen)
{
	struct xmit_src src = { .flat = payload };
	enum emu_mr_status st;

	return xmit(q, av, bth, ext, &src, paylen, &st);
}

int emu_dp_xmit_gather(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		       const struct emu_pkt_ext *ext, const struct ibv_sge *sge, int nsge,
		       uint64_t off, size_t paylen, enum emu_mr_status *gst)
{
	struct xmit_src src = { .sge = sge, .nsge = nsge, .off = off };

	return xmit(q, av, bth, ext, &src, paylen, gst);
}

int emu_dp_xmit_desc(struct emu_vqp *q, const void *desc, size_t len)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, q->av.port_num);
	uint32_t dqpn = q->attr.dest_qp_num & EMU_QPN_MASK;
	struct emu_engine *e = emu_dp_engine();
	bool own = false;

	/* rxe's loopback: the destination GID is one of the port's own, on a RoCE port */
	if (!e || !p || p->link_layer != IBV_LINK_LAYER_ETHERNET || !q->av.is_global ||
	    q->av.sgid_index >= p->ngids || !emu_link_qpn_elsewhere(dqpn))
		return -ENOENT;
	for (size_t i = 0; i < p->ngids && !own; i++)
		own = !memcmp(p->gids[i].raw, q->av.dgid.raw, 16);
	if (!own)
		return -ENOENT;
	return emu_link_loopback_desc(e, port_host(e, p), port_dev(p), q->av.port_num, dqpn, desc,
				      len);
}

void emu_dp_xmit_resp(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		      const void *data, size_t len, uint64_t orig, uint32_t msn)
{
	struct emu_bth bth = { .opcode = opcode, .pkey = EMU_PKEY_DEFAULT };
	struct emu_pkt_ext ext;

	memset(&ext, 0, sizeof(ext));
	ext.atmack = orig; /* ATOMIC_ACKNOWLEDGE only: the builder writes it big-endian */
	bth.dqpn = q->attr.dest_qp_num & EMU_QPN_MASK;
	bth.psn = psn & EMU_PSN_MASK;
	ext.aeth.syndrome = syndrome;
	ext.aeth.msn = msn & 0xffffff;
	emu_dp_xmit(q, &q->av, &bth, &ext, data, len);
}
