/* Address handles (ibv_create_ah / ibv_destroy_ah, their address vector made by
 * emu_av_from_attr, emu/verbs/av.c) and the multicast attachments of UD QPs. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "emu/verbs/objects.h"
#include "util/failcall.h"

/* For tests (libibverbs.map's RDMAEMU_PRIVATE_1): the destination MAC an AH resolved.
 * 1 with mac filled, 0 when its AV holds none (InfiniBand, or the daemon path). */
int rdmaemu_verbs_ah_dmac(struct ibv_ah *ah, uint8_t mac[6]) __attribute__((visibility("default")));
int rdmaemu_verbs_ah_dmac(struct ibv_ah *ah, uint8_t mac[6])
{
	const struct emu_vah *a = container_of(ah, struct emu_vah, ah);

	if (!a->av.dmac_valid)
		return 0;
	memcpy(mac, a->av.dmac, 6);
	return 1;
}

static void vah_destroy(struct emu_obj *obj)
{
	free(container_of(obj, struct emu_vah, obj));
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct emu_vctx *vc = to_vctx(pd->context);
	struct emu_vah *a = emu_calloc(1, sizeof(*a));
	struct emu_engine *e = emu_dp_engine();
	int err;

	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	/* rdma_create_user_ah() sleeps in ib_resolve_eth_dmac(): the wait runs in virtual time
	 * under the engine lock, released before the HCA mutex is taken (lock order) */
	if (e)
		emu_engine_lock(e);
	err = emu_av_from_attr(pd->context, attr, &a->av, "ibv_create_ah");
	if (e)
		emu_engine_unlock(e);
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
	m = emu_calloc(1, sizeof(*m));
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
