/* rdma_freeaddrinfo: the lists every lookup builds (rdma_getaddrinfo, RAI_SA, ibacm's AF_IB
 * entry, rdma_query_addrinfo), and that the library frees itself on its error paths. */
#include "config.h"

#include <stdlib.h>

#include "lib/cma.h"

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_connect);
		free(res->ai_route);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
	}
}
