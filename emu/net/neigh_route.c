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

int emu_neigh_route_lookup(struct emu_neigh *n, size_t host, const struct sockaddr *src,
			   const struct sockaddr *dst, struct emu_neigh_result *r,
			   uint8_t nexthop[16])
{
	struct neigh_host *nh = emu_neigh_host(n, host);
	int family;
	const uint8_t *da, *sa = NULL;
	size_t alen;
	uint32_t scope = 0;
	struct neigh_dev *best_dev = NULL, *ld;
	const struct emu_ifaddr *best_src = NULL;
	const uint8_t *best_gw = NULL;
	int best_len = -1;

	if (!nh || !dst || !r)
		return -EINVAL;
	family = dst->sa_family;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	alen = emu_neigh_alen(family);
	da = family == AF_INET ? (const uint8_t *)&((const struct sockaddr_in *)dst)->sin_addr
			       : (const uint8_t *)&((const struct sockaddr_in6 *)dst)->sin6_addr;
	if (family == AF_INET6)
		scope = ((const struct sockaddr_in6 *)dst)->sin6_scope_id;
	if (src && src->sa_family != AF_UNSPEC) {
		static const uint8_t zero[16];

		if (src->sa_family != family)
			return -EINVAL;
		sa = family == AF_INET
			     ? (const uint8_t *)&((const struct sockaddr_in *)src)->sin_addr
			     : (const uint8_t *)&((const struct sockaddr_in6 *)src)->sin6_addr;
		if (!memcmp(sa, zero, alen))
			sa = NULL; /* the wildcard: as if no source was given */
		else if (family == AF_INET && !emu_neigh_is_local(nh, family, sa, NULL))
			return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->host = host;
	r->netdev = -1;
	r->device = -1;

	/* the local table */
	if (emu_neigh_is_local(nh, family, da, &ld) || (family == AF_INET && da[0] == 127) ||
	    (family == AF_INET6 && !memcmp(da, &in6addr_loopback, 16))) {
		r->loopback = true;
		if (emu_neigh_is_local(nh, family, da, &ld))
			fill_dev(r, ld); /* rdma_translate_ip(): the netdev holding the address */
		set_sa(&r->src, family, sa ? sa : da, 0, scope);
		set_sa(&r->dst, family, da, 0, scope);
		memcpy(nexthop, da, alen);
		return 0;
	}

	/* the main table: connected subnets, then the host's routes */
	for (size_t i = 0; i < nh->ndevs; i++) {
		struct neigh_dev *d = &nh->devs[i];

		if (!d->up)
			continue;
		if (family == AF_INET6 && is_v6_linklocal(da)) {
			if (scope ? scope == (uint32_t)i + 2 : best_dev == NULL) {
				const struct emu_ifaddr *a = v6_select(d, da);

				if (a && is_v6_linklocal((const uint8_t *)&a->addr.v6)) {
					best_dev = d;
					best_src = a;
					best_len = 64;
				}
			}
			continue;
		}
		for (size_t j = 0; j < d->naddrs; j++) {
			const struct emu_ifaddr *a = &d->addrs[j];

			if (a->family != family || (int)a->prefixlen <= best_len ||
			    !prefix_match((const uint8_t *)&a->addr, da, a->prefixlen))
				continue;
			best_dev = d;
			best_src = a;
			best_len = a->prefixlen;
		}
	}
	for (size_t i = 0; i < nh->h->nroutes && !(family == AF_INET6 && is_v6_linklocal(da));
	     i++) {
		const struct emu_route *rt = &nh->h->routes[i];
		struct neigh_dev *d;

		if (rt->family != family || (int)rt->prefixlen <= best_len ||
		    !prefix_match((const uint8_t *)&rt->dst, da, rt->prefixlen))
			continue;
		d = emu_neigh_dev(n, host, rt->netdev);
		if (!d || !d->up)
			continue;
		best_dev = d;
		best_len = rt->prefixlen;
		best_gw = rt->has_gateway ? (const uint8_t *)&rt->gateway : NULL;
		best_src = NULL;
	}
	if (!best_dev && sa && emu_neigh_is_mcast(family, da) &&
	    emu_neigh_is_local(nh, family, sa, &ld)) {
		/* ip_route_output_key with a multicast destination and a local source (rdma_cm's
		 * bound id, whose bound_dev_if is the source's netdev): no route needed, out of
		 * the source's netdev (__ip_dev_find, or fib_lookup's "assume on link" with an
		 * oif) */
		best_dev = ld;
	}
	if (!best_dev)
		return -ENETUNREACH;

	fill_dev(r, best_dev);
	if (!sa) {
		const struct emu_ifaddr *a = best_src;

		if (!a)
			a = family == AF_INET ? v4_select(best_dev, best_gw ? best_gw : da)
					      : v6_select(best_dev, da);
		if (!a) {
			/* no address on the outgoing netdev: any of the host's */
			for (size_t i = 0; !a && i < nh->ndevs; i++)
				if (nh->devs[i].up)
					a = family == AF_INET ? v4_select(&nh->devs[i], da)
							      : v6_select(&nh->devs[i], da);
			if (!a)
				return -EADDRNOTAVAIL;
		}
		sa = (const uint8_t *)&a->addr;
	}
	if (family == AF_INET6 && is_v6_linklocal(da))
		scope = (uint32_t)best_dev->idx + 2;
	set_sa(&r->src, family, sa, 0, is_v6_linklocal(sa) && family == AF_INET6 ? scope : 0);
	set_sa(&r->dst, family, da, 0, scope);
	r->gateway = best_gw != NULL;
	memcpy(nexthop, best_gw ? best_gw : da, alen);
	/* copy_src_l2_addr(): routed RoCE is RoCEv2 of the family, everything else "IB" */
	r->network = r->gateway && !best_dev->ipoib
			     ? (family == AF_INET ? EMU_NET_IPV4 : EMU_NET_IPV6)
			     : EMU_NET_IB;
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
