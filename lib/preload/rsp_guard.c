/* The network guard of this library's own TCP (lib/preload/rsp.h): the fallback of a connect
 * that rsockets could not make, and the TCP stage of fork support. Over the emulated
 * librdmacm, outside an `rdmaemu run` sandbox, a fabric address is an address of the
 * machine's real network (a fabric may use the very range the machine's LAN uses), so such a
 * connect to anything but the loopback fails with ENETUNREACH, saying why once, as
 * librdmaemu-host.so's guard does (emu/host/net_guard.h). Over rdma-core's librdmacm (a real
 * RDMA stack) nothing is refused. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/preload/rsp.h"

static int warned;

/* The emulated librdmacm brings the emulator's control API into the process. */
static bool on_emulator(void)
{
	return dlsym(RTLD_DEFAULT, "rdmaemu_ctl_version") != NULL;
}

static bool is_local(const struct sockaddr *addr, socklen_t len, char *text, size_t tlen)
{
	const struct sockaddr_in6 *sin6 = (const void *)addr;
	const struct sockaddr_in *sin = (const void *)addr;
	struct in_addr v4;

	if (addr->sa_family == AF_INET && len >= sizeof(*sin)) {
		v4 = sin->sin_addr;
	} else if (addr->sa_family == AF_INET6 && len >= sizeof(*sin6)) {
		if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) ||
		    IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr))
			return true;
		if (!IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			inet_ntop(AF_INET6, &sin6->sin6_addr, text, (socklen_t)tlen);
			return false;
		}
		memcpy(&v4, &sin6->sin6_addr.s6_addr[12], sizeof(v4));
	} else {
		return true;	/* no IP: the kernel answers without the network */
	}
	if ((ntohl(v4.s_addr) >> 24) == 127 || v4.s_addr == htonl(INADDR_ANY))
		return true;
	inet_ntop(AF_INET, &v4, text, (socklen_t)tlen);
	return false;
}

bool rsp_guard_refuses(const struct sockaddr *addr, socklen_t len)
{
	char text[INET6_ADDRSTRLEN] = "";

	if (!addr || getenv("RDMAEMU_SANDBOX") || !on_emulator() ||
	    is_local(addr, len, text, sizeof(text)))
		return false;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "rdmaemu: TCP to %s refused: without a sandbox, the rsockets "
				"fallback to a real socket would reach this machine's real network\n",
			text);
	errno = ENETUNREACH;
	return true;
}
