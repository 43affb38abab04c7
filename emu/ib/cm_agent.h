/* The per-host IB CM agent: the kernel's ib_cm (drivers/infiniband/core/cm.c) in miniature.
 *
 * It owns the cm_ids of one host (local communication IDs, the service-ID listen table, the
 * remote-ID / remote-QPN / SIDR tables that detect duplicates and stale connections), sends and
 * receives CM MADs (emu/ib/cm_mad.h) through an abstract transport, runs every cm_id through the
 * state table of emu/ib/cm_state.h (one trace line per transition, RDMAEMU_TRACE=cm), and keeps
 * the kernel's timers on a virtual clock: the MAD layer's response timeout and retries of REQ,
 * REP, DREQ and SIDR_REQ, the MRA extension, timewait, and the deferred USER_ESTABLISHED work.
 *
 * Transport: the agent calls ops->send_mad for every MAD it sends (after the fault rules of
 * emu_cm_fault_set have had their say) and expects the host to call emu_cm_agent_rx for every
 * CM MAD that arrives. How a MAD travels (UD on QP1, a test queue) is the transport's business.
 *
 * Locking and re-entrancy: no threads. Every entry point (API call, rx, timer callback) runs
 * under whatever lock the caller holds. Consumer handlers may call back into the agent (send a
 * REP from the REQ handler, destroy another id, ...). A MAD that reaches emu_cm_agent_rx while
 * the agent is already inside one of its entry points (a loopback transport delivering
 * synchronously) is queued and processed when the outermost entry point returns, as the
 * kernel's work queue would. A handler must not free its own id with emu_cm_destroy_id: it
 * returns non-zero instead (as ib_cm's handlers do); a destroy call on the id being handled is
 * deferred until the handler returns.
 */
#ifndef RDMAEMU_EMU_CM_AGENT_H
#define RDMAEMU_EMU_CM_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/sim/clock.h"
#include "emu/ib/cm_mad.h"
#include "emu/ib/cm_state.h"
#include "emu/sim/prng.h"

/* PRNG domain of the CM agents' streams (forks of the fabric seed): "cm". */
#define EMU_PRNG_DOMAIN_CM 0x636dULL

/* Where a MAD goes to or came from: a port of a host. The CM always talks to QP1. */
struct emu_cm_addr {
	uint16_t lid;	    /* IB: the port's LID (0 on RoCE) */
	uint8_t gid[16];    /* the port's GID (RoCE, or routed IB) */
	uint8_t port;	    /* the local port number the MAD leaves / arrived on */
	uint16_t pkey_index;
};

struct emu_cm_transport_ops {
	/* Sends one 256-byte CM MAD. The return value is informational (counted as a send
	 * error); the agent behaves as the kernel's MAD layer, whose retries do not depend on
	 * the local send succeeding. */
	int (*send_mad)(void *ctx, const struct emu_cm_addr *dst, const uint8_t mad[EMU_MAD_LEN]);
	/* Optional: receives every trace line (without the "rdmaemu: " prefix and newline),
	 * whatever RDMAEMU_TRACE says. */
	void (*trace)(void *ctx, const char *line);
};

struct emu_cm_agent_cfg {
	const char *name;	/* trace prefix ("host0") */
	uint64_t ca_guid;	/* node GUID: REQ/REP Local CA GUID, the ARI of REJ(TIMEOUT) */
	uint8_t ack_delay;	/* cm_dev->ack_delay, the HCA's local CA ACK delay (rxe: 15) */
	uint32_t hi_tid;	/* the MAD agent's hi_tid: TID = hi_tid << 32 | local comm ID */
	/* The randomness of the agent (the random_id_operand XORed into local comm IDs, the fault
	 * probabilities): forks of `prng` (the fabric's) with stream `stream`. NULL: seed 0. */
	const struct emu_prng *prng;
	uint64_t stream;
};

struct emu_cm_agent;
struct emu_cm_id;

/* 0 and *out, or -EINVAL (NULL argument, no send_mad) / -ENOMEM. */
int emu_cm_agent_create(struct emu_clock *clk, const struct emu_cm_transport_ops *ops, void *ctx,
			const struct emu_cm_agent_cfg *cfg, struct emu_cm_agent **out);
/* Frees every id (without sending anything) and cancels every timer. */
void emu_cm_agent_destroy(struct emu_cm_agent *a);

/* Entry point of the transport: one received MAD (len >= 256; a MAD that does not decode or is
 * not a CM message is counted and dropped). */
void emu_cm_agent_rx(struct emu_cm_agent *a, const struct emu_cm_addr *src, const uint8_t *mad,
		     size_t len);

/* ---- events (struct ib_cm_event) ---- */
struct emu_cm_event {
	enum emu_cm_uevent type;
	struct emu_cm_id *listen_id; /* REQ_RECEIVED / SIDR_REQ_RECEIVED: the listener */
	int status;		     /* *_ERROR: -ETIMEDOUT (the MAD layer's response timeout) */
	/* The received message, decoded (NULL for timer events and USER_ESTABLISHED): reason,
	 * ari, reject_info_len, service_timeout, qpn, qkey, sidr_status, info, vendor_id,
	 * attr_mod (ECE), starting_psn, ... */
	const struct emu_cm_msg *msg;
	const struct emu_cm_addr *src; /* where it came from (NULL with msg) */
	/* The private data as the kernel reports it: the whole field of the message (§9). */
	const uint8_t *private_data;
	uint8_t private_data_len;
};

/* Returns 0, or non-zero to have the agent destroy the id after the handler (as ib_cm);
 * -ENOMEM on a REQ_RCVD id destroys it without the REJ (cm_destroy_id's rule), so that the
 * sender's retry may succeed. */
typedef int emu_cm_handler(struct emu_cm_id *id, const struct emu_cm_event *ev);

/* ---- the consumer's API (ib_create_cm_id, ib_cm_listen, ib_send_cm_*) ----
 * Errors are the kernel's: -EINVAL for a call the state does not allow or a private data /
 * ARI / info longer than the message's field, -EISCONN for COMM_EST on an established id,
 * -EBUSY for a listen that overlaps an existing one, -ENOMEM. */
int emu_cm_create_id(struct emu_cm_agent *a, emu_cm_handler *handler, void *context,
		     struct emu_cm_id **out);
/* ib_destroy_cm_id: sends what the state demands (REJ 4 with the CA GUID as ARI when a REQ is
 * outstanding, REJ 28 for an unfinished passive connection, a DREQ (not retried) for an
 * established one, a DREP after a DREQ, SIDR_REP REJECT) and frees the id. */
void emu_cm_destroy_id(struct emu_cm_id *id);

/* mask 0 means exact match; service_id is masked. */
int emu_cm_listen(struct emu_cm_id *id, uint64_t service_id, uint64_t service_mask);

/* A path as the SA returns it (struct sa_path_rec, the fields the CM uses). */
struct emu_cm_path_rec {
	uint8_t sgid[16], dgid[16];
	uint16_t slid, dlid;
	uint32_t flow_label;
	uint8_t rate, traffic_class, hop_limit, sl, mtu, packet_life_time;
	uint16_t pkey;
};

struct emu_cm_req_param {
	const struct emu_cm_path_rec *primary_path; /* required */
	const struct emu_cm_path_rec *alternate_path;
	struct emu_cm_addr dst;	/* the remote port's CM (QP1) */
	uint64_t service_id;
	uint32_t qp_num;
	uint8_t qp_type;	/* EMU_CM_TRANSPORT_RC / _UC / _EXTENDED (XRC initiator) */
	uint32_t starting_psn;
	uint8_t responder_resources, initiator_depth;
	uint8_t remote_cm_response_timeout, local_cm_response_timeout;
	uint8_t flow_control, retry_count, rnr_retry_count, max_cm_retries, srq;
	uint32_t ece_vendor_id, ece_attr_mod;
	const void *private_data;
	uint8_t private_data_len;
};
int emu_cm_send_req(struct emu_cm_id *id, const struct emu_cm_req_param *p);

struct emu_cm_rep_param {
	uint32_t qp_num, starting_psn;
	uint8_t responder_resources, initiator_depth, failover_accepted, flow_control;
	uint8_t rnr_retry_count, srq;
	uint32_t ece_vendor_id, ece_attr_mod;
	const void *private_data;
	uint8_t private_data_len;
};
int emu_cm_send_rep(struct emu_cm_id *id, const struct emu_cm_rep_param *p);
int emu_cm_send_rtu(struct emu_cm_id *id, const void *pd, uint8_t len);
int emu_cm_send_rej(struct emu_cm_id *id, unsigned reason, const void *ari, uint8_t ari_len,
		    const void *pd, uint8_t len);
/* service_timeout may carry EMU_CM_MRA_FLAG_DELAY: the MRA is then only remembered and sent
 * in answer to a duplicate REQ/REP (what rdma_cm does with CMA_CM_MRA_SETTING). */
int emu_cm_send_mra(struct emu_cm_id *id, uint8_t service_timeout, const void *pd, uint8_t len);
int emu_cm_send_dreq(struct emu_cm_id *id, const void *pd, uint8_t len);
int emu_cm_send_drep(struct emu_cm_id *id, const void *pd, uint8_t len);
/* ib_cm_notify(IB_EVENT_COMM_EST): the USER_ESTABLISHED event follows from the clock. */
int emu_cm_establish(struct emu_cm_id *id);

struct emu_cm_sidr_req_param {
	const struct emu_cm_path_rec *path; /* required (its pkey is sent) */
	struct emu_cm_addr dst;
	uint64_t service_id;
	unsigned timeout_ms;
	uint8_t max_cm_retries;
	const void *private_data;
	uint8_t private_data_len;
};
int emu_cm_send_sidr_req(struct emu_cm_id *id, const struct emu_cm_sidr_req_param *p);

struct emu_cm_sidr_rep_param {
	uint32_t qp_num, qkey;
	uint8_t status; /* enum emu_cm_sidr_status */
	const void *info;
	uint8_t info_length;
	uint32_t ece_vendor_id, ece_attr_mod;
	const void *private_data;
	uint8_t private_data_len;
};
int emu_cm_send_sidr_rep(struct emu_cm_id *id, const struct emu_cm_sidr_rep_param *p);

/* ---- id accessors ---- */
enum emu_cm_state emu_cm_id_state(const struct emu_cm_id *id);
uint32_t emu_cm_id_local_id(const struct emu_cm_id *id);
uint32_t emu_cm_id_remote_id(const struct emu_cm_id *id);
void *emu_cm_id_context(const struct emu_cm_id *id);
void emu_cm_id_set_context(struct emu_cm_id *id, void *context);
struct emu_cm_agent *emu_cm_id_agent(const struct emu_cm_id *id);
/* The encoded timeout of the id's address vector (av.timeout: after the REP, the QP's local
 * ACK timeout) and the response timeout in ms (cm_id_priv->timeout_ms). */
uint8_t emu_cm_id_av_timeout(const struct emu_cm_id *id);
unsigned emu_cm_id_timeout_ms(const struct emu_cm_id *id);
/* Number of live ids of the agent (listeners included). */
size_t emu_cm_agent_nids(const struct emu_cm_agent *a);

/* ---- counters (the kernel's cm_tx_msgs, cm_tx_retries, cm_rx_msgs, cm_rx_duplicates per
 * attribute, plus the fault injector's) indexed by attribute ID - 0x10 (REQ .. APR) ---- */
#define EMU_CM_NCLASSES 11
static inline int emu_cm_class(uint16_t attr_id)
{
	return attr_id >= EMU_CM_ATTR_REQ && attr_id <= EMU_CM_ATTR_APR ?
		       (int)(attr_id - EMU_CM_ATTR_REQ) : -1;
}
struct emu_cm_counters {
	uint64_t tx[EMU_CM_NCLASSES];	   /* MADs handed to the fault stage, retries included */
	uint64_t tx_retries[EMU_CM_NCLASSES];
	uint64_t rx[EMU_CM_NCLASSES];
	uint64_t rx_dup[EMU_CM_NCLASSES];
	uint64_t dropped[EMU_CM_NCLASSES];    /* by the fault rules */
	uint64_t duplicated[EMU_CM_NCLASSES];
	uint64_t delayed[EMU_CM_NCLASSES];
	uint64_t rx_bad;		      /* undecodable / not CM */
	uint64_t send_errors;		      /* send_mad returned < 0 */
};
void emu_cm_agent_counters(const struct emu_cm_agent *a, struct emu_cm_counters *c);

/* ---- faults on the MADs this agent sends, per message class ----
 * For every MAD of the class, in this order: drop (while drop_next > 0, count down; else with
 * probability p_drop), duplicate (dup_next, p_dup: the MAD is sent twice), delay (delay_next,
 * p_delay: the MAD (and its duplicate) leaves delay_ns later). Every MAD of every class draws
 * exactly three values from the agent's fault stream, whatever the rules, so that changing a
 * rule does not shift the later decisions of other classes. */
struct emu_cm_fault {
	uint32_t drop_next, dup_next, delay_next;
	double p_drop, p_dup, p_delay;
	uint64_t delay_ns;
};
/* attr_id: EMU_CM_ATTR_REQ .. EMU_CM_ATTR_APR; 0 or -EINVAL. */
int emu_cm_fault_set(struct emu_cm_agent *a, uint16_t attr_id, const struct emu_cm_fault *f);
int emu_cm_fault_get(const struct emu_cm_agent *a, uint16_t attr_id, struct emu_cm_fault *f);
void emu_cm_fault_clear(struct emu_cm_agent *a);

#endif
