/* The verbs objects of the control plane (CQ, QP, SRQ, AH) and the internal API the data path
 * uses on them (emu/verbs/cq.c, cq_ring.c, qp.c, qp_state.c, srq.c, ah.c, av.c, post.c).
 *
 * Each object embeds the public struct the application sees (the _ex variant where there is
 * one, as rdma-core's verbs_cq/verbs_qp do) and the HCA model's struct emu_obj, which gives it
 * rxe's index (CQ number, QPN, SRQ number), a place in the context's object list and a use
 * count (a CQ's and an SRQ's QPs; a PD's QPs, SRQs and AHs). */
#ifndef RDMAEMU_EMU_VERBS_OBJECTS_H
#define RDMAEMU_EMU_VERBS_OBJECTS_H

#include <stdbool.h>

#include "emu/sim/clock.h"
#include "emu/sim/list.h"

#include "emu/verbs/verbs_priv.h"

/* ---- CQ ---- */

/* Notification state, rxe's cq->notify (IB_CQ_SOLICITED = 1, IB_CQ_NEXT_COMP = 2). */
enum { EMU_CQ_NOTIFY_NONE = 0, EMU_CQ_NOTIFY_SOLICITED = 1, EMU_CQ_NOTIFY_NEXT = 2 };

struct emu_vcq {
	union {
		struct ibv_cq cq; /* ibv_cq_ex begins with the same members (ibv_cq_ex_to_cq) */
		struct ibv_cq_ex cqx;
	};
	struct emu_obj obj;
	pthread_mutex_t lock;  /* the ring and the notify state */
	struct ibv_wc *ring;   /* nslots entries, at most nslots - 1 (== cq.cqe) in use */
	uint32_t nslots, head, count;
	int notify;
	bool is_ex;
	uint64_t wc_flags;     /* create_cq_ex's wc_flags */
	struct ibv_wc cur;     /* the entry an extended poll (start_poll/next_poll) reads */
	/* the kernel's comp/async_events_reported: events handed to the application */
	uint32_t comp_events_reported, async_events_reported;
	unsigned empty_polls; /* empty polls in real time with rings (emu_poll_cq's yields) */
};

static inline struct emu_vcq *to_vcq(struct ibv_cq *cq)
{
	return container_of(cq, struct emu_vcq, cq);
}

/* Adds a completion (rxe_cq_post, emu/verbs/cq_ring.c): 0, or EBUSY when the CQ is full, in
 * which case the entry is dropped and IBV_EVENT_CQ_ERR is queued on the context, as rxe does.
 * Raises a completion event on the CQ's channel when armed for the next completion, or for a
 * solicited one and `solicited`. Thread-safe. */
int emu_cq_push(struct emu_vcq *cq, const struct ibv_wc *wc, bool solicited);
/* Takes the oldest completion: 1 and *wc, or 0 when empty. */
int emu_cq_pop(struct emu_vcq *cq, struct ibv_wc *wc);
/* The ops behind the inline ibv_poll_cq / ibv_req_notify_cq. */
int emu_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *emu_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *emu_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);

/* Completion channel plumbing (emu/verbs/events.c). */
int emu_verbs_comp_event_post(struct ibv_comp_channel *ch, struct ibv_cq *cq);
/* Drops the unread events of `cq` from the channel, as ib_uverbs_release_ucq() does. */
void emu_verbs_comp_events_purge(struct ibv_comp_channel *ch, struct ibv_cq *cq);
/* One event record: 0 and *cq, or -1 and errno (EAGAIN on a non-blocking channel). */
int emu_verbs_comp_event_read(struct ibv_comp_channel *ch, struct ibv_cq **cq);

/* ---- SRQ ---- */

struct emu_vsrq {
	struct ibv_srq srq;
	struct emu_obj obj;
	struct emu_pd *pd;
	pthread_mutex_t lock;
	uint32_t max_wr;       /* reported: slots - 1 */
	uint32_t max_sge, limit;
	struct emu_list rq;     /* queued receive WQEs (struct emu_rwqe, emu/verbs/datapath.h) */
	uint32_t count;
};

static inline struct emu_vsrq *to_vsrq(struct ibv_srq *s)
{
	return container_of(s, struct emu_vsrq, srq);
}

/* ---- AH ---- */

/* Where a packet goes: an address vector resolved once (modify_qp AV, create_ah). */
struct emu_av {
	uint8_t port_num;
	uint8_t sl, static_rate, src_path_bits;
	uint16_t dlid;
	bool is_global;
	uint8_t sgid_index, hop_limit, traffic_class;
	uint32_t flow_label;
	union ibv_gid dgid, sgid;
	int network;           /* 0 IB / RoCE v1, 4 RoCE v2 over IPv4, 6 over IPv6 */
	uint8_t dmac[6];       /* RoCE: the destination MAC, when dmac_valid */
	bool dmac_valid;       /* resolved at create_ah / modify_qp (multicast: mapped) */
};

struct emu_vah {
	struct ibv_ah ah;
	struct emu_obj obj;
	struct emu_pd *pd;
	struct emu_av av;
	struct ibv_ah_attr attr;
};

/* Validates an ibv_ah_attr as rdma_check_ah_attr + rxe_av_chk_attr and turns it into *av
 * (emu/verbs/av.c): 0 or the kernel's errno. `resolve` non-NULL (the name of the wait):
 * a unicast RoCE destination's MAC is resolved through the neighbour layer as
 * ib_resolve_eth_dmac does, blocking in virtual time (up to 1000 ms, then ETIMEDOUT); the
 * engine lock must then be held (when the process has an engine) and no HCA or QP mutex. */
int emu_av_from_attr(struct ibv_context *ctx, const struct ibv_ah_attr *attr, struct emu_av *av,
		     const char *resolve);
/* The destination MAC of a unicast RoCE address vector that was not resolved (a process
 * attached through rdmaemud, whose neighbour layer lives in the daemon), looked up when the
 * data path sends (emu/verbs/av.c): the hardware address of the netdev behind the port GID
 * equal to av->dgid, on any host of `f`. 0, or -EHOSTUNREACH when no host owns that GID.
 * Also ibv_resolve_eth_l2_from_gid's answer (emu/verbs/neigh_l2.c). */
int emu_av_resolve_dmac(const struct emu_fabric *f, const struct emu_av *av, uint8_t dmac[6]);

/* ---- QP ---- */

struct emu_wq {            /* a send or receive queue */
	uint32_t max_wr;       /* usable entries: slots - 1 (rxe_queue_init) */
	uint32_t max_sge, max_inline;
	uint32_t count;        /* WRs queued (not yet completed) */
	struct emu_list list;  /* struct emu_swqe / emu_rwqe, oldest first (emu/verbs/datapath.h) */
};

struct emu_rwqe;
struct emu_resp_res;

/* Per-QP state of the data path engines (emu/verbs/req.c, resp.c, comp.c). Touched only with
 * the engine lock held. */
struct emu_qp_dp {
	uint32_t req_psn;          /* next PSN the requester sends */
	/* the last send WQE the requester's walk passed (req.c): it and every one before it are
	 * sent or done; NULL: the walk starts at the queue's head. Reset when a WQE goes back to
	 * POSTED (comp.c) and when this one leaves the queue. */
	struct emu_list *req_done;
	uint32_t resp_psn, resp_msn; /* the responder's ePSN and MSN */
	struct emu_rwqe *resp_wqe; /* receive WQE of the SEND in progress (taken off its queue) */
	uint32_t resp_off;         /* bytes scattered into it */
	uint64_t resp_va;          /* RDMA WRITE in progress: next address, rkey, length */
	uint32_t resp_rkey, resp_resid, resp_length;
	struct emu_timer retry;    /* the retransmission timer (ack timeout) */
	bool retry_armed;          /* a timeout is pending (emu/verbs/qp_timer.c) */
	bool retry_timer_on;       /* the timer is in the clock */
	/* real time: the timeout's deadline when the timer's own is earlier (it was restarted,
	 * or armed while the timer ran idle); the timer then waits on to it. 0: the timer's
	 * own deadline is the timeout; EMU_DP_RETRY_IDLE: no timeout pending, the timer runs
	 * out idle */
	uint64_t retry_due;
	struct emu_timer rnr;      /* RNR NAK wait before the requester resends */
	bool rnr_armed;
	int rnr_left;              /* RNR retries left for the WQE at the head (7: infinite) */
	unsigned noack_pkts;       /* packets sent since the last AckReq */
	/* READ / atomic WQEs sent and not yet answered (rxe's req.rd_atomic, counted up): at
	 * most attr.max_rd_atomic; need_rd_atomic: the requester stopped on that limit */
	uint32_t rd_atomic_out;
	bool need_rd_atomic;
	bool resp_drop;            /* UC: drop the rest of this message (rxe resp.drop_msg) */
	/* RC reliability (IBTA 9.7.5 / 9.7.6). Requester: retries left for the oldest unacked
	 * WQE (retry_cnt, 7 = for ever; reset on progress, rxe's reset_retry_counters), and
	 * whether a go-back-N caused by a packet (not the timer) is under way, so duplicate
	 * ACKs / responses do not start another one (rxe comp.started_retry). */
	int retry_left;
	bool retry_started;
	uint64_t retransmits;      /* packets sent again (trace / tests) */
	/* Responder: a PSN sequence NAK was sent for the current gap (rxe resp.sent_psn_nak),
	 * and the responder resources of READ / atomic requests (rxe's resp.resources, a ring
	 * of max_dest_rd_atomic entries) to answer their duplicates without executing again. */
	bool resp_nak_sent;
	struct emu_resp_res *res;
	uint32_t nres, res_next;
	/* Loopback fast path (emu/verbs/fast.c): the responder QP found for this QP's requests,
	 * valid while fast_epoch is emu_dp_fast_epoch (any QP state change or destroy moves it) */
	struct emu_vqp *fast_peer;
	uint64_t fast_epoch;
	/* Send WQEs of the common size (max_sge SGEs + max_inline bytes) kept for reuse, so a
	 * post does not go to malloc (emu_dp_swqe_alloc / emu_dp_swqe_free in wqe.c) */
	struct emu_swqe *swqe_pool;
	size_t swqe_size;
	/* Receive WQEs of the QP's own queue, all of rq.max_sge SGEs: the fast path gives the
	 * ones it completes back here for the next post_recv (each is a block of its own, so
	 * free() stays right for them everywhere else) */
	struct emu_rwqe *rwqe_pool;
	/* IB: the LRH of the packet being received, for its receive completion (emu_dp_rx_ll) */
	bool rx_ib, rx_grh;
	/* the packet being received came back through the HCA's loopback, not the wire */
	bool rx_loopback;
	/* the receive completion being written is a SEND_WITH_INV's: the key it invalidated */
	bool rx_inv;
	uint32_t rx_inv_rkey;
	uint8_t rx_sl, rx_path_bits;
	uint16_t rx_slid;
	/* ring path: the positive ACK held back, its PSN and MSN, and the place on the list
	 * of QPs holding one (emu/verbs/ack_hold.c) */
	bool ack_held;
	bool ack_desc; /* it answers a descriptor: it goes as one (xfast.c) */
	uint32_t ack_psn, ack_msn;
	unsigned ack_covers; /* the messages it acknowledges (coalesced, ack_hold.c) */
	struct emu_list ack_node;
};

struct emu_mcast_att {
	struct emu_list link;
	union ibv_gid gid;
	uint16_t lid;
};

struct emu_vqp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qpx;
	};
	struct emu_obj obj;
	struct emu_pd *pd;
	struct emu_vcq *send_cq, *recv_cq;
	struct emu_vsrq *srq;
	pthread_mutex_t lock;
	struct ibv_qp_init_attr init; /* as query_qp reports it */
	struct ibv_qp_attr attr;      /* the current attributes (query_qp) */
	struct emu_av av, alt_av;     /* resolved primary and alternate paths */
	uint16_t sport;               /* RoCE v2 UDP source port (emu/verbs/qp.c) */
	struct emu_wq sq, rq;
	struct emu_list mcast;        /* struct emu_mcast_att */
	struct emu_qp_dp dp;
	bool qp_ex;                   /* made by create_qp_ex: rxe marks it VERBS_QP_EX */
	struct emu_wrx *wrx;          /* the ibv_wr_* batch (emu/verbs/wr_ex.c), or NULL */
};

static inline struct emu_vqp *to_vqp(struct ibv_qp *qp)
{
	return container_of(qp, struct emu_vqp, qp);
}

/* The ibv_wr_* send API of a QP created with send_ops_flags (emu/verbs/wr_ex.c): installs
 * the ops of `flags` in q->qpx; 0 or ENOMEM. emu_wrx_free is idempotent. */
struct emu_wrx;
int emu_wrx_init(struct emu_vqp *q, uint64_t flags);
void emu_wrx_free(struct emu_vqp *q);

/* The kernel's ib_modify_qp_is_ok(): the transition table (emu/verbs/qp_state.c). */
bool emu_qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, enum ibv_qp_type type,
			 unsigned mask);
const char *emu_qp_state_name(enum ibv_qp_state s);

/* WR validation and queueing for the data path (emu/verbs/post.c). They return what rdma-core's
 * rxe provider + kernel return for the same post, set *bad, and queue accepted WRs (copies,
 * inline data included). Opcodes the data path does not execute are refused (EINVAL, *bad set):
 * an application never sees a post accepted that will never complete. Engine lock held. */
int emu_qp_post_send_check(struct emu_vqp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int emu_qp_post_recv(struct emu_vqp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int emu_srq_post_recv(struct emu_vsrq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* The ops behind ibv_post_send / ibv_post_recv / ibv_post_srq_recv (emu/verbs/wqe.c): take the
 * engine lock, queue, run the requester; the unlock runs the loopback to completion. */
int emu_dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int emu_dp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int emu_dp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* rxe_queue_init(): slots = roundup_pow_of_two(n + 1); usable = slots - 1. */
static inline uint32_t emu_queue_usable(uint32_t n)
{
	uint32_t s = 1;

	while (s < n + 1)
		s <<= 1;
	return s - 1;
}

#endif
