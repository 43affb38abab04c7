/* Route lookup and source address selection of a host, as addr4_resolve/addr6_resolve get them
 * from ip_route_output_key / ip6_dst_lookup_flow:
 *  - local destinations (an address of an up netdev of the host, 127/8, ::1) route through lo:
 *    loopback, source = the destination itself (RTN_LOCAL's prefsrc);
 *  - otherwise the longest matching prefix among the connected subnets of the up netdevs (their
 *    addresses) and the host's `route` lines whose netdev is up; on a tie the connected route
 *    wins, then fabric order; nothing matches => -ENETUNREACH (there is no default route unless
 *    the fabric gives one), except for a multicast destination with a local source, which
 *    leaves the source's netdev;
 *  - IPv6 link-local destinations (fe80::/10) go out of the netdev of the scope id
 *    (sin6_scope_id = netdev index + 2, lo being 1) or, without one, of the first up netdev
 *    with an IPv6 link-local address (the kernel would pick among several devices' fe80::/64
 *    routes; the emulator takes the first, documented in docs/neigh.md);
 *  - source: the given one (IPv4: -EINVAL unless it is local, as ip_route_output_key says);
 *    else IPv4: the address that made the connected route (its prefsrc), or for a gateway route
 *    the netdev's address in the gateway's subnet, else its first IPv4 address
 *    (inet_select_addr); IPv6: among the netdev's addresses, the one of the destination's scope
 *    with the longest common prefix (RFC 6724 rules 2 and 8, what matters on one link).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/net/neigh_priv.h"

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (!bits)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - bits))) == 0;
}

static unsigned common_prefix(const uint8_t *a, const uint8_t *b, size_t len)
{
	unsigned n = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t x = a[i] ^ b[i];

		if (!x) {
			n += 8;
			continue;
		}
		while (!(x & 0x80)) {
			n++;
			x = (uint8_t)(x << 1);
		}
		return n;
	}
	return n;
}

static bool is_v6_linklocal(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

static void set_sa(struct sockaddr_storage *ss, int family, const void *addr, uint16_t port,
		   uint32_t scope)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = port;
		memcpy(&s->sin_addr, addr, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = port;
		memcpy(&s->sin6_addr, addr, 16);
		s->sin6_scope_id = scope;
	}
}

/* IPv6 source on netdev d for dst: same scope first, then the longest common prefix. */
static const struct emu_ifaddr *v6_select(const struct neigh_dev *d, const uint8_t *dst)
{
	const struct emu_ifaddr *best = NULL;
	bool best_scope = false;
	unsigned best_len = 0;
	bool ll = is_v6_linklocal(dst) || (dst[0] == 0xff && (dst[1] & 0x0f) == 2);

	for (size_t i = 0; i < d->naddrs; i++) {
		const struct emu_ifaddr *a = &d->addrs[i];
		const uint8_t *p = (const uint8_t *)&a->addr.v6;
		bool scope;
		unsigned len;

		if (a->family != AF_INET6)
			continue;
		scope = is_v6_linklocal(p) == ll;
		len = common_prefix(p, dst, 16);
		if (!best || (scope && !best_scope) || (scope == best_scope && len > best_len)) {
			best = a;
			best_scope = scope;
			best_len = len;
		}
	}
	return best;
}

static const struct emu_ifaddr *v4_select(const struct neigh_dev *d, const uint8_t *target)
{
	const struct emu_ifaddr *first = NULL;

	for (size_t i = 0; i < d->naddrs; i++) {
		const struct emu_ifaddr *a = &d->addrs[i];

		if (a->family != AF_INET)
			continue;
		if (!first)
			first = a;
		if (prefix_match((const uint8_t *)&a->addr.v4, target, a->prefixlen))
			return a;
	}
	return first;
}

static void fill_dev(struct emu_neigh_result *r, const struct neigh_dev *d)
{
	r->netdev = d->idx;
	r->device = d->nd->device;
	r->port = d->nd->port;
	r->hw_len = d->nd->hwaddr_len;
	memcpy(r->src_hw, d->nd->hwaddr, d->nd->hwaddr_len);
}

/* A route lookup on its way: the destination (and the source, NULL when none was given), then
 * the best route so far: its netdev, the address that made it a connected route, its gateway,
 * its prefix length (-1: none yet). */
struct route_q {
	int family;
	const uint8_t *da, *sa;
	size_t alen;
	uint32_t scope;
	struct neigh_dev *dev;
	const struct emu_ifaddr *src;
	const uint8_t *gw;
	int len;
};

/* The addresses of dst and src into q: 0, or -errno for arguments the kernel refuses. */
static int route_args(struct neigh_host *nh, const struct sockaddr *src,
		      const struct sockaddr *dst, struct route_q *q)
{
	static const uint8_t zero[16];
	int family = dst->sa_family;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	q->family = family;
	q->alen = emu_neigh_alen(family);
	q->da = family == AF_INET ? (const uint8_t *)&((const struct sockaddr_in *)dst)->sin_addr
				  : (const uint8_t *)&((const struct sockaddr_in6 *)dst)->sin6_addr;
	if (family == AF_INET6)
		q->scope = ((const struct sockaddr_in6 *)dst)->sin6_scope_id;
	if (!src || src->sa_family == AF_UNSPEC)
		return 0;
	if (src->sa_family != family)
		return -EINVAL;
	q->sa = family == AF_INET ? (const uint8_t *)&((const struct sockaddr_in *)src)->sin_addr
				  : (const uint8_t *)&((const struct sockaddr_in6 *)src)->sin6_addr;
	if (!memcmp(q->sa, zero, q->alen))
		q->sa = NULL; /* the wildcard: as if no source was given */
	else if (family == AF_INET && !emu_neigh_is_local(nh, family, q->sa, NULL))
		return -EINVAL;
	return 0;
}

/* The local table: true when the destination is the host's own (then r says so). */
static bool route_local(struct neigh_host *nh, const struct route_q *q,
			struct emu_neigh_result *r, uint8_t nexthop[16])
{
	struct neigh_dev *ld;

	if (!emu_neigh_is_local(nh, q->family, q->da, &ld) &&
	    !(q->family == AF_INET && q->da[0] == 127) &&
	    !(q->family == AF_INET6 && !memcmp(q->da, &in6addr_loopback, 16)))
		return false;
	r->loopback = true;
	if (emu_neigh_is_local(nh, q->family, q->da, &ld))
		fill_dev(r, ld); /* rdma_translate_ip(): the netdev holding the address */
	set_sa(&r->src, q->family, q->sa ? q->sa : q->da, 0, q->scope);
	set_sa(&r->dst, q->family, q->da, 0, q->scope);
	memcpy(nexthop, q->da, q->alen);
	return true;
}

/* An IPv6 link-local destination: out of the scope's netdev, or the first up one with a
 * link-local address. */
static void route_linklocal(struct neigh_host *nh, struct route_q *q)
{
	for (size_t i = 0; i < nh->ndevs; i++) {
		struct neigh_dev *d = &nh->devs[i];
		const struct emu_ifaddr *a;

		if (!d->up || !(q->scope ? q->scope == (uint32_t)i + 2 : q->dev == NULL))
			continue;
		a = v6_select(d, q->da);
		if (a && is_v6_linklocal((const uint8_t *)&a->addr.v6)) {
			q->dev = d;
			q->src = a;
			q->len = 64;
		}
	}
}

/* The connected subnets of the up netdevs: the longest prefix, the first on a tie. */
static void route_connected(struct neigh_host *nh, struct route_q *q)
{
	for (size_t i = 0; i < nh->ndevs; i++) {
		struct neigh_dev *d = &nh->devs[i];

		if (!d->up)
			continue;
		for (size_t j = 0; j < d->naddrs; j++) {
			const struct emu_ifaddr *a = &d->addrs[j];

			if (a->family != q->family || (int)a->prefixlen <= q->len ||
			    !prefix_match((const uint8_t *)&a->addr, q->da, a->prefixlen))
				continue;
			q->dev = d;
			q->src = a;
			q->len = a->prefixlen;
		}
	}
}

/* The host's routes whose netdev is up, where longer than the connected route. */
static void route_table(struct emu_neigh *n, size_t host, struct neigh_host *nh,
			struct route_q *q)
{
	for (size_t i = 0; i < nh->h->nroutes; i++) {
		const struct emu_route *rt = &nh->h->routes[i];
		struct neigh_dev *d;

		if (rt->family != q->family || (int)rt->prefixlen <= q->len ||
		    !prefix_match((const uint8_t *)&rt->dst, q->da, rt->prefixlen))
			continue;
		d = emu_neigh_dev(n, host, rt->netdev);
		if (!d || !d->up)
			continue;
		q->dev = d;
		q->len = rt->prefixlen;
		q->gw = rt->has_gateway ? (const uint8_t *)&rt->gateway : NULL;
		q->src = NULL;
	}
}

/* The source address where none was given: NULL when the host has none of the family. */
static const uint8_t *route_source(struct neigh_host *nh, const struct route_q *q)
{
	const struct emu_ifaddr *a = q->src;

	if (!a)
		a = q->family == AF_INET ? v4_select(q->dev, q->gw ? q->gw : q->da)
					 : v6_select(q->dev, q->da);
	/* no address on the outgoing netdev: any of the host's */
	for (size_t i = 0; !a && i < nh->ndevs; i++)
		if (nh->devs[i].up)
			a = q->family == AF_INET ? v4_select(&nh->devs[i], q->da)
						 : v6_select(&nh->devs[i], q->da);
	return a ? (const uint8_t *)&a->addr : NULL;
}

/* The addresses and next hop of the route found (r has its netdev already). */
static void route_result(const struct route_q *q, struct emu_neigh_result *r,
			 uint8_t nexthop[16])
{
	uint32_t scope = q->scope;

	if (q->family == AF_INET6 && is_v6_linklocal(q->da))
		scope = (uint32_t)q->dev->idx + 2;
	set_sa(&r->src, q->family, q->sa, 0,
	       is_v6_linklocal(q->sa) && q->family == AF_INET6 ? scope : 0);
	set_sa(&r->dst, q->family, q->da, 0, scope);
	r->gateway = q->gw != NULL;
	memcpy(nexthop, q->gw ? q->gw : q->da, q->alen);
	/* copy_src_l2_addr(): routed RoCE is RoCEv2 of the family, everything else "IB" */
	r->network = r->gateway && !q->dev->ipoib
			     ? (q->family == AF_INET ? EMU_NET_IPV4 : EMU_NET_IPV6)
			     : EMU_NET_IB;
}

int emu_neigh_route_lookup(struct emu_neigh *n, size_t host, const struct sockaddr *src,
			   const struct sockaddr *dst, struct emu_neigh_result *r,
			   uint8_t nexthop[16])
{
	struct neigh_host *nh = emu_neigh_host(n, host);
	struct route_q q = { .len = -1 };
	struct neigh_dev *ld;
	int err;

	if (!nh || !dst || !r)
		return -EINVAL;
	err = route_args(nh, src, dst, &q);
	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->host = host;
	r->netdev = -1;
	r->device = -1;
	if (route_local(nh, &q, r, nexthop))
		return 0;
	/* the main table: connected subnets, then the host's routes */
	if (q.family == AF_INET6 && is_v6_linklocal(q.da)) {
		route_linklocal(nh, &q);
	} else {
		route_connected(nh, &q);
		route_table(n, host, nh, &q);
	}
	if (!q.dev && q.sa && emu_neigh_is_mcast(q.family, q.da) &&
	    emu_neigh_is_local(nh, q.family, q.sa, &ld)) {
		/* ip_route_output_key with a multicast destination and a local source (rdma_cm's
		 * bound id, whose bound_dev_if is the source's netdev): no route needed, out of
		 * the source's netdev (__ip_dev_find, or fib_lookup's "assume on link" with an
		 * oif) */
		q.dev = ld;
	}
	if (!q.dev)
		return -ENETUNREACH;
	fill_dev(r, q.dev);
	if (!q.sa) {
		q.sa = route_source(nh, &q);
		if (!q.sa)
			return -EADDRNOTAVAIL;
	}
	route_result(&q, r, nexthop);
	return 0;
}

int emu_neigh_route(struct emu_engine *e, size_t host, const struct sockaddr *src,
		    const struct sockaddr *dst, struct emu_neigh_result *r)
{
	struct emu_neigh *n = emu_neigh_get(e);
	uint8_t nh[16];

	if (!n)
		return -ENOMEM;
	return emu_neigh_route_lookup(n, host, src, dst, r, nh);
}
