/* The CM agent: ids, tables, the table-driven transition step, timers, and the consumer's API
 * (ib_create_cm_id, ib_cm_listen, ib_send_cm_*, ib_cm_notify, ib_destroy_cm_id of
 * drivers/infiniband/core/cm.c). Message handlers are in cm_agent_rx.c, the send path and its
 * faults in cm_agent_out.c. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/sim/trace.h"
#include "emu/sim/array.h"
#include "emu/ib/cm_agent_priv.h"
#include "util/failcall.h"

/* ---- tracing (RDMAEMU_TRACE=cm) ---- */

static bool cm_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "cm");
}

bool emu_cm_tracing(const struct emu_cm_agent *a)
{
	return a->ops->trace || cm_trace_on();
}

void emu_cm_trace(struct emu_cm_agent *a, const char *fmt, ...)
{
	char line[256];
	int n;
	va_list ap;

	if (!emu_cm_tracing(a))
		return;
	n = snprintf(line, sizeof(line), "%s: ", a->name);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (a->ops->trace)
		a->ops->trace(a->ctx, line);
	if (cm_trace_on())
		fprintf(stderr, "rdmaemu: %s\n", line);
}

/* ---- entry/exit: the receive queue that keeps handlers from nesting ---- */

void emu_cm_agent_enter(struct emu_cm_agent *a)
{
	a->busy++;
}

void emu_cm_agent_leave(struct emu_cm_agent *a)
{
	/* The outermost entry point drains what arrived meanwhile, in arrival order. */
	while (a->busy == 1 && !emu_list_empty(&a->rxq)) {
		struct cm_rxq *q = emu_list_entry(a->rxq.next, struct cm_rxq, node);

		emu_list_del(&q->node);
		emu_cm_rx_one(a, &q->src, q->mad, sizeof(q->mad));
		free(q);
	}
	a->busy--;
}

void emu_cm_agent_rx(struct emu_cm_agent *a, const struct emu_cm_addr *src, const uint8_t *mad,
		     size_t len)
{
	if (!a || !src || !mad)
		return;
	if (a->busy) {
		struct cm_rxq *q = emu_calloc(1, sizeof(*q));

		if (!q || len < EMU_MAD_LEN) { /* dropped, as a MAD layer out of buffers */
			a->cnt.rx_bad++;
			free(q);
			return;
		}
		q->src = *src;
		memcpy(q->mad, mad, EMU_MAD_LEN);
		emu_list_add_tail(&a->rxq, &q->node);
		return;
	}
	emu_cm_agent_enter(a);
	emu_cm_rx_one(a, src, mad, len);
	emu_cm_agent_leave(a);
}

/* ---- the agent ---- */

/* Moves every chain of `old` (2^old_bits buckets) into `nb`, keeping each chain's order, so
 * that equal keys are found in the order they were inserted, as before. */
static void cm_hash_move(struct emu_cm_agent *a, struct emu_list *old, unsigned old_bits,
			 struct emu_list *nb, size_t off, size_t key_off)
{
	for (size_t i = 0; old && i < (size_t)1 << old_bits; i++) {
		while (!emu_list_empty(&old[i])) {
			struct emu_list *n = old[i].next;
			uint32_t key;

			memcpy(&key, (const char *)n - off + key_off, sizeof(key));
			emu_list_del(n);
			emu_list_add_tail(&nb[emu_cm_bucket(a, key)], n);
		}
	}
}

/* The tables at 2^bits buckets, the ids moved over. */
static int cm_hash_resize(struct emu_cm_agent *a, unsigned bits)
{
	unsigned old_bits = a->hash_bits;
	size_t n = (size_t)1 << bits;
	struct emu_list *r = emu_kmem_table_zalloc(n * sizeof(*r)),
			*q = emu_kmem_table_zalloc(n * sizeof(*q));
	struct emu_list *orr = a->rid_hash, *oq = a->rqpn_hash;
	size_t old_size = orr ? ((size_t)1 << old_bits) * sizeof(*r) : 0;

	if (!r || !q) {
		emu_kmem_table_free(r, n * sizeof(*r));
		emu_kmem_table_free(q, n * sizeof(*q));
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		emu_list_init(&r[i]);
		emu_list_init(&q[i]);
	}
	a->hash_bits = bits;
	cm_hash_move(a, orr, old_bits, r, offsetof(struct emu_cm_id, rid_node),
		     offsetof(struct emu_cm_id, rid_key));
	cm_hash_move(a, oq, old_bits, q, offsetof(struct emu_cm_id, rqpn_node),
		     offsetof(struct emu_cm_id, rqpn_key));
	a->rid_hash = r;
	a->rqpn_hash = q;
	emu_kmem_table_free(orr, old_size);
	emu_kmem_table_free(oq, old_size);
	return 0;
}

int emu_cm_agent_create(struct emu_clock *clk, const struct emu_cm_transport_ops *ops, void *ctx,
			const struct emu_cm_agent_cfg *cfg, struct emu_cm_agent **out)
{
	struct emu_cm_agent *a;
	struct emu_prng root, ids;

	if (!clk || !ops || !ops->send_mad || !cfg || !out)
		return -EINVAL;
	a = emu_calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->clk = clk;
	a->ops = ops;
	a->ctx = ctx;
	snprintf(a->name, sizeof(a->name), "%s", cfg->name ? cfg->name : "cm");
	a->ca_guid = cfg->ca_guid;
	a->ack_delay = cfg->ack_delay;
	a->hi_tid = cfg->hi_tid;
	emu_list_init(&a->ids);
	if (cm_hash_resize(a, 0)) {
		free(a);
		return -ENOMEM;
	}
	emu_list_init(&a->delayed);
	emu_list_init(&a->rxq);
	if (cfg->prng) {
		emu_prng_fork(cfg->prng, EMU_PRNG_DOMAIN_CM, &root);
	} else {
		emu_prng_seed(&root, 0);
		emu_prng_fork(&root, EMU_PRNG_DOMAIN_CM, &root);
	}
	emu_prng_fork(&root, cfg->stream, &ids);
	/* cm_init: get_random_bytes(&cm.random_id_operand): here from the agent's stream */
	a->random_id_operand = (uint32_t)emu_prng_u64(&ids);
	emu_prng_fork(&ids, 1, &a->fault_rng);
	*out = a;
	return 0;
}

void emu_cm_agent_destroy(struct emu_cm_agent *a)
{
	struct emu_list *pos, *tmp;

	if (!a)
		return;
	emu_list_for_each_safe(pos, tmp, &a->ids)
		emu_cm_id_free(emu_list_entry(pos, struct emu_cm_id, node));
	emu_cm_delayed_flush(a);
	emu_list_for_each_safe(pos, tmp, &a->rxq) {
		emu_list_del(pos);
		free(emu_list_entry(pos, struct cm_rxq, node));
	}
	emu_idtab_destroy(&a->lid);
	emu_kmem_table_free(a->rid_hash, ((size_t)1 << a->hash_bits) * sizeof(*a->rid_hash));
	emu_kmem_table_free(a->rqpn_hash, ((size_t)1 << a->hash_bits) * sizeof(*a->rqpn_hash));
	free(a->listeners.v);
	free(a->sidr.v);
	free(a);
}

size_t emu_cm_agent_nids(const struct emu_cm_agent *a)
{
	return a ? a->lid.n : 0; /* every live id holds a local ID */
}

void emu_cm_agent_counters(const struct emu_cm_agent *a, struct emu_cm_counters *c)
{
	if (a && c)
		*c = a->cnt;
}

/* ---- ids ---- */

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct emu_cm_id) <= 384, "a CM id fits the 384-byte kmem class");
#endif

static void cm_timewait_timer(struct emu_clock *clk, struct emu_timer *t, void *arg);
static void cm_remove_remote(struct emu_cm_id *id);
static void cm_establish_timer(struct emu_clock *clk, struct emu_timer *t, void *arg);
static void cm_listen_del(struct emu_cm_agent *a, struct emu_cm_id *id);
static void cm_sidr_del(struct emu_cm_agent *a, struct emu_cm_id *id);

struct emu_cm_id *emu_cm_id_alloc(struct emu_cm_agent *a, emu_cm_handler *h, void *ctx)
{
	struct emu_cm_id *id = emu_kmem_zalloc(sizeof(*id));
	uint32_t n;
	int err;

	if (!id)
		return NULL;
	/* cm_alloc_id_priv: xa_alloc_cyclic from local_id_next (the first free key from
	 * there), XOR random_id_operand */
	do
		n = a->local_id_next++;
	while ((err = emu_idtab_set(&a->lid, n, id)) == -EEXIST);
	if (err) {
		emu_kmem_free(id);
		return NULL;
	}
	id->agent = a;
	id->handler = h;
	id->context = ctx;
	id->state = EMU_CM_IDLE;
	id->local_id = n ^ a->random_id_operand;
	emu_timer_init(&id->out.timer, emu_cm_out_timer, id);
	emu_timer_init(&id->timewait, cm_timewait_timer, id);
	emu_list_add_tail(&a->ids, &id->node);
	if (a->lid.n > (size_t)1 << a->hash_bits) /* without memory the chains stay longer */
		cm_hash_resize(a, a->hash_bits ? a->hash_bits + 2 : EMU_CM_HASH_BITS_MIN);
	return id;
}

void emu_cm_id_free(struct emu_cm_id *id)
{
	struct emu_cm_agent *a = id->agent;

	emu_timer_cancel(a->clk, &id->out.timer);
	emu_timer_cancel(a->clk, &id->timewait);
	if (id->establish) {
		emu_timer_cancel(a->clk, id->establish);
		emu_kmem_free(id->establish);
	}
	cm_remove_remote(id);
	cm_listen_del(a, id);
	cm_sidr_del(a, id);
	emu_list_del(&id->node);
	emu_idtab_del(&a->lid, id->local_id ^ a->random_id_operand);
	emu_kmem_free(id->out.mad);
	emu_kmem_free(id->pdata);
	emu_kmem_free(id);
}

/* Listen lookups walk the listeners (in the order they listened; overlapping ones are
 * refused, so one matches at most); lookups by local ID go through the agent's id table,
 * by remote ID and remote QPN through its hash tables (a host may hold 10,000
 * connections). */
struct emu_cm_id *emu_cm_acquire(struct emu_cm_agent *a, uint32_t local_id, uint32_t remote_id)
{
	struct emu_cm_id *id = emu_idtab_get(&a->lid, local_id ^ a->random_id_operand);

	/* a listening or a SIDR id answers no message by local ID (its remote ID is 0) */
	if (!id || id->in_listen || id->in_sidr)
		return NULL;
	return id->remote_id == remote_id ? id : NULL;
}

struct emu_cm_id *emu_cm_find_listen(struct emu_cm_agent *a, uint64_t service_id)
{
	for (size_t i = 0; i < a->listeners.n; i++) {
		struct emu_cm_id *id = a->listeners.v[i];

		if ((id->service_mask & service_id) == id->service_id)
			return id;
	}
	return NULL;
}

int emu_cm_idset_add(struct emu_cm_idset *s, struct emu_cm_id *id)
{
	int i = emu_array_push(&s->v, &s->n, sizeof(s->v[0]));

	if (i < 0)
		return -ENOMEM;
	s->v[i] = id;
	return 0;
}

void emu_cm_idset_del(struct emu_cm_idset *s, struct emu_cm_id *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == id) {
			memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(s->v[0]));
			s->n--;
			return;
		}
}

/* id leaves the listeners (cm_remove_listen). */
static void cm_listen_del(struct emu_cm_agent *a, struct emu_cm_id *id)
{
	if (!id->in_listen)
		return;
	id->in_listen = false;
	emu_cm_idset_del(&a->listeners, id);
}

/* The SIDR request id leaves the requests being served (cm_sidr_rep's rb_erase). */
static void cm_sidr_del(struct emu_cm_agent *a, struct emu_cm_id *id)
{
	if (!id->in_sidr)
		return;
	id->in_sidr = false;
	emu_cm_idset_del(&a->sidr, id);
}

struct emu_cm_id *emu_cm_find_remote_id(struct emu_cm_agent *a, uint64_t guid, uint32_t remote_id)
{
	struct emu_list *pos, *tmp;

	emu_list_for_each_safe(pos, tmp, &a->rid_hash[emu_cm_bucket(a, remote_id)]) {
		struct emu_cm_id *id = emu_list_entry(pos, struct emu_cm_id, rid_node);

		if (id->remote_id == remote_id && id->remote_ca_guid == guid)
			return id;
	}
	return NULL;
}

struct emu_cm_id *emu_cm_find_remote_qpn(struct emu_cm_agent *a, uint64_t guid, uint32_t qpn)
{
	struct emu_list *pos, *tmp;

	emu_list_for_each_safe(pos, tmp, &a->rqpn_hash[emu_cm_bucket(a, qpn)]) {
		struct emu_cm_id *id = emu_list_entry(pos, struct emu_cm_id, rqpn_node);

		if (id->remote_qpn == qpn && id->remote_ca_guid == guid)
			return id;
	}
	return NULL;
}

enum emu_cm_state emu_cm_id_state(const struct emu_cm_id *id)
{
	return (enum emu_cm_state)id->state;
}
uint32_t emu_cm_id_local_id(const struct emu_cm_id *id)
{
	return id->local_id;
}
uint32_t emu_cm_id_remote_id(const struct emu_cm_id *id)
{
	return id->remote_id;
}
void *emu_cm_id_context(const struct emu_cm_id *id)
{
	return id->context;
}
void emu_cm_id_set_context(struct emu_cm_id *id, void *context)
{
	id->context = context;
}
struct emu_cm_agent *emu_cm_id_agent(const struct emu_cm_id *id)
{
	return id->agent;
}
uint8_t emu_cm_id_av_timeout(const struct emu_cm_id *id)
{
	return id->av_timeout;
}
unsigned emu_cm_id_timeout_ms(const struct emu_cm_id *id)
{
	return id->timeout_ms;
}

/* ---- the transition step ---- */

void emu_cm_cancel_out(struct emu_cm_id *id)
{
	/* ib_cancel_mad: the send completes with a flush error, which cm_send_handler frees */
	emu_cm_out_done(id);
	emu_timer_cancel(id->agent->clk, &id->out.timer);
}

/* cm_reset_to_idle / cm_remove_remote */
static void cm_remove_remote(struct emu_cm_id *id)
{
	if (id->in_remote_id)
		emu_list_del(&id->rid_node);
	if (id->in_remote_qpn)
		emu_list_del(&id->rqpn_node);
	id->in_remote_id = false;
	id->in_remote_qpn = false;
}

void emu_cm_insert_remote(struct emu_cm_id *id)
{
	struct emu_cm_agent *a = id->agent;

	cm_remove_remote(id);
	id->rid_key = id->remote_id;
	id->rqpn_key = id->remote_qpn;
	emu_list_add_tail(&a->rid_hash[emu_cm_bucket(a, id->rid_key)], &id->rid_node);
	emu_list_add_tail(&a->rqpn_hash[emu_cm_bucket(a, id->rqpn_key)], &id->rqpn_node);
	id->in_remote_id = true;
	id->in_remote_qpn = true;
}

/* cm_enter_timewait: the timer carries (local ID, remote ID, remote QPN) and finds the id
 * again when it fires; destroying the id cancels it here, which is what the kernel's lookup
 * failure amounts to. */
static void cm_enter_timewait(struct emu_cm_id *id)
{
	cm_remove_remote(id);
	id->tw_remote_qpn = id->remote_qpn;
	emu_timer_arm_in(id->agent->clk, &id->timewait,
			 (uint64_t)emu_cm_timewait_ms(id->av_timeout) * EMU_NSEC_PER_MSEC);
}

int emu_cm_step(struct emu_cm_id *id, unsigned ev, struct emu_cm_trans *t)
{
	char line[160];
	unsigned cur = id->state;

	if (emu_cm_lookup(cur, ev, t))
		return -EINVAL;
	if (emu_cm_tracing(id->agent)) { /* the line costs a format: only when someone reads it */
		emu_cm_trace_fmt(line, sizeof(line), id->local_id, cur, ev);
		emu_cm_trace(id->agent, "%s", line);
	}
	if (t->disp == EMU_CM_ERR)
		return -(int)t->err;
	if (t->disp != EMU_CM_OK) {
		if (t->actions & EMU_CM_A_COUNT_DUP) {
			int c = ev == EMU_CM_EV_RECV_REQ ? 0 : ev == EMU_CM_EV_RECV_REP ? 3 :
				ev == EMU_CM_EV_RECV_RTU ? 4 : ev == EMU_CM_EV_RECV_DREQ ? 5 :
				ev >= EMU_CM_EV_RECV_MRA_REQ && ev <= EMU_CM_EV_RECV_MRA_OTHER ? 1 : -1;

			if (c >= 0)
				id->agent->cnt.rx_dup[c]++;
		}
		return 0;
	}
	id->state = t->next;
	if (t->actions & EMU_CM_A_CANCEL)
		emu_cm_cancel_out(id);
	if (t->actions & EMU_CM_A_RESET)
		cm_remove_remote(id);
	if (t->actions & EMU_CM_A_TIMEWAIT)
		cm_enter_timewait(id);
	if (t->actions & EMU_CM_A_UNLISTEN)
		cm_listen_del(id->agent, id);
	return 0;
}

bool emu_cm_deliver(struct emu_cm_id *id, const struct emu_cm_event *ev)
{
	int ret;

	id->in_handler++;
	ret = id->handler ? id->handler(id, ev) : 0;
	id->in_handler--;
	if ((ret || id->destroy_pending) && !id->in_handler) {
		id->destroy_pending = false;
		if (ret == -ENOMEM && id->state == EMU_CM_REQ_RCVD) {
			/* cm_destroy_id(-ENOMEM): "do not reject to allow future retries" (a full
			 * rdma_cm backlog): the id goes without a REJ and leaves the remote-ID table,
			 * so the sender's next REQ reaches the listener again */
			emu_cm_trace(id->agent, "cm 0x%x: REQ_RCVD: consumer out of memory, no REJ",
				     id->local_id);
			cm_remove_remote(id);
			emu_cm_id_free(id);
			return true;
		}
		emu_cm_destroy_id(id);
		return true;
	}
	return false;
}

static void cm_timewait_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_cm_id *id = arg;
	struct emu_cm_agent *a = id->agent;
	struct emu_cm_trans tr;
	struct emu_cm_event ev = { .type = EMU_CM_UE_TIMEWAIT_EXIT };

	(void)clk;
	(void)t;
	emu_cm_agent_enter(a);
	/* cm_timewait_handler: only if the id is still in timewait for that connection */
	if (id->state == EMU_CM_TIMEWAIT && id->remote_qpn == id->tw_remote_qpn &&
	    !emu_cm_step(id, EMU_CM_EV_TIMEWAIT_EXIT, &tr) && tr.disp == EMU_CM_OK)
		emu_cm_deliver(id, &ev);
	emu_cm_agent_leave(a);
}

static void cm_establish_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_cm_id *id = arg;
	struct emu_cm_agent *a = id->agent;
	struct emu_cm_event ev = { .type = EMU_CM_UE_USER_ESTABLISHED };

	(void)clk;
	/* the work is done with once it runs (the clock touches no timer after its call) */
	emu_kmem_free(t);
	id->establish = NULL;
	/* cm_establish_handler: the state changed at the call; the work cancels the REP's MAD
	 * and reports the event if the id is still established */
	if (id->state != EMU_CM_ESTABLISHED)
		return;
	emu_cm_agent_enter(a);
	emu_cm_cancel_out(id);
	emu_cm_trace(a, "cm 0x%x: ESTABLISHED: user_established", id->local_id);
	emu_cm_deliver(id, &ev);
	emu_cm_agent_leave(a);
}

/* ---- formatting ---- */

int emu_cm_format(uint16_t attr, const struct emu_cm_msg *m, uint8_t mad[EMU_MAD_LEN])
{
	return emu_cm_pack(attr, m, mad);
}

static void cm_set_pdata(struct emu_cm_msg *m, const void *pd, uint8_t len)
{
	if (pd && len) {
		memcpy(m->private_data, pd, len);
		m->private_data_len = len;
	}
}

void emu_cm_format_rej(const struct emu_cm_id *id, unsigned state, unsigned reason,
		       const void *ari, uint8_t ari_len, const void *pd, uint8_t len,
		       uint8_t mad[EMU_MAD_LEN])
{
	struct emu_cm_msg m = { .tid = id->tid, .remote_comm_id = id->remote_id,
				.reason = (uint16_t)reason };

	/* cm_format_rej: a REJ of a REQ not yet MRAed carries local comm ID 0 */
	switch (state) {
	case EMU_CM_REQ_RCVD:
		m.local_comm_id = 0;
		m.message_rejected = EMU_CM_MSG_RESPONSE_REQ;
		break;
	case EMU_CM_MRA_REQ_SENT:
		m.local_comm_id = id->local_id;
		m.message_rejected = EMU_CM_MSG_RESPONSE_REQ;
		break;
	case EMU_CM_REP_RCVD:
	case EMU_CM_MRA_REP_SENT:
		m.local_comm_id = id->local_id;
		m.message_rejected = EMU_CM_MSG_RESPONSE_REP;
		break;
	default:
		m.local_comm_id = id->local_id;
		m.message_rejected = EMU_CM_MSG_RESPONSE_OTHER;
		break;
	}
	if (ari && ari_len) {
		m.reject_info_len = ari_len;
		memcpy(m.ari, ari, ari_len);
	}
	cm_set_pdata(&m, pd, len);
	emu_cm_format(EMU_CM_ATTR_REJ, &m, mad);
}

void emu_cm_format_mra(const struct emu_cm_id *id, unsigned msg_mraed, uint8_t mad[EMU_MAD_LEN])
{
	/* cm_format_mra: IBA_SET keeps the 5 bits of the service timeout (drops the DELAY flag) */
	struct emu_cm_msg m = { .tid = id->tid, .message_mraed = (uint8_t)msg_mraed,
				.local_comm_id = id->local_id, .remote_comm_id = id->remote_id,
				.service_timeout = id->service_timeout & 0x1f };

	cm_set_pdata(&m, id->pdata, id->pdata_len);
	emu_cm_format(EMU_CM_ATTR_MRA, &m, mad);
}

void emu_cm_format_rtu(const struct emu_cm_id *id, uint8_t mad[EMU_MAD_LEN])
{
	struct emu_cm_msg m = { .tid = id->tid, .local_comm_id = id->local_id,
				.remote_comm_id = id->remote_id };

	cm_set_pdata(&m, id->pdata, id->pdata_len);
	emu_cm_format(EMU_CM_ATTR_RTU, &m, mad);
}

void emu_cm_format_drep(const struct emu_cm_id *id, uint8_t mad[EMU_MAD_LEN])
{
	struct emu_cm_msg m = { .tid = id->tid, .local_comm_id = id->local_id,
				.remote_comm_id = id->remote_id };

	cm_set_pdata(&m, id->pdata, id->pdata_len);
	emu_cm_format(EMU_CM_ATTR_DREP, &m, mad);
}

static void cm_store_pdata(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	/* cm_set_private_data: kept for the answers to duplicates */
	id->pdata_len = pd ? len : 0;
	if (!id->pdata_len)
		return;
	if (!id->pdata)
		id->pdata = emu_kmem_alloc(EMU_CM_PRIVATE_DATA_MAX);
	if (!id->pdata) { /* (the kernel's kmemdup failing fails the send instead) */
		emu_cm_trace(id->agent, "cm 0x%x: no memory to keep %u bytes of private data: "
					"duplicates are answered without it", id->local_id, len);
		id->pdata_len = 0;
		return;
	}
	memcpy(id->pdata, pd, len);
}

/* ---- the consumer's API ---- */

#define API_ENTER(id)                          \
	struct emu_cm_agent *a_ = (id)->agent; \
	int ret_;                              \
	emu_cm_agent_enter(a_)
#define API_RETURN(v)                \
	do {                         \
		ret_ = (v);          \
		emu_cm_agent_leave(a_); \
		return ret_;         \
	} while (0)

int emu_cm_create_id(struct emu_cm_agent *a, emu_cm_handler *handler, void *context,
		     struct emu_cm_id **out)
{
	struct emu_cm_id *id;

	if (!a || !out)
		return -EINVAL;
	id = emu_cm_id_alloc(a, handler, context);
	if (!id)
		return -ENOMEM;
	emu_cm_trace(a, "cm 0x%x: created", id->local_id);
	*out = id;
	return 0;
}

int emu_cm_listen(struct emu_cm_id *id, uint64_t service_id, uint64_t mask)
{
	struct emu_cm_trans t;
	int err;

	if (!id)
		return -EINVAL;
	API_ENTER(id);
	if (id->state != EMU_CM_IDLE)
		API_RETURN(-EINVAL);
	/* cm_init_listen: mask 0 is exact; IB_CM_ASSIGN_SERVICE_ID (0x02 in the top byte) is
	 * not modelled: such IDs are refused as the kernel refuses any other in that range */
	mask = mask ? mask : ~0ull;
	service_id &= mask;
	if ((service_id >> 56) == 0x02)
		API_RETURN(-EINVAL);
	/* cm_insert_listen: overlapping listeners collide */
	for (size_t i = 0; i < a_->listeners.n; i++) {
		const struct emu_cm_id *cur = a_->listeners.v[i];

		if ((cur->service_mask & service_id) == (mask & cur->service_id))
			API_RETURN(-EBUSY);
	}
	/* the place first: the step below is not undone (cm_init_listen allocates first too) */
	err = emu_cm_idset_add(&a_->listeners, id);
	if (err)
		API_RETURN(err);
	err = emu_cm_step(id, EMU_CM_EV_LISTEN, &t);
	if (err) {
		a_->listeners.n--; /* the place taken above */
		API_RETURN(err);
	}
	id->service_id = service_id;
	id->service_mask = mask;
	id->in_listen = true;
	API_RETURN(0);
}

static void cm_format_path(struct emu_cm_path *w, const struct emu_cm_path_rec *p, uint8_t ack_delay)
{
	memcpy(w->local_gid, p->sgid, 16);
	memcpy(w->remote_gid, p->dgid, 16);
	if (p->hop_limit <= 1) {
		w->local_lid = p->slid;
		w->remote_lid = p->dlid;
	} else { /* "Work-around until there's a way to obtain remote LID info" */
		w->local_lid = 0xffff;
		w->remote_lid = 0xffff;
	}
	w->flow_label = p->flow_label;
	w->packet_rate = p->rate;
	w->traffic_class = p->traffic_class;
	w->hop_limit = p->hop_limit;
	w->sl = p->sl;
	w->subnet_local = p->hop_limit <= 1;
	w->local_ack_timeout = (uint8_t)emu_cm_ack_timeout(ack_delay, p->packet_life_time);
}

/* cm_alloc_msg / cm_alloc_priv_msg: a send's MAD buffer is allocated before the id's state
 * moves, so that -ENOMEM leaves the id as it was (as ib_send_cm_* return it to rdma_cm, which
 * then rejects or reports the error); only a MAD the CM sends by itself (a handler's answer,
 * a retry) is lost when memory runs out. A send that waits for an answer keeps its MAD in the
 * id for resending (cm_id_priv->msg); the others free it once it is out. */
static int cm_out_reserve(struct emu_cm_id *id)
{
	if (!id->out.mad && !(id->out.mad = emu_kmem_alloc(EMU_MAD_LEN)))
		return -ENOMEM;
	return 0;
}

int emu_cm_send_req(struct emu_cm_id *id, const struct emu_cm_req_param *p)
{
	struct emu_cm_msg m;
	struct emu_cm_trans t;
	uint8_t mad[EMU_MAD_LEN];
	int err;

	if (!id || !p)
		return -EINVAL;
	/* cm_validate_req_param */
	if (!p->primary_path)
		return -EINVAL;
	if (p->qp_type != EMU_CM_TRANSPORT_RC && p->qp_type != EMU_CM_TRANSPORT_UC &&
	    p->qp_type != EMU_CM_TRANSPORT_EXTENDED)
		return -EINVAL;
	if (p->private_data && p->private_data_len > EMU_CM_REQ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	if (p->alternate_path && (p->alternate_path->pkey != p->primary_path->pkey ||
				  p->alternate_path->mtu != p->primary_path->mtu))
		return -EINVAL;
	API_ENTER(id);
	if (id->state != EMU_CM_IDLE)
		API_RETURN(-EINVAL);
	if (cm_out_reserve(id))
		API_RETURN(-ENOMEM);
	id->av = p->dst;
	id->av_timeout = p->primary_path->packet_life_time + 1; /* cm_init_av_by_path */
	id->service_id = p->service_id;
	id->service_mask = ~0ull;
	id->timeout_ms = emu_cm_req_timeout_ms(p->primary_path->packet_life_time,
					       p->remote_cm_response_timeout);
	id->max_cm_retries = p->max_cm_retries;
	id->qp_type = p->qp_type;
	id->tid = emu_cm_form_tid(id);
	id->local_qpn = p->qp_num & 0xffffff;
	id->remote_id = 0;

	/* cm_format_req */
	memset(&m, 0, sizeof(m));
	m.tid = id->tid;
	m.attr_mod = p->ece_attr_mod;
	m.local_comm_id = id->local_id;
	m.service_id = p->service_id;
	m.local_ca_guid = id->agent->ca_guid;
	m.local_qpn = p->qp_num & 0xffffff;
	m.initiator_depth = p->initiator_depth;
	m.remote_cm_response_timeout = p->remote_cm_response_timeout & 0x1f;
	if (p->qp_type == EMU_CM_TRANSPORT_EXTENDED) { /* cm_req_set_qp_type: XRC */
		m.transport_service_type = EMU_CM_TRANSPORT_EXTENDED;
		m.extended_transport_type = EMU_CM_EXT_TRANSPORT_XRC;
	} else {
		m.transport_service_type = p->qp_type;
	}
	m.end_to_end_flow_control = p->flow_control & 1;
	m.starting_psn = p->starting_psn & 0xffffff;
	m.local_cm_response_timeout = p->local_cm_response_timeout & 0x1f;
	m.pkey = p->primary_path->pkey;
	m.path_mtu = p->primary_path->mtu & 0xf;
	m.max_cm_retries = p->max_cm_retries & 0xf;
	if (p->qp_type != EMU_CM_TRANSPORT_EXTENDED) {
		m.responder_resources = p->responder_resources;
		m.retry_count = p->retry_count & 7;
		m.rnr_retry_count = p->rnr_retry_count & 7;
		m.srq = p->srq & 1;
	}
	cm_format_path(&m.primary, p->primary_path, id->agent->ack_delay);
	if (p->alternate_path)
		cm_format_path(&m.alternate, p->alternate_path, id->agent->ack_delay);
	m.vendor_id = p->ece_vendor_id & 0xffffff;
	cm_set_pdata(&m, p->private_data, p->private_data_len);
	err = emu_cm_format(EMU_CM_ATTR_REQ, &m, mad);
	if (err)
		API_RETURN(-EINVAL);
	err = emu_cm_step(id, EMU_CM_EV_SEND_REQ, &t);
	if (err)
		API_RETURN(err);
	emu_cm_send_expect(id, mad, EMU_CM_REQ_SENT);
	API_RETURN(0);
}

int emu_cm_send_rep(struct emu_cm_id *id, const struct emu_cm_rep_param *p)
{
	struct emu_cm_msg m;
	struct emu_cm_trans t;
	uint8_t mad[EMU_MAD_LEN];
	int err;

	if (!id || !p)
		return -EINVAL;
	if (p->private_data && p->private_data_len > EMU_CM_REP_PRIVATE_DATA_SIZE)
		return -EINVAL;
	API_ENTER(id);
	if (id->state != EMU_CM_REQ_RCVD && id->state != EMU_CM_MRA_REQ_SENT)
		API_RETURN((emu_cm_step(id, EMU_CM_EV_SEND_REP, &t), -EINVAL));
	if (cm_out_reserve(id))
		API_RETURN(-ENOMEM);
	/* cm_format_rep */
	memset(&m, 0, sizeof(m));
	m.tid = id->tid;
	m.attr_mod = p->ece_attr_mod;
	m.local_comm_id = id->local_id;
	m.remote_comm_id = id->remote_id;
	m.starting_psn = p->starting_psn & 0xffffff;
	m.responder_resources = p->responder_resources;
	m.target_ack_delay = id->agent->ack_delay & 0x1f;
	m.failover_accepted = p->failover_accepted & 3;
	m.rnr_retry_count = p->rnr_retry_count & 7;
	m.local_ca_guid = id->agent->ca_guid;
	if (id->qp_type != EMU_CM_TRANSPORT_EXTENDED) {
		m.initiator_depth = p->initiator_depth;
		m.end_to_end_flow_control = p->flow_control & 1;
		m.srq = p->srq & 1;
		m.local_qpn = p->qp_num & 0xffffff;
	} else {
		m.srq = 1;
		m.local_eecn = p->qp_num & 0xffffff;
	}
	m.vendor_id = p->ece_vendor_id & 0xffffff;
	cm_set_pdata(&m, p->private_data, p->private_data_len);
	if (emu_cm_format(EMU_CM_ATTR_REP, &m, mad))
		API_RETURN(-EINVAL);
	err = emu_cm_step(id, EMU_CM_EV_SEND_REP, &t);
	if (err)
		API_RETURN(err);
	id->local_qpn = p->qp_num & 0xffffff;
	emu_cm_send_expect(id, mad, EMU_CM_REP_SENT);
	API_RETURN(0);
}

int emu_cm_send_rtu(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	struct emu_cm_trans t;
	uint8_t *mad;
	int err;

	if (!id || (pd && len > EMU_CM_RTU_PRIVATE_DATA_SIZE))
		return -EINVAL;
	API_ENTER(id);
	/* ib_send_cm_rtu: the state is checked first (EINVAL), then the message allocated */
	if (emu_cm_lookup(id->state, EMU_CM_EV_SEND_RTU, &t) || t.disp == EMU_CM_ERR)
		API_RETURN(emu_cm_step(id, EMU_CM_EV_SEND_RTU, &t));
	if (!(mad = emu_kmem_alloc(EMU_MAD_LEN)))
		API_RETURN(-ENOMEM);
	err = emu_cm_step(id, EMU_CM_EV_SEND_RTU, &t);
	if (err) {
		emu_kmem_free(mad);
		API_RETURN(err);
	}
	cm_store_pdata(id, pd, len);
	emu_cm_format_rtu(id, mad);
	emu_cm_output(id->agent, &id->av, mad, false);
	emu_kmem_free(mad);
	API_RETURN(0);
}

/* cm_send_rej_locked */
static int cm_rej_locked(struct emu_cm_id *id, unsigned reason, const void *ari,
			 uint8_t ari_len, const void *pd, uint8_t len)
{
	struct emu_cm_trans t;
	uint8_t mad[EMU_MAD_LEN];
	unsigned state = id->state;
	int err;

	if ((pd && len > EMU_CM_REJ_PRIVATE_DATA_SIZE) || (ari && ari_len > EMU_CM_REJ_ARI_LENGTH))
		return -EINVAL;
	err = emu_cm_step(id, EMU_CM_EV_SEND_REJ, &t);
	if (err)
		return err;
	emu_cm_format_rej(id, state, reason, ari, ari_len, pd, len, mad);
	emu_cm_output(id->agent, &id->av, mad, false);
	return 0;
}

int emu_cm_send_rej(struct emu_cm_id *id, unsigned reason, const void *ari, uint8_t ari_len,
		    const void *pd, uint8_t len)
{
	if (!id)
		return -EINVAL;
	API_ENTER(id);
	API_RETURN(cm_rej_locked(id, reason, ari, ari_len, pd, len));
}

int emu_cm_send_mra(struct emu_cm_id *id, uint8_t service_timeout, const void *pd, uint8_t len)
{
	struct emu_cm_trans t;
	uint8_t mad[EMU_MAD_LEN];
	unsigned mraed;
	int err;

	if (!id || (pd && len > EMU_CM_MRA_PRIVATE_DATA_SIZE))
		return -EINVAL;
	API_ENTER(id);
	mraed = id->state == EMU_CM_REP_RCVD ? EMU_CM_MSG_RESPONSE_REP : EMU_CM_MSG_RESPONSE_REQ;
	err = emu_cm_step(id, EMU_CM_EV_SEND_MRA, &t);
	if (err)
		API_RETURN(err);
	id->service_timeout = service_timeout;
	cm_store_pdata(id, pd, len);
	if (!(service_timeout & EMU_CM_MRA_FLAG_DELAY)) {
		emu_cm_format_mra(id, mraed, mad);
		emu_cm_output(id->agent, &id->av, mad, false);
	}
	API_RETURN(0);
}

int emu_cm_dreq_locked(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	struct emu_cm_trans t;
	struct emu_cm_msg m;
	uint8_t mad[EMU_MAD_LEN];
	int err;

	if (pd && len > EMU_CM_DREQ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	if ((emu_cm_lookup(id->state, EMU_CM_EV_SEND_DREQ, &t) == 0 && t.disp != EMU_CM_ERR) &&
	    cm_out_reserve(id))
		return -ENOMEM;
	err = emu_cm_step(id, EMU_CM_EV_SEND_DREQ, &t);
	if (err)
		return err;
	/* cm_format_dreq: a fresh TID from the local ID */
	memset(&m, 0, sizeof(m));
	m.tid = emu_cm_form_tid(id);
	m.local_comm_id = id->local_id;
	m.remote_comm_id = id->remote_id;
	m.remote_qpn_eecn = id->remote_qpn;
	cm_set_pdata(&m, pd, len);
	emu_cm_format(EMU_CM_ATTR_DREQ, &m, mad);
	emu_cm_send_expect(id, mad, EMU_CM_DREQ_SENT);
	return 0;
}

int emu_cm_send_dreq(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	if (!id)
		return -EINVAL;
	API_ENTER(id);
	API_RETURN(emu_cm_dreq_locked(id, pd, len));
}

/* cm_send_drep_locked: timewait first, then the DREP, kept for duplicate DREQs */
static int cm_drep_locked(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	struct emu_cm_trans t;
	uint8_t *mad;
	int err;

	if (pd && len > EMU_CM_DREP_PRIVATE_DATA_SIZE)
		return -EINVAL;
	if (emu_cm_lookup(id->state, EMU_CM_EV_SEND_DREP, &t) || t.disp == EMU_CM_ERR)
		return emu_cm_step(id, EMU_CM_EV_SEND_DREP, &t);
	if (!(mad = emu_kmem_alloc(EMU_MAD_LEN)))
		return -ENOMEM;
	err = emu_cm_step(id, EMU_CM_EV_SEND_DREP, &t);
	if (err) {
		emu_kmem_free(mad);
		return err;
	}
	cm_store_pdata(id, pd, len);
	emu_cm_format_drep(id, mad);
	emu_cm_output(id->agent, &id->av, mad, false);
	emu_kmem_free(mad);
	return 0;
}

int emu_cm_send_drep(struct emu_cm_id *id, const void *pd, uint8_t len)
{
	if (!id)
		return -EINVAL;
	API_ENTER(id);
	API_RETURN(cm_drep_locked(id, pd, len));
}

int emu_cm_establish(struct emu_cm_id *id)
{
	struct emu_cm_trans t;
	struct emu_timer *work;
	int err;

	if (!id)
		return -EINVAL;
	/* cm_establish allocates its work first: -ENOMEM before any state is looked at */
	work = emu_kmem_alloc(sizeof(*work));
	if (!work)
		return -ENOMEM;
	API_ENTER(id);
	err = emu_cm_step(id, EMU_CM_EV_ESTABLISH, &t);
	if (err) {
		emu_kmem_free(work);
		API_RETURN(err);
	}
	/* the table's CANCEL belongs to the queued work (cm_establish_handler), not the call:
	 * the REP keeps its timer until the work runs. The step leaves ESTABLISHED, which
	 * takes no second ESTABLISH (EISCONN): one work at most is queued. */
	emu_timer_init(work, cm_establish_timer, id);
	id->establish = work;
	emu_timer_arm_in(a_->clk, work, 0);
	API_RETURN(0);
}

int emu_cm_send_sidr_req(struct emu_cm_id *id, const struct emu_cm_sidr_req_param *p)
{
	struct emu_cm_trans t;
	struct emu_cm_msg m;
	uint8_t mad[EMU_MAD_LEN];
	int err;

	if (!id || !p || !p->path ||
	    (p->private_data && p->private_data_len > EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE))
		return -EINVAL;
	API_ENTER(id);
	if (id->state != EMU_CM_IDLE)
		API_RETURN(-EINVAL);
	id->av = p->dst;
	id->av_timeout = p->path->packet_life_time + 1;
	id->service_id = p->service_id;
	id->service_mask = ~0ull;
	id->timeout_ms = p->timeout_ms;
	id->max_cm_retries = p->max_cm_retries;
	memset(&m, 0, sizeof(m));
	m.tid = emu_cm_form_tid(id);
	m.request_id = id->local_id;
	m.pkey = p->path->pkey;
	m.service_id = p->service_id;
	cm_set_pdata(&m, p->private_data, p->private_data_len);
	emu_cm_format(EMU_CM_ATTR_SIDR_REQ, &m, mad);
	err = emu_cm_step(id, EMU_CM_EV_SEND_SIDR_REQ, &t);
	if (err)
		API_RETURN(err);
	emu_cm_send_expect(id, mad, EMU_CM_SIDR_REQ_SENT);
	API_RETURN(0);
}

/* cm_send_sidr_rep_locked */
static int cm_sidr_rep_locked(struct emu_cm_id *id, const struct emu_cm_sidr_rep_param *p)
{
	struct emu_cm_trans t;
	struct emu_cm_msg m;
	uint8_t mad[EMU_MAD_LEN];
	int err;

	if ((p->info && p->info_length > EMU_CM_SIDR_REP_INFO_LENGTH) ||
	    (p->private_data && p->private_data_len > EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE))
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.tid = id->tid;
	m.attr_mod = p->ece_attr_mod;
	m.request_id = id->sidr_remote_id;
	m.sidr_status = p->status;
	m.qpn = p->qp_num & 0xffffff;
	m.service_id = id->service_id;
	m.qkey = p->qkey;
	m.vendor_id = p->ece_vendor_id & 0xffff;
	if (p->info && p->info_length) {
		m.info_len = p->info_length;
		memcpy(m.info, p->info, p->info_length);
	}
	cm_set_pdata(&m, p->private_data, p->private_data_len);
	err = emu_cm_step(id, EMU_CM_EV_SEND_SIDR_REP, &t);
	if (err)
		return err;
	emu_cm_format(EMU_CM_ATTR_SIDR_REP, &m, mad);
	emu_cm_output(id->agent, &id->av, mad, false);
	cm_sidr_del(id->agent, id);
	return 0;
}

int emu_cm_send_sidr_rep(struct emu_cm_id *id, const struct emu_cm_sidr_rep_param *p)
{
	if (!id || !p)
		return -EINVAL;
	API_ENTER(id);
	API_RETURN(cm_sidr_rep_locked(id, p));
}

/* ib_destroy_cm_id / cm_destroy_id, driven by the table's DESTROY cell. */
void emu_cm_destroy_id(struct emu_cm_id *id)
{
	struct emu_cm_agent *a;
	struct emu_cm_trans t;
	unsigned state;
	uint8_t mad[EMU_MAD_LEN];

	if (!id)
		return;
	a = id->agent;
	if (id->in_handler) { /* the kernel would deadlock; we finish after the handler */
		id->destroy_pending = true;
		return;
	}
	emu_cm_agent_enter(a);
	state = id->state;
	if (emu_cm_lookup(state, EMU_CM_EV_DESTROY, &t) == 0 && t.disp == EMU_CM_OK) {
		char line[160];

		if (emu_cm_tracing(a)) {
			emu_cm_trace_fmt(line, sizeof(line), id->local_id, state, EMU_CM_EV_DESTROY);
			emu_cm_trace(a, "%s", line);
		}
		if (t.actions & EMU_CM_A_CANCEL && !(t.actions & EMU_CM_A_SEND_DREQ))
			emu_cm_cancel_out(id);
		if (t.actions & EMU_CM_A_UNLISTEN)
			cm_listen_del(a, id);
		if (t.actions & EMU_CM_A_REJ_TIMEOUT) {
			uint8_t ari[8];

			for (int i = 0; i < 8; i++) /* node_guid, big-endian on the wire */
				ari[i] = (uint8_t)(a->ca_guid >> (56 - 8 * i));
			emu_cm_format_rej(id, state, EMU_CM_REJ_TIMEOUT, ari, 8, NULL, 0, mad);
			emu_cm_output(a, &id->av, mad, false);
		}
		if (t.actions & EMU_CM_A_REJ_CONSUMER) {
			emu_cm_format_rej(id, state, EMU_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
					  mad);
			emu_cm_output(a, &id->av, mad, false);
		}
		if (t.actions & EMU_CM_A_SEND_DREQ) {
			/* cm_send_dreq_locked then DREQ_SENT: cancel, so sent once */
			emu_cm_dreq_locked(id, NULL, 0);
			emu_cm_cancel_out(id);
		}
		if (t.actions & EMU_CM_A_SEND_DREP) {
			id->pdata_len = 0;
			emu_cm_format_drep(id, mad);
			emu_cm_output(a, &id->av, mad, false);
		}
		if (t.actions & EMU_CM_A_SIDR_REJECT) {
			struct emu_cm_sidr_rep_param p = { .status = EMU_CM_SIDR_REJECT };

			cm_sidr_rep_locked(id, &p);
		}
	}
	emu_cm_id_free(id);
	emu_cm_agent_leave(a);
}
