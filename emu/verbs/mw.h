/* Memory windows (rxe_mw.c, Linux 6.1): the verbs (alloc / dealloc / bind, emu/verbs/mw.c);
 * what the data path asks of them is in emu/verbs/mw_dp.h. A window is an object of the
 * HCA's MW pool: its rkey is index << 8 | a key byte, type 1 windows are VALID from
 * allocation and bound with ibv_bind_mw (which rdma-core's rxe provider turns into a BIND_MW
 * WR), type 2 windows are FREE until a BIND_MW WR binds them to the posting QP, and are
 * invalidated by LOCAL_INV or a remote SEND_WITH_INV. Measured on kernel rxe:
 * probes/verbs/verbs_probe_mw.c. */
#ifndef RDMAEMU_EMU_VERBS_MW_H
#define RDMAEMU_EMU_VERBS_MW_H

#include "emu/verbs/objects.h"

/* The provider ops (ctx->ops.alloc_mw, dealloc_mw, bind_mw). */
struct ibv_mw *emu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int emu_dealloc_mw(struct ibv_mw *mw);
int emu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);

/* Whether a window is bound to mr (rxe's mr->num_mw): dereg then fails with EINVAL. */
bool emu_mw_mr_bound(const struct emu_mr *mr);

#endif
