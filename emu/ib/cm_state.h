/* The IB CM connection state machine, as the kernel's ib_cm runs it (drivers/infiniband/core/
 * cm.c; IBTA vol. 1 12.9 state diagrams), as a table the CM agent executes: for every state and
 * event, the next state, what to do (send, cancel the outstanding MAD, enter timewait, deliver
 * an event to the consumer, ...), and for local calls that are illegal in the state, the errno
 * the kernel returns. Pure data and lookups: no timers, no I/O.
 *
 * Scope: the connection states (enum ib_cm_state). The alternate-path sub-machine (lap_state:
 * LAP/APR, and the MRA of a LAP) is not modelled: RoCE never uses it (cm_lap_handler returns
 * -EINVAL on RoCE ports) and rdma_cm never sends LAP; the rows assume lap_state UNINIT.
 *
 * Matching of a received message to an id (by comm IDs, service ID, remote QPN/CA GUID) is the
 * agent's: it delivers the event to the id it found. What happens when no id matches is the
 * second table, emu_cm_miss (cm_issue_rej, cm_issue_drep, the SIDR "unsupported" reply).
 */
#ifndef RDMAEMU_EMU_CM_STATE_H
#define RDMAEMU_EMU_CM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* enum ib_cm_state, same order and values. */
enum emu_cm_state {
	EMU_CM_IDLE,
	EMU_CM_LISTEN,
	EMU_CM_REQ_SENT,
	EMU_CM_REQ_RCVD,
	EMU_CM_MRA_REQ_SENT,
	EMU_CM_MRA_REQ_RCVD,
	EMU_CM_REP_SENT,
	EMU_CM_REP_RCVD,
	EMU_CM_MRA_REP_SENT,
	EMU_CM_MRA_REP_RCVD,
	EMU_CM_ESTABLISHED,
	EMU_CM_DREQ_SENT,
	EMU_CM_DREQ_RCVD,
	EMU_CM_TIMEWAIT,
	EMU_CM_SIDR_REQ_SENT,
	EMU_CM_SIDR_REQ_RCVD,
	EMU_CM_NSTATES
};
/* "REQ_SENT"; "?" out of range. */
const char *emu_cm_state_name(unsigned s);

/* What happens to an id. */
enum emu_cm_ev {
	/* the consumer's calls (ib_cm_listen, ib_send_cm_*, ib_cm_notify(COMM_EST),
	 * ib_destroy_cm_id) */
	EMU_CM_EV_LISTEN,
	EMU_CM_EV_SEND_REQ,
	EMU_CM_EV_SEND_REP,
	EMU_CM_EV_SEND_RTU,
	EMU_CM_EV_SEND_REJ,
	EMU_CM_EV_SEND_MRA,
	EMU_CM_EV_SEND_DREQ,
	EMU_CM_EV_SEND_DREP,
	EMU_CM_EV_SEND_SIDR_REQ,
	EMU_CM_EV_SEND_SIDR_REP,
	EMU_CM_EV_ESTABLISH,
	EMU_CM_EV_DESTROY,
	/* messages received for this id (the REJ split by reason: a stale-connection REJ (10)
	 * sends the id to timewait where any other reason resets it; MRAs split by Message
	 * MRAed) */
	EMU_CM_EV_RECV_REQ,
	EMU_CM_EV_RECV_MRA_REQ,
	EMU_CM_EV_RECV_MRA_REP,
	EMU_CM_EV_RECV_MRA_OTHER,
	EMU_CM_EV_RECV_REJ,
	EMU_CM_EV_RECV_REJ_STALE,
	EMU_CM_EV_RECV_REP,
	EMU_CM_EV_RECV_RTU,
	EMU_CM_EV_RECV_DREQ,
	EMU_CM_EV_RECV_DREP,
	EMU_CM_EV_RECV_SIDR_REQ,
	EMU_CM_EV_RECV_SIDR_REP,
	/* timers: the outstanding MAD's retries ran out (cm_process_send_error); timewait over */
	EMU_CM_EV_RESPONSE_TIMEOUT,
	EMU_CM_EV_TIMEWAIT_EXIT,
	EMU_CM_NEVENTS
};
#define EMU_CM_EV_FIRST_RECV EMU_CM_EV_RECV_REQ
#define EMU_CM_EV_FIRST_TIMER EMU_CM_EV_RESPONSE_TIMEOUT
/* "send_rep", "REP", "REJ(stale)", "response_timeout"; "?" out of range. */
const char *emu_cm_ev_name(unsigned ev);

/* Events delivered to the consumer (enum ib_cm_event_type, same order). */
enum emu_cm_uevent {
	EMU_CM_UE_NONE = -1,
	EMU_CM_UE_REQ_ERROR,
	EMU_CM_UE_REQ_RECEIVED,
	EMU_CM_UE_REP_ERROR,
	EMU_CM_UE_REP_RECEIVED,
	EMU_CM_UE_RTU_RECEIVED,
	EMU_CM_UE_USER_ESTABLISHED,
	EMU_CM_UE_DREQ_ERROR,
	EMU_CM_UE_DREQ_RECEIVED,
	EMU_CM_UE_DREP_RECEIVED,
	EMU_CM_UE_TIMEWAIT_EXIT,
	EMU_CM_UE_MRA_RECEIVED,
	EMU_CM_UE_REJ_RECEIVED,
	EMU_CM_UE_LAP_ERROR,
	EMU_CM_UE_LAP_RECEIVED,
	EMU_CM_UE_APR_RECEIVED,
	EMU_CM_UE_SIDR_REQ_ERROR,
	EMU_CM_UE_SIDR_REQ_RECEIVED,
	EMU_CM_UE_SIDR_REP_RECEIVED,
	EMU_CM_NUEVENTS
};
/* "IB_CM_REP_RECEIVED"; "IB_CM_NONE" for EMU_CM_UE_NONE; "?" out of range. */
const char *emu_cm_uevent_name(int ue);

/* Actions, in the order the agent performs them. */
enum {
	EMU_CM_A_CANCEL = 1u << 0,	  /* stop retransmitting the outstanding MAD (ib_cancel_mad) */
	EMU_CM_A_SEND = 1u << 1,	  /* send the message of the call (SEND_* events) */
	EMU_CM_A_EXPECT_REPLY = 1u << 2,  /* ... and retransmit it until answered: timeout_ms,
					   * max_cm_retries (REQ, REP, DREQ, SIDR_REQ) */
	EMU_CM_A_EXTEND_TIMER = 1u << 3,  /* MRA received: the outstanding MAD's timeout becomes
					   * service timeout + av.timeout (ib_modify_mad) */
	EMU_CM_A_RESEND_MRA = 1u << 4,	  /* answer a duplicate with the stored MRA */
	EMU_CM_A_RESEND_RTU = 1u << 5,	  /* duplicate REP after RTU: send the RTU again */
	EMU_CM_A_RESEND_DREP = 1u << 6,	  /* duplicate DREQ in timewait: send DREP again */
	EMU_CM_A_REJ_STALE = 1u << 7,	  /* duplicate REQ in timewait: REJ 10, REJected OTHER */
	EMU_CM_A_REJ_TIMEOUT = 1u << 8,	  /* destroy with a REQ out: REJ 4, ARI = local CA GUID */
	EMU_CM_A_REJ_CONSUMER = 1u << 9,  /* destroy of an unfinished connection: REJ 28 */
	EMU_CM_A_SEND_DREQ = 1u << 10,	  /* destroy of an established connection: one DREQ
					   * (cancelled right after, so never retried) */
	EMU_CM_A_SEND_DREP = 1u << 11,	  /* destroy after a DREQ: DREP */
	EMU_CM_A_SIDR_REJECT = 1u << 12,  /* destroy of a pending SIDR: SIDR_REP status 2 */
	EMU_CM_A_RESET = 1u << 13,	  /* cm_reset_to_idle: forget remote id / QPN */
	EMU_CM_A_TIMEWAIT = 1u << 14,	  /* cm_enter_timewait: arm the timewait timer */
	EMU_CM_A_NEW_ID = 1u << 15,	  /* listener: create an id for the request, in
					   * REQ_RCVD / SIDR_REQ_RCVD, and give it the event */
	EMU_CM_A_EVENT = 1u << 16,	  /* deliver emu_cm_trans.uevent to the consumer */
	EMU_CM_A_COUNT_DUP = 1u << 17,	  /* cm_rx_duplicates counter */
	EMU_CM_A_UNLISTEN = 1u << 18,	  /* remove from the service table */
};
/* "CANCEL|SEND|EVENT" into buf; returns buf. */
char *emu_cm_actions_str(uint32_t actions, char *buf, size_t len);

/* Whether an event was taken. Received messages and timers are never errors: a message the
 * state does not expect is discarded (IGNORE), or counted as a duplicate (DUP, with the
 * duplicate's answer in actions). */
enum emu_cm_disp {
	EMU_CM_UNLISTED, /* internal: a cell the table leaves to the defaults */
	EMU_CM_OK,
	EMU_CM_ERR,	/* a local call refused: errno in emu_cm_trans.err, nothing changes */
	EMU_CM_DUP,	/* a duplicate: state unchanged, maybe an answer */
	EMU_CM_IGNORE,	/* discarded, state unchanged */
};

struct emu_cm_trans {
	uint8_t next;	 /* enum emu_cm_state */
	uint8_t disp;	 /* enum emu_cm_disp */
	uint8_t err;	 /* positive errno when disp == EMU_CM_ERR */
	int8_t uevent;	 /* enum emu_cm_uevent with EMU_CM_A_EVENT (for NEW_ID: the new id's) */
	uint32_t actions;
};

/* The table's cell, with the kernel's defaults filled in for cells it does not list (its
 * `default:` cases): a local call is refused with EINVAL, a message or timer is discarded;
 * both leave the state as it is. 0, or -EINVAL for an out-of-range state or event. */
int emu_cm_lookup(unsigned cur, unsigned ev, struct emu_cm_trans *t);

/* Looks the transition up: 0 (taken: OK, DUP or IGNORE; *next and *actions filled), or the
 * negative errno of a refused local call (*next = cur, *actions = 0), or -EINVAL for an
 * out-of-range state or event. next/actions may be NULL. */
int emu_cm_transition(unsigned cur, unsigned ev, unsigned *next, uint32_t *actions);

/* The trace line of a transition: "cm 0x1234: REQ_SENT --REP--> REP_RCVD", with " (dup)",
 * " (ignored)" or " (EINVAL)" appended when the event was not taken. Returns snprintf's. */
int emu_cm_trace_fmt(char *buf, size_t len, uint32_t comm_id, unsigned cur, unsigned ev);

/* ---- what answers a message no id takes (cm.c: cm_match_req, cm_rep_handler, cm_dreq_handler,
 * cm_sidr_req_handler) ---- */
enum emu_cm_miss {
	EMU_CM_MISS_REQ_NO_LISTENER,	/* REQ, no listener on the service ID */
	EMU_CM_MISS_REQ_STALE,		/* REQ whose remote QPN + CA GUID a connection still holds */
	EMU_CM_MISS_REP_STALE,		/* REP, same */
	EMU_CM_MISS_DREQ_NO_ID,		/* DREQ for no id (already gone) */
	EMU_CM_MISS_SIDR_NO_LISTENER,	/* SIDR_REQ, no listener */
	EMU_CM_MISS_SIDR_DUP,		/* SIDR_REQ already being served */
	EMU_CM_MISS_OTHER,		/* anything else: dropped */
	EMU_CM_NMISS
};
struct emu_cm_miss_reply {
	const char *name;
	uint16_t reply_attr;	/* EMU_CM_ATTR_*, 0: none */
	uint16_t reason;	/* REJ reason or SIDR_REP status */
	uint8_t msg_rejected;	/* REJ Message REJected */
	bool dreq_old;		/* also ib_send_cm_dreq on the connection that holds the QPN */
	bool count_dup;
};
extern const struct emu_cm_miss_reply emu_cm_miss_table[EMU_CM_NMISS];

/* ---- timers (one place; sources cited) ----
 * IBTA encodes CM and ACK timeouts as 4.096 us * 2^t (12.7.34). */
#define EMU_CMA_CM_RESPONSE_TIMEOUT 20 /* cma.c CMA_CM_RESPONSE_TIMEOUT: REQ's remote and local
					* CM response timeouts (~4.3 s). A 2025 kernel patch
					* lowers it to 18; 20 is Debian 12's (6.1) and spec §7's. */
#define EMU_CMA_MAX_CM_RETRIES 15      /* cma.c CMA_MAX_CM_RETRIES: REQ Max CM Retries */
#define EMU_CMA_IBOE_PACKET_LIFETIME 16 /* cma.c CMA_IBOE_PACKET_LIFETIME for RoCE paths (18
					 * before a 2020 change; 16 in 6.1) */
#define EMU_CM_MRA_FLAG_DELAY 0x80     /* ib_cm.h IB_CM_MRA_FLAG_DELAY: remember, don't send */
#define EMU_CMA_CM_MRA_SETTING (EMU_CM_MRA_FLAG_DELAY | 24) /* cma.c CMA_CM_MRA_SETTING: what
					* rdma_cm passes to ib_send_cm_mra on REQ/REP arrival */
#define EMU_RXE_LOCAL_CA_ACK_DELAY 15  /* rxe_param.h RXE_LOCAL_CA_ACK_DELAY: the CM's ack_delay
					* (REP Target ACK Delay) on rxe */

/* The exact IBTA duration of an encoded timeout, in ns (t <= 31). */
uint64_t emu_cm_timeout_ns(unsigned t);
/* cm.c cm_convert_to_ms: the kernel's approximation, 1 << max(t - 8, 0) ms. */
unsigned emu_cm_convert_to_ms(unsigned t);
/* cm.c cm_ack_timeout: encoded ACK timeout = ack delay + 2 * packet lifetime, as the larger of
 * the two rounded up when the other is within 50%; at most 31. The REQ's Local ACK Timeout
 * (with the CA's ack delay) and, after the REP, av.timeout (with Target ACK Delay). */
unsigned emu_cm_ack_timeout(unsigned ca_ack_delay, unsigned packet_life_time);
/* ib_send_cm_req: how long the active side waits for REP/MRA per try:
 * 2 * convert(packet lifetime) + convert(remote CM response timeout). */
unsigned emu_cm_req_timeout_ms(unsigned packet_life_time, unsigned remote_cm_response_timeout);
/* cm_mra_handler: the wait after an MRA: convert(service timeout) + convert(av.timeout). */
unsigned emu_cm_mra_timeout_ms(unsigned service_timeout, unsigned av_timeout);
/* cm_enter_timewait: timewait lasts convert(av.timeout), av.timeout being the encoded
 * "2 * packet lifetime + ACK delay" of the path (IBTA 12.9.8.3.1). */
static inline unsigned emu_cm_timewait_ms(unsigned av_timeout)
{
	return emu_cm_convert_to_ms(av_timeout);
}

#endif
