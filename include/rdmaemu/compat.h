/* What rdma-core's current API has and the distribution's headers may lack.
 *
 * The project compiles against the installed <rdma/rdma_cma.h> (Debian 12: rdma-core 44).
 * Later releases added RAI_SA/RAI_DNS (v60), the events ADDRINFO_RESOLVED .. INTERNAL (v60),
 * rdma_resolve_addrinfo/rdma_query_addrinfo/rdma_write_cm_event (v60, RDMACM_1.4) and the
 * `arg` member of rdma_cm_event.param. Values are rdma-core's (librdmacm/rdma_cma.h).
 */
#ifndef RDMAEMU_COMPAT_H
#define RDMAEMU_COMPAT_H

#include <netdb.h>
#include <rdma/rdma_cma.h>

#ifndef RAI_SA
#define RAI_SA 0x00000010
#endif
#ifndef RAI_DNS
#define RAI_DNS 0x00000020
#endif

/* Events added in v60 (the installed enum ends at RDMA_CM_EVENT_TIMEWAIT_EXIT = 15). */
#define RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED 16
#define RDMAEMU_CM_EVENT_ADDRINFO_ERROR 17
#define RDMAEMU_CM_EVENT_USER 18
#define RDMAEMU_CM_EVENT_INTERNAL 19

/* rdma_getaddrinfo.3 names EAI_QPTYPE for an inconsistent ai_qp_type/ai_port_space pair, but
 * no header defines it and the real library returns glibc's EAI_SOCKTYPE (spec §4.2, §16.1).
 * Offered only as an alias under the project's own name, so code written to the man page can
 * compile against rdmaemu and still test for the value the real stack returns. */
#define RDMAEMU_EAI_QPTYPE EAI_SOCKTYPE

#ifndef AF_IB
#define AF_IB 27
#endif

#endif
