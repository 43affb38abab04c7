/* RESOLVE_IB_SERVICE: the kernel's rdma_resolve_ib_service (the 2025 patches "RDMA/cma:
 * Support IB service record resolution" and "RDMA/ucma: Support query resolved service
 * records"; no 6.1 kernel has it, spec §3.4).
 *
 * An id bound to an IB device (ADDR_BOUND, with a device) moves to ADDRINFO_QUERY and asks the
 * SA for ServiceRecords: GetTable with ServiceID and/or ServiceName in the mask as the flags
 * say, 2000 ms, no retries (ib_sa_service_rec_get through the SA client on the wire, so the
 * SA's faults apply). Outcome, queued as an event:
 *   records      -> ADDRINFO_RESOLVED (status 0, no parameters); the records are kept for
 *                   QUERY IB_SERVICE, the destination becomes an AF_IB address of the first
 *                   one (GID, P_Key, sid = its ServiceID);
 *   SA error     -> ADDRINFO_ERROR, status -EINVAL (a MAD status; sa_query's rmpp path);
 *   no answer    -> ADDRINFO_ERROR, status -ETIMEDOUT;
 *   no records   -> ADDRINFO_ERROR, status -ENODATA (ib_sa_service_rec_callback counts none);
 * and the id back to ADDR_BOUND on errors. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/rdma_cm/cma.h"
#include "emu/sim/engine.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_client.h"
#include "util/failcall.h"

#define SVC_TIMEOUT_MS 2000 /* cma_resolve_ib_service */

struct svc_req {
	struct emu_cma_id *id; /* NULL once the id is gone */
	struct emu_sa_query *q;
};

static size_t host_index(const struct emu_host *h)
{
	const struct emu_fabric *f = emu_process_fabric();

	return (size_t)(h - f->hosts);
}

static void svc_fail(struct emu_cma_id *id, int status)
{
	emu_cma_trace("cma %u: service record query failed (%d)", id->handle, status);
	if (emu_cma_comp_exch(id, EMU_CMA_ADDRINFO_QUERY, EMU_CMA_ADDR_BOUND))
		emu_cma_event(id, NULL, EMU_CMA_EVENT_ADDRINFO_ERROR, status, NULL);
}

static void svc_done(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		     size_t nrecs, size_t rec_size, void *ctx)
{
	struct svc_req *r = ctx;
	struct emu_cma_id *id = r->id;
	struct emu_sockaddr_ib *sib;
	const struct emu_sa_service_rec *first = recs;

	(void)q;
	(void)mad_status;
	(void)rec_size;
	r->q = NULL;
	if (!id) {
		free(r);
		return;
	}
	id->net[EMU_CMA_NET_SVC] = NULL;
	free(r);
	if (!status && !nrecs)
		status = -ENODATA;
	if (!status && id->service_recs)
		status = -EALREADY;
	if (status) {
		svc_fail(id, status);
		return;
	}
	id->service_recs = emu_calloc(nrecs, sizeof(*id->service_recs));
	if (!id->service_recs) {
		svc_fail(id, -ENOMEM);
		return;
	}
	for (size_t i = 0; i < nrecs; i++)
		emu_mad_record_pack(&emu_sa_service_rec_desc,
				    (const struct emu_sa_service_rec *)recs + i,
				    id->service_recs[i]);
	id->nservice_recs = (unsigned)nrecs;
	/* the first record is the destination */
	memset(&id->dst, 0, sizeof(id->dst));
	sib = (struct emu_sockaddr_ib *)&id->dst;
	sib->sib_family = 27; /* AF_IB */
	memcpy(sib->sib_addr, first->gid, 16);
	sib->sib_pkey = htons(first->pkey);
	sib->sib_sid = htobe64(first->id);
	memcpy(id->dgid, first->gid, 16);
	id->pkey = first->pkey;
	emu_cma_trace("cma %u: %zu service record(s)", id->handle, nrecs);
	if (emu_cma_comp_exch(id, EMU_CMA_ADDRINFO_QUERY, EMU_CMA_ADDRINFO_RESOLVED))
		emu_cma_event(id, NULL, EMU_CMA_EVENT_ADDRINFO_RESOLVED, 0, NULL);
}

int emu_cma_resolve_ib_service(struct emu_cma_id *id, uint64_t service_id, const uint8_t name[64],
			       uint32_t flags)
{
	struct emu_sa_query_opts opts = { SVC_TIMEOUT_MS, 0 };
	struct emu_sa_client_port from;
	struct emu_sa_service_rec sr;
	const struct emu_port *p;
	uint64_t mask = 0;
	struct svc_req *r;
	int err = -ENOMEM;

	if (id->dev < 0 || !emu_cma_comp_exch(id, EMU_CMA_ADDR_BOUND, EMU_CMA_ADDRINFO_QUERY))
		return -EINVAL;
	p = &id->host->devices[id->dev].ports[id->port - 1];
	if (p->link_layer != 1) { /* rdma_cap_ib_sa: IBV_LINK_LAYER_INFINIBAND */
		err = -EOPNOTSUPP;
		goto err;
	}
	memset(&sr, 0, sizeof(sr));
	if (flags & EMU_CMA_IB_SERVICE_FLAG_ID) {
		sr.id = service_id;
		mask |= EMU_SR_COMP_ID;
	}
	if (flags & EMU_CMA_IB_SERVICE_FLAG_NAME) {
		/* strscpy: at most 63 characters and a NUL */
		memcpy(sr.name, name, sizeof(sr.name) - 1);
		sr.name[sizeof(sr.name) - 1] = 0;
		mask |= EMU_SR_COMP_NAME;
	}
	r = emu_calloc(1, sizeof(*r));
	if (!r)
		goto err;
	r->id = id;
	from.host = host_index(id->host);
	from.dev = (size_t)id->dev;
	from.port = id->port;
	r->q = emu_sa_service_query(emu_engine_get(), &from, EMU_MAD_METHOD_GET_TABLE, &sr, mask,
				    &opts, svc_done, r, &err);
	if (!r->q) {
		free(r);
		goto err;
	}
	id->net[EMU_CMA_NET_SVC] = r;
	return 0;
err:
	emu_cma_comp_exch(id, EMU_CMA_ADDRINFO_QUERY, EMU_CMA_ADDR_BOUND);
	return err;
}

void emu_cma_svc_destroy(struct emu_cma_id *id)
{
	struct svc_req *r = id->net[EMU_CMA_NET_SVC];

	if (r) {
		id->net[EMU_CMA_NET_SVC] = NULL;
		r->id = NULL;
		if (r->q)
			emu_sa_query_cancel(r->q); /* its callback frees r */
		else
			free(r);
	}
	free(id->service_recs);
	id->service_recs = NULL;
	id->nservice_recs = 0;
}
