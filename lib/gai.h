/* The parts of rdma_getaddrinfo that talk to services: RAI_SA (the subnet administrator) and
 * ibacm. */
#ifndef RDMAEMU_LIB_GAI_H
#define RDMAEMU_LIB_GAI_H

#include <stdbool.h>
#include <sys/types.h>
#include <rdma/rdma_cma.h>

/* RAI_SA lookup of `service` (spec §4.6, lib/gai_sa.c); node/RAI_DNS were already refused by
 * the caller. */
int cma_gai_sa(const char *service, struct rdma_addrinfo **res);

/* ibacm's part of an active lookup (spec §4.5, lib/acm.c): nothing unless an ibacm answers.
 * With a route and an AF_IB-capable kernel, *rai gets the AF_IB entry in front
 * (cma_resolve_af_ib). */
void cma_acm_resolve(struct rdma_addrinfo **rai, const struct rdma_addrinfo *hints);

/* The ibacm server named by RDMAEMU_IBACM_PORT_FILE / RDMAEMU_IBACM_SERVER_PATH
 * (lib/acm_sock.c). cma_acm_sock_named: whether one is named (connecting to it the first
 * time); when none is, the emulated host's own ibacm is asked. cma_acm_sock_exchange: one
 * send of the request's len bytes and one recv into msg (size bytes); -1 when the named
 * server cannot be reached or the exchange failed (as without ibacm), else the length
 * received. */
bool cma_acm_sock_named(void);
ssize_t cma_acm_sock_exchange(void *msg, size_t len, size_t size);

/* ucma_resolve_af_ib (lib/gai_afib.c): prepends to *rai, whose ai_route is not empty, its AF_IB
 * twin; on failure *rai is left alone. */
void cma_resolve_af_ib(struct rdma_addrinfo **rai);

#endif
