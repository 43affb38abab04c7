/* ibacm's part of rdma_getaddrinfo (spec §4.5).
 *
 * The real library sends every active lookup to ibacm (/run/ibacm.sock); when ibacm is not
 * running nothing happens and the result has no source address and no route. On the emulated
 * fabric "ibacm runs" is a property of the host (fabric file: acm on). When it does, ibacm
 * answers with the source address it would use for the destination (the address of the
 * host's netdev that reaches it, port 0), which fills ai_src_addr when the caller gave none.
 * Path records (ai_route) and the AF_IB entry need the fake SA (issue [4]). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "lib/cma.h"
#include "lib/gai.h"

/* The first address of `family` on netdev nd, preferring a non-link-local one. */
static const struct emu_ifaddr *netdev_source(const struct emu_netdev *nd, int family)
{
	const struct emu_ifaddr *fallback = NULL;

	for (size_t i = 0; i < nd->naddrs; i++) {
		const struct emu_ifaddr *a = &nd->addrs[i];

		if (a->family != family)
			continue;
		if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&a->addr.v6)) {
			if (!fallback)
				fallback = a;
			continue;
		}
		return a;
	}
	return fallback;
}

void cma_acm_resolve(const struct emu_host *h, struct rdma_addrinfo *rai,
		     const struct rdma_addrinfo *hints)
{
	const struct emu_ifaddr *src;
	const void *dst;
	int family, nd;

	(void)hints;
	if (!h->acm || rai->ai_src_len || !rai->ai_dst_addr)
		return;
	family = rai->ai_dst_addr->sa_family;
	if (family == AF_INET)
		dst = &((struct sockaddr_in *)rai->ai_dst_addr)->sin_addr;
	else if (family == AF_INET6)
		dst = &((struct sockaddr_in6 *)rai->ai_dst_addr)->sin6_addr;
	else
		return;
	nd = emu_host_route(h, family, dst);
	if (nd < 0 || !(src = netdev_source(&h->netdevs[nd], family)))
		return;

	/* ibacm failures are silent in the real library: out of memory just means no source. */
	if (family == AF_INET) {
		struct sockaddr_in *sin = calloc(1, sizeof(*sin));

		if (!sin)
			return;
		sin->sin_family = AF_INET;
		sin->sin_addr = src->addr.v4;
		rai->ai_src_addr = (struct sockaddr *)sin;
		rai->ai_src_len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = calloc(1, sizeof(*sin6));

		if (!sin6)
			return;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = src->addr.v6;
		rai->ai_src_addr = (struct sockaddr *)sin6;
		rai->ai_src_len = sizeof(*sin6);
	}
}
