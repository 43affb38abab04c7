/* Address resolution requests, as drivers/infiniband/core/addr.c runs them (rdma_resolve_ip,
 * addr_resolve, process_one_req, netevent_callback):
 *  - the route lookup's errors are returned at once (no request);
 *  - a request resolved at once (loopback, NOARP netdev, valid neighbour) completes from a
 *    zero-delay timer, i.e. asynchronously at the same virtual instant (queue_req with
 *    timeout = jiffies);
 *  - otherwise (-ENODATA: the neighbour is being resolved) it waits until its deadline
 *    (now + timeout), and runs again whenever any neighbour becomes valid; each run redoes the
 *    route lookup and the neighbour lookup (which restarts resolution of a FAILED entry); a
 *    run that fails at or after the deadline ends with -ETIMEDOUT, whatever the failure was. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/net/neigh_priv.h"
#include "emu/hca/pkt.h"

/* addr_resolve(): route, source, then the neighbour. 0, -ENODATA (resolving), or an error. */
static int addr_resolve(struct emu_neigh *n, size_t host, const struct sockaddr *src,
			const struct sockaddr *dst, struct emu_neigh_result *r)
{
	uint8_t nexthop[16];
	struct neigh_dev *d;
	struct neigh_entry *ne;
	int ret = emu_neigh_route_lookup(n, host, src, dst, r, nexthop);

	if (ret)
		return ret;
	d = emu_neigh_dev(n, host, r->netdev);
	if (r->loopback) {
		/* addr_resolve_neigh(): IFF_LOOPBACK, the destination's address is the source's */
		memcpy(r->dst_hw, r->src_hw, sizeof(r->dst_hw));
	} else if (d && d->ipoib && r->gateway) {
		/* fetch_ha(): a gateway on an IB network is resolved by asking user space over
		 * netlink (RDMA_NL_LS_OP_IP_RESOLVE, which ibacm answers); with no listener,
		 * ib_nl_fetch_ha() says -EADDRNOTAVAIL. The ibacm answer is not modelled. */
		return -EADDRNOTAVAIL;
	} else if (d && !d->ipoib && emu_neigh_is_mcast(dst->sa_family, nexthop)) {
		/* arp_mc_map / ndisc_mc_map: a multicast group's MAC, never solicited
		 * (01:00:5e + the low 23 bits; 33:33 + the low 32 bits) */
		if (dst->sa_family == AF_INET) {
			const uint8_t mc[6] = { 0x01, 0x00, 0x5e, nexthop[1] & 0x7f, nexthop[2],
						nexthop[3] };

			memcpy(r->dst_hw, mc, sizeof(mc));
		} else {
			r->dst_hw[0] = r->dst_hw[1] = 0x33;
			memcpy(r->dst_hw + 2, nexthop + 12, 4);
		}
	} else if (d && d->ipoib && emu_neigh_is_mcast(dst->sa_family, nexthop)) {
		/* arp_mc_map / ndisc_mc_map on ARPHRD_INFINIBAND: QPN 0xFFFFFF + the group's MGID
		 * (ip_ib_mc_map: ff12:401b:ffff:: + the low 28 bits; ipv6_ib_mc_map:
		 * ff12:601b:ffff + bytes 6..15), never solicited; an IPv6 group is joined when
		 * something is sent to it, not here */
		r->dst_hw[0] = 0;
		r->dst_hw[1] = r->dst_hw[2] = r->dst_hw[3] = 0xff;
		if (dst->sa_family == AF_INET6) {
			emu_neigh_ib6_mgid(nexthop, 0xffff, 2, r->dst_hw + 4);
		} else {
			memcpy(r->dst_hw + 4, emu_ipoib_bcast_mgid, 6);
			r->dst_hw[6] = 0x40; /* the IPv4 signature */
			memset(r->dst_hw + 10, 0, 6);
			r->dst_hw[16] = nexthop[0] & 0x0f;
			memcpy(r->dst_hw + 17, nexthop + 1, 3);
		}
	} else if (d && d->noarp) {
		/* arp_constructor: a NOARP netdev's neighbours carry the netdev's own address
		 * (measured on the reference VM: a RoCE path to a silent address behind the
		 * dummy d0 has d0's MAC as its destination MAC) */
		memcpy(r->dst_hw, d->nd->hwaddr, d->nd->hwaddr_len);
	} else if (d) {
		ne = emu_neigh_entry_get(d, dst->sa_family, nexthop);
		if (!ne)
			return -ENOMEM;
		if (!(ne->state & EMU_NUD_VALID)) {
			emu_neigh_event_send(ne); /* dst_fetch_ha() */
			return -ENODATA;
		}
		memcpy(r->dst_hw, ne->hw, d->nd->hwaddr_len);
	}
	/* GIDs: IB from the port and the IPoIB hardware addresses; RoCE the IP addresses */
	if (d && d->ipoib) {
		memcpy(r->sgid, d->gid, 16);
		memcpy(r->dgid, r->dst_hw + 4, 16);
	} else {
		emu_gid_from_sockaddr((const struct sockaddr *)&r->src, r->sgid);
		emu_gid_from_sockaddr((const struct sockaddr *)&r->dst, r->dgid);
	}
	return 0;
}

static void req_done(struct emu_neigh_req *q)
{
	*q->pprev = q->next;
	if (q->next)
		q->next->pprev = q->pprev;
	q->res.status = q->status;
	q->cb(q->ctx, &q->res);
	emu_kmem_free(q);
}

/* process_one_req() */
static void req_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_neigh_req *q = arg;

	(void)t;
	if (q->status == -ENODATA) {
		q->status = addr_resolve(q->n, q->host,
					 q->has_src ? (const struct sockaddr *)&q->src : NULL,
					 (const struct sockaddr *)&q->dst, &q->res);
		if (q->status && emu_clock_now(clk) >= q->deadline) {
			q->status = -ETIMEDOUT;
		} else if (q->status == -ENODATA) {
			emu_timer_arm_at(clk, &q->timer, q->deadline);
			return;
		}
	}
	req_done(q);
}

int emu_neigh_resolve(struct emu_engine *e, size_t host, const struct sockaddr *src,
		      const struct sockaddr *dst, uint64_t timeout_ns, emu_neigh_resolve_fn *cb,
		      void *ctx, struct emu_neigh_req **reqp)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct emu_neigh_req *q;
	uint64_t now;

	if (!n)
		return -ENOMEM;
	if (!dst || !cb || host >= n->nhosts)
		return -EINVAL;
	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	q = emu_kmem_zalloc(sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->n = n;
	q->host = host;
	q->cb = cb;
	q->ctx = ctx;
	memcpy(&q->dst, dst, dst->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						       : sizeof(struct sockaddr_in6));
	if (src && src->sa_family != AF_UNSPEC) {
		q->has_src = true;
		memcpy(&q->src, src, src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								: sizeof(struct sockaddr_in));
	}
	emu_timer_init(&q->timer, req_timer, q);
	q->status = addr_resolve(n, host, q->has_src ? (const struct sockaddr *)&q->src : NULL,
				 dst, &q->res);
	now = emu_clock_now(n->clk);
	switch (q->status) {
	case 0:
		q->deadline = now;
		break;
	case -ENODATA:
		q->deadline = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
		break;
	default: {
		int ret = q->status;

		emu_kmem_free(q);
		return ret;
	}
	}
	q->next = n->reqs;
	if (n->reqs)
		n->reqs->pprev = &q->next;
	q->pprev = &n->reqs;
	n->reqs = q;
	emu_timer_arm_at(n->clk, &q->timer, q->deadline);
	if (reqp)
		*reqp = q;
	return 0;
}

struct wait_ctx {
	bool done;
	struct emu_neigh_result r;
};

static void wait_cb(void *ctx, const struct emu_neigh_result *r)
{
	struct wait_ctx *w = ctx;

	w->r = *r;
	w->done = true;
}

static bool wait_done(void *arg)
{
	return ((const struct wait_ctx *)arg)->done;
}

int emu_neigh_resolve_wait(struct emu_engine *e, size_t host, const struct sockaddr *src,
			   const struct sockaddr *dst, uint64_t timeout_ns, const char *what,
			   struct emu_neigh_result *out)
{
	struct wait_ctx w = { .done = false };
	struct emu_neigh_req *q;
	int ret = emu_neigh_resolve(e, host, src, dst, timeout_ns, wait_cb, &w, &q);

	if (ret)
		return ret;
	/* the request's own deadline bounds the wait: no timeout of its own */
	ret = emu_engine_wait(e, what, wait_done, &w, EMU_ENGINE_FOREVER);
	if (!w.done) {
		emu_neigh_cancel(e, q);
		return ret ? -ret : -EDEADLK;
	}
	if (out)
		*out = w.r;
	return w.r.status;
}

void emu_neigh_cancel(struct emu_engine *e, struct emu_neigh_req *q)
{
	struct emu_neigh *n = emu_neigh_get(e);

	if (!n || !q)
		return;
	for (struct emu_neigh_req *p = n->reqs; p; p = p->next)
		if (p == q) {
			emu_timer_cancel(n->clk, &q->timer);
			*q->pprev = q->next;
			if (q->next)
				q->next->pprev = q->pprev;
			emu_kmem_free(q);
			return;
		}
}
