/* rdma_get_src_port / rdma_get_dst_port (spec §15 rows 255-258): the port of the id's address
 * in network byte order (the man page says "port number" and leaves the order unstated); for
 * AF_IB, the low 16 bits of the service id. Only id->route.addr is read, so these work on any
 * id, bound or not. */
#include "config.h"

#include <endian.h>

#include "lib/cma.h"

static __be16 addr_port(const struct sockaddr *addr)
{
	switch (addr->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)addr)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)addr)->sin6_port;
	case AF_IB:
		return htobe16((uint16_t)be64toh(((const struct sockaddr_ib *)addr)->sib_sid));
	default:
		return 0;
	}
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	/* The real library dereferences id unconditionally; NULL is answered with 0 here. */
	return id ? addr_port(&id->route.addr.src_addr) : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id ? addr_port(&id->route.addr.dst_addr) : 0;
}
