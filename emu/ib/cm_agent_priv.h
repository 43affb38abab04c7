/* Internals of the CM agent, shared by cm_agent.c (ids, API, timers), cm_agent_rx.c (the
 * message handlers) and cm_agent_out.c (the send path with its fault stage). */
#ifndef RDMAEMU_EMU_CM_AGENT_PRIV_H
#define RDMAEMU_EMU_CM_AGENT_PRIV_H

#include "emu/ib/cm_agent.h"
#include "emu/sim/idtab.h"
#include "emu/sim/list.h"

/* The one MAD of an id that waits for an answer (cm_id_priv->msg with the MAD layer's
 * retransmission state): resent every timeout_ms while retries_left, then the id gets the
 * response-timeout event if it is still in the state the MAD was sent for (context[1]). */
struct cm_out {
	/* emu_kmem, only while active: 1,000 established connections keep none (the CM id was
	 * 928 bytes with this and pdata inline, a 1 KiB size class) */
	uint8_t *mad;
	unsigned timeout_ms;
	unsigned retries_left;
	struct emu_cm_addr dst;
	uint8_t state; /* msg->context[1] */
	bool active;
	struct emu_timer timer;
};

/* 384 bytes on x86-64, exactly the emu_kmem size class (bench/cm_bench keeps two a connection
 * and walks them once a step): the members are ordered by size, so the padding left is the
 * timers' tails and a few bytes around the byte-sized members, and the rare USER_ESTABLISHED
 * work is allocated when queued. Mind the size when adding one (cm_agent.c asserts it). */
struct emu_cm_id {
	struct emu_cm_agent *agent;
	struct emu_list node; /* agent->ids */
	struct emu_list rid_node, rqpn_node; /* rid_hash / rqpn_hash while in_remote_id/_qpn */
	uint32_t rid_key, rqpn_key; /* remote_id / remote_qpn when inserted (their buckets) */
	emu_cm_handler *handler;
	void *context;

	uint64_t service_id, service_mask;
	uint64_t tid;
	uint64_t remote_ca_guid;
	uint32_t local_id, remote_id;
	uint32_t local_qpn, remote_qpn;
	uint32_t sidr_remote_id; /* SIDR: the requester's Request ID (id.remote_id in cm.c) */
	uint32_t tw_remote_qpn; /* timewait_info->remote_qpn: checked when timewait ends */
	unsigned timeout_ms;
	unsigned in_handler;

	/* cm_id_priv->private_data: what a duplicate is answered with (RTU, MRA, DREP);
	 * EMU_CM_PRIVATE_DATA_MAX bytes of emu_kmem once some is stored, NULL before */
	uint8_t *pdata;

	struct emu_cm_addr av; /* where this id's MADs go */
	uint8_t state;
	uint8_t qp_type;
	uint8_t av_timeout;    /* cm_av.timeout (encoded) */
	uint8_t max_cm_retries;
	uint8_t service_timeout; /* the MRA's, with its DELAY flag */
	uint8_t pdata_len;
	/* membership of the agent's tables (cm_timewait_info's inserted_remote_id/_qp, the
	 * service and SIDR tables) */
	bool in_remote_id, in_remote_qpn, in_listen, in_sidr;
	bool destroy_pending;

	struct cm_out out;
	struct emu_timer timewait;
	/* the queued USER_ESTABLISHED work (cm_establish's kmalloc'd work): emu_kmem while
	 * queued, NULL otherwise */
	struct emu_timer *establish;
};

/* A MAD held back by the delay fault. */
struct cm_delayed {
	struct emu_list node;
	struct emu_cm_agent *agent;
	struct emu_cm_addr dst;
	uint8_t mad[EMU_MAD_LEN];
	struct emu_timer timer;
};

/* A MAD received while the agent was busy. */
struct cm_rxq {
	struct emu_list node;
	struct emu_cm_addr src;
	uint8_t mad[EMU_MAD_LEN];
};

/* The id tables start with one bucket (an agent per CA port of the fabric, in the daemon one
 * for each of the 10,000-node fabric's 9,600 hosts: 2^10 buckets each were 300 MiB), take
 * 2^10 at the agent's second id and grow 4x whenever the ids outnumber the buckets: a fixed
 * 1024 left chains of ~20 at 10,000 connections (and more with the ids in timewait), walked by
 * every MAD's lookup. */
#define EMU_CM_HASH_BITS_MIN 10

/* A few ids in an array (emu/sim/array.h), in the order they joined: for what a message is
 * matched against by more than a key of the hash tables (a service ID under a mask, a SIDR
 * request's sender). */
struct emu_cm_idset {
	struct emu_cm_id **v;
	size_t n;
};

/* id joins at the end: 0 or -ENOMEM. Taken before the caller changes any state (the last
 * place is given back by lowering n if that change is refused). */
int emu_cm_idset_add(struct emu_cm_idset *s, struct emu_cm_id *id);
/* id leaves; the others keep their order. */
void emu_cm_idset_del(struct emu_cm_idset *s, struct emu_cm_id *id);

struct emu_cm_agent {
	struct emu_clock *clk;
	const struct emu_cm_transport_ops *ops;
	void *ctx;
	char name[32];
	uint64_t ca_guid;
	uint8_t ack_delay;
	uint32_t hi_tid;

	struct emu_list ids;
	/* ids by local comm ID XOR random_id_operand (the kernel's xarray, cm.local_id_table):
	 * cm_acquire_id and the allocator's uniqueness check without walking every id
	 * (cm_bench holds 10,000 connections) */
	struct emu_idtab lid;
	/* the remote-ID and remote-QPN tables (cm.c's rb-trees), by remote comm ID / QPN */
	struct emu_list *rid_hash, *rqpn_hash;
	unsigned hash_bits; /* each table has 2^hash_bits buckets */
	/* the listening ids (cm.c's listen_service_table) and the SIDR requests being served
	 * (remote_sidr_table), each in insertion order: a REQ, a new listen and a SIDR_REQ look
	 * only at these, not at every id (a server that listens again while it holds 10,000
	 * connections) */
	struct emu_cm_idset listeners, sidr;
	uint32_t local_id_next;
	uint32_t random_id_operand;

	struct emu_prng fault_rng;
	struct emu_cm_fault faults[EMU_CM_NCLASSES];
	struct emu_list delayed;

	unsigned busy;
	struct emu_list rxq;

	struct emu_cm_counters cnt;
};

/* The keys are remote comm IDs (a peer's counter XOR its random operand) and remote QPNs
 * (numbers a peer hands out in order): the low bits, folded with the rest, keep keys made in a
 * row in distinct buckets side by side, so a burst of connections walks the table forward and
 * meets no other id in its bucket (with at most one id a bucket, emu_cm_id_alloc). A
 * multiplicative hash scattered them: a random line of the table, and a chain through other
 * connections' ids, for each. */
static inline unsigned emu_cm_bucket(const struct emu_cm_agent *a, uint32_t key)
{
	return (key ^ (key >> a->hash_bits)) & ((1u << a->hash_bits) - 1);
}

/* cm_agent.c */
/* Whether trace lines go anywhere (RDMAEMU_TRACE=cm or the agent's trace op). */
bool emu_cm_tracing(const struct emu_cm_agent *a);
void emu_cm_trace(struct emu_cm_agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void emu_cm_agent_enter(struct emu_cm_agent *a);
void emu_cm_agent_leave(struct emu_cm_agent *a);
struct emu_cm_id *emu_cm_id_alloc(struct emu_cm_agent *a, emu_cm_handler *h, void *ctx);
void emu_cm_id_free(struct emu_cm_id *id);
/* cm_acquire_id: the live id with this local ID whose remote ID is `remote_id`. */
struct emu_cm_id *emu_cm_acquire(struct emu_cm_agent *a, uint32_t local_id, uint32_t remote_id);
struct emu_cm_id *emu_cm_find_listen(struct emu_cm_agent *a, uint64_t service_id);
struct emu_cm_id *emu_cm_find_remote_id(struct emu_cm_agent *a, uint64_t guid, uint32_t remote_id);
struct emu_cm_id *emu_cm_find_remote_qpn(struct emu_cm_agent *a, uint64_t guid, uint32_t qpn);
/* Enters the id (remote_id, remote_qpn, remote_ca_guid set) in both remote tables
 * (cm_insert_remote_id / cm_insert_remote_qpn). */
void emu_cm_insert_remote(struct emu_cm_id *id);
/* Runs one table transition on the id: trace line, state, CANCEL, RESET, TIMEWAIT, UNLISTEN,
 * COUNT_DUP. Fills *t (the cell). Returns 0 when taken (OK, DUP or IGNORE: see t->disp) or the
 * negative errno of a refused local call. */
int emu_cm_step(struct emu_cm_id *id, unsigned ev, struct emu_cm_trans *t);
/* Delivers an event to the id's handler; destroys the id when the handler asks for it (or
 * called emu_cm_destroy_id on it). Returns true when the id is gone. */
bool emu_cm_deliver(struct emu_cm_id *id, const struct emu_cm_event *ev);
void emu_cm_cancel_out(struct emu_cm_id *id);
/* cm_form_tid */
static inline uint64_t emu_cm_form_tid(const struct emu_cm_id *id)
{
	return (uint64_t)id->agent->hi_tid << 32 | id->local_id;
}
/* ib_send_cm_dreq on an id found stale (any state: refused quietly outside ESTABLISHED). */
int emu_cm_dreq_locked(struct emu_cm_id *id, const void *pd, uint8_t len);
/* Packs a message of the id (header TID `tid`) into mad: 0 or the pack error. */
int emu_cm_format(uint16_t attr, const struct emu_cm_msg *m, uint8_t mad[EMU_MAD_LEN]);
/* The REJ of an id (cm_format_rej): local comm ID and Message REJected from `state`. */
void emu_cm_format_rej(const struct emu_cm_id *id, unsigned state, unsigned reason,
		       const void *ari, uint8_t ari_len, const void *pd, uint8_t len,
		       uint8_t mad[EMU_MAD_LEN]);
void emu_cm_format_mra(const struct emu_cm_id *id, unsigned msg_mraed, uint8_t mad[EMU_MAD_LEN]);
void emu_cm_format_rtu(const struct emu_cm_id *id, uint8_t mad[EMU_MAD_LEN]);
void emu_cm_format_drep(const struct emu_cm_id *id, uint8_t mad[EMU_MAD_LEN]);

/* cm_agent_out.c */
/* Sends a MAD through the fault stage (retry: counted in tx_retries). */
void emu_cm_output(struct emu_cm_agent *a, const struct emu_cm_addr *dst,
		   const uint8_t mad[EMU_MAD_LEN], bool retry);
/* Sends the id's MAD expecting an answer: arms the response timer. */
void emu_cm_send_expect(struct emu_cm_id *id, const uint8_t mad[EMU_MAD_LEN], unsigned state);
void emu_cm_out_timer(struct emu_clock *clk, struct emu_timer *t, void *arg);
/* The outstanding MAD is answered, cancelled or timed out: inactive, its copy freed. */
void emu_cm_out_done(struct emu_cm_id *id);
void emu_cm_delayed_flush(struct emu_cm_agent *a);

/* cm_agent_rx.c */
void emu_cm_rx_one(struct emu_cm_agent *a, const struct emu_cm_addr *src, const uint8_t *mad,
		   size_t len);

#endif
