/* The QP state machine as data: the kernel's qp_state_table and ib_modify_qp_is_ok()
 * (drivers/infiniband/core/verbs.c, Linux 6.1), for the QP types rxe creates (RC, UC, UD).
 * rxe_qp_chk_attr() asks exactly this before any value check, so a missing required or an
 * unexpected attribute is EINVAL. */
#include "config.h"

#include "emu/verbs/objects.h"

enum { T_RC, T_UC, T_UD, T_N };

struct transition {
	bool valid;
	unsigned req[T_N], opt[T_N];
};

#define S(x) IBV_QPS_##x
#define M(x) IBV_QP_##x

static const struct transition table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.req = { [T_UD] = M(PKEY_INDEX) | M(PORT) | M(QKEY),
				 [T_UC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				 [T_RC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) } },
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(INIT)] = { .valid = true,
			.opt = { [T_UD] = M(PKEY_INDEX) | M(PORT) | M(QKEY),
				 [T_UC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				 [T_RC] = M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) } },
		[S(RTR)] = { .valid = true,
			.req = { [T_UC] = M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN),
				 [T_RC] = M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
					  M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER) },
			.opt = { [T_UD] = M(PKEY_INDEX) | M(QKEY),
				 [T_UC] = M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX),
				 [T_RC] = M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) } },
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.req = { [T_UD] = M(SQ_PSN),
				 [T_UC] = M(SQ_PSN),
				 [T_RC] = M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(SQ_PSN) |
					  M(MAX_QP_RD_ATOMIC) },
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
					  M(PATH_MIG_STATE) | M(MIN_RNR_TIMER) } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_UD] = M(EN_SQD_ASYNC_NOTIFY), [T_UC] = M(EN_SQD_ASYNC_NOTIFY),
				 [T_RC] = M(EN_SQD_ASYNC_NOTIFY) } },
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
		[S(SQD)] = { .valid = true,
			.opt = { [T_UD] = M(PKEY_INDEX) | M(QKEY),
				 [T_UC] = M(AV) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) |
					  M(PATH_MIG_STATE),
				 [T_RC] = M(PORT) | M(AV) | M(TIMEOUT) | M(RETRY_CNT) |
					  M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
					  M(MAX_DEST_RD_ATOMIC) | M(ALT_PATH) | M(ACCESS_FLAGS) |
					  M(PKEY_INDEX) | M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) } },
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
		[S(RTS)] = { .valid = true,
			.opt = { [T_UD] = M(CUR_STATE) | M(QKEY),
				 [T_UC] = M(CUR_STATE) | M(ACCESS_FLAGS) } },
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = true },
		[S(ERR)] = { .valid = true },
	},
};

static const char *const state_names[IBV_QPS_ERR + 1] = {
	[S(RESET)] = "RESET", [S(INIT)] = "INIT", [S(RTR)] = "RTR", [S(RTS)] = "RTS",
	[S(SQD)] = "SQD", [S(SQE)] = "SQE", [S(ERR)] = "ERR",
};

const char *emu_qp_state_name(enum ibv_qp_state s)
{
	return (unsigned)s <= IBV_QPS_ERR ? state_names[s] : "UNKNOWN";
}

bool emu_qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, enum ibv_qp_type type,
			 unsigned mask)
{
	const struct transition *t;
	int ti;

	if ((unsigned)cur > IBV_QPS_ERR || (unsigned)next > IBV_QPS_ERR)
		return false;
	switch (type) {
	case IBV_QPT_RC: ti = T_RC; break;
	case IBV_QPT_UC: ti = T_UC; break;
	case IBV_QPT_UD: ti = T_UD; break;
	default: return false;
	}
	if (mask & IBV_QP_CUR_STATE && cur != S(RTR) && cur != S(RTS) && cur != S(SQD) &&
	    cur != S(SQE))
		return false;
	t = &table[cur][next];
	if (!t->valid)
		return false;
	if ((mask & t->req[ti]) != t->req[ti])
		return false;
	if (mask & ~(t->req[ti] | t->opt[ti] | IBV_QP_STATE))
		return false;
	return true;
}
