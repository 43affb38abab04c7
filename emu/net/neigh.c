/* The neighbour layer: per-host interface state (addresses, link), its creation on the engine,
 * address and link changes and their listeners. See emu/net/neigh.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/trace.h"
#include "emu/sim/engine_ext.h"
#include "emu/net/neigh_priv.h"
#include "emu/net/roce_gid.h"

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

/* ---------- creation ---------- */

static void neigh_free(void *p)
{
	struct emu_neigh *n = p;

	n->gen_fn = NULL; /* the flushes below are the end, not a change anybody must hear */
	emu_neigh_reqs_free(n);
	for (size_t h = 0; h < n->nhosts; h++) {
		struct neigh_host *nh = &n->hosts[h];

		for (size_t d = 0; nh->devs && d < nh->ndevs; d++) {
			emu_neigh_dev_flush(&nh->devs[d]);
			emu_neigh_ib6_free(&nh->devs[d]);
			emu_neigh_paths_flush(&nh->devs[d]);
			free(nh->devs[d].addrs);
		}
		free(nh->devs);
	}
	free(n->hosts);
	free(n);
}

/* neigh_rand_reach_time(): uniformly in [base/2, 3*base/2). */
static uint64_t rand_reach(struct emu_neigh *n, uint64_t base)
{
	return base / 2 + emu_prng_below(&n->prng, base);
}

static int dev_init(struct emu_neigh *n, struct neigh_host *nh, size_t i)
{
	const struct emu_host *h = nh->h;
	const struct emu_netdev *nd = &h->netdevs[i];
	struct neigh_dev *d = &nh->devs[i];

	d->host = nh;
	d->idx = (int)i;
	d->nd = nd;
	d->up = nd->up;
	d->noarp = nd->noarp;
	d->ipoib = nd->hwaddr_len == 20;
	d->ep = -1;
	d->naddrs = nd->naddrs;
	d->addrs = calloc(nd->naddrs ? nd->naddrs : 1, sizeof(*d->addrs));
	if (!d->addrs)
		return -ENOMEM;
	memcpy(d->addrs, nd->addrs, nd->naddrs * sizeof(*d->addrs));
	d->reachable_ns[0] = rand_reach(n, emu_neigh_default_parms.base_reachable_ns);
	d->reachable_ns[1] = rand_reach(n, emu_neigh_default_parms.base_reachable_ns);
	if (d->ipoib) {
		d->qpn = (uint32_t)nd->hwaddr[1] << 16 | (uint32_t)nd->hwaddr[2] << 8 |
			 nd->hwaddr[3];
		memcpy(d->gid, nd->hwaddr + 4, 16);
	}
	return 0;
}

static void neigh_ext_free(struct emu_engine *e, void *obj)
{
	(void)e;
	neigh_free(obj);
}

/* Created with the engine (engine_create), so freed last of the attachments. */
static const struct emu_engine_ext_type neigh_ext_type = {
	.name = "neigh",
	.free = neigh_ext_free,
};

struct emu_neigh *emu_neigh_get(struct emu_engine *e)
{
	struct emu_neigh *n = emu_engine_ext_get(e, &neigh_ext_type);
	struct emu_prng root;
	int ret;

	if (n)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		goto nomem;
	n->e = e;
	n->f = emu_engine_fabric(e);
	n->clk = emu_engine_clock(e);
	/* a stream of its own, so that the neighbour layer does not shift other draws */
	emu_prng_seed(&root, n->f->seed);
	emu_prng_fork(&root, 0x6e65696768ull /* "neigh" */, &n->prng);
	n->nhosts = n->f->nhosts;
	n->hosts = calloc(n->nhosts ? n->nhosts : 1, sizeof(*n->hosts));
	if (!n->hosts)
		goto nomem_free;
	for (size_t h = 0; h < n->nhosts; h++) {
		struct neigh_host *nh = &n->hosts[h];

		nh->n = n;
		nh->idx = h;
		nh->gen = 1; /* 0 says "no generation" in rdmaemud's answers */
		nh->h = &n->f->hosts[h];
		nh->ndevs = nh->h->nnetdevs;
		nh->devs = calloc(nh->ndevs ? nh->ndevs : 1, sizeof(*nh->devs));
		if (!nh->devs)
			goto nomem_free;
		for (size_t i = 0; i < nh->ndevs; i++)
			if (dev_init(n, nh, i))
				goto nomem_free;
	}
	ret = emu_neigh_wire_init(n);
	if (ret) {
		neigh_free(n);
		errno = -ret;
		return NULL;
	}
	if (emu_engine_ext_set(e, &neigh_ext_type, n)) {
		neigh_free(n);
		goto nomem;
	}
	/* the core's roce_gid_mgmt listens to the netdevs from the start */
	ret = emu_roce_gid_attach(e);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	return n;

nomem_free:
	neigh_free(n);
nomem:
	errno = ENOMEM;
	return NULL;
}

/* Every host's IP stack answers ARP / neighbour solicitations from the start, as on a booted
 * host. Out of memory here: it is retried at its first use. */
static int neigh_engine_created(struct emu_engine *e)
{
	(void)emu_neigh_get(e);
	return 0;
}

static struct emu_engine_hook neigh_hook = { .order = 3, .created = neigh_engine_created };

__attribute__((constructor)) static void install(void)
{
	emu_engine_on_create(&neigh_hook);
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

static bool ifaddr_is(const struct emu_ifaddr *a, int family, const void *addr)
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
			if (ifaddr_is(&d->addrs[j], family, addr)) {
				if (dev)
					*dev = d;
				return true;
			}
	}
	return false;
}

/* ---------- queries ---------- */

int emu_neigh_stats(struct emu_engine *e, size_t host, struct emu_neigh_stats *out)
{
	struct neigh_host *nh = emu_neigh_host(emu_neigh_get(e), host);

	if (!nh || !out)
		return -ENOENT;
	*out = nh->st;
	return 0;
}

static int sa_family_addr(const struct sockaddr *sa, const void **addr)
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

int emu_neigh_lookup(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr,
		     enum emu_nud *state, uint8_t *hw, uint8_t *hw_len)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);
	const void *a;
	int family = sa_family_addr(addr, &a);
	struct neigh_entry *ne;

	if (!d || family < 0)
		return -ENOENT;
	ne = emu_neigh_entry_find(d, family, a);
	if (!ne)
		return -ENOENT;
	if (state)
		*state = ne->state;
	if (hw_len)
		*hw_len = (ne->state & EMU_NUD_VALID) ? d->nd->hwaddr_len : 0;
	if (hw && (ne->state & EMU_NUD_VALID))
		memcpy(hw, ne->hw, d->nd->hwaddr_len);
	return 0;
}

int emu_neigh_touch(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);
	const void *a;
	int family = sa_family_addr(addr, &a);
	struct neigh_entry *ne;

	if (!d || family < 0)
		return -ENOENT;
	ne = emu_neigh_entry_get(d, family, a);
	if (!ne)
		return -ENOMEM;
	emu_neigh_event_send(ne);
	return (int)ne->state;
}

int emu_neigh_flush(struct emu_engine *e, size_t host, int netdev)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct neigh_host *nh = emu_neigh_host(n, host);
	struct neigh_dev *d;
	int total = 0;

	if (!nh)
		return -ENOENT;
	if (netdev >= 0) {
		d = emu_neigh_dev(n, host, netdev);
		return d ? emu_neigh_dev_flush(d) : -ENOENT;
	}
	for (size_t i = 0; i < nh->ndevs; i++)
		total += emu_neigh_dev_flush(&nh->devs[i]);
	return total;
}

int emu_neigh_addrs(struct emu_engine *e, size_t host, int netdev, struct sockaddr_storage *out,
		    uint8_t *prefixlen, size_t max)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);

	if (!d)
		return -ENOENT;
	for (size_t i = 0; i < d->naddrs && i < max; i++) {
		const struct emu_ifaddr *a = &d->addrs[i];

		memset(&out[i], 0, sizeof(out[i]));
		if (a->family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&out[i];

			s->sin_family = AF_INET;
			s->sin_addr = a->addr.v4;
		} else {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&out[i];

			s->sin6_family = AF_INET6;
			s->sin6_addr = a->addr.v6;
		}
		if (prefixlen)
			prefixlen[i] = a->prefixlen;
	}
	return (int)d->naddrs;
}

/* ---------- changes and listeners ---------- */

int emu_neigh_listen(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx)
{
	struct emu_neigh *n = emu_neigh_get(e);

	if (!n || !fn)
		return -EINVAL;
	for (int i = 0; i < NEIGH_MAX_LISTENERS; i++)
		if (!n->listeners[i].fn) {
			n->listeners[i].fn = fn;
			n->listeners[i].ctx = ctx;
			return 0;
		}
	return -ENOSPC;
}

int emu_neigh_unlisten(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx)
{
	struct emu_neigh *n = emu_neigh_get(e);

	for (int i = 0; n && i < NEIGH_MAX_LISTENERS; i++)
		if (n->listeners[i].fn == fn && n->listeners[i].ctx == ctx) {
			n->listeners[i].fn = NULL;
			return 0;
		}
	return -ENOENT;
}

void emu_neigh_host_changed(struct neigh_host *h)
{
	struct emu_neigh *n = h->n;

	h->gen++;
	if (n->gen_fn)
		n->gen_fn(n->gen_ctx, h->idx, h->gen);
}

uint32_t emu_neigh_gen(struct emu_engine *e, size_t host)
{
	struct neigh_host *h = emu_neigh_host(emu_neigh_get(e), host);

	return h ? h->gen : 0;
}

void emu_neigh_set_gen_hook(struct emu_engine *e, emu_neigh_gen_fn *fn, void *ctx)
{
	struct emu_neigh *n = emu_neigh_get(e);

	if (n) {
		n->gen_fn = fn;
		n->gen_ctx = ctx;
	}
}

static void notify(struct emu_neigh *n, enum emu_neigh_event_type type, struct neigh_dev *d,
		   const struct emu_ifaddr *a)
{
	struct emu_neigh_event ev;
	char buf[INET6_ADDRSTRLEN];

	/* addresses and links are what the route lookup of a resolution reads */
	emu_neigh_host_changed(d->host);
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.host = d->host->idx;
	ev.netdev = d->idx;
	if (a) {
		if (a->family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ev.addr;

			s->sin_family = AF_INET;
			s->sin_addr = a->addr.v4;
		} else {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ev.addr;

			s->sin6_family = AF_INET6;
			s->sin6_addr = a->addr.v6;
		}
		ev.prefixlen = a->prefixlen;
	}
	emu_neigh_trace("%s/%s: event %s %s", d->host->h->name, d->nd->name,
			emu_neigh_event_name(type),
			a ? emu_neigh_ntop(a->family, &a->addr, buf, sizeof(buf)) : "");
	for (int i = 0; i < NEIGH_MAX_LISTENERS; i++)
		if (n->listeners[i].fn)
			n->listeners[i].fn(n->listeners[i].ctx, &ev);
}

static int to_ifaddr(const struct sockaddr *sa, uint8_t prefixlen, struct emu_ifaddr *a)
{
	const void *p;
	int family = sa_family_addr(sa, &p);

	if (family < 0 || prefixlen > (family == AF_INET ? 32 : 128))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->family = family;
	memcpy(&a->addr, p, emu_neigh_alen(family));
	a->prefixlen = prefixlen;
	return 0;
}

int emu_neigh_addr_add(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *sa,
		       uint8_t prefixlen)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct neigh_dev *d = emu_neigh_dev(n, host, netdev);
	struct emu_ifaddr a, *na;
	int ret;

	if (!d)
		return -ENOENT;
	ret = to_ifaddr(sa, prefixlen, &a);
	if (ret)
		return ret;
	for (size_t i = 0; i < d->naddrs; i++)
		if (ifaddr_is(&d->addrs[i], a.family, &a.addr))
			return -EEXIST;
	na = realloc(d->addrs, (d->naddrs + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	d->addrs = na;
	na[d->naddrs++] = a;
	emu_neigh_ib6_sync(d); /* IPoIB: the new solicited-node group (ipv6_dev_mc_inc) */
	notify(n, EMU_NEIGH_EV_ADDR_ADD, d, &a);
	return 0;
}

int emu_neigh_addr_del(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *sa,
		       uint8_t prefixlen)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct neigh_dev *d = emu_neigh_dev(n, host, netdev);
	struct emu_ifaddr a;
	int ret;

	if (!d)
		return -ENOENT;
	ret = to_ifaddr(sa, prefixlen, &a);
	if (ret)
		return ret;
	for (size_t i = 0; i < d->naddrs; i++)
		if (ifaddr_is(&d->addrs[i], a.family, &a.addr) &&
		    d->addrs[i].prefixlen == prefixlen) {
			memmove(&d->addrs[i], &d->addrs[i + 1],
				(d->naddrs - i - 1) * sizeof(*d->addrs));
			d->naddrs--;
			emu_neigh_ib6_sync(d); /* IPoIB: its solicited-node group is left */
			notify(n, EMU_NEIGH_EV_ADDR_DEL, d, &a);
			return 0;
		}
	return -EADDRNOTAVAIL;
}

int emu_neigh_link_set(struct emu_engine *e, size_t host, int netdev, bool up)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct neigh_dev *d = emu_neigh_dev(n, host, netdev);

	if (!d)
		return -ENOENT;
	if (d->up == up)
		return 0;
	d->up = up;
	if (!up) {
		emu_neigh_dev_flush(d); /* neigh_ifdown() */
		emu_neigh_paths_flush(d); /* ipoib_ib_dev_down() -> ipoib_flush_paths() */
	}
	emu_neigh_ib6_sync(d); /* IPoIB: down leaves every group, up joins them again */
	notify(n, up ? EMU_NEIGH_EV_LINK_UP : EMU_NEIGH_EV_LINK_DOWN, d, NULL);
	return 0;
}

bool emu_neigh_link_up(struct emu_engine *e, size_t host, int netdev)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);

	return d && d->up;
}
