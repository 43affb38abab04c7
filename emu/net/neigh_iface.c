/* The hosts' interfaces: their addresses and links, the changes `ip addr` and `ip link` make,
 * the events that tell the listeners, and the hosts' generations. See emu/net/neigh.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/neigh_priv.h"
#include "util/failcall.h"

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

int emu_neigh_listen(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx)
{
	struct emu_neigh *n = emu_neigh_get(e);

	if (!n)
		return -EINVAL;
	return emu_neigh_add_listener(n, fn, ctx);
}

int emu_neigh_unlisten(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx)
{
	struct emu_neigh *n = emu_neigh_get(e);

	return n ? emu_neigh_del_listener(n, fn, ctx) : -ENOENT;
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
	int family = emu_neigh_sa_addr(sa, &p);

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
		if (emu_neigh_ifaddr_is(&d->addrs[i], a.family, &a.addr))
			return -EEXIST;
	na = emu_realloc(d->addrs, (d->naddrs + 1) * sizeof(*na));
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
		if (emu_neigh_ifaddr_is(&d->addrs[i], a.family, &a.addr) &&
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
	emu_neigh_carrier(d);
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

int emu_neigh_set_replies(struct emu_engine *e, size_t host, int netdev, bool replies)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);

	if (!d)
		return -ENOENT;
	d->quiet = !replies;
	return 0;
}
