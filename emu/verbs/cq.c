/* Completion queues: rdma-core's ibv_create_cq/verbs_init_cq/ibv_destroy_cq and the rxe
 * provider over the kernel's rxe_cq.c, with the completion ring in the library (rxe maps its
 * ring into user space; the data path pushes into this one, emu/verbs/cq_ring.c).
 *
 * Measured on rxe (Linux 6.1, probes/VM-CHECKS.md): cqe must be in [1, max_cqe] (EINVAL
 * otherwise), and is reported back as roundup_pow_of_two(cqe + 1) - 1 (rxe_queue_init);
 * comp_vector >= num_comp_vectors is EINVAL; create_cq_ex accepts rxe's wc_flags only
 * (EOPNOTSUPP for timestamps). */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/link/link_shm.h"
#include "emu/verbs/datapath.h"

/* RXE_SUP_WC_FLAGS of rdma-core 44's providers/rxe */
#define RXE_SUP_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
			  IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			  IBV_WC_EX_WITH_DLID_PATH_BITS)

static void vcq_free(struct emu_vcq *c)
{
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->cq.mutex);
	pthread_cond_destroy(&c->cq.cond);
	emu_kmem_free(c->ring);
	emu_kmem_free(c);
}

/* Context close with the CQ still there: the channel reference goes with it. */
static void vcq_destroy(struct emu_obj *obj)
{
	struct emu_vcq *c = container_of(obj, struct emu_vcq, obj);

	if (c->cq.channel)
		c->cq.channel->refcnt--; /* context->mutex is not needed: the context is closing */
	vcq_free(c);
}

/* rxe_cq_chk_attr(): EINVAL for cqe <= 0, > max_cqe, or (resize) below the entries queued. */
static int cq_chk(struct ibv_context *ctx, int cqe, uint32_t queued)
{
	if (cqe <= 0 || (uint32_t)cqe > ctx_dev(ctx)->caps.max_cqe || (uint32_t)cqe < queued)
		return EINVAL;
	return 0;
}

static struct emu_vcq *cq_create(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch,
				 int comp_vector, void *cq_context)
{
	struct emu_vctx *vc = to_vctx(ctx);
	struct emu_vcq *c;
	int err;

	if ((uint32_t)comp_vector >= (uint32_t)ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	err = cq_chk(ctx, cqe, 0);
	if (err) {
		errno = err;
		return NULL;
	}
	/* kmem, as the QP (qp.c); a large ring comes from malloc through it */
	c = emu_kmem_zalloc(sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->nslots = emu_queue_usable((uint32_t)cqe) + 1;
	c->ring = emu_kmem_zalloc((size_t)c->nslots * sizeof(*c->ring));
	if (!c->ring) {
		emu_kmem_free(c);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->obj.type = EMU_OBJ_CQ;
	c->obj.destroy = vcq_destroy;
	c->obj.user = &c->cq;
	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_add_locked(vc->hctx, &c->obj);
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		pthread_mutex_destroy(&c->lock);
		emu_kmem_free(c->ring);
		emu_kmem_free(c);
		errno = err;
		return NULL;
	}
	/* verbs_init_cq() */
	c->cq.context = ctx;
	c->cq.cqe = (int)(c->nslots - 1);
	c->cq.handle = emu_verbs_handle_get(vc);
	c->cq.channel = ch;
	if (ch) {
		pthread_mutex_lock(&ctx->mutex);
		ch->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
	}
	c->cq.cq_context = cq_context;
	pthread_mutex_init(&c->cq.mutex, NULL);
	pthread_cond_init(&c->cq.cond, NULL);
	return c;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct emu_vcq *c = cq_create(context, cqe, channel, comp_vector, cq_context);

	return c ? &c->cq : NULL;
}

/* ---- the extended poll interface (ibv_start_poll & co.) over the same ring ---- */

static void cur_to_cqx(struct emu_vcq *c)
{
	c->cqx.wr_id = c->cur.wr_id;
	c->cqx.status = c->cur.status;
}

static int cqx_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct emu_vcq *c = container_of(cq, struct emu_vcq, cqx);

	if (attr->comp_mask)
		return EINVAL;
	if (!emu_cq_pop(c, &c->cur))
		return ENOENT;
	cur_to_cqx(c);
	return 0;
}

static int cqx_next_poll(struct ibv_cq_ex *cq)
{
	struct emu_vcq *c = container_of(cq, struct emu_vcq, cqx);

	if (!emu_cq_pop(c, &c->cur))
		return ENOENT;
	cur_to_cqx(c);
	return 0;
}

static void cqx_end_poll(struct ibv_cq_ex *cq)
{
	(void)cq;
}

#define CUR(cq) (&container_of(cq, struct emu_vcq, cqx)->cur)
static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *cq) { return CUR(cq)->opcode; }
static uint32_t cqx_vendor_err(struct ibv_cq_ex *cq) { return CUR(cq)->vendor_err; }
static uint32_t cqx_byte_len(struct ibv_cq_ex *cq) { return CUR(cq)->byte_len; }
static __be32 cqx_imm_data(struct ibv_cq_ex *cq) { return CUR(cq)->imm_data; }
static uint32_t cqx_qp_num(struct ibv_cq_ex *cq) { return CUR(cq)->qp_num; }
static uint32_t cqx_src_qp(struct ibv_cq_ex *cq) { return CUR(cq)->src_qp; }
static unsigned int cqx_wc_flags(struct ibv_cq_ex *cq) { return CUR(cq)->wc_flags; }
static uint32_t cqx_slid(struct ibv_cq_ex *cq) { return CUR(cq)->slid; }
static uint8_t cqx_sl(struct ibv_cq_ex *cq) { return CUR(cq)->sl; }
static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *cq) { return CUR(cq)->dlid_path_bits; }
#undef CUR

struct ibv_cq_ex *emu_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct emu_vcq *c;

	/* rxe's provider: unknown wc_flags are EOPNOTSUPP; comp_mask FLAGS and PD pass */
	if (attr->wc_flags & ~(uint64_t)RXE_SUP_WC_FLAGS ||
	    attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	c = cq_create(ctx, (int)attr->cqe, attr->channel, (int)attr->comp_vector,
		      attr->cq_context);
	if (!c)
		return NULL;
	c->is_ex = true;
	c->wc_flags = attr->wc_flags;
	c->cqx.start_poll = cqx_start_poll;
	c->cqx.next_poll = cqx_next_poll;
	c->cqx.end_poll = cqx_end_poll;
	c->cqx.read_opcode = cqx_opcode;
	c->cqx.read_vendor_err = cqx_vendor_err;
	c->cqx.read_wc_flags = cqx_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		c->cqx.read_byte_len = cqx_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		c->cqx.read_imm_data = cqx_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		c->cqx.read_qp_num = cqx_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		c->cqx.read_src_qp = cqx_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		c->cqx.read_slid = cqx_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		c->cqx.read_sl = cqx_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		c->cqx.read_dlid_path_bits = cqx_dlid_path_bits;
	return &c->cqx;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct emu_vcq *c = to_vcq(cq);
	struct ibv_wc *ring;
	uint32_t n;
	int err;

	pthread_mutex_lock(&c->lock);
	err = cq_chk(cq->context, cqe, c->count);
	if (err)
		goto out;
	n = emu_queue_usable((uint32_t)cqe) + 1;
	ring = emu_kmem_zalloc((size_t)n * sizeof(*ring));
	if (!ring) {
		err = ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < c->count; i++)
		ring[i] = c->ring[(c->head + i) % c->nslots];
	emu_kmem_free(c->ring);
	c->ring = ring;
	c->nslots = n;
	c->head = 0;
	cq->cqe = (int)(n - 1);
out:
	pthread_mutex_unlock(&c->lock);
	if (err)
		errno = err;
	return err;
}

/* rdma-core: the kernel destroys the CQ (EBUSY while QPs use it), drops its unread events,
 * then libibverbs waits until every event handed out was acknowledged, then lowers the
 * channel's refcnt. */
int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct emu_vcq *c = to_vcq(cq);
	struct emu_vctx *vc = to_vctx(cq->context);
	struct ibv_comp_channel *ch = cq->channel;
	int err;

	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_remove_locked(&c->obj);
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		errno = err;
		return err;
	}
	if (ch)
		emu_verbs_comp_events_purge(ch, cq);
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != c->comp_events_reported ||
	       cq->async_events_completed != c->async_events_reported)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	if (ch) {
		pthread_mutex_lock(&cq->context->mutex);
		ch->refcnt--;
		pthread_mutex_unlock(&cq->context->mutex);
	}
	emu_verbs_handle_put(vc, cq->handle);
	vcq_free(c);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	if (emu_verbs_comp_event_read(channel, cq))
		return -1;
	*cq_context = (*cq)->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* An empty poll in real time gives the CPU away (sched_yield) so that the threads that
 * bring frames in (the link's receive thread, the ring thread) run on a 2-core machine where
 * two busy pollers would otherwise hold both CPUs until a scheduler tick. With shared-memory
 * rings the poller drains them itself first (emu_link_shm_poll), and a yield at every empty
 * poll (a system call, 1-2 us on this VM) was most of a 2-byte ib_send_lat round trip: it
 * yields at every CQ_RING_YIELD_EVERY-th then (docs/daemon.md). */
#define CQ_RING_YIELD_EVERY 64
/* A poller that has found nothing this many times in a row is not about to post: the ACKs
 * held back for its next request go (emu/verbs/ack_hold.c). */
#define CQ_ACK_FLUSH_EVERY 16

/* An empty poll in real time after the rings had nothing either. */
static void empty_realtime_poll(struct emu_engine *e, struct emu_vcq *c)
{
	unsigned n;

	if (!emu_link_shm_peers()) {
		sched_yield();
		return;
	}
	n = __atomic_add_fetch(&c->empty_polls, 1, __ATOMIC_RELAXED);
	if (n % CQ_ACK_FLUSH_EVERY == 0 && emu_dp_acks_held()) {
		emu_engine_lock(e);
		emu_dp_ack_flush_all();
		emu_engine_unlock(e);
	}
	if (n % CQ_RING_YIELD_EVERY == 0)
		sched_yield();
}

/* rxe's user-space poll: n <= 0 polls nothing and returns 0. */
int emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int i;

	for (i = 0; i < n; i++)
		if (!emu_cq_pop(to_vcq(cq), &wc[i]))
			break;
	/* empty polls are counted in a row */
	if (i > 0 && __atomic_load_n(&to_vcq(cq)->empty_polls, __ATOMIC_RELAXED))
		__atomic_store_n(&to_vcq(cq)->empty_polls, 0, __ATOMIC_RELAXED);
	if (i == 0 && n > 0) {
		/* an empty poll: a busy-poll loop lets virtual time move (docs/engine.md). The
		 * report is made under the engine lock (it reads and moves the thread states and
		 * may fire timers); in real time it only yields, which must not hold the lock. */
		struct emu_engine *e = emu_dp_engine();

		if (e && emu_engine_is_realtime(e)) {
			/* frames from the shared-memory rings are this poller's to take first */
			if (!emu_link_shm_poll(e))
				empty_realtime_poll(e, to_vcq(cq));
		} else if (e) {
			emu_engine_lock(e);
			emu_engine_note_idle(e);
			emu_engine_unlock(e);
		}
	}
	return i;
}

/* rxe_req_notify_cq(): an armed "next completion" is not downgraded to "solicited". */
int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct emu_vcq *c = to_vcq(cq);

	pthread_mutex_lock(&c->lock);
	if (c->notify != EMU_CQ_NOTIFY_NEXT)
		c->notify = solicited_only ? EMU_CQ_NOTIFY_SOLICITED : EMU_CQ_NOTIFY_NEXT;
	pthread_mutex_unlock(&c->lock);
	return 0;
}
