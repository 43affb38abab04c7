/* The ib_cm connection state machine as a table. Every cell cites the kernel's handling
 * (drivers/infiniband/core/cm.c); cells not listed take the kernel's `default:` (see
 * emu_cm_lookup). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/ib/cm_mad.h"
#include "emu/ib/cm_state.h"

static const char *const state_names[EMU_CM_NSTATES] = {
	[EMU_CM_IDLE] = "IDLE",
	[EMU_CM_LISTEN] = "LISTEN",
	[EMU_CM_REQ_SENT] = "REQ_SENT",
	[EMU_CM_REQ_RCVD] = "REQ_RCVD",
	[EMU_CM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[EMU_CM_MRA_REQ_RCVD] = "MRA_REQ_RCVD",
	[EMU_CM_REP_SENT] = "REP_SENT",
	[EMU_CM_REP_RCVD] = "REP_RCVD",
	[EMU_CM_MRA_REP_SENT] = "MRA_REP_SENT",
	[EMU_CM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[EMU_CM_ESTABLISHED] = "ESTABLISHED",
	[EMU_CM_DREQ_SENT] = "DREQ_SENT",
	[EMU_CM_DREQ_RCVD] = "DREQ_RCVD",
	[EMU_CM_TIMEWAIT] = "TIMEWAIT",
	[EMU_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[EMU_CM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

static const char *const ev_names[EMU_CM_NEVENTS] = {
	[EMU_CM_EV_LISTEN] = "listen",
	[EMU_CM_EV_SEND_REQ] = "send_req",
	[EMU_CM_EV_SEND_REP] = "send_rep",
	[EMU_CM_EV_SEND_RTU] = "send_rtu",
	[EMU_CM_EV_SEND_REJ] = "send_rej",
	[EMU_CM_EV_SEND_MRA] = "send_mra",
	[EMU_CM_EV_SEND_DREQ] = "send_dreq",
	[EMU_CM_EV_SEND_DREP] = "send_drep",
	[EMU_CM_EV_SEND_SIDR_REQ] = "send_sidr_req",
	[EMU_CM_EV_SEND_SIDR_REP] = "send_sidr_rep",
	[EMU_CM_EV_ESTABLISH] = "establish",
	[EMU_CM_EV_DESTROY] = "destroy",
	[EMU_CM_EV_RECV_REQ] = "REQ",
	[EMU_CM_EV_RECV_MRA_REQ] = "MRA(REQ)",
	[EMU_CM_EV_RECV_MRA_REP] = "MRA(REP)",
	[EMU_CM_EV_RECV_MRA_OTHER] = "MRA(OTHER)",
	[EMU_CM_EV_RECV_REJ] = "REJ",
	[EMU_CM_EV_RECV_REJ_STALE] = "REJ(stale)",
	[EMU_CM_EV_RECV_REP] = "REP",
	[EMU_CM_EV_RECV_RTU] = "RTU",
	[EMU_CM_EV_RECV_DREQ] = "DREQ",
	[EMU_CM_EV_RECV_DREP] = "DREP",
	[EMU_CM_EV_RECV_SIDR_REQ] = "SIDR_REQ",
	[EMU_CM_EV_RECV_SIDR_REP] = "SIDR_REP",
	[EMU_CM_EV_RESPONSE_TIMEOUT] = "response_timeout",
	[EMU_CM_EV_TIMEWAIT_EXIT] = "timewait_exit",
};

static const char *const uevent_names[EMU_CM_NUEVENTS] = {
	[EMU_CM_UE_REQ_ERROR] = "IB_CM_REQ_ERROR",
	[EMU_CM_UE_REQ_RECEIVED] = "IB_CM_REQ_RECEIVED",
	[EMU_CM_UE_REP_ERROR] = "IB_CM_REP_ERROR",
	[EMU_CM_UE_REP_RECEIVED] = "IB_CM_REP_RECEIVED",
	[EMU_CM_UE_RTU_RECEIVED] = "IB_CM_RTU_RECEIVED",
	[EMU_CM_UE_USER_ESTABLISHED] = "IB_CM_USER_ESTABLISHED",
	[EMU_CM_UE_DREQ_ERROR] = "IB_CM_DREQ_ERROR",
	[EMU_CM_UE_DREQ_RECEIVED] = "IB_CM_DREQ_RECEIVED",
	[EMU_CM_UE_DREP_RECEIVED] = "IB_CM_DREP_RECEIVED",
	[EMU_CM_UE_TIMEWAIT_EXIT] = "IB_CM_TIMEWAIT_EXIT",
	[EMU_CM_UE_MRA_RECEIVED] = "IB_CM_MRA_RECEIVED",
	[EMU_CM_UE_REJ_RECEIVED] = "IB_CM_REJ_RECEIVED",
	[EMU_CM_UE_LAP_ERROR] = "IB_CM_LAP_ERROR",
	[EMU_CM_UE_LAP_RECEIVED] = "IB_CM_LAP_RECEIVED",
	[EMU_CM_UE_APR_RECEIVED] = "IB_CM_APR_RECEIVED",
	[EMU_CM_UE_SIDR_REQ_ERROR] = "IB_CM_SIDR_REQ_ERROR",
	[EMU_CM_UE_SIDR_REQ_RECEIVED] = "IB_CM_SIDR_REQ_RECEIVED",
	[EMU_CM_UE_SIDR_REP_RECEIVED] = "IB_CM_SIDR_REP_RECEIVED",
};

static const char *const action_names[] = {
	"CANCEL", "SEND", "EXPECT_REPLY", "EXTEND_TIMER", "RESEND_MRA", "RESEND_RTU",
	"RESEND_DREP", "REJ_STALE", "REJ_TIMEOUT", "REJ_CONSUMER", "SEND_DREQ", "SEND_DREP",
	"SIDR_REJECT", "RESET", "TIMEWAIT", "NEW_ID", "EVENT", "COUNT_DUP", "UNLISTEN",
};

const char *emu_cm_state_name(unsigned s)
{
	return s < EMU_CM_NSTATES ? state_names[s] : "?";
}

const char *emu_cm_ev_name(unsigned ev)
{
	return ev < EMU_CM_NEVENTS ? ev_names[ev] : "?";
}

const char *emu_cm_uevent_name(int ue)
{
	if (ue == EMU_CM_UE_NONE)
		return "IB_CM_NONE";
	return ue >= 0 && ue < EMU_CM_NUEVENTS ? uevent_names[ue] : "?";
}

char *emu_cm_actions_str(uint32_t actions, char *buf, size_t len)
{
	size_t off = 0;

	if (!buf || !len)
		return buf;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(action_names) / sizeof(action_names[0]); i++) {
		if (!(actions & (1u << i)))
			continue;
		int n = snprintf(buf + off, len - off, "%s%s", off ? "|" : "", action_names[i]);
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = 0; /* whole names only */
			break;
		}
		off += (size_t)n;
	}
	return buf;
}

/* ---- the table ---- */

#define S(n) EMU_CM_##n
#define A(n) EMU_CM_A_##n
#define UE(n) EMU_CM_UE_##n
/* taken: next state, actions */
#define GO(next, actions) { S(next), EMU_CM_OK, 0, UE(NONE), (actions) }
/* taken, with an event to the consumer */
#define GOE(next, actions, ue) { S(next), EMU_CM_OK, 0, UE(ue), (actions) | A(EVENT) }
/* a duplicate in state `st`, with its answer */
#define DUP(st, actions) { S(st), EMU_CM_DUP, 0, UE(NONE), (actions) | A(COUNT_DUP) }
/* a local call refused */
#define ERR(st, e) { S(st), EMU_CM_ERR, e, UE(NONE), 0 }

/* Received-duplicate rows shared by the states that have a remote ID: a REQ for them goes to
 * cm_dup_req_handler, which counts it and answers only in MRA_REQ_SENT and TIMEWAIT; an RTU
 * outside REP_SENT/MRA_REP_RCVD is counted and dropped (cm_rtu_handler); a REP reaching an id
 * whose remote ID is already set goes to cm_dup_rep_handler (counted; answered with the RTU in
 * ESTABLISHED, the MRA in MRA_REP_SENT). */
#define DUP_REQ(st) [EMU_CM_EV_RECV_REQ] = DUP(st, 0)
#define DUP_RTU(st) [EMU_CM_EV_RECV_RTU] = DUP(st, 0)
#define DUP_REP(st) [EMU_CM_EV_RECV_REP] = DUP(st, 0)
#define DUPS(st) DUP_REQ(st), DUP_RTU(st), DUP_REP(st)

static const struct emu_cm_trans table[EMU_CM_NSTATES][EMU_CM_NEVENTS] = {
	[EMU_CM_IDLE] = {
		[EMU_CM_EV_LISTEN] = GO(LISTEN, 0),			/* ib_cm_listen */
		[EMU_CM_EV_SEND_REQ] = GO(REQ_SENT, A(SEND) | A(EXPECT_REPLY)), /* ib_send_cm_req */
		[EMU_CM_EV_SEND_SIDR_REQ] = GO(SIDR_REQ_SENT, A(SEND) | A(EXPECT_REPLY)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, 0),
		[EMU_CM_EV_RECV_RTU] = DUP(IDLE, 0),
	},
	[EMU_CM_LISTEN] = {
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(UNLISTEN)),
		/* cm_req_handler / cm_sidr_req_handler: a new id takes the request */
		[EMU_CM_EV_RECV_REQ] = GOE(LISTEN, A(NEW_ID), REQ_RECEIVED),
		[EMU_CM_EV_RECV_SIDR_REQ] = GOE(LISTEN, A(NEW_ID), SIDR_REQ_RECEIVED),
	},
	[EMU_CM_REQ_SENT] = {
		/* cm_send_rej_locked: reset to idle; the REQ's MAD is not cancelled (the kernel
		 * lets its retries run into the state check of cm_process_send_error) */
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		/* cm_destroy_id: cancel, then REJ(TIMEOUT) with the local CA GUID as ARI */
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL) | A(REJ_TIMEOUT) | A(RESET)),
		[EMU_CM_EV_RECV_MRA_REQ] = GOE(MRA_REQ_RCVD, A(EXTEND_TIMER), MRA_RECEIVED),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(CANCEL) | A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REP] = GOE(REP_RCVD, A(CANCEL), REP_RECEIVED), /* cm_rep_handler */
		[EMU_CM_EV_RECV_RTU] = DUP(REQ_SENT, 0),
		/* cm_process_send_error */
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(IDLE, A(RESET), REQ_ERROR),
	},
	[EMU_CM_REQ_RCVD] = {
		[EMU_CM_EV_SEND_REP] = GO(REP_SENT, A(SEND) | A(EXPECT_REPLY)), /* ib_send_cm_rep */
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		/* ib_send_cm_mra: sent unless the service timeout has IB_CM_MRA_FLAG_DELAY */
		[EMU_CM_EV_SEND_MRA] = GO(MRA_REQ_SENT, A(SEND)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(REJ_CONSUMER) | A(RESET)),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		DUPS(REQ_RCVD), /* REQ: the "quick state check" drops it */
	},
	[EMU_CM_MRA_REQ_SENT] = {
		[EMU_CM_EV_SEND_REP] = GO(REP_SENT, A(SEND) | A(EXPECT_REPLY)),
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(REJ_CONSUMER) | A(RESET)),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		DUP_RTU(MRA_REQ_SENT), DUP_REP(MRA_REQ_SENT),
		[EMU_CM_EV_RECV_REQ] = DUP(MRA_REQ_SENT, A(RESEND_MRA)), /* cm_dup_req_handler */
	},
	[EMU_CM_MRA_REQ_RCVD] = {
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL) | A(REJ_TIMEOUT) | A(RESET)),
		[EMU_CM_EV_RECV_MRA_REQ] = DUP(MRA_REQ_RCVD, 0), /* cm_mra_handler */
		[EMU_CM_EV_RECV_MRA_REP] = DUP(MRA_REQ_RCVD, 0),
		[EMU_CM_EV_RECV_MRA_OTHER] = DUP(MRA_REQ_RCVD, 0),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(CANCEL) | A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REP] = GOE(REP_RCVD, A(CANCEL), REP_RECEIVED),
		[EMU_CM_EV_RECV_RTU] = DUP(MRA_REQ_RCVD, 0),
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(IDLE, A(RESET), REQ_ERROR),
	},
	[EMU_CM_REP_SENT] = {
		/* cm_send_rej_locked: REP_SENT enters timewait */
		[EMU_CM_EV_SEND_REJ] = GO(TIMEWAIT, A(SEND) | A(TIMEWAIT)),
		/* ib_cm_notify(COMM_EST) -> cm_establish, cm_establish_handler */
		[EMU_CM_EV_ESTABLISH] = GOE(ESTABLISHED, A(CANCEL), USER_ESTABLISHED),
		/* cm_destroy_id: cancel, REJ(CONSUMER_DEFINED); the pass through TIMEWAIT arms a
		 * timer that finds no id, so none is armed here */
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL) | A(REJ_CONSUMER)),
		[EMU_CM_EV_RECV_MRA_REP] = GOE(MRA_REP_RCVD, A(EXTEND_TIMER), MRA_RECEIVED),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(CANCEL) | A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		DUP_REQ(REP_SENT), DUP_REP(REP_SENT),
		[EMU_CM_EV_RECV_RTU] = GOE(ESTABLISHED, A(CANCEL), RTU_RECEIVED), /* cm_rtu_handler */
		[EMU_CM_EV_RECV_DREQ] = GOE(DREQ_RCVD, A(CANCEL), DREQ_RECEIVED), /* cm_dreq_handler */
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(IDLE, A(RESET), REP_ERROR),
	},
	[EMU_CM_REP_RCVD] = {
		[EMU_CM_EV_SEND_RTU] = GO(ESTABLISHED, A(SEND)), /* ib_send_cm_rtu */
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		[EMU_CM_EV_SEND_MRA] = GO(MRA_REP_SENT, A(SEND)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(REJ_CONSUMER) | A(RESET)),
		/* cm_rej_handler: after a REP, any REJ means timewait */
		[EMU_CM_EV_RECV_REJ] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		DUPS(REP_RCVD),
	},
	[EMU_CM_MRA_REP_SENT] = {
		[EMU_CM_EV_SEND_RTU] = GO(ESTABLISHED, A(SEND)),
		[EMU_CM_EV_SEND_REJ] = GO(IDLE, A(SEND) | A(RESET)),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(REJ_CONSUMER) | A(RESET)),
		[EMU_CM_EV_RECV_REJ] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		DUP_REQ(MRA_REP_SENT), DUP_RTU(MRA_REP_SENT),
		[EMU_CM_EV_RECV_REP] = DUP(MRA_REP_SENT, A(RESEND_MRA)), /* cm_dup_rep_handler */
	},
	[EMU_CM_MRA_REP_RCVD] = {
		[EMU_CM_EV_SEND_REJ] = GO(TIMEWAIT, A(SEND) | A(TIMEWAIT)),
		[EMU_CM_EV_ESTABLISH] = GOE(ESTABLISHED, A(CANCEL), USER_ESTABLISHED),
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL) | A(REJ_CONSUMER)),
		[EMU_CM_EV_RECV_MRA_REQ] = DUP(MRA_REP_RCVD, 0),
		[EMU_CM_EV_RECV_MRA_REP] = DUP(MRA_REP_RCVD, 0),
		[EMU_CM_EV_RECV_MRA_OTHER] = DUP(MRA_REP_RCVD, 0),
		[EMU_CM_EV_RECV_REJ] = GOE(IDLE, A(CANCEL) | A(RESET), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		DUP_REQ(MRA_REP_RCVD), DUP_REP(MRA_REP_RCVD),
		[EMU_CM_EV_RECV_RTU] = GOE(ESTABLISHED, A(CANCEL), RTU_RECEIVED),
		/* cm_dreq_handler: MRA_REP_RCVD does not cancel the REP's MAD (kernel as is) */
		[EMU_CM_EV_RECV_DREQ] = GOE(DREQ_RCVD, 0, DREQ_RECEIVED),
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(IDLE, A(RESET), REP_ERROR),
	},
	[EMU_CM_ESTABLISHED] = {
		[EMU_CM_EV_SEND_DREQ] = GO(DREQ_SENT, A(SEND) | A(EXPECT_REPLY)), /* cm_send_dreq_locked */
		[EMU_CM_EV_ESTABLISH] = ERR(ESTABLISHED, EISCONN), /* cm_establish */
		/* cm_destroy_id: DREQ, then DREQ_SENT cancels it and passes through timewait */
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(SEND_DREQ) | A(CANCEL)),
		[EMU_CM_EV_RECV_REJ] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(TIMEWAIT), REJ_RECEIVED),
		DUP_REQ(ESTABLISHED), DUP_RTU(ESTABLISHED),
		[EMU_CM_EV_RECV_REP] = DUP(ESTABLISHED, A(RESEND_RTU)), /* cm_dup_rep_handler */
		[EMU_CM_EV_RECV_DREQ] = GOE(DREQ_RCVD, 0, DREQ_RECEIVED),
	},
	[EMU_CM_DREQ_SENT] = {
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL)),
		[EMU_CM_EV_RECV_REJ] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		[EMU_CM_EV_RECV_REJ_STALE] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), REJ_RECEIVED),
		DUPS(DREQ_SENT),
		/* crossing DREQs: cm_dreq_handler cancels ours and takes theirs */
		[EMU_CM_EV_RECV_DREQ] = GOE(DREQ_RCVD, A(CANCEL), DREQ_RECEIVED),
		[EMU_CM_EV_RECV_DREP] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), DREP_RECEIVED),
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(TIMEWAIT, A(TIMEWAIT), DREQ_ERROR),
	},
	[EMU_CM_DREQ_RCVD] = {
		[EMU_CM_EV_SEND_DREP] = GO(TIMEWAIT, A(SEND) | A(TIMEWAIT)), /* cm_send_drep_locked */
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(SEND_DREP)),
		DUPS(DREQ_RCVD),
		[EMU_CM_EV_RECV_DREQ] = DUP(DREQ_RCVD, 0),
		/* cm_drep_handler takes a DREP in DREQ_RCVD too (crossing DREQs) */
		[EMU_CM_EV_RECV_DREP] = GOE(TIMEWAIT, A(CANCEL) | A(TIMEWAIT), DREP_RECEIVED),
	},
	[EMU_CM_TIMEWAIT] = {
		[EMU_CM_EV_DESTROY] = GO(IDLE, 0),
		DUP_RTU(TIMEWAIT), DUP_REP(TIMEWAIT),
		[EMU_CM_EV_RECV_REQ] = DUP(TIMEWAIT, A(REJ_STALE)), /* cm_dup_req_handler */
		[EMU_CM_EV_RECV_DREQ] = DUP(TIMEWAIT, A(RESEND_DREP)), /* cm_dreq_handler */
		[EMU_CM_EV_TIMEWAIT_EXIT] = GOE(IDLE, 0, TIMEWAIT_EXIT), /* cm_timewait_handler */
	},
	[EMU_CM_SIDR_REQ_SENT] = {
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(CANCEL)),
		[EMU_CM_EV_RECV_RTU] = DUP(SIDR_REQ_SENT, 0),
		/* cm_sidr_rep_handler */
		[EMU_CM_EV_RECV_SIDR_REP] = GOE(IDLE, A(CANCEL), SIDR_REP_RECEIVED),
		[EMU_CM_EV_RESPONSE_TIMEOUT] = GOE(IDLE, 0, SIDR_REQ_ERROR),
	},
	[EMU_CM_SIDR_REQ_RCVD] = {
		[EMU_CM_EV_SEND_SIDR_REP] = GO(IDLE, A(SEND)), /* cm_send_sidr_rep_locked */
		[EMU_CM_EV_DESTROY] = GO(IDLE, A(SIDR_REJECT)),
	},
};

int emu_cm_lookup(unsigned cur, unsigned ev, struct emu_cm_trans *t)
{
	if (cur >= EMU_CM_NSTATES || ev >= EMU_CM_NEVENTS || !t)
		return -EINVAL;
	*t = table[cur][ev];
	if (t->disp == EMU_CM_UNLISTED) {
		bool local = ev < EMU_CM_EV_FIRST_RECV;

		*t = (struct emu_cm_trans){ .next = (uint8_t)cur,
					    .disp = local ? EMU_CM_ERR : EMU_CM_IGNORE,
					    .err = local ? EINVAL : 0,
					    .uevent = EMU_CM_UE_NONE };
	}
	return 0;
}

int emu_cm_transition(unsigned cur, unsigned ev, unsigned *next, uint32_t *actions)
{
	struct emu_cm_trans t;
	int ret = emu_cm_lookup(cur, ev, &t);

	if (ret)
		return ret;
	if (next)
		*next = t.disp == EMU_CM_ERR ? cur : t.next;
	if (actions)
		*actions = t.disp == EMU_CM_ERR ? 0 : t.actions;
	return t.disp == EMU_CM_ERR ? -(int)t.err : 0;
}

int emu_cm_trace_fmt(char *buf, size_t len, uint32_t comm_id, unsigned cur, unsigned ev)
{
	struct emu_cm_trans t;
	const char *suffix = "";
	char err[24];

	if (emu_cm_lookup(cur, ev, &t))
		return snprintf(buf, len, "cm 0x%x: %s --%s--> ? (invalid)", comm_id,
				emu_cm_state_name(cur), emu_cm_ev_name(ev));
	if (t.disp == EMU_CM_DUP) {
		suffix = " (dup)";
	} else if (t.disp == EMU_CM_IGNORE) {
		suffix = " (ignored)";
	} else if (t.disp == EMU_CM_ERR) {
		snprintf(err, sizeof(err), " (%s)",
			 t.err == EINVAL ? "EINVAL" : t.err == EISCONN ? "EISCONN" : "error");
		suffix = err;
	}
	return snprintf(buf, len, "cm 0x%x: %s --%s--> %s%s", comm_id, emu_cm_state_name(cur),
			emu_cm_ev_name(ev), emu_cm_state_name(t.next), suffix);
}

/* ---- messages no id takes ---- */

const struct emu_cm_miss_reply emu_cm_miss_table[EMU_CM_NMISS] = {
	/* cm_match_req: no listener -> cm_issue_rej(INVALID_SERVICE_ID, REJected REQ) */
	[EMU_CM_MISS_REQ_NO_LISTENER] = { "REQ: no listener", EMU_CM_ATTR_REJ, 8, 0, false, false },
	/* cm_match_req: remote QPN in use -> REJ(STALE_CONN) and DREQ on the old connection */
	[EMU_CM_MISS_REQ_STALE] = { "REQ: stale connection", EMU_CM_ATTR_REJ, 10, 0, true, false },
	/* cm_rep_handler: same check on the active side, REJected REP */
	[EMU_CM_MISS_REP_STALE] = { "REP: stale connection", EMU_CM_ATTR_REJ, 10, 1, true, false },
	/* cm_dreq_handler: no id -> cm_issue_drep, counted as a duplicate */
	[EMU_CM_MISS_DREQ_NO_ID] = { "DREQ: no id", EMU_CM_ATTR_DREP, 0, 0, false, true },
	/* cm_sidr_req_handler: no listener -> SIDR_REP status UNSUPPORTED */
	[EMU_CM_MISS_SIDR_NO_LISTENER] = { "SIDR_REQ: no listener", EMU_CM_ATTR_SIDR_REP, 1, 0, false, false },
	/* cm_sidr_req_handler: already in the remote SIDR table -> dropped, counted */
	[EMU_CM_MISS_SIDR_DUP] = { "SIDR_REQ: duplicate", 0, 0, 0, false, true },
	[EMU_CM_MISS_OTHER] = { "unmatched: dropped", 0, 0, 0, false, false },
};

/* ---- timers ---- */

uint64_t emu_cm_timeout_ns(unsigned t)
{
	return t > 31 ? 0 : 4096ull << t;
}

unsigned emu_cm_convert_to_ms(unsigned t)
{
	return 1u << (t > 8 ? (t > 39 ? 31 : t - 8) : 0);
}

unsigned emu_cm_ack_timeout(unsigned ca_ack_delay, unsigned packet_life_time)
{
	unsigned ack = packet_life_time + 1;

	if (ack >= ca_ack_delay)
		ack += ca_ack_delay >= ack - 1;
	else
		ack = ca_ack_delay + (ack + 1 >= ca_ack_delay); /* ack >= delay - 1, unsigned-safe */
	return ack < 31 ? ack : 31;
}

unsigned emu_cm_req_timeout_ms(unsigned packet_life_time, unsigned remote_cm_response_timeout)
{
	return emu_cm_convert_to_ms(packet_life_time) * 2 +
	       emu_cm_convert_to_ms(remote_cm_response_timeout);
}

unsigned emu_cm_mra_timeout_ms(unsigned service_timeout, unsigned av_timeout)
{
	return emu_cm_convert_to_ms(service_timeout) + emu_cm_convert_to_ms(av_timeout);
}
