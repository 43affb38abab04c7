/* The parts of rdma_getaddrinfo that talk to services: RAI_SA (the subnet administrator) and
 * ibacm. */
#ifndef RDMAEMU_LIB_GAI_H
#define RDMAEMU_LIB_GAI_H

#include <rdma/rdma_cma.h>

#include "emu/fabric.h"

/* RAI_SA lookup of `service` (spec §4.6); node/RAI_DNS were already refused by the caller. */
int cma_gai_sa(const struct emu_host *h, const char *service, struct rdma_addrinfo **res);

/* ibacm's part of an active lookup (spec §4.5): nothing unless the host runs ibacm. */
void cma_acm_resolve(const struct emu_host *h, struct rdma_addrinfo *rai,
		     const struct rdma_addrinfo *hints);

#endif
