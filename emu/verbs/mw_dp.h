/* Memory windows in the data path (emu/verbs/mw_dp.c): the window object, the BIND_MW and
 * invalidate operations of the requester and responder, and the responder's R_Key check.
 * The verbs that make and free windows are in emu/verbs/mw.h. */
#ifndef RDMAEMU_EMU_VERBS_MW_DP_H
#define RDMAEMU_EMU_VERBS_MW_DP_H

#include "emu/verbs/datapath.h"

/* rxe's enum rxe_mw_state */
enum emu_mw_state { EMU_MW_INVALID, EMU_MW_FREE, EMU_MW_VALID };
const char *emu_mw_state_name(enum emu_mw_state s);

struct emu_vmw {
	struct ibv_mw mw;
	struct emu_obj obj;
	struct emu_pd *pd;
	enum emu_mw_state state;
	uint32_t rkey;           /* the kernel's key (ibv_mw.rkey is the application's copy) */
	struct emu_mr *mr;       /* bound to (rxe: mw->mr, counted in mr->num_mw) */
	struct emu_vqp *qp;      /* type 2: the QP that bound it, with its QPN (the pointer */
	uint32_t qpn;            /* alone could be a later QP's at the same address) */
	uint64_t addr, length;
	unsigned access;
	struct emu_list link;    /* in the list of every window (emu/verbs/mw.c) */
};

/* rxe_bind_mw() for a BIND_MW WQE of q: 0, or -EINVAL /
 * -EOPNOTSUPP (the WQE then completes with IBV_WC_MW_BIND_ERR). */
int emu_mw_bind_wqe(struct emu_vqp *q, const struct emu_swqe *w);
/* rxe's invalidate_rkey(): an MW's rkey (rxe_invalidate_mw: a bound type 2 window goes back
 * to FREE) or an MR's (rxe_invalidate_mr: never for a user MR, the only kind here): 0 or
 * -EINVAL. */
int emu_mw_invalidate(struct emu_vqp *q, uint32_t rkey);
/* The responder's R_Key check (rxe_resp.c check_rkey): an rkey of a window (its QP for type 2,
 * PD, state, access; then the range within the window's MR, as rxe checks it) or of an MR
 * (emu_hca_mr_check). *host as emu_hca_mr_check's. */
enum emu_mr_status emu_dp_rkey_check(struct emu_vqp *q, uint32_t rkey, uint64_t va, uint64_t len,
				     unsigned needed, void **host);

#endif
