/* RDMAEMU_GUARD_NETS of a program run without a sandbox (emu/host/sandbox.h,
 * emu/host/net_guard.h): every subnet of the fabric's hosts, from their netdevs' addresses and
 * their routes. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "emu/host/sandbox.h"
#include "emu/sim/fabric.h"

static void add(char *buf, size_t len, size_t *n, int family, const void *addr, unsigned plen)
{
	uint8_t a[16] = { 0 };
	size_t bytes = family == AF_INET ? 4 : 16;
	char text[INET6_ADDRSTRLEN];
	int w;

	memcpy(a, addr, bytes);
	for (size_t i = 0; i < bytes; i++) { /* the subnet, not the host's own address */
		unsigned bits = i * 8 >= plen ? 0 : plen - i * 8;

		if (bits < 8)
			a[i] &= (uint8_t)(0xff << (8 - bits));
	}
	if (!inet_ntop(family, a, text, sizeof(text)))
		return;
	w = snprintf(buf + *n, len - *n, "%s%s/%u", *n ? "," : "", text, plen);
	if (w > 0 && (size_t)w < len - *n)
		*n += (size_t)w;
}

int emu_sandbox_guard_nets(const char *fabric, char *buf, size_t len)
{
	struct emu_error err;
	struct emu_fabric *f = fabric ? emu_fabric_load(fabric, &err) : emu_fabric_builtin();
	size_t n = 0;

	if (!f || !len)
		return -1;
	buf[0] = 0;
	for (size_t h = 0; h < f->nhosts; h++) {
		const struct emu_host *host = &f->hosts[h];

		for (size_t i = 0; i < host->nnetdevs; i++)
			for (size_t a = 0; a < host->netdevs[i].naddrs; a++) {
				const struct emu_ifaddr *ia = &host->netdevs[i].addrs[a];

				add(buf, len, &n, ia->family, &ia->addr, ia->prefixlen);
			}
		for (size_t r = 0; r < host->nroutes; r++)
			add(buf, len, &n, host->routes[r].family, &host->routes[r].dst,
			    host->routes[r].prefixlen);
	}
	emu_fabric_free(f);
	return 0;
}
