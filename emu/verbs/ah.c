/* Address vectors and address handles: rdma_check_ah_attr() + rdma_fill_sgid_attr() +
 * rxe_av_chk_attr() as measured on rxe (Linux 6.1): a port outside the device is EINVAL, an
 * address without GRH on a RoCE port is EINVAL, an empty or out-of-table sgid_index is ENODATA,
 * a RoCE v1 source GID is EINVAL (rxe sends RoCE v2 only), and so is a source GID of another IP
 * family than the destination. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/pkt.h"
#include "emu/verbs/datapath.h"
#include "emu/verbs/objects.h"

int emu_av_from_attr(struct ibv_context *ctx, const struct ibv_ah_attr *attr, struct emu_av *av)
{
	const struct emu_port *p = emu_verbs_port(ctx, attr->port_num);
	const struct emu_gid *g;

	if (!p)
		return EINVAL;
	memset(av, 0, sizeof(*av));
	av->port_num = attr->port_num;
	av->sl = attr->sl;
	av->static_rate = attr->static_rate;
	av->src_path_bits = attr->src_path_bits;
	av->dlid = attr->dlid;
	av->is_global = attr->is_global;
	if (p->link_layer == IBV_LINK_LAYER_ETHERNET && !attr->is_global)
		return EINVAL;
	if (!attr->is_global)
		return 0;
	if (attr->grh.sgid_index >= p->ngids || attr->grh.sgid_index >= p->gid_tbl_len)
		return ENODATA;
	g = &p->gids[attr->grh.sgid_index];
	{
		static const uint8_t zero[16];

		if (!memcmp(g->raw, zero, 16)) /* an empty slot of the table */
			return ENODATA;
	}
	if (p->link_layer == IBV_LINK_LAYER_ETHERNET && g->type != EMU_GID_ROCE_V2)
		return EINVAL;
	av->sgid_index = attr->grh.sgid_index;
	av->hop_limit = attr->grh.hop_limit;
	av->traffic_class = attr->grh.traffic_class;
	av->flow_label = attr->grh.flow_label;
	av->dgid = attr->grh.dgid;
	memcpy(av->sgid.raw, g->raw, 16);
	if (p->link_layer == IBV_LINK_LAYER_ETHERNET) {
		av->network = emu_gid_is_v4mapped(av->dgid.raw) ? 4 : 6;
		/* ib_resolve_eth_dmac(): a multicast destination (ff00::/8, or an IPv4-mapped
		 * 224.0.0.0/4 address) maps straight to its multicast MAC, before any family check
		 * (measured: create_ah towards ff0e:: from the IPv4-mapped GID succeeds) */
		if (av->network == 6 && av->dgid.raw[0] == 0xff) {
			static const uint8_t mc6[2] = { 0x33, 0x33 };

			memcpy(av->dmac, mc6, 2);
			memcpy(av->dmac + 2, av->dgid.raw + 12, 4);
			return 0;
		}
		if (av->network == 4 && (av->dgid.raw[12] & 0xf0) == 0xe0) {
			av->dmac[0] = 0x01;
			av->dmac[1] = 0x00;
			av->dmac[2] = 0x5e;
			av->dmac[3] = av->dgid.raw[13] & 0x7f;
			av->dmac[4] = av->dgid.raw[14];
			av->dmac[5] = av->dgid.raw[15];
			return 0;
		}
		/* source and destination of different IP families (the fe80:: GID towards an
		 * IPv4-mapped one) is EINVAL, measured */
		if (av->network != (emu_gid_is_v4mapped(g->raw) ? 4 : 6))
			return EINVAL;
		/* The destination MAC is resolved when the data path sends (issue [4]'s neighbour
		 * protocol); until then it stays zero. */
	}
	return 0;
}

int emu_av_resolve_dmac(const struct emu_fabric *f, const struct emu_av *av, uint8_t dmac[6])
{
	if (av->dgid.raw[0] == 0xff || (av->network == 4 && (av->dgid.raw[12] & 0xf0) == 0xe0)) {
		memcpy(dmac, av->dmac, 6); /* multicast: mapped at create time */
		return 0;
	}
	for (size_t h = 0; f && h < f->nhosts; h++) {
		const struct emu_host *host = &f->hosts[h];

		for (size_t d = 0; d < host->ndevices; d++)
			for (size_t p = 0; p < host->devices[d].nports; p++) {
				const struct emu_port *port = &host->devices[d].ports[p];

				for (size_t g = 0; g < port->ngids; g++) {
					const struct emu_gid *gid = &port->gids[g];

					if (memcmp(gid->raw, av->dgid.raw, 16) || gid->netdev < 0 ||
					    (size_t)gid->netdev >= host->nnetdevs)
						continue;
					memcpy(dmac, host->netdevs[gid->netdev].hwaddr, 6);
					return 0;
				}
			}
	}
	return -EHOSTUNREACH;
}

static void vah_destroy(struct emu_obj *obj)
{
	free(container_of(obj, struct emu_vah, obj));
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct emu_vctx *vc = to_vctx(pd->context);
	struct emu_vah *a = calloc(1, sizeof(*a));
	int err;

	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	err = emu_av_from_attr(pd->context, attr, &a->av);
	if (err)
		goto fail;
	a->attr = *attr;
	a->pd = &container_of(pd, struct emu_vpd, pd)->epd;
	a->obj.type = EMU_OBJ_AH;
	a->obj.destroy = vah_destroy;
	a->obj.user = &a->ah;
	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_add_locked(vc->hctx, &a->obj);
	if (!err)
		a->pd->obj.usecnt++;
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err)
		goto fail;
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = emu_verbs_handle_get(vc);
	return &a->ah;
fail:
	free(a);
	errno = err;
	return NULL;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct emu_vah *a = container_of(ah, struct emu_vah, ah);
	struct emu_vctx *vc = to_vctx(ah->context);
	int err;

	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_remove_locked(&a->obj);
	if (!err)
		a->pd->obj.usecnt--;
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		errno = err;
		return err;
	}
	emu_verbs_handle_put(vc, ah->handle);
	free(a);
	return 0;
}

/* rdma_is_multicast_addr(): an IPv6 multicast GID (0xff first byte) or an IPv4-mapped one
 * (::ffff:224.0.0.0/100), which rdma_cm's RoCE joins of IPv4 groups attach. */
static bool mcast_gid(const union ibv_gid *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return gid->raw[0] == 0xff ||
	       (!memcmp(gid->raw, v4mapped, sizeof(v4mapped)) && (gid->raw[12] & 0xf0) == 0xe0);
}

bool emu_dp_mcast_attached(struct emu_vqp *q, const uint8_t gid[16])
{
	struct emu_list *pos;
	bool ret = false;

	pthread_mutex_lock(&q->lock);
	for (pos = q->mcast.next; pos != &q->mcast && !ret; pos = pos->next)
		ret = !memcmp(emu_list_entry(pos, struct emu_mcast_att, link)->gid.raw, gid, 16);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

/* Multicast attach bookkeeping (ib_attach_mcast + rxe_attach_mcast, measured): UD QPs only and
 * a multicast GID (mcast_gid), else EINVAL; attaching twice is 0; detaching what is not
 * attached is EINVAL. */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct emu_vqp *q = to_vqp(qp);
	struct emu_mcast_att *m;
	struct emu_list *pos;
	int err = 0;

	if (qp->qp_type != IBV_QPT_UD || !mcast_gid(gid))
		return errno = EINVAL;
	pthread_mutex_lock(&q->lock);
	for (pos = q->mcast.next; pos != &q->mcast; pos = pos->next)
		if (!memcmp(emu_list_entry(pos, struct emu_mcast_att, link)->gid.raw, gid->raw, 16))
			goto out;
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = errno = ENOMEM;
		goto out;
	}
	m->gid = *gid;
	m->lid = lid;
	emu_list_add_tail(&q->mcast, &m->link);
out:
	pthread_mutex_unlock(&q->lock);
	return err;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct emu_vqp *q = to_vqp(qp);
	struct emu_list *pos;
	int err = EINVAL;

	(void)lid;
	if (qp->qp_type != IBV_QPT_UD || !mcast_gid(gid))
		return errno = EINVAL;
	pthread_mutex_lock(&q->lock);
	for (pos = q->mcast.next; pos != &q->mcast; pos = pos->next) {
		struct emu_mcast_att *m = emu_list_entry(pos, struct emu_mcast_att, link);

		if (!memcmp(m->gid.raw, gid->raw, 16)) {
			emu_list_del(&m->link);
			free(m);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&q->lock);
	if (err)
		errno = err;
	return err;
}
