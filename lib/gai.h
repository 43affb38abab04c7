/* The parts of rdma_getaddrinfo that talk to services: RAI_SA (the subnet administrator) and
 * ibacm. */
#ifndef RDMAEMU_LIB_GAI_H
#define RDMAEMU_LIB_GAI_H

#include <stdbool.h>
#include <rdma/rdma_cma.h>

#include "emu/sim/fabric.h"

/* RAI_SA lookup of `service` (spec §4.6); node/RAI_DNS were already refused by the caller. */
int cma_gai_sa(const struct emu_host *h, const char *service, struct rdma_addrinfo **res);

struct cma_id_private;
/* RESOLVE_IB_SERVICE for `service` (numeric: a ServiceID, else a ServiceName) on the bound id:
 * 0 or -1 with errno (the kernel's answer to the command). */
int cma_resolve_ib_service(struct cma_id_private *id_priv, const char *service);
/* After ADDRINFO_RESOLVED: the kernel's records as an AF_IB list (no ai_src_addr). 0, or -1
 * with errno (ENOENT: no records; the QUERY's error). */
int cma_query_ib_service(struct cma_id_private *id_priv, struct rdma_addrinfo **res);

/* ibacm's part of an active lookup (spec §4.5): nothing unless the host runs ibacm. With a
 * route and an AF_IB-capable kernel, *rai gets the AF_IB entry in front (cma_resolve_af_ib). */
void cma_acm_resolve(const struct emu_host *h, struct rdma_addrinfo **rai,
		     const struct rdma_addrinfo *hints);
/* The same through an ibacm server named by RDMAEMU_IBACM_PORT_FILE / RDMAEMU_IBACM_SERVER_PATH
 * (lib/acm_sock.c, the acm.h protocol). false: no server is named (use cma_acm_resolve). */
bool cma_acm_sock_resolve(struct rdma_addrinfo **rai, const struct rdma_addrinfo *hints);
/* ucma_resolve_af_ib (lib/gai_afib.c): prepends to *rai, whose ai_route is not empty, its AF_IB
 * twin; on failure *rai is left alone. */
void cma_resolve_af_ib(struct rdma_addrinfo **rai);

#endif
