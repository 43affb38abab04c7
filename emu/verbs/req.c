/* The requester (rxe_req.c in miniature): turns posted send WQEs into packets, segmented at
 * the path MTU with a PSN each, and the loopback that carries a frame back into this HCA
 * (rxe_net.c: a destination GID that is one of the port's own never reaches the wire).
 * Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/hca/engine_rx.h"
#include "emu/link/link.h"
#include "emu/verbs/datapath.h"
#include "emu/verbs/mw.h"

#define RXE_MAX_UNACKED_PSNS 128 /* rxe: an AckReq at least this often */

static const char *const req_state_names[] = { "NEXT_WQE", "SEND_PKT", "DONE", "ERROR" };
enum req_state { REQ_NEXT_WQE, REQ_SEND_PKT, REQ_DONE, REQ_ERROR };

uint32_t emu_dp_mtu(const struct emu_vqp *q)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, q->attr.port_num ?
						   q->attr.port_num : 1);

	int m = q->qp.qp_type == IBV_QPT_UD ? emu_mtu_bytes(p ? p->active_mtu : IBV_MTU_1024) :
					       emu_mtu_bytes(q->attr.path_mtu);

	return m > 0 ? (uint32_t)m : 256; /* an invalid path_mtu: rxe falls back to 256 */
}

struct dp_frame {
	struct emu_timer t;
	struct emu_hca *hca;
	int link_layer;
	size_t len;
	uint8_t data[];
};

/* The DestQP of multicast packets (IBTA 10.5.2.2) */
#define DP_MCAST_QPN 0xFFFFFFu

static void dp_rx(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
		  bool loopback);

static void frame_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct dp_frame *f = arg;

	(void)clk, (void)t;
	dp_rx(f->hca, f->link_layer, f->data, f->len, true);
	free(f);
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

/* RoCE v2 addressing: source MAC from the GID's netdev, destination MAC from the AV, rxe's UDP
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
	/* The AV's MAC, resolved when the AH was created or the QP modified (emu/verbs/ah.c).
	 * Not modelled: rxe hands its packets to ip_local_out, so on Linux the frame's MAC comes
	 * from the neighbour entry at send time (a STALE entry goes DELAY and PROBE with
	 * unicast ARPs during a long transfer); the two agree while the entry holds the MAC. */
	if (*local)
		memcpy(a->dmac, a->smac, 6);
	else if (av->dmac_valid)
		memcpy(a->dmac, av->dmac, 6);
	else if (emu_av_resolve_dmac(emu_engine_fabric(emu_dp_engine()), av, a->dmac))
		return -EHOSTUNREACH;
	a->sport = emu_roce_sport_rxe(q->qp.qp_num);
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

static int xmit(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		const struct emu_pkt_ext *ext, const struct xmit_src *src, size_t paylen,
		enum emu_mr_status *gst)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, av->port_num);
	struct emu_pkt_addr a;
	struct emu_pkt_info in;
	struct dp_frame *f;
	struct emu_link_shm_resv rv;
	uint8_t *buf;
	void *ring = NULL;
	ssize_t n;
	bool local = false;

	*gst = EMU_MR_OK;
	if (!src->sge && paylen && !src->flat)
		return -EINVAL;
	if (!p || (av->is_global && av->sgid_index >= p->ngids))
		return xmit_fail(q, src, paylen, gst, -EINVAL);
	memset(&a, 0, sizeof(a));
	if (p->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		local = ib_addr(p, av, &a);
	} else if (av->sgid_index >= p->ngids) {
		return xmit_fail(q, src, paylen, gst, -EINVAL);
	} else if (roce_addr(q, p, av, &a, &local)) {
		xmit_fail(q, src, paylen, gst, 0);
		if (*gst != EMU_MR_OK)
			return 0;
		emu_dp_trace("qp %u xmit %s: no host owns the destination GID: dropped",
			     q->qp.qp_num, emu_pkt_opcode_name(bth->opcode));
		return -EHOSTUNREACH;
	}
	memcpy(a.sgid, av->sgid.raw, 16);
	memcpy(a.dgid, av->dgid.raw, 16);
	a.tclass = av->traffic_class;
	a.flow_label = av->flow_label;
	a.hop_limit = av->hop_limit;
	n = emu_pkt_plan(&a, bth->opcode, paylen, SIZE_MAX, &in); /* once a frame */
	if (n < 0)
		return xmit_fail(q, src, paylen, gst, (int)n);
	/* a loopback frame for a QP of another process of this host: built straight into the
	 * shared-memory ring to that process when it has room (emu/link/link_shm.h), no copy */
	if (local && emu_link_qpn_elsewhere(bth->dqpn)) {
		struct emu_engine *e = emu_dp_engine();
		const struct emu_host *h = p->dev->host;

		ring = emu_link_loopback_reserve(e, (size_t)(h - emu_engine_fabric(e)->hosts),
						 (size_t)(p->dev - h->devices), av->port_num,
						 bth->dqpn, (size_t)n, &rv);
	}
	if (ring) {
		f = NULL;
		a.no_crc = true; /* the ring's reader trusts it and nothing captures it */
		buf = ring;
	} else {
		f = malloc(sizeof(*f) + (size_t)n);
		if (!f)
			return xmit_fail(q, src, paylen, gst, -ENOMEM);
		buf = f->data;
	}
	/* nothing is published before finish: a failed gather forgets the ring's reservation */
	*gst = src_copy(q, src, buf + in.hdr_off[EMU_PKT_H_PAYLOAD], paylen);
	if (*gst != EMU_MR_OK) {
		free(f);
		return 0;
	}
	n = emu_pkt_finish(buf, (size_t)n, &a, bth, ext, &in, NULL);
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
		return 0;
	}
	if (!local) {
		/* rxe_net.c's rxe_send: out through the port's link; its peer's receiver (the
		 * data path of the host behind it) gets the frame after the link's delay */
		struct emu_engine *e = emu_dp_engine();
		const struct emu_host *h = p->dev->host;
		const struct emu_fabric *fab = emu_engine_fabric(e);
		int err = emu_engine_port_send(e, (size_t)(h - fab->hosts),
					       (size_t)(p->dev - h->devices), av->port_num, f->data,
					       f->len);

		if (err)
			emu_dp_trace("qp %u xmit: the wire refused the frame: %d", q->qp.qp_num,
				     err);
		if (bth->dqpn != DP_MCAST_QPN || a.link_layer != EMU_LL_ETHERNET) {
			free(f);
			return 0;
		}
		/* RoCE multicast: rxe_send hands the packet to ip_local_out, whose multicast
		 * output (ip_mc_output / ip6_finish_output2) also loops a copy back to this
		 * host; rxe's UDP tunnel takes it and rxe_rcv_mcast_pkt gives it to the QPs
		 * attached here (two mckey processes on one rxe host talk, checked in the
		 * reference VM): the same copy through the HCA's loopback below */
		emu_dp_trace("qp %u xmit: multicast, a copy to this host", q->qp.qp_num);
	}
	if (emu_link_qpn_elsewhere(bth->dqpn)) {
		/* loopback to a QP of another process sharing this host (rdmaemud): the daemon
		 * hands it over, still off the wire */
		struct emu_engine *e = emu_dp_engine();
		const struct emu_host *h = p->dev->host;
		int err = emu_link_send_loopback(e, (size_t)(h - emu_engine_fabric(e)->hosts),
						 (size_t)(p->dev - h->devices), av->port_num,
						 bth->dqpn, f->data, f->len);

		if (err)
			emu_dp_trace("qp %u xmit: the daemon refused the frame: %d", q->qp.qp_num,
				     err);
		free(f);
		return 0;
	}
	emu_timer_init(&f->t, frame_fire, f);
	emu_timer_arm_in(emu_engine_clock(emu_dp_engine()), &f->t, 0);
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

static void port_rx(void *ctx, int link_layer, const uint8_t *frame, size_t len)
{
	/* the HCA of the device, if a context has it open (a reference for the delivery;
	 * without one the frame meets no QP and is dropped) */
	struct emu_hca *hca = emu_hca_get(ctx);

	if (!hca)
		return;
	emu_dp_rx_ll(hca, link_layer, frame, len);
	emu_hca_put(hca);
}

static void port_rx_eth(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)now;
	port_rx(ctx, EMU_LL_ETHERNET, frame, len);
}

static void port_rx_ib(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	(void)now;
	port_rx(ctx, EMU_LL_INFINIBAND, frame, len);
}

/* The HCA class of the engine's demultiplexer on every port: transport packets whose DestQP
 * no other module claimed (QP1's MADs and the IPoIB QP go elsewhere, emu/hca/engine_rx.h). */
void emu_dp_port_rx_attach(struct emu_engine *e, const struct emu_device *dev)
{
	const struct emu_fabric *fab = emu_engine_fabric(e);

	for (unsigned p = 1; p <= dev->nports; p++)
		emu_engine_port_set_rx(e, (size_t)(dev->host - fab->hosts),
				       (size_t)(dev - dev->host->devices), p,
				       dev->ports[p - 1].link_layer == IBV_LINK_LAYER_INFINIBAND ?
					       port_rx_ib : port_rx_eth,
				       (void *)(uintptr_t)dev);
}

void emu_dp_rx(struct emu_hca *hca, const uint8_t *frame, size_t len)
{
	emu_dp_rx_ll(hca, EMU_LL_ETHERNET, frame, len);
}

/* What a receive completion reports of an IB packet: the sender's LID and SL, the path bits
 * of the DLID within the receiving port's LMC, whether a GRH came (mlx5: IBV_WC_GRH only
 * then). RoCE completions keep rxe's fields (slid 0, GRH always). */
static void ib_rx_info(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, q->attr.port_num ?
						   q->attr.port_num : 1);
	const uint8_t *lrh = frame + pi->lrh_off;

	q->dp.rx_ib = true;
	q->dp.rx_grh = pi->grh_off != EMU_PKT_NO_HDR;
	q->dp.rx_sl = lrh[1] >> 4;
	q->dp.rx_slid = (uint16_t)(lrh[6] << 8 | lrh[7]);
	q->dp.rx_path_bits = (uint8_t)((lrh[2] << 8 | lrh[3]) & ((1u << (p ? p->lmc : 0)) - 1));
}

void emu_dp_rx_ll(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len)
{
	dp_rx(hca, link_layer, frame, len, false);
}

#define DP_MCAST_MAX_QPS 64

/* rxe_rcv_mcast_pkt: a UD packet to the multicast QPN goes to every UD QP of the device
 * attached to its destination GID (the IPv4-mapped address of a RoCEv2 IPv4 packet, the IPv6
 * destination, the IB GRH's DGID), each getting its own copy. */
static void dp_rx_mcast(struct emu_hca *hca, const uint8_t *frame, const struct emu_pkt_info *pi,
			bool loopback)
{
	struct emu_vqp *qs[DP_MCAST_MAX_QPS];
	uint8_t dgid[16];
	unsigned n = 0;
	uint32_t slots;

	if ((pi->opcode & 0xe0) != EMU_OP_UD)
		return;
	memset(dgid, 0, sizeof(dgid));
	if (pi->net == EMU_PKT_NET_IPV4) {
		dgid[10] = dgid[11] = 0xff;
		memcpy(dgid + 12, frame + pi->ip_off + 16, 4); /* IPv4 daddr */
	} else if (pi->net == EMU_PKT_NET_IPV6) {
		memcpy(dgid, frame + pi->ip_off + 24, 16); /* IPv6 daddr */
	} else if (pi->grh_off != EMU_PKT_NO_HDR) {
		memcpy(dgid, frame + pi->grh_off + 24, 16); /* GRH DGID */
	} else {
		emu_dp_trace("rx: multicast without a GRH: dropped");
		return;
	}
	pthread_mutex_lock(emu_hca_lock(hca));
	slots = emu_hca_obj_slots_locked(hca, EMU_OBJ_QP);
	for (uint32_t i = 0; i < slots && n < DP_MCAST_MAX_QPS; i++) {
		struct emu_obj *obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, i);
		/* no context: a slot the kernel's own QP1 holds (hca_reserve_kernel_objects) */
		struct emu_vqp *q = obj && obj->ctx ? container_of(obj, struct emu_vqp, obj) : NULL;

		if (q && q->qp.qp_type == IBV_QPT_UD)
			qs[n++] = q;
	}
	pthread_mutex_unlock(emu_hca_lock(hca));
	for (unsigned i = 0; i < n; i++) {
		if (!emu_dp_mcast_attached(qs[i], dgid))
			continue;
		emu_dp_trace("rx: multicast %s to qp %u", emu_pkt_opcode_name(pi->opcode),
			     qs[i]->qp.qp_num);
		qs[i]->dp.rx_loopback = loopback;
		emu_dp_resp_rx(qs[i], frame, pi);
	}
}

/* loopback: the frame never left the HCA (rxe_loopback()), see emu_qp_dp.rx_loopback */
static void dp_rx(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
		  bool loopback)
{
	struct emu_pkt_info pi;
	struct emu_obj *obj;
	struct emu_vqp *q;
	int err = emu_pkt_parse(frame, len, link_layer, &pi);
	unsigned tr;

	if (err) {
		emu_dp_trace("rx: dropped: %s", emu_pkt_strerror(-err));
		return;
	}
	if (pi.dqpn == DP_MCAST_QPN) {
		dp_rx_mcast(hca, frame, &pi, loopback);
		return;
	}
	pthread_mutex_lock(emu_hca_lock(hca));
	obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, pi.dqpn);
	pthread_mutex_unlock(emu_hca_lock(hca));
	if (!obj) {
		emu_dp_trace("rx: %s for no QP %u: dropped", emu_pkt_opcode_name(pi.opcode), pi.dqpn);
		return;
	}
	q = container_of(obj, struct emu_vqp, obj);
	tr = pi.opcode & 0xe0;
	if (!((tr == EMU_OP_RC && q->qp.qp_type == IBV_QPT_RC) ||
	      (tr == EMU_OP_UC && q->qp.qp_type == IBV_QPT_UC) ||
	      (tr == EMU_OP_UD && q->qp.qp_type == IBV_QPT_UD))) {
		emu_dp_trace("rx: %s on a QP of another type: dropped", emu_pkt_opcode_name(pi.opcode));
		return;
	}
	q->dp.rx_loopback = loopback;
	if (link_layer == EMU_LL_INFINIBAND)
		ib_rx_info(q, frame, &pi);
	if (pi.mask & EMU_PKT_RESP)
		emu_dp_comp_rx(q, frame, &pi);
	else
		emu_dp_resp_rx(q, frame, &pi);
}

/* The opcode of one packet of a SEND / RDMA WRITE on RC or UC: the same low five bits on
 * both transports (IBTA table 39), the transport in the top three. */
static uint8_t conn_opcode(const struct emu_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == IBV_WR_SEND_WITH_IMM || w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

	bool inv = w->wr.opcode == IBV_WR_SEND_WITH_INV;

	if (w->wr.opcode == IBV_WR_SEND || w->wr.opcode == IBV_WR_SEND_WITH_IMM || inv) {
		if (first && last)
			return imm ? EMU_OP_SEND_ONLY_IMM :
				     inv ? EMU_OP_SEND_ONLY_INV : EMU_OP_SEND_ONLY;
		if (first)
			return EMU_OP_SEND_FIRST;
		if (!last)
			return EMU_OP_SEND_MIDDLE;
		return imm ? EMU_OP_SEND_LAST_IMM : inv ? EMU_OP_SEND_LAST_INV : EMU_OP_SEND_LAST;
	}
	if (first && last)
		return imm ? EMU_OP_WRITE_ONLY_IMM : EMU_OP_WRITE_ONLY;
	if (first)
		return EMU_OP_WRITE_FIRST;
	return last ? (imm ? EMU_OP_WRITE_LAST_IMM : EMU_OP_WRITE_LAST) : EMU_OP_WRITE_MIDDLE;
}

void emu_dp_rd_atomic_put(struct emu_vqp *q, struct emu_swqe *w)
{
	if (!w->has_rd_atomic)
		return;
	w->has_rd_atomic = false;
	if (q->dp.rd_atomic_out)
		q->dp.rd_atomic_out--;
}

/* rxe's check_init_depth(): a READ or atomic takes one of the max_rd_atomic slots (the
 * initiator depth) before it is sent; none free, the requester stops at this WQE (later WQEs
 * wait behind it, in order) until the completer frees one. max_rd_atomic 0 never sends one,
 * as on rxe. */
static bool rd_atomic_get(struct emu_vqp *q, struct emu_swqe *w)
{
	if (w->has_rd_atomic)
		return true;
	if (q->dp.rd_atomic_out >= q->attr.max_rd_atomic) {
		q->dp.need_rd_atomic = true;
		return false;
	}
	q->dp.need_rd_atomic = false;
	w->has_rd_atomic = true;
	q->dp.rd_atomic_out++;
	return true;
}

static void req_trace(struct emu_vqp *q, enum req_state a, enum req_state b, uint64_t wr_id)
{
	emu_dp_trace("qp %u req: %s --> %s (wr_id %llu)", q->qp.qp_num, req_state_names[a],
		     req_state_names[b], (unsigned long long)wr_id);
}

/* Sends every packet of one WQE: REQ_DONE, or REQ_ERROR with w->status set. */
static enum req_state req_wqe(struct emu_vqp *q, struct emu_swqe *w, uint32_t mtu)
{
	bool ud = q->qp.qp_type == IBV_QPT_UD;
	uint64_t npkts = w->length ? (w->length + mtu - 1) / mtu : 1;
	struct emu_bth bth = { .pkey = EMU_PKEY_DEFAULT };
	struct emu_pkt_ext ext;

	memset(&ext, 0, sizeof(ext));
	bth.dqpn = (ud ? w->ud_dqpn : q->attr.dest_qp_num) & EMU_QPN_MASK;
	w->first_psn = q->dp.req_psn;
	if (ud && w->length > mtu) {
		w->status = IBV_WC_LOC_LEN_ERR;
		return REQ_ERROR;
	}
	if (!w->is_inline && w->wr.opcode != IBV_WR_RDMA_READ && !emu_wr_is_atomic(w->wr.opcode)) {
		/* a message longer than its SGEs, which only rxe's ibv_wr_set_sge_list makes
		 * (emu/verbs/wr_ex.c): the gather runs out, LOC_QP_OP_ERR (measured; rxe's
		 * copy_data() fails with -EINVAL) */
		uint64_t sum = 0;

		for (int i = 0; i < w->wr.num_sge; i++)
			sum += w->sge[i].length;
		if (w->length > sum) {
			w->status = IBV_WC_LOC_QP_OP_ERR;
			return REQ_ERROR;
		}
	}
	if (emu_wr_is_atomic(w->wr.opcode)) {
		/* one packet, no payload: the AtomicETH carries everything (rxe: 8 bytes at an
		 * 8-byte aligned VA, checked at post time) */
		bth.opcode = EMU_OP_RC | (w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ?
						   EMU_OP_CMP_SWAP : EMU_OP_FETCH_ADD);
		bth.psn = q->dp.req_psn;
		bth.ackreq = true;
		ext.atmeth.va = w->wr.wr.atomic.remote_addr;
		ext.atmeth.rkey = w->wr.wr.atomic.rkey;
		/* verbs: compare_add is the compare value of a CMP_AND_SWP and the addend of
		 * a FETCH_AND_ADD (rxe's init_req_packet maps them the same way) */
		if (w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
			ext.atmeth.swap_add = w->wr.wr.atomic.swap;
			ext.atmeth.compare = w->wr.wr.atomic.compare_add;
		} else {
			ext.atmeth.swap_add = w->wr.wr.atomic.compare_add;
		}
		q->dp.req_psn = (q->dp.req_psn + 1) & EMU_PSN_MASK;
		w->last_psn = w->first_psn;
		emu_dp_xmit(q, &q->av, &bth, &ext, NULL, 0);
		return REQ_DONE;
	}
	if (w->wr.opcode == IBV_WR_RDMA_READ) {
		bth.opcode = EMU_OP_RC | EMU_OP_READ_REQ;
		bth.psn = q->dp.req_psn;
		bth.ackreq = true;
		ext.reth.va = w->wr.wr.rdma.remote_addr;
		ext.reth.rkey = w->wr.wr.rdma.rkey;
		ext.reth.dma_len = (uint32_t)w->length;
		q->dp.req_psn = (uint32_t)(q->dp.req_psn + npkts) & EMU_PSN_MASK;
		w->last_psn = (q->dp.req_psn - 1) & EMU_PSN_MASK;
		emu_dp_xmit(q, &q->av, &bth, &ext, NULL, 0);
		return REQ_DONE;
	}
	for (uint64_t i = 0; i < npkts; i++) {
		bool first = i == 0, last = i == npkts - 1;
		uint64_t off = i * mtu;
		uint32_t len = (uint32_t)(last ? w->length - off : mtu);
		bool imm = w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
			   w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		enum emu_mr_status st;
		unsigned noack;

		if (ud) {
			bth.opcode = EMU_OP_UD | (imm ? EMU_OP_SEND_ONLY_IMM : EMU_OP_SEND_ONLY);
			ext.deth.qkey = w->ud_qkey;
			ext.deth.sqpn = q->qp.qp_num;
		} else {
			bth.opcode = (q->qp.qp_type == IBV_QPT_UC ? EMU_OP_UC : EMU_OP_RC) |
				     conn_opcode(w, first, last);
		}
		if (first && (w->wr.opcode == IBV_WR_RDMA_WRITE ||
			      w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)) {
			ext.reth.va = w->wr.wr.rdma.remote_addr;
			ext.reth.rkey = w->wr.wr.rdma.rkey;
			ext.reth.dma_len = (uint32_t)w->length;
		}
		if (last && imm)
			ext.imm = w->wr.imm_data;
		if (last && w->wr.opcode == IBV_WR_SEND_WITH_INV)
			ext.ieth_rkey = w->wr.invalidate_rkey; /* host order, as rxe's ieth_set_rkey */
		bth.se = last && w->wr.send_flags & IBV_SEND_SOLICITED &&
			 (w->wr.opcode != IBV_WR_RDMA_WRITE);
		noack = q->dp.noack_pkts;
		bth.psn = q->dp.req_psn;
		bth.ackreq = last || q->dp.noack_pkts++ > RXE_MAX_UNACKED_PSNS;
		if (bth.ackreq)
			q->dp.noack_pkts = 0;
		q->dp.req_psn = (q->dp.req_psn + 1) & EMU_PSN_MASK;
		if (w->is_inline) {
			emu_dp_xmit(q, ud ? &w->av : &q->av, &bth, &ext, w->inl + off, len);
			continue;
		}
		/* gathered straight into the frame (into the ring, for another process) */
		emu_dp_xmit_gather(q, ud ? &w->av : &q->av, &bth, &ext, w->sge, w->wr.num_sge, off,
				   len, &st);
		if (st != EMU_MR_OK) {
			/* nothing went out for this packet: its PSN is not used */
			q->dp.req_psn = bth.psn;
			q->dp.noack_pkts = noack;
			emu_dp_trace("qp %u req: gather: %s", q->qp.qp_num, emu_mr_status_str(st));
			w->status = emu_mr_status_wc(st, false);
			return REQ_ERROR;
		}
	}
	w->last_psn = (q->dp.req_psn - 1) & EMU_PSN_MASK;
	return REQ_DONE;
}

void emu_dp_req_run(struct emu_vqp *q)
{
	uint32_t mtu, psn0;

	/* after a local error the loop stops at the WQE in ERROR (rxe's req.state ERROR); the
	 * ones before it may still have to be sent again (go back N) */
	if (q->attr.qp_state != IBV_QPS_RTS || q->dp.rnr_armed)
		return;
	mtu = emu_dp_mtu(q);
	psn0 = q->dp.req_psn;
	/* one doorbell per EMU_LINK_SHM_BELL_EVERY frames into a ring, and one at the end */
	emu_link_loopback_burst(true);
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);
		enum req_state st;

		if (w->state == EMU_WQE_ERROR)
			break;
		if (w->state != EMU_WQE_POSTED)
			continue;
		if ((w->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(w->wr.opcode)) &&
		    !rd_atomic_get(q, w)) {
			emu_dp_trace("qp %u req: wr_id %llu waits for a max_rd_atomic slot (%u of %u)",
				     q->qp.qp_num, (unsigned long long)w->wr.wr_id,
				     q->dp.rd_atomic_out, q->attr.max_rd_atomic);
			break;
		}
		if (emu_wr_is_local(w->wr.opcode)) {
			/* rxe_do_local_ops(): run here, no packet, no PSN; done at once, the
			 * completer retires it in queue order. A failure is the WQE's error
			 * (MW_BIND_ERR / LOC_QP_OP_ERR, measured), the QP then goes to ERR. */
			bool bind = w->wr.opcode == IBV_WR_BIND_MW;
			int err = bind ? emu_mw_bind_wqe(q, w) :
					 emu_mw_invalidate(q, w->wr.invalidate_rkey);

			req_trace(q, REQ_NEXT_WQE, err ? REQ_ERROR : REQ_DONE, w->wr.wr_id);
			if (err) {
				w->status = bind ? IBV_WC_MW_BIND_ERR : IBV_WC_LOC_QP_OP_ERR;
				w->state = EMU_WQE_ERROR;
				break;
			}
			w->state = EMU_WQE_DONE;
			continue;
		}
		req_trace(q, REQ_NEXT_WQE, REQ_SEND_PKT, w->wr.wr_id);
		st = req_wqe(q, w, mtu);
		req_trace(q, REQ_SEND_PKT, st, w->wr.wr_id);
		if (st == REQ_ERROR) {
			/* rxe: the requester stops; the completer retires what came before,
			 * then completes this WQE with its status and moves the QP to ERR */
			w->state = EMU_WQE_ERROR;
			emu_dp_rd_atomic_put(q, w);
			break;
		}
		/* only RC waits for an acknowledgement; a UD or UC WQE is done when its last
		 * packet has left (rxe's completer retires it without an ACK) */
		w->state = q->qp.qp_type == IBV_QPT_RC ? EMU_WQE_PENDING : EMU_WQE_DONE;
		if (w->state == EMU_WQE_PENDING)
			emu_dp_retry_restart(q); /* rxe: mod_timer at every request sent */
	}
	/* a held ACK follows the requests just sent (ack_hold.c): the peer's poll that finds it
	 * has delivered them first */
	if (q->dp.req_psn != psn0)
		emu_dp_ack_flush(q);
	emu_link_loopback_burst(false);
	emu_dp_comp_run(q);
}
