/* getaddrinfo(3) as the emulated host sees it (see resolve.c). */
#ifndef RDMAEMU_LIB_RESOLVE_H
#define RDMAEMU_LIB_RESOLVE_H

#include <netdb.h>

#include "emu/sim/fabric.h"

/* Same contract as getaddrinfo(3) (hints may be NULL; returns 0 or an EAI_* code; free the
 * result with freeaddrinfo(3)), with these differences, all for determinism and so that no name
 * ever reaches DNS:
 *  - numeric hosts and services are parsed by glibc itself (AI_NUMERICHOST), so every literal
 *    form, port wrap and EAI_* precedence is glibc's;
 *  - a name is looked up in the fabric's name table, then in /etc/hosts ($RDMAEMU_HOSTS_FILE
 *    overrides the path, for tests), and only when the fabric says "resolver system" in the
 *    system resolver;
 *  - AI_ADDRCONFIG and "%ifname" scope ids are judged against the emulated host's netdevs, not
 *    the real machine's. */
int cma_getaddrinfo(const struct emu_host *h, const char *node, const char *service,
		    const struct addrinfo *hints, struct addrinfo **res);

/* Interface index of the emulated host's netdev i: 1 is the implicit loopback "lo". */
static inline unsigned cma_ifindex(size_t netdev)
{
	return (unsigned)netdev + 2;
}

#endif
