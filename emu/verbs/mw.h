/* Memory windows (rxe_mw.c, Linux 6.1): the verbs (alloc / dealloc / bind) and what the data
 * path asks of them (emu/verbs/mw.c). A window is an object of the HCA's MW pool: its rkey is
 * index << 8 | a key byte, type 1 windows are VALID from allocation and bound with
 * ibv_bind_mw (which rdma-core's rxe provider turns into a BIND_MW WR), type 2 windows are FREE
 * until a BIND_MW WR binds them to the posting QP, and are invalidated by LOCAL_INV or a
 * remote SEND_WITH_INV. Measured on kernel rxe: probes/verbs/verbs_probe_mw.c. */
#ifndef RDMAEMU_EMU_VERBS_MW_H
#define RDMAEMU_EMU_VERBS_MW_H

#include "emu/verbs/datapath.h"

/* rxe's enum rxe_mw_state */
enum emu_mw_state { EMU_MW_INVALID, EMU_MW_FREE, EMU_MW_VALID };
const char *emu_mw_state_name(enum emu_mw_state s);

/* The provider ops (ctx->ops.alloc_mw, dealloc_mw, bind_mw). */
struct ibv_mw *emu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int emu_dealloc_mw(struct ibv_mw *mw);
int emu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);

/* Data path (engine lock held). rxe_bind_mw() for a BIND_MW WQE of q: 0, or -EINVAL /
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
/* Whether a window is bound to mr (rxe's mr->num_mw): dereg then fails with EINVAL. */
bool emu_mw_mr_bound(const struct emu_mr *mr);

#endif
