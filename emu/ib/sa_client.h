/* The SA client (the kernel's sa_query.c in miniature): asynchronous SA queries from a host's
 * IB port to the SM over the MAD layer (emu/ib/gsi.h), with timeouts and retries on the virtual
 * clock, for the rdma_cm model (route resolution), lib/ (RAI_SA) and the neighbour layer's
 * IPoIB path records (emu/net/neigh_path.c).
 *
 * A query is one SA request MAD: method, attribute, component mask and one record (packed
 * from its struct by the record tables of emu/ib/mad.h) to the port's SM LID and SL, P_Key the
 * default partition's, TID from the client agent (hi_tid << 32 | counter). Its callback runs
 * once, from the engine (never inside the call that started it), with the kernel's statuses:
 *   0           the SA answered with MAD status 0: the records (1 for Get/Set/Delete, all of a
 *               GetTable) unpacked into structs of the attribute (emu_sa_path_rec, ...);
 *   -EINVAL     the SA answered with a non-zero MAD status (mad_status has it: BUSY, an SA
 *               error code...), no records (sa_query.c's recv_handler);
 *   -ETIMEDOUT  no answer after (retries + 1) * timeout_ms (IB_WC_RESP_TIMEOUT_ERR);
 *   -EINTR      cancelled (IB_WC_WR_FLUSH_ERR);
 *   -EIO, -ECONNABORTED  the wire refused the request, the SA aborted its RMPP answer.
 * Starting a query fails synchronously with -ENODEV (not an IB port of the fabric: RoCE ports
 * have no SA), -EAGAIN (the port knows no SM: its SM LID is 0, as sa_query.c without an
 * sm_ah), -EINVAL, -ENOMEM.
 *
 * The first query of a process starts the fabric's SA agent (emu/ib/sa_agent.h) too: in
 * in-process hosting the whole subnet, SM included, lives in the process.
 * Lock held for every call. */
#ifndef RDMAEMU_EMU_SA_CLIENT_H
#define RDMAEMU_EMU_SA_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/ib/mad.h"

struct emu_engine;
struct emu_sa_query;

/* Which port asks: indices into the fabric (host, device) and the 1-based port number. */
struct emu_sa_client_port {
	size_t host, dev;
	unsigned port;
};

struct emu_sa_query_opts {
	uint32_t timeout_ms; /* 0: EMU_SA_QUERY_TIMEOUT_MS_DEFAULT */
	unsigned retries;    /* sends after the first (Linux 6.1's sa_query: 0) */
};
#define EMU_SA_QUERY_TIMEOUT_MS_DEFAULT 1000

/* recs: nrecs structs of the attribute's record type (rec_size bytes each), valid during
 * the call. */
typedef void emu_sa_query_cb(struct emu_sa_query *q, int status, uint16_t mad_status,
			     const void *recs, size_t nrecs, size_t rec_size, void *ctx);

/* The generic query: method (Get, GetTable, Set, Delete) on the attribute of `desc` with one
 * record `rec` (a struct of desc's type) and its component mask. Returns the query, or NULL
 * with *err (may be NULL) set. */
struct emu_sa_query *emu_sa_query(struct emu_engine *e, const struct emu_sa_client_port *from,
				  uint8_t method, const struct emu_mad_record_desc *desc,
				  const void *rec, uint64_t comp_mask,
				  const struct emu_sa_query_opts *opts, emu_sa_query_cb *cb,
				  void *ctx, int *err);
/* Completes the query now with -EINTR (ib_sa_cancel_query). */
void emu_sa_query_cancel(struct emu_sa_query *q);

/* PathRecord Get (table false: one record) or GetTable (all, up to NumbPath when its mask bit
 * is set), as ib_sa_path_rec_get with the mask the caller built (SGID/DGID or SLID/DLID,
 * NumbPath, Reversible, P_Key, SL, ...). */
struct emu_sa_query *emu_sa_path_query(struct emu_engine *e, const struct emu_sa_client_port *from,
				       const struct emu_sa_path_rec *rec, uint64_t comp_mask,
				       bool table, const struct emu_sa_query_opts *opts,
				       emu_sa_query_cb *cb, void *ctx, int *err);
/* MCMemberRecord Set (join) / Delete (leave), as ib_sa_mcmember_rec_query. */
struct emu_sa_query *emu_sa_mcmember_join(struct emu_engine *e,
					  const struct emu_sa_client_port *from,
					  const struct emu_sa_mcmember_rec *rec, uint64_t comp_mask,
					  const struct emu_sa_query_opts *opts,
					  emu_sa_query_cb *cb, void *ctx, int *err);
struct emu_sa_query *emu_sa_mcmember_leave(struct emu_engine *e,
					   const struct emu_sa_client_port *from,
					   const struct emu_sa_mcmember_rec *rec, uint64_t comp_mask,
					   const struct emu_sa_query_opts *opts,
					   emu_sa_query_cb *cb, void *ctx, int *err);
/* ServiceRecord: method EMU_MAD_METHOD_SET / GET / GET_TABLE / DELETE. */
struct emu_sa_query *emu_sa_service_query(struct emu_engine *e,
					  const struct emu_sa_client_port *from, uint8_t method,
					  const struct emu_sa_service_rec *rec, uint64_t comp_mask,
					  const struct emu_sa_query_opts *opts,
					  emu_sa_query_cb *cb, void *ctx, int *err);

#endif
