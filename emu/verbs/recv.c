/* Frames into the HCA (rxe_recv.c in miniature): from the wire through the ports' receivers,
 * and back from this HCA's own loopback (emu/verbs/net.c); parsed, checked against the QP
 * their DestQP names (or every UD QP attached to their multicast group) and handed to the
 * responder (requests) or the completer (answers). Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include <string.h>

#include "emu/hca/engine_rx.h"
#include "emu/verbs/datapath.h"

static int dp_rx(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
		 bool loopback, bool built);

static void loopback_rx(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
			bool loopback)
{
	dp_rx(hca, link_layer, frame, len, loopback, true);
}

/* Looped-back frames come here: registered with the sending half when the library loads. */
__attribute__((constructor)) static void recv_register(void)
{
	emu_dp_loopback_set_rx(loopback_rx);
}

/* ctx: the port (struct emu_port) the frame arrived at. */
static void port_rx(void *ctx, int link_layer, const uint8_t *frame, size_t len)
{
	const struct emu_port *pt = ctx;
	const struct emu_device *dev = pt->dev;
	/* the HCA of the device, if a context has it open (a reference for the delivery;
	 * without one the frame meets no QP and is dropped) */
	struct emu_hca *hca = emu_hca_get(dev);
	struct emu_engine *e = emu_dp_engine();

	if (!hca)
		return;
	/* a frame the HCA cannot take in (a bad ICRC or VCRC, a malformed header) is a receive
	 * error of the port (IBA PortRcvErrors) */
	/* a frame of this process's builder that crossed the wire unaltered: its CRCs are the
	 * builder's own, not computed again */
	if (dp_rx(hca, link_layer, frame, len, false, emu_wire_rx_built()))
		emu_engine_port_count_rcv_error(e, (size_t)(dev->host - emu_engine_fabric(e)->hosts),
						(size_t)(dev - dev->host->devices), pt->num);
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
				       (void *)(uintptr_t)&dev->ports[p - 1]);
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

int emu_dp_rx_ll(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len)
{
	return dp_rx(hca, link_layer, frame, len, false, false);
}

/* Whether the UD QP is attached to multicast group gid (ibv_attach_mcast, ah.c). */
static bool mcast_attached(struct emu_vqp *q, const uint8_t gid[16])
{
	struct emu_list *pos;
	bool ret = false;

	pthread_mutex_lock(&q->lock);
	for (pos = q->mcast.next; pos != &q->mcast && !ret; pos = pos->next)
		ret = !memcmp(emu_list_entry(pos, struct emu_mcast_att, link)->gid.raw, gid, 16);
	pthread_mutex_unlock(&q->lock);
	return ret;
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
	uint32_t first, end;

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
	emu_hca_obj_span_locked(hca, EMU_OBJ_QP, &first, &end);
	for (uint32_t i = first; i < end && n < DP_MCAST_MAX_QPS; i++) {
		struct emu_obj *obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, i);
		/* no context: a slot the kernel's own QP1 holds (hca_reserve_kernel_objects) */
		struct emu_vqp *q = obj && obj->ctx ? container_of(obj, struct emu_vqp, obj) : NULL;

		if (q && q->qp.qp_type == IBV_QPT_UD)
			qs[n++] = q;
	}
	pthread_mutex_unlock(emu_hca_lock(hca));
	for (unsigned i = 0; i < n; i++) {
		if (!mcast_attached(qs[i], dgid))
			continue;
		emu_dp_trace("rx: multicast %s to qp %u", emu_pkt_opcode_name(pi->opcode),
			     qs[i]->qp.qp_num);
		qs[i]->dp.rx_loopback = loopback;
		emu_dp_resp_rx(qs[i], frame, pi);
	}
}

/* loopback: the frame never left the HCA (rxe_loopback()), see emu_qp_dp.rx_loopback.
 * built: this program's builder made these very bytes (emu_pkt_parse_built). Returns the
 * parser's error for a malformed frame, else 0 (whatever became of it). */
static int dp_rx(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
		 bool loopback, bool built)
{
	struct emu_pkt_info pi;
	struct emu_obj *obj;
	struct emu_vqp *q;
	/* a looped-back frame is the builder's, byte for byte: its CRCs are not computed again */
	int err = built ? emu_pkt_parse_built(frame, len, link_layer, &pi) :
			  emu_pkt_parse(frame, len, link_layer, &pi);
	unsigned tr;

	if (err) {
		emu_dp_trace("rx: dropped: %s", emu_pkt_strerror(-err));
		return err;
	}
	if (pi.dqpn == EMU_DP_MCAST_QPN) {
		dp_rx_mcast(hca, frame, &pi, loopback);
		return 0;
	}
	pthread_mutex_lock(emu_hca_lock(hca));
	obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, pi.dqpn);
	pthread_mutex_unlock(emu_hca_lock(hca));
	if (!obj) {
		emu_dp_trace("rx: %s for no QP %u: dropped", emu_pkt_opcode_name(pi.opcode), pi.dqpn);
		return 0;
	}
	q = container_of(obj, struct emu_vqp, obj);
	tr = pi.opcode & 0xe0;
	if (!((tr == EMU_OP_RC && q->qp.qp_type == IBV_QPT_RC) ||
	      (tr == EMU_OP_UC && q->qp.qp_type == IBV_QPT_UC) ||
	      (tr == EMU_OP_UD && q->qp.qp_type == IBV_QPT_UD))) {
		emu_dp_trace("rx: %s on a QP of another type: dropped", emu_pkt_opcode_name(pi.opcode));
		return 0;
	}
	q->dp.rx_loopback = loopback;
	if (link_layer == EMU_LL_INFINIBAND)
		ib_rx_info(q, frame, &pi);
	if (pi.mask & EMU_PKT_RESP)
		emu_dp_comp_rx(q, frame, &pi);
	else
		emu_dp_resp_rx(q, frame, &pi);
	return 0;
}
