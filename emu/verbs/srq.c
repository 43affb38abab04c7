/* Shared receive queues: rxe_srq_chk_init/rxe_srq_chk_attr (Linux 6.1), as measured:
 * max_wr in [1, max_srq_wr] and max_sge <= max_srq_sge (EINVAL otherwise); max_sge 0 is raised
 * to 1; max_wr is reported back by query as roundup_pow_of_two(max_wr + 1) - 1 (create returns
 * the request); modify LIMIT above max_wr and MAX_WR below the current max_wr are EINVAL;
 * destroy is EBUSY while a QP uses the SRQ. Only basic SRQs: rxe has no XRC.
 * The limit (create's srq_limit, modify's IBV_SRQ_LIMIT) arms one IBV_EVENT_SRQ_LIMIT_REACHED:
 * rxe_resp.c get_srq_wqe() checks it each time the responder takes a receive WQE
 * (emu/verbs/wqe.c). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "emu/verbs/datapath.h"
#include "util/failcall.h"

static void vsrq_free(struct emu_vsrq *s)
{
	emu_dp_rwqe_list_free(&s->rq);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->srq.mutex);
	pthread_cond_destroy(&s->srq.cond);
	free(s);
}

static void vsrq_destroy(struct emu_obj *obj)
{
	vsrq_free(container_of(obj, struct emu_vsrq, obj));
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	const struct emu_device_caps *caps = &ctx_dev(pd->context)->caps;
	struct emu_vctx *vc = to_vctx(pd->context);
	struct emu_vsrq *s;
	int err;

	if (!init->attr.max_wr || init->attr.max_wr > caps->max_srq_wr ||
	    init->attr.max_sge > caps->max_srq_sge) {
		errno = EINVAL;
		return NULL;
	}
	s = emu_calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	if (!init->attr.max_sge)
		init->attr.max_sge = 1; /* rxe_srq_chk_init raises it */
	s->max_wr = emu_queue_usable(init->attr.max_wr);
	s->max_sge = init->attr.max_sge;
	s->limit = init->attr.srq_limit;
	emu_list_init(&s->rq);
	s->pd = &container_of(pd, struct emu_vpd, pd)->epd;
	s->obj.type = EMU_OBJ_SRQ;
	s->obj.destroy = vsrq_destroy;
	s->obj.user = &s->srq;
	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_add_locked(vc->hctx, &s->obj);
	if (!err)
		s->pd->obj.usecnt++;
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		free(s);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->srq.context = pd->context;
	s->srq.srq_context = init->srq_context;
	s->srq.pd = pd;
	s->srq.handle = emu_verbs_handle_get(vc);
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct emu_vsrq *s = to_vsrq(srq);
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		err = EINVAL;
	else if (mask & IBV_SRQ_MAX_WR &&
		 (!attr->max_wr || attr->max_wr > ctx_dev(srq->context)->caps.max_srq_wr ||
		  attr->max_wr < s->max_wr ||
		  (mask & IBV_SRQ_LIMIT && attr->srq_limit > attr->max_wr)))
		err = EINVAL;
	else if (mask & IBV_SRQ_LIMIT && attr->srq_limit > s->max_wr)
		err = EINVAL;
	if (!err && mask & IBV_SRQ_MAX_WR)
		s->max_wr = emu_queue_usable(attr->max_wr);
	if (!err && mask & IBV_SRQ_LIMIT)
		s->limit = attr->srq_limit;
	pthread_mutex_unlock(&s->lock);
	if (err)
		errno = err;
	return err;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct emu_vsrq *s = to_vsrq(srq);

	pthread_mutex_lock(&s->lock);
	attr->max_wr = s->max_wr;
	attr->max_sge = s->max_sge;
	attr->srq_limit = s->limit;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct emu_vsrq *s = to_vsrq(srq);
	struct emu_vctx *vc = to_vctx(srq->context);
	int err;

	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_remove_locked(&s->obj);
	if (!err)
		s->pd->obj.usecnt--;
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		errno = err;
		return err;
	}
	emu_verbs_handle_put(vc, srq->handle);
	vsrq_free(s);
	return 0;
}
