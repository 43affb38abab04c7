/* The ib_cm state table against a list written independently from cm.c's handlers: every
 * (state, event) the kernel takes or counts as a duplicate, with the next state; every other
 * cell must be the default (local call -> EINVAL, message/timer -> ignored, state kept). Also
 * the actions that matter to the wire, name tables, trace lines and the timer arithmetic. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "emu/ib/cm_mad.h"
#include "emu/ib/cm_state.h"

#define S(x) EMU_CM_##x
#define E(x) EMU_CM_EV_##x
enum { T = 1, D = 2, X = 3 }; /* taken, duplicate, refused (errno in the row) */

static const struct {
	unsigned s, e, next, kind, err;
} expect[] = {
	/* ib_cm_listen, ib_send_cm_req, ib_send_cm_sidr_req: IDLE only */
	{ S(IDLE), E(LISTEN), S(LISTEN), T, 0 },
	{ S(IDLE), E(SEND_REQ), S(REQ_SENT), T, 0 },
	{ S(IDLE), E(SEND_SIDR_REQ), S(SIDR_REQ_SENT), T, 0 },
	/* ib_send_cm_rep: REQ_RCVD, MRA_REQ_SENT */
	{ S(REQ_RCVD), E(SEND_REP), S(REP_SENT), T, 0 },
	{ S(MRA_REQ_SENT), E(SEND_REP), S(REP_SENT), T, 0 },
	/* ib_send_cm_rtu: REP_RCVD, MRA_REP_SENT */
	{ S(REP_RCVD), E(SEND_RTU), S(ESTABLISHED), T, 0 },
	{ S(MRA_REP_SENT), E(SEND_RTU), S(ESTABLISHED), T, 0 },
	/* cm_send_rej_locked */
	{ S(REQ_SENT), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(MRA_REQ_RCVD), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(REQ_RCVD), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(MRA_REQ_SENT), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(REP_RCVD), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(MRA_REP_SENT), E(SEND_REJ), S(IDLE), T, 0 },
	{ S(REP_SENT), E(SEND_REJ), S(TIMEWAIT), T, 0 },
	{ S(MRA_REP_RCVD), E(SEND_REJ), S(TIMEWAIT), T, 0 },
	/* ib_send_cm_mra (LAP not modelled) */
	{ S(REQ_RCVD), E(SEND_MRA), S(MRA_REQ_SENT), T, 0 },
	{ S(REP_RCVD), E(SEND_MRA), S(MRA_REP_SENT), T, 0 },
	/* cm_send_dreq_locked, cm_send_drep_locked, cm_send_sidr_rep_locked */
	{ S(ESTABLISHED), E(SEND_DREQ), S(DREQ_SENT), T, 0 },
	{ S(DREQ_RCVD), E(SEND_DREP), S(TIMEWAIT), T, 0 },
	{ S(SIDR_REQ_RCVD), E(SEND_SIDR_REP), S(IDLE), T, 0 },
	/* cm_establish */
	{ S(REP_SENT), E(ESTABLISH), S(ESTABLISHED), T, 0 },
	{ S(MRA_REP_RCVD), E(ESTABLISH), S(ESTABLISHED), T, 0 },
	{ S(ESTABLISHED), E(ESTABLISH), S(ESTABLISHED), X, EISCONN },
	/* cm_req_handler / cm_sidr_req_handler on the listener; cm_dup_req_handler */
	{ S(LISTEN), E(RECV_REQ), S(LISTEN), T, 0 },
	{ S(LISTEN), E(RECV_SIDR_REQ), S(LISTEN), T, 0 },
	{ S(REQ_RCVD), E(RECV_REQ), S(REQ_RCVD), D, 0 },
	{ S(MRA_REQ_SENT), E(RECV_REQ), S(MRA_REQ_SENT), D, 0 },
	{ S(REP_SENT), E(RECV_REQ), S(REP_SENT), D, 0 },
	{ S(REP_RCVD), E(RECV_REQ), S(REP_RCVD), D, 0 },
	{ S(MRA_REP_SENT), E(RECV_REQ), S(MRA_REP_SENT), D, 0 },
	{ S(MRA_REP_RCVD), E(RECV_REQ), S(MRA_REP_RCVD), D, 0 },
	{ S(ESTABLISHED), E(RECV_REQ), S(ESTABLISHED), D, 0 },
	{ S(DREQ_SENT), E(RECV_REQ), S(DREQ_SENT), D, 0 },
	{ S(DREQ_RCVD), E(RECV_REQ), S(DREQ_RCVD), D, 0 },
	{ S(TIMEWAIT), E(RECV_REQ), S(TIMEWAIT), D, 0 },
	/* cm_mra_handler */
	{ S(REQ_SENT), E(RECV_MRA_REQ), S(MRA_REQ_RCVD), T, 0 },
	{ S(REP_SENT), E(RECV_MRA_REP), S(MRA_REP_RCVD), T, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_MRA_REQ), S(MRA_REQ_RCVD), D, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_MRA_REP), S(MRA_REQ_RCVD), D, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_MRA_OTHER), S(MRA_REQ_RCVD), D, 0 },
	{ S(MRA_REP_RCVD), E(RECV_MRA_REQ), S(MRA_REP_RCVD), D, 0 },
	{ S(MRA_REP_RCVD), E(RECV_MRA_REP), S(MRA_REP_RCVD), D, 0 },
	{ S(MRA_REP_RCVD), E(RECV_MRA_OTHER), S(MRA_REP_RCVD), D, 0 },
	/* cm_rej_handler */
	{ S(REQ_SENT), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(REP_SENT), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(MRA_REP_RCVD), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(REQ_RCVD), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(MRA_REQ_SENT), E(RECV_REJ), S(IDLE), T, 0 },
	{ S(REQ_SENT), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(REP_SENT), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(MRA_REP_RCVD), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(REQ_RCVD), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(MRA_REQ_SENT), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(DREQ_SENT), E(RECV_REJ), S(TIMEWAIT), T, 0 },
	{ S(DREQ_SENT), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(REP_RCVD), E(RECV_REJ), S(TIMEWAIT), T, 0 },
	{ S(REP_RCVD), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(MRA_REP_SENT), E(RECV_REJ), S(TIMEWAIT), T, 0 },
	{ S(MRA_REP_SENT), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	{ S(ESTABLISHED), E(RECV_REJ), S(TIMEWAIT), T, 0 },
	{ S(ESTABLISHED), E(RECV_REJ_STALE), S(TIMEWAIT), T, 0 },
	/* cm_rep_handler, cm_dup_rep_handler */
	{ S(REQ_SENT), E(RECV_REP), S(REP_RCVD), T, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_REP), S(REP_RCVD), T, 0 },
	{ S(REQ_RCVD), E(RECV_REP), S(REQ_RCVD), D, 0 },
	{ S(MRA_REQ_SENT), E(RECV_REP), S(MRA_REQ_SENT), D, 0 },
	{ S(REP_SENT), E(RECV_REP), S(REP_SENT), D, 0 },
	{ S(REP_RCVD), E(RECV_REP), S(REP_RCVD), D, 0 },
	{ S(MRA_REP_SENT), E(RECV_REP), S(MRA_REP_SENT), D, 0 },
	{ S(MRA_REP_RCVD), E(RECV_REP), S(MRA_REP_RCVD), D, 0 },
	{ S(ESTABLISHED), E(RECV_REP), S(ESTABLISHED), D, 0 },
	{ S(DREQ_SENT), E(RECV_REP), S(DREQ_SENT), D, 0 },
	{ S(DREQ_RCVD), E(RECV_REP), S(DREQ_RCVD), D, 0 },
	{ S(TIMEWAIT), E(RECV_REP), S(TIMEWAIT), D, 0 },
	/* cm_rtu_handler: taken in REP_SENT / MRA_REP_RCVD, else counted (ids found by comm ID:
	 * not listeners, not SIDR responders) */
	{ S(REP_SENT), E(RECV_RTU), S(ESTABLISHED), T, 0 },
	{ S(MRA_REP_RCVD), E(RECV_RTU), S(ESTABLISHED), T, 0 },
	{ S(IDLE), E(RECV_RTU), S(IDLE), D, 0 },
	{ S(REQ_SENT), E(RECV_RTU), S(REQ_SENT), D, 0 },
	{ S(REQ_RCVD), E(RECV_RTU), S(REQ_RCVD), D, 0 },
	{ S(MRA_REQ_SENT), E(RECV_RTU), S(MRA_REQ_SENT), D, 0 },
	{ S(MRA_REQ_RCVD), E(RECV_RTU), S(MRA_REQ_RCVD), D, 0 },
	{ S(REP_RCVD), E(RECV_RTU), S(REP_RCVD), D, 0 },
	{ S(MRA_REP_SENT), E(RECV_RTU), S(MRA_REP_SENT), D, 0 },
	{ S(ESTABLISHED), E(RECV_RTU), S(ESTABLISHED), D, 0 },
	{ S(DREQ_SENT), E(RECV_RTU), S(DREQ_SENT), D, 0 },
	{ S(DREQ_RCVD), E(RECV_RTU), S(DREQ_RCVD), D, 0 },
	{ S(TIMEWAIT), E(RECV_RTU), S(TIMEWAIT), D, 0 },
	{ S(SIDR_REQ_SENT), E(RECV_RTU), S(SIDR_REQ_SENT), D, 0 },
	/* cm_dreq_handler */
	{ S(REP_SENT), E(RECV_DREQ), S(DREQ_RCVD), T, 0 },
	{ S(DREQ_SENT), E(RECV_DREQ), S(DREQ_RCVD), T, 0 },
	{ S(ESTABLISHED), E(RECV_DREQ), S(DREQ_RCVD), T, 0 },
	{ S(MRA_REP_RCVD), E(RECV_DREQ), S(DREQ_RCVD), T, 0 },
	{ S(TIMEWAIT), E(RECV_DREQ), S(TIMEWAIT), D, 0 },
	{ S(DREQ_RCVD), E(RECV_DREQ), S(DREQ_RCVD), D, 0 },
	/* cm_drep_handler */
	{ S(DREQ_SENT), E(RECV_DREP), S(TIMEWAIT), T, 0 },
	{ S(DREQ_RCVD), E(RECV_DREP), S(TIMEWAIT), T, 0 },
	/* cm_sidr_rep_handler */
	{ S(SIDR_REQ_SENT), E(RECV_SIDR_REP), S(IDLE), T, 0 },
	/* cm_process_send_error */
	{ S(REQ_SENT), E(RESPONSE_TIMEOUT), S(IDLE), T, 0 },
	{ S(MRA_REQ_RCVD), E(RESPONSE_TIMEOUT), S(IDLE), T, 0 },
	{ S(REP_SENT), E(RESPONSE_TIMEOUT), S(IDLE), T, 0 },
	{ S(MRA_REP_RCVD), E(RESPONSE_TIMEOUT), S(IDLE), T, 0 },
	{ S(DREQ_SENT), E(RESPONSE_TIMEOUT), S(TIMEWAIT), T, 0 },
	{ S(SIDR_REQ_SENT), E(RESPONSE_TIMEOUT), S(IDLE), T, 0 },
	/* cm_timewait_handler */
	{ S(TIMEWAIT), E(TIMEWAIT_EXIT), S(IDLE), T, 0 },
};

static bool listed(unsigned s, unsigned e, size_t *idx)
{
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (expect[i].s == s && expect[i].e == e) {
			*idx = i;
			return true;
		}
	return false;
}

static void test_full_table(void **state)
{
	unsigned cells = 0, taken = 0;

	(void)state;
	for (unsigned s = 0; s < EMU_CM_NSTATES; s++)
		for (unsigned e = 0; e < EMU_CM_NEVENTS; e++) {
			struct emu_cm_trans t;
			unsigned next = 99;
			uint32_t act = 0xdead;
			size_t i;
			int ret;

			assert_int_equal(emu_cm_lookup(s, e, &t), 0);
			ret = emu_cm_transition(s, e, &next, &act);
			cells++;
			if (e == E(DESTROY)) { /* always legal, always ends IDLE */
				assert_int_equal(ret, 0);
				assert_int_equal(next, S(IDLE));
				assert_int_equal(t.disp, EMU_CM_OK);
				continue;
			}
			if (listed(s, e, &i)) {
				if (expect[i].kind == X) {
					assert_int_equal(ret, -(int)expect[i].err);
					assert_int_equal(t.disp, EMU_CM_ERR);
					assert_int_equal(act, 0);
				} else {
					assert_int_equal(ret, 0);
					assert_int_equal(t.disp,
							 expect[i].kind == T ? EMU_CM_OK : EMU_CM_DUP);
					taken++;
				}
				if (next != expect[i].next)
					fail_msg("%s --%s--> %s, want %s", emu_cm_state_name(s),
						 emu_cm_ev_name(e), emu_cm_state_name(next),
						 emu_cm_state_name(expect[i].next));
				/* a duplicate is counted, an event only comes with one */
				assert_int_equal(!!(act & EMU_CM_A_COUNT_DUP), expect[i].kind == D);
				assert_int_equal(t.uevent != EMU_CM_UE_NONE,
						 !!(t.actions & EMU_CM_A_EVENT));
				continue;
			}
			/* the defaults */
			assert_int_equal(next, s);
			if (e < EMU_CM_EV_FIRST_RECV) {
				if (ret != -EINVAL)
					fail_msg("%s --%s--> not refused", emu_cm_state_name(s),
						 emu_cm_ev_name(e));
				assert_int_equal(t.err, EINVAL);
			} else {
				assert_int_equal(ret, 0);
				if (t.disp != EMU_CM_IGNORE)
					fail_msg("%s --%s--> not ignored", emu_cm_state_name(s),
						 emu_cm_ev_name(e));
				assert_int_equal(act, 0);
			}
		}
	assert_int_equal(cells, 16 * EMU_CM_NEVENTS);
	print_message("%u cells, %u taken or duplicate\n", cells, taken);
}

/* The actions that put messages on the wire or arm timers. */
static void test_actions(void **state)
{
	uint32_t a;
	unsigned n;

	(void)state;
	emu_cm_transition(S(IDLE), E(SEND_REQ), &n, &a);
	assert_int_equal(a, EMU_CM_A_SEND | EMU_CM_A_EXPECT_REPLY);
	emu_cm_transition(S(REQ_RCVD), E(SEND_RTU), &n, &a); /* refused */
	assert_int_equal(a, 0);
	emu_cm_transition(S(REP_RCVD), E(SEND_RTU), &n, &a); /* RTU expects nothing */
	assert_int_equal(a, EMU_CM_A_SEND);
	emu_cm_transition(S(REQ_SENT), E(RECV_REP), &n, &a);
	assert_true(a & EMU_CM_A_CANCEL);
	emu_cm_transition(S(REQ_SENT), E(RECV_MRA_REQ), &n, &a);
	assert_true(a & EMU_CM_A_EXTEND_TIMER);
	emu_cm_transition(S(MRA_REQ_SENT), E(RECV_REQ), &n, &a);
	assert_true(a & EMU_CM_A_RESEND_MRA);
	emu_cm_transition(S(ESTABLISHED), E(RECV_REP), &n, &a);
	assert_true(a & EMU_CM_A_RESEND_RTU);
	emu_cm_transition(S(MRA_REP_SENT), E(RECV_REP), &n, &a);
	assert_true(a & EMU_CM_A_RESEND_MRA);
	emu_cm_transition(S(TIMEWAIT), E(RECV_REQ), &n, &a);
	assert_true(a & EMU_CM_A_REJ_STALE);
	emu_cm_transition(S(TIMEWAIT), E(RECV_DREQ), &n, &a);
	assert_true(a & EMU_CM_A_RESEND_DREP);
	emu_cm_transition(S(REQ_SENT), E(DESTROY), &n, &a);
	assert_int_equal(a, EMU_CM_A_CANCEL | EMU_CM_A_REJ_TIMEOUT | EMU_CM_A_RESET);
	emu_cm_transition(S(REQ_RCVD), E(DESTROY), &n, &a);
	assert_true(a & EMU_CM_A_REJ_CONSUMER);
	emu_cm_transition(S(ESTABLISHED), E(DESTROY), &n, &a);
	assert_int_equal(a, EMU_CM_A_SEND_DREQ | EMU_CM_A_CANCEL);
	emu_cm_transition(S(DREQ_RCVD), E(DESTROY), &n, &a);
	assert_int_equal(a, EMU_CM_A_SEND_DREP);
	emu_cm_transition(S(SIDR_REQ_RCVD), E(DESTROY), &n, &a);
	assert_int_equal(a, EMU_CM_A_SIDR_REJECT);
	emu_cm_transition(S(DREQ_RCVD), E(SEND_DREP), &n, &a);
	assert_true(a & EMU_CM_A_TIMEWAIT);
	emu_cm_transition(S(LISTEN), E(RECV_REQ), &n, &a);
	assert_true(a & EMU_CM_A_NEW_ID);

	struct emu_cm_trans t;
	emu_cm_lookup(S(REQ_SENT), E(RESPONSE_TIMEOUT), &t);
	assert_int_equal(t.uevent, EMU_CM_UE_REQ_ERROR);
	emu_cm_lookup(S(LISTEN), E(RECV_REQ), &t);
	assert_int_equal(t.uevent, EMU_CM_UE_REQ_RECEIVED);
	emu_cm_lookup(S(TIMEWAIT), E(TIMEWAIT_EXIT), &t);
	assert_int_equal(t.uevent, EMU_CM_UE_TIMEWAIT_EXIT);
	emu_cm_lookup(S(DREQ_SENT), E(RESPONSE_TIMEOUT), &t);
	assert_int_equal(t.uevent, EMU_CM_UE_DREQ_ERROR);

	char buf[256];
	assert_string_equal(emu_cm_actions_str(EMU_CM_A_CANCEL | EMU_CM_A_EVENT, buf, sizeof(buf)),
			    "CANCEL|EVENT");
	assert_string_equal(emu_cm_actions_str(0, buf, sizeof(buf)), "");
	assert_string_equal(emu_cm_actions_str(EMU_CM_A_UNLISTEN, buf, 4), ""); /* too short */
}

static void test_errors_and_names(void **state)
{
	unsigned n;
	uint32_t a;
	struct emu_cm_trans t;

	(void)state;
	/* the errnos of refused calls */
	assert_int_equal(emu_cm_transition(S(IDLE), E(SEND_REP), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(REQ_SENT), E(SEND_REQ), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(LISTEN), E(LISTEN), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(ESTABLISHED), E(SEND_DREP), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(TIMEWAIT), E(SEND_REQ), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(ESTABLISHED), E(SEND_MRA), &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(S(ESTABLISHED), E(ESTABLISH), &n, &a), -EISCONN);
	assert_int_equal(n, S(ESTABLISHED));
	assert_int_equal(emu_cm_transition(16, 0, &n, &a), -EINVAL);
	assert_int_equal(emu_cm_transition(0, EMU_CM_NEVENTS, NULL, NULL), -EINVAL);
	assert_int_equal(emu_cm_lookup(0, 0, NULL), -EINVAL);

	static const char *const states[] = {
		"IDLE", "LISTEN", "REQ_SENT", "REQ_RCVD", "MRA_REQ_SENT", "MRA_REQ_RCVD",
		"REP_SENT", "REP_RCVD", "MRA_REP_SENT", "MRA_REP_RCVD", "ESTABLISHED",
		"DREQ_SENT", "DREQ_RCVD", "TIMEWAIT", "SIDR_REQ_SENT", "SIDR_REQ_RCVD",
	};
	for (unsigned s = 0; s < 16; s++)
		assert_string_equal(emu_cm_state_name(s), states[s]);
	assert_string_equal(emu_cm_state_name(16), "?");
	for (unsigned e = 0; e < EMU_CM_NEVENTS; e++)
		assert_string_not_equal(emu_cm_ev_name(e), "?");
	assert_string_equal(emu_cm_ev_name(E(RECV_REJ_STALE)), "REJ(stale)");
	assert_string_equal(emu_cm_ev_name(EMU_CM_NEVENTS), "?");
	for (int u = 0; u < EMU_CM_NUEVENTS; u++)
		assert_non_null(strstr(emu_cm_uevent_name(u), "IB_CM_"));
	assert_string_equal(emu_cm_uevent_name(EMU_CM_UE_NONE), "IB_CM_NONE");
	assert_string_equal(emu_cm_uevent_name(EMU_CM_UE_SIDR_REP_RECEIVED),
			    "IB_CM_SIDR_REP_RECEIVED");
	assert_string_equal(emu_cm_uevent_name(99), "?");
	/* every cell's next state and uevent are in range */
	for (unsigned s = 0; s < EMU_CM_NSTATES; s++)
		for (unsigned e = 0; e < EMU_CM_NEVENTS; e++) {
			emu_cm_lookup(s, e, &t);
			assert_true(t.next < EMU_CM_NSTATES);
			assert_true(t.uevent >= EMU_CM_UE_NONE && t.uevent < EMU_CM_NUEVENTS);
		}
}

static void test_trace(void **state)
{
	char buf[128];

	(void)state;
	emu_cm_trace_fmt(buf, sizeof(buf), 0x1234, S(REQ_SENT), E(RECV_REP));
	assert_string_equal(buf, "cm 0x1234: REQ_SENT --REP--> REP_RCVD");
	emu_cm_trace_fmt(buf, sizeof(buf), 0xabc, S(ESTABLISHED), E(RECV_REP));
	assert_string_equal(buf, "cm 0xabc: ESTABLISHED --REP--> ESTABLISHED (dup)");
	emu_cm_trace_fmt(buf, sizeof(buf), 1, S(IDLE), E(SEND_REP));
	assert_string_equal(buf, "cm 0x1: IDLE --send_rep--> IDLE (EINVAL)");
	emu_cm_trace_fmt(buf, sizeof(buf), 1, S(ESTABLISHED), E(ESTABLISH));
	assert_string_equal(buf, "cm 0x1: ESTABLISHED --establish--> ESTABLISHED (EISCONN)");
	emu_cm_trace_fmt(buf, sizeof(buf), 1, S(IDLE), E(RECV_DREP));
	assert_string_equal(buf, "cm 0x1: IDLE --DREP--> IDLE (ignored)");
	emu_cm_trace_fmt(buf, sizeof(buf), 2, S(DREQ_SENT), E(RESPONSE_TIMEOUT));
	assert_string_equal(buf, "cm 0x2: DREQ_SENT --response_timeout--> TIMEWAIT");
	emu_cm_trace_fmt(buf, sizeof(buf), 2, 20, 0);
	assert_string_equal(buf, "cm 0x2: ? --listen--> ? (invalid)");
}

/* A whole connection and teardown, walked through the table like the agent will. */
static void test_walks(void **state)
{
	static const struct {
		unsigned ev, want;
	} active[] = {
		{ E(SEND_REQ), S(REQ_SENT) },	    { E(RECV_MRA_REQ), S(MRA_REQ_RCVD) },
		{ E(RECV_REP), S(REP_RCVD) },	    { E(SEND_RTU), S(ESTABLISHED) },
		{ E(RECV_REP), S(ESTABLISHED) },    { E(SEND_DREQ), S(DREQ_SENT) },
		{ E(RECV_DREP), S(TIMEWAIT) },	    { E(TIMEWAIT_EXIT), S(IDLE) },
	}, passive[] = {
		{ E(SEND_MRA), S(MRA_REQ_SENT) },  { E(RECV_REQ), S(MRA_REQ_SENT) },
		{ E(SEND_REP), S(REP_SENT) },	    { E(RECV_RTU), S(ESTABLISHED) },
		{ E(RECV_DREQ), S(DREQ_RCVD) },    { E(SEND_DREP), S(TIMEWAIT) },
		{ E(RECV_DREQ), S(TIMEWAIT) },	    { E(TIMEWAIT_EXIT), S(IDLE) },
	};
	unsigned s = S(IDLE);

	(void)state;
	for (size_t i = 0; i < sizeof(active) / sizeof(active[0]); i++) {
		assert_int_equal(emu_cm_transition(s, active[i].ev, &s, NULL), 0);
		assert_int_equal(s, active[i].want);
	}
	s = S(REQ_RCVD);
	for (size_t i = 0; i < sizeof(passive) / sizeof(passive[0]); i++) {
		assert_int_equal(emu_cm_transition(s, passive[i].ev, &s, NULL), 0);
		assert_int_equal(s, passive[i].want);
	}
}

static void test_miss_table(void **state)
{
	(void)state;
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_REQ_NO_LISTENER].reply_attr,
			 EMU_CM_ATTR_REJ);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_REQ_NO_LISTENER].reason,
			 EMU_CM_REJ_INVALID_SERVICE_ID);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_REQ_NO_LISTENER].msg_rejected,
			 EMU_CM_MSG_RESPONSE_REQ);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_REQ_STALE].reason, EMU_CM_REJ_STALE_CONN);
	assert_true(emu_cm_miss_table[EMU_CM_MISS_REQ_STALE].dreq_old);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_REP_STALE].msg_rejected,
			 EMU_CM_MSG_RESPONSE_REP);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_DREQ_NO_ID].reply_attr, EMU_CM_ATTR_DREP);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_SIDR_NO_LISTENER].reply_attr,
			 EMU_CM_ATTR_SIDR_REP);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_SIDR_NO_LISTENER].reason,
			 EMU_CM_SIDR_UNSUPPORTED);
	assert_int_equal(emu_cm_miss_table[EMU_CM_MISS_OTHER].reply_attr, 0);
	for (unsigned i = 0; i < EMU_CM_NMISS; i++)
		assert_non_null(emu_cm_miss_table[i].name);
}

static void test_timers(void **state)
{
	(void)state;
	assert_int_equal(emu_cm_timeout_ns(0), 4096);
	assert_int_equal(emu_cm_timeout_ns(20), 4294967296ull); /* 4.29 s */
	assert_int_equal(emu_cm_timeout_ns(31), 4096ull << 31);
	assert_int_equal(emu_cm_timeout_ns(32), 0);
	assert_int_equal(emu_cm_convert_to_ms(0), 1);
	assert_int_equal(emu_cm_convert_to_ms(8), 1);
	assert_int_equal(emu_cm_convert_to_ms(9), 2);
	assert_int_equal(emu_cm_convert_to_ms(20), 4096);
	assert_int_equal(emu_cm_convert_to_ms(24), 65536);
	/* cm_ack_timeout, worked by hand */
	assert_int_equal(emu_cm_ack_timeout(15, 16), 17); /* rxe, RoCE: 17 >= 15, 15 < 16 */
	assert_int_equal(emu_cm_ack_timeout(16, 16), 18); /* 17 >= 16 and 16 >= 16: +1 */
	assert_int_equal(emu_cm_ack_timeout(20, 16), 20); /* 17 < 20, 17 >= 19? no: 20 + 0 */
	assert_int_equal(emu_cm_ack_timeout(18, 16), 19); /* 17 < 18, 17 >= 17: 18 + 1 */
	assert_int_equal(emu_cm_ack_timeout(0, 0), 2);	  /* 1 >= 0, 0 >= 0: +1 */
	assert_int_equal(emu_cm_ack_timeout(31, 31), 31);
	assert_int_equal(emu_cm_ack_timeout(1, 0), 2);
	/* RoCE REQ on rxe: 2 * 256 + 4096 ms per try, 16 tries */
	assert_int_equal(emu_cm_req_timeout_ms(EMU_CMA_IBOE_PACKET_LIFETIME,
					       EMU_CMA_CM_RESPONSE_TIMEOUT), 4608);
	assert_int_equal(emu_cm_mra_timeout_ms(24, 17), 65536 + 512);
	assert_int_equal(emu_cm_timewait_ms(17), 512);
	assert_int_equal(EMU_CMA_MAX_CM_RETRIES, 15);
	assert_int_equal(EMU_CMA_CM_MRA_SETTING, 0x98);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_table),   cmocka_unit_test(test_actions),
		cmocka_unit_test(test_errors_and_names), cmocka_unit_test(test_trace),
		cmocka_unit_test(test_walks),	      cmocka_unit_test(test_miss_table),
		cmocka_unit_test(test_timers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
