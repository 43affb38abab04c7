/* The HCA data path (rxe's rxe_req.c / rxe_resp.c / rxe_comp.c / rxe_net.c / rxe_recv.c in
 * miniature): work queues (wqe.c), frames out (net.c) and in (recv.c), requester (req.c),
 * responder (resp.c), completer (comp.c), the QP's timers, flush and life (qp_timer.c,
 * qp_flush.c, qp_dp.c); declared below in their layers.
 *
 * Scope: one device, RC (SEND, WRITE, READ, atomics), UC (SEND, WRITE) and UD (SEND),
 * loopback between QPs of the same device. Every packet is a
 * byte-exact RoCEv2 frame (emu_pkt_build) that goes back through emu_pkt_parse on receipt; a
 * frame whose destination GID is one of the port's own GIDs is delivered through a zero-delay
 * engine timer (rxe's loopback in rxe_net.c), so ordering is the clock's FIFO order and a post
 * with its ACK is complete when the call's emu_engine_unlock returns. Frames for other hosts
 * leave through emu_engine_port_send (destination MAC from emu_av_resolve_dmac) and arrive
 * through the ports' receivers (emu_dp_port_rx_attach). RC is reliable on a lossy wire
 * (IBTA 9.7.5 / 9.7.6, rxe's retry machinery): the retransmission timer (4.096 us *
 * 2^timeout) and PSN sequence NAKs go back N to the oldest unacknowledged PSN, retry_cnt
 * bounds the timeouts (none left: IBV_WC_RETRY_EXC_ERR); the responder NAKs a gap once, re-ACKs
 * duplicate SEND / WRITE packets and answers duplicate READs / atomics from its responder
 * resources. RNR NAKs are retried as rxe does (rnr_retry, 7 = for ever, after the NAK's timer).
 *
 * Loopback fast path (fast.c): RC between two QPs of this process on one device, with no
 * observer of packets, runs a whole doorbell's WQEs at once with the packet path's exact
 * result (docs/datapath.md); anything else, every error included, takes the packets.
 *
 * Locking: everything here runs with the engine lock held (posts, modify/destroy, timers),
 * then takes HCA and CQ mutexes. Trace: RDMAEMU_TRACE containing "qp" prints one line per
 * packet and per engine state transition on stderr. */
#ifndef RDMAEMU_EMU_VERBS_DATAPATH_H
#define RDMAEMU_EMU_VERBS_DATAPATH_H

#include <errno.h>

#include "emu/sim/engine.h"
#include "emu/hca/pkt.h"
#include "emu/sim/trace.h"
#include "emu/verbs/objects.h"

/* Send WQE states (rxe's enum wqe_state). */
enum emu_wqe_state {
	EMU_WQE_POSTED,	 /* not yet sent */
	EMU_WQE_PENDING, /* sent, waiting for its ACK / read response */
	EMU_WQE_DONE,	 /* acknowledged (or a UD send that left) */
	EMU_WQE_ERROR,	 /* ends with `status` */
};
const char *emu_wqe_state_name(enum emu_wqe_state s);

struct emu_swqe {
	struct emu_list link;
	struct ibv_send_wr wr; /* copy: next NULL, sg_list = sge */
	uint64_t length;       /* total bytes */
	bool is_inline;
	struct emu_av av;      /* UD: the AH's address vector */
	uint32_t ud_dqpn, ud_qkey;
	enum emu_wqe_state state;
	int status;	       /* enum ibv_wc_status when ERROR */
	uint32_t first_psn, last_psn;
	uint32_t resume_pkts;  /* SEND / WRITE sent again: the packets before the resume PSN */
	uint64_t read_off;     /* READ: bytes of the response scattered */
	bool has_rd_atomic;    /* READ / atomic: holds one of the max_rd_atomic slots */
	uint8_t *inl;	       /* inline data (after sge[]) */
	bool pooled;	       /* from the QP's pool (emu_dp_swqe_alloc) */
	/* RC to another process of this host: sent as one descriptor (xfast.c), and not to be
	 * sent so again (declined, or gone back N: its packets take the packet path) */
	bool xfast, xfast_no;
	/* a READ sent so whose responder may place its data here (xclaim.c): the claim's tag
	 * (0: none) and its index */
	uint64_t xf_tag;
	uint16_t xf_slot;
	uint32_t mw_rkey, mr_lkey; /* BIND_MW: the window's key and the MR's lkey at post
				    * time (rdma-core's convert_send_wr reads them then) */
	struct ibv_sge sge[];
};

/* A responder resource (rxe's struct resp_res): what a duplicate READ or atomic needs to be
 * answered without executing it again. */
struct emu_resp_res {
	bool used, atomic;
	uint32_t first_psn, last_psn;
	uint64_t orig;		/* atomic: the original value sent in the ATOMIC_ACKNOWLEDGE */
};

struct emu_rwqe {
	struct emu_list link;
	uint64_t wr_id;
	int num_sge;
	uint64_t length;
	struct ibv_sge sge[];
};

/* The files below are in layers, lowest first; each calls only the ones above it in this
 * list (and the requester and completer each other), never the verbs' API files
 * (docs/datapath.md, "Files"). */

/* dp_trace.c */
bool emu_dp_trace_on(void);
void emu_dp_trace_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A "qp" trace line (RDMAEMU_TRACE=qp): nothing paid with tracing off */
#define emu_dp_trace(...) EMU_TRACE_IF(emu_dp_trace_on(), emu_dp_trace_print, __VA_ARGS__)
/* Whether the fast paths may run at all: nobody observes packets (not with RDMAEMU_FASTPATH=0,
 * RDMAEMU_TRACE=qp or RDMAEMU_PCAP; fast.c, xfast.c) */
bool emu_dp_fast_on(void);

/* The process's engine, NULL when it has no fabric; errno untouched (the verbs' callers
 * report their own). */
static inline struct emu_engine *emu_dp_engine(void)
{
	int saved = errno;
	struct emu_engine *e = emu_engine_get();

	errno = saved;
	return e;
}

/* wqe.c: the work queues' entries and what takes them */
void emu_dp_rwqe_list_free(struct emu_list *l);
/* A zeroed send WQE with room for `extra` bytes after its header (SGEs, inline data), from the
 * QP's pool when it fits the common size; emu_dp_swqe_free gives it back. */
/* The QP's WQE pools, one entry per usable WR, made when the QP is (-ENOMEM) and freed
 * with it; a reset returns the queues' WQEs to them. */
int emu_dp_pools_fill(struct emu_vqp *q);
void emu_dp_pools_free(struct emu_vqp *q);
struct emu_swqe *emu_dp_swqe_alloc(struct emu_vqp *q, size_t extra);
void emu_dp_swqe_free(struct emu_vqp *q, struct emu_swqe *w);
/* A receive WQE block of the QP's own queue (room for rq.max_sge SGEs), from its pool, and
 * the pool's refill (fast.c); plain free() is right for these blocks too. fill copies the WR
 * in (NULL stays NULL). */
struct emu_rwqe *emu_dp_rwqe_alloc(struct emu_vqp *q);
void emu_dp_rwqe_recycle(struct emu_vqp *q, struct emu_rwqe *w);
struct emu_rwqe *emu_dp_rwqe_fill(struct emu_rwqe *w, const struct ibv_recv_wr *wr);
/* The fast paths' receive CQE of a message that succeeded (fast.c, xfast.c): w's opcode,
 * immediate data and Solicited bit, the receive WQE taken off b's queue and recycled (b has
 * no SRQ). */
void emu_dp_fast_recv_wc(struct emu_vqp *b, struct emu_rwqe *rw, int opcode, uint32_t len,
			 const struct emu_swqe *w);
/* The responder takes the next receive WQE of q's receive queue or SRQ (NULL: none; an SRQ
 * whose armed limit is then crossed raises IBV_EVENT_SRQ_LIMIT_REACHED, rxe's get_srq_wqe),
 * or puts one back at the head of its queue for the next message. */
struct emu_rwqe *emu_dp_rq_take(struct emu_vqp *q);
void emu_dp_rq_put_back(struct emu_vqp *q, struct emu_rwqe *w);
/* Moves at every QP state change and destroy: cached fast-path peers are looked up again. */
extern uint64_t emu_dp_fast_epoch;
/* Scatter / gather between an SGE list and a buffer, `off` bytes into the list, with the lkey
 * checks of rxe's copy_data(): 0, or the emu_mr_status of the first failing SGE. Zero-length
 * SGEs are skipped. to_sge: buffer -> memory (needs LOCAL_WRITE). buf NULL: the checks only,
 * no copy (a requester whose frame cannot be built still reports its gather's error). */
enum emu_mr_status emu_dp_copy_sge(struct emu_vqp *q, const struct ibv_sge *sge, int n,
				   uint64_t off, void *buf, uint64_t len, bool to_sge);

/* frame.c: a frame of the packet path and what it is for, from free lists by size (no malloc
 * a packet). len bytes of data fit; emu_dp_frame_put gives it back (NULL: nothing). NULL when
 * there is no memory. */
struct emu_dp_frame {
	struct emu_timer t; /* its delivery, for a looped-back frame */
	struct emu_dp_frame *next; /* on a free list */
	struct emu_hca *hca;
	size_t host, dev; /* the port it loops back into, for its counters */
	unsigned port;
	int link_layer;
	size_t len;
	size_t cap; /* bytes of data it has room for; 0: not from the lists */
	uint8_t data[];
};
struct emu_dp_frame *emu_dp_frame_get(size_t len);
void emu_dp_frame_put(struct emu_dp_frame *f);

/* net.c: frames out */
uint32_t emu_dp_mtu(const struct emu_vqp *q);
/* Builds a frame for q's primary path (or `av` for UD) and delivers it. */
int emu_dp_xmit(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		const struct emu_pkt_ext *ext, const void *payload, size_t paylen);
/* The same with the data gathered from a send WQE's SGEs, `off` bytes into them, straight into
 * the frame (into the shared-memory ring, for another process of this host: no bounce buffer).
 * The gather's lkey checks come first, as when the requester gathered before building: their
 * failure sends nothing and is returned in *gst (EMU_MR_OK otherwise). */
int emu_dp_xmit_gather(struct emu_vqp *q, const struct emu_av *av, const struct emu_bth *bth,
		       const struct emu_pkt_ext *ext, const struct ibv_sge *sge, int nsge,
		       uint64_t off, size_t paylen, enum emu_mr_status *gst);
/* A descriptor of the one-copy path (xfast.c) to q's destination, when that is a QP of
 * another process of this host joined by rings and q's path loops back (a port GID, RoCE):
 * 0, or -ENOENT (nothing sent). */
int emu_dp_xmit_desc(struct emu_vqp *q, const void *desc, size_t len);
/* A responder packet to q's destination: ACK / NAK (syndrome), READ response (data), atomic
 * ACK (orig), with the AETH's MSN. */
void emu_dp_xmit_resp(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		      const void *data, size_t len, uint64_t orig, uint32_t msn);
/* Where frames this HCA loops back to itself arrive (recv.c registers it when the library
 * loads). loopback: the frame never left the HCA (rxe_loopback()), see emu_qp_dp.rx_loopback */
typedef void emu_dp_rx_fn(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len,
			  bool loopback);
void emu_dp_loopback_set_rx(emu_dp_rx_fn *rx);
/* The DestQP of multicast packets (IBTA 10.5.2.2) */
#define EMU_DP_MCAST_QPN 0xFFFFFFu

/* ack_hold.c: ACKs held back on the ring path (docs/daemon.md "Held ACKs"). hold: true when
 * the ACK of the request packet pi is held (a plain RDMA WRITE's, and this thread is
 * delivering from the rings): the QP's held ACK now covers it too, or, when it covered
 * enough, was sent first; false: send it now. flush sends q's held ACK, flush_all every QP's,
 * drop forgets q's (its QP is being emptied). Engine lock held. */
bool emu_dp_ack_hold(struct emu_vqp *q, const struct emu_pkt_info *pi);
/* Who sends a held ACK of a message that came as a descriptor (covers: the messages it
 * acknowledges, for its trace): true when it went (xfast.c registers its sender at load);
 * else it goes as a frame. */
void emu_dp_ack_set_desc_sender(bool (*fn)(struct emu_vqp *q, uint32_t psn, unsigned covers));
void emu_dp_ack_flush(struct emu_vqp *q);
void emu_dp_ack_flush_all(void);
void emu_dp_ack_drop(struct emu_vqp *q);
/* Whether any QP holds an ACK; without the lock (a hint for busy pollers). */
bool emu_dp_acks_held(void);

/* qp_timer.c: the retransmission timer */
void emu_dp_retry_arm(struct emu_vqp *q);
/* Restarts the retransmission timer (a packet with AckReq left, or an ACK made progress). */
void emu_dp_retry_restart(struct emu_vqp *q);
/* Cancels both timers of the requester (retransmission and RNR wait). */
void emu_dp_retry_cancel(struct emu_vqp *q);
/* Nothing is outstanding: no timeout pending (rxe deletes the timer; in real time it runs out
 * idle). */
void emu_dp_retry_idle(struct emu_vqp *q);
/* The retransmission timer fired: true when the timeout is reached, false when it was
 * restarted meanwhile (real time) and now waits on to the later deadline, or ran out idle. */
bool emu_dp_retry_due(struct emu_vqp *q);
#define EMU_DP_RETRY_IDLE UINT64_MAX

/* qp_flush.c */
/* Destroy / reset: frees every queued WQE without completions, cancels timers. */
void emu_dp_qp_clear(struct emu_vqp *q);
/* rxe_qp_error(): state ERR, then the send and receive queues flushed with WR_FLUSH_ERR. */
void emu_dp_qp_error(struct emu_vqp *q);
/* Flushes what the queues hold while the QP is in ERR (posts in ERR, modify to ERR). */
void emu_dp_flush(struct emu_vqp *q);

/* resp.c: the responder */
void emu_dp_resp_rx(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi);
/* Remembers an executed READ / atomic in q's responder resources (rxe's resp.resources). */
void emu_dp_res_add(struct emu_vqp *q, bool atomic, uint32_t first, uint32_t last,
		    uint64_t orig);

/* req.c and comp.c: the requester and the completer, which run each other */
void emu_dp_req_run(struct emu_vqp *q);
/* A READ / atomic WQE stops waiting for its answer: gives back its max_rd_atomic slot. */
void emu_dp_rd_atomic_put(struct emu_vqp *q, struct emu_swqe *w);
static inline bool emu_wr_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
/* rxe's WR_LOCAL_OP_MASK: run by the requester itself, no packet (emu/verbs/mw_dp.c) */
static inline bool emu_wr_is_local(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}
/* Whether a QP of type t executes op (rxe's rxe_wr_opcode_info masks, as measured by
 * verbs_probe_limits): RC everything; UC SEND, WRITE and the local operations; UD SEND only. */
static inline bool emu_dp_opcode_ok(enum ibv_qp_type t, enum ibv_wr_opcode op)
{
	bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	bool write = op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;

	switch (t) {
	case IBV_QPT_RC:
		return send || write || op == IBV_WR_RDMA_READ || emu_wr_is_atomic(op) ||
		       op == IBV_WR_SEND_WITH_INV || emu_wr_is_local(op);
	case IBV_QPT_UC:
		return send || write || emu_wr_is_local(op);
	case IBV_QPT_UD:
		return send;
	default:
		return false;
	}
}
void emu_dp_comp_rx(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi);
/* Retires finished WQEs from the head of the send queue (CQEs, QP to ERR on an error). */
void emu_dp_comp_run(struct emu_vqp *q);
/* The retransmission timer fired (rxe's retransmit_timer + COMPST_ERROR_RETRY). */
void emu_dp_retry_timeout(struct emu_vqp *q);

/* recv.c: frames in */
/* Frames arriving at this HCA (loopback or the wire), parsed and dispatched. */
void emu_dp_rx(struct emu_hca *hca, const uint8_t *frame, size_t len);
/* Same for a frame of either link layer (EMU_LL_ETHERNET, EMU_LL_INFINIBAND, emu/sim/pcap.h):
 * 0, or the parser's negative error when the frame was dropped as malformed (a bad ICRC or
 * VCRC among them: what the port counts in PortRcvErrors). */
int emu_dp_rx_ll(struct emu_hca *hca, int link_layer, const uint8_t *frame, size_t len);
/* Makes `dev` receive from the wire: its ports' receivers (RoCE and IB) are the data path
 * (idempotent; engine lock held; called when a QP reaches RTR, the first state that
 * receives). */
void emu_dp_port_rx_attach(struct emu_engine *e, const struct emu_device *dev);

/* fast.c: the loopback fast path (docs/datapath.md). The doorbell's attempt: true
 * when it executed every queued WQE of q exactly as the packet path would have (CQEs
 * included); false, having changed nothing, when the packet path must run. Engine lock held. */
bool emu_dp_fast_run(struct emu_engine *e, struct emu_vqp *q);


/* xfast.c: one copy a byte between two processes of a host (docs/daemon.md, "One copy
 * between processes"). The requester's attempt for one WQE (req.c): true when it went as a
 * descriptor, its PSNs taken as its packets would have (the WQE then waits for its answer as
 * any sent WQE); false, nothing changed, when its packets must go. */
bool emu_dp_xfast_send(struct emu_vqp *q, struct emu_swqe *w, uint32_t mtu, uint64_t npkts);
/* xclaim.c: a READ's claim on the responder's copy into our pages (docs/daemon.md, "One copy
 * between processes"). arm: the claim of w, a READ to dqpn, armed (its tag, *slot its index;
 * 0: none free, or no pair). begin / done: the responder's, on the claim (slot, tag) of
 * peer pid: begin true when it may copy now, done when it has. end: the requester's, at the
 * READ's answer (pushed: the answer says the data was placed) or to take the claim back:
 * true when the data is in place; the claim is over either way (waiting for a copy under
 * way to end). cancel: end, when w holds a claim. mr_gone: every claim of a READ that writes
 * to the region of lkey taken back (before its deregistration). Engine lock held. */
uint64_t emu_xclaim_arm(struct emu_swqe *w, uint32_t dqpn, uint32_t *slot);
bool emu_xclaim_begin(int pid, uint32_t slot, uint64_t tag);
void emu_xclaim_done(int pid, uint32_t slot, uint64_t tag);
bool emu_xclaim_end(struct emu_swqe *w, bool pushed);
void emu_xclaim_cancel(struct emu_swqe *w);
void emu_xclaim_mr_gone(uint32_t lkey);
unsigned emu_xclaim_armed(void);
/* xmap.c: the whole pages of a registered region moved to a memfd a peer process can map
 * (ibv_reg_mr / ibv_dereg_mr call reg / unreg; nothing when the region does not qualify), and
 * the requester's look-up of a region overlapping [p, p + len): its memfd, inode and bounds
 * (its pages [start, end) are the memfd's from offset 0). */
void emu_xmap_reg(void *addr, size_t len);
void emu_xmap_unreg(void *addr, size_t len);
bool emu_xmap_find(uintptr_t p, uint64_t len, int *fd, uint64_t *ino, uintptr_t *start,
		   uintptr_t *end);
/* comp.c, for xfast.c: the WQE sent as a descriptor with first PSN psn that still waits for
 * its answer (NULL: none, or q no longer sends); a READ of those whose data is in place
 * (status 0) or failed the local checks (its completion status); a descriptor the responder
 * declined (the WQE from psn on go back to the packet path). Engine lock held. */
struct emu_swqe *emu_dp_comp_xfast_wqe(struct emu_vqp *q, uint32_t psn);
void emu_dp_comp_xfast_read(struct emu_vqp *q, struct emu_swqe *w, int status);
void emu_dp_comp_xfast_decline(struct emu_vqp *q, uint32_t psn);
/* An ACK of PSN psn that came as a descriptor: what the ACK packet does. */
void emu_dp_comp_xfast_ack(struct emu_vqp *q, uint32_t psn);

/* qp_dp.c: a QP's life as the engines see it, for qp.c */
/* Creation: empty queues, and the timers' expiry registered (the requester's RNR wait, the
 * completer's retransmission timeout). */
void emu_dp_qp_init(struct emu_vqp *q);
/* modify_qp moved the QP to `st` (engine lock held). */
void emu_dp_qp_modified(struct emu_vqp *q, enum ibv_qp_state old, enum ibv_qp_state st);

static inline int emu_psn_cmp(uint32_t a, uint32_t b)
{
	int32_t d = (int32_t)((a - b) << 8);

	return d < 0 ? -1 : d > 0;
}

static inline struct emu_hca *emu_dp_hca(const struct emu_vqp *q)
{
	return to_vctx(q->qp.context)->hca;
}

#endif
