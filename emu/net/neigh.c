/* The neighbour layer's common ground: per-host and per-netdev lookups, addresses, traces, the
 * listeners and the generation of a host, the pending resolutions as the tables see them.
 * Everything else of emu/net builds on it (see emu/net/neigh.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/sim/trace.h"
#include "emu/net/neigh_priv.h"

const struct emu_neigh_parms emu_neigh_default_parms = {
	/* net/ipv4/arp.c arp_tbl and net/ipv6/ndisc.c nd_tbl: the same defaults */
	.ucast_probes = 3,
	.mcast_probes = 3,
	.app_probes = 0,
	.mcast_reprobes = 0,
	.retrans_ns = 1 * EMU_NSEC_PER_SEC,
	.base_reachable_ns = 30 * EMU_NSEC_PER_SEC,
	.delay_probe_ns = 5 * EMU_NSEC_PER_SEC,
};

/* ff12:401b:ffff::ffff:ffff: link-local scope, IPv4 signature 401b, P_Key 0xffff, broadcast */
const uint8_t emu_ipoib_bcast_mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					   0,	 0,    0,    0,	   0xff, 0xff, 0xff, 0xff };

static const char *const event_names[] = {
	[EMU_NEIGH_EV_ADDR_ADD] = "ADDR_ADD",
	[EMU_NEIGH_EV_ADDR_DEL] = "ADDR_DEL",
	[EMU_NEIGH_EV_LINK_DOWN] = "LINK_DOWN",
	[EMU_NEIGH_EV_LINK_UP] = "LINK_UP",
};

const char *emu_neigh_event_name(enum emu_neigh_event_type t)
{
	return (unsigned)t < sizeof(event_names) / sizeof(*event_names) ? event_names[t] : "?";
}

bool emu_neigh_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "neigh");
}

void emu_neigh_trace(const char *fmt, ...)
{
	va_list ap;

	if (!emu_neigh_trace_on())
		return;
	va_start(ap, fmt);
	emu_trace_vprint("neigh ", fmt, ap);
	va_end(ap);
}

size_t emu_neigh_alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

const char *emu_neigh_ntop(int family, const void *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

int emu_neigh_sa_addr(const struct sockaddr *sa, const void **addr)
{
	if (!sa)
		return -EINVAL;
	if (sa->sa_family == AF_INET) {
		*addr = &((const struct sockaddr_in *)sa)->sin_addr;
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		*addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return AF_INET6;
	}
	return -EAFNOSUPPORT;
}

struct neigh_host *emu_neigh_host(struct emu_neigh *n, size_t host)
{
	return n && host < n->nhosts ? &n->hosts[host] : NULL;
}

struct neigh_dev *emu_neigh_dev(struct emu_neigh *n, size_t host, int netdev)
{
	struct neigh_host *nh = emu_neigh_host(n, host);

	return nh && netdev >= 0 && (size_t)netdev < nh->ndevs ? &nh->devs[netdev] : NULL;
}

bool emu_neigh_ifaddr_is(const struct emu_ifaddr *a, int family, const void *addr)
{
	return a->family == family && !memcmp(&a->addr, addr, emu_neigh_alen(family));
}

bool emu_neigh_is_local(const struct neigh_host *h, int family, const void *addr,
			struct neigh_dev **dev)
{
	for (size_t i = 0; i < h->ndevs; i++) {
		struct neigh_dev *d = &h->devs[i];

		if (!d->up)
			continue;
		for (size_t j = 0; j < d->naddrs; j++)
			if (emu_neigh_ifaddr_is(&d->addrs[j], family, addr)) {
				if (dev)
					*dev = d;
				return true;
			}
	}
	return false;
}

void emu_neigh_host_changed(struct neigh_host *h)
{
	struct emu_neigh *n = h->n;

	h->gen++;
	if (n->gen_fn)
		n->gen_fn(n->gen_ctx, h->idx, h->gen);
}

void emu_neigh_solicited_node(const uint8_t *target, uint8_t out[16])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff };

	memcpy(out, pfx, 13);
	memcpy(out + 13, target + 13, 3);
}

int emu_neigh_add_listener(struct emu_neigh *n, emu_neigh_event_fn *fn, void *ctx)
{
	if (!fn)
		return -EINVAL;
	for (int i = 0; i < NEIGH_MAX_LISTENERS; i++)
		if (!n->listeners[i].fn) {
			n->listeners[i].fn = fn;
			n->listeners[i].ctx = ctx;
			return 0;
		}
	return -ENOSPC;
}

int emu_neigh_del_listener(struct emu_neigh *n, emu_neigh_event_fn *fn, void *ctx)
{
	for (int i = 0; i < NEIGH_MAX_LISTENERS; i++)
		if (n->listeners[i].fn == fn && n->listeners[i].ctx == ctx) {
			n->listeners[i].fn = NULL;
			return 0;
		}
	return -ENOENT;
}

void emu_neigh_reqs_kick(struct emu_neigh *n)
{
	uint64_t now = emu_clock_now(n->clk);

	for (struct emu_neigh_req *q = n->reqs; q; q = q->next)
		emu_timer_arm_at(n->clk, &q->timer, now);
}

void emu_neigh_reqs_free(struct emu_neigh *n)
{
	while (n->reqs) {
		struct emu_neigh_req *q = n->reqs;

		emu_timer_cancel(n->clk, &q->timer);
		n->reqs = q->next;
		emu_kmem_free(q);
	}
}
