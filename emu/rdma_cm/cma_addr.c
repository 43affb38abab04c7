/* rdma_resolve_addr's kernel half (Linux 6.1 cma.c + addr.c): the emulated rdma_cm's address
 * module, filling emu/rdma_cm/cma.h's addr ops.
 *
 *   - a wildcard or loopback destination (cma_any_addr: 0.0.0.0, ::, 127/8, ::1) takes
 *     cma_resolve_loopback: an id without device is bound to the first device with an ACTIVE
 *     port (cma_bind_loopback: GID index 0, P_Key index 0, source address 127.0.0.1 / ::1, no
 *     netdev), the destination GID is the source GID, and ADDR_RESOLVED follows from the
 *     work queue (a zero-delay timer here: same virtual instant, never inside the command);
 *   - anything else is rdma_resolve_ip through the neighbour layer (emu/net/neigh.h): a missing
 *     route fails the command synchronously (-ENETUNREACH), an unanswered ARP/ND ends in
 *     ADDR_ERROR -ETIMEDOUT at exactly the caller's timeout, and on success addr_handler
 *     stores the routed source address (keeping the bound port) and, for an id without device,
 *     associates the device behind the source netdev (cma_acquire_dev_by_src_ip; -ENODEV
 *     when there is none). On failure the old source address comes back, as in addr_handler;
 *   - an AF_IB destination (cma_resolve_ib_addr) needs no neighbour: the id is attached to the
 *     port that has the destination's P_Key and its GID or subnet prefix (cma_resolve_ib_dev,
 *     on IB and RoCE ports alike), the destination GID is the address, and ADDR_RESOLVED
 *     follows from the work queue like the loopback's. ::1 is a loopback address here too.
 *
 * The netdev notifier of cma.c (cma_netdev_callback) only reacts to NETDEV_BONDING_FAILOVER
 * on a bond master, which emulated fabrics have no way to express: address removal, address
 * addition and link changes produce no rdma_cm event on Linux 6.1, so none is produced here
 * (test_cma_net checks it). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/sim/clock.h"
#include "util/kmem.h"
#include "emu/rdma_cm/cma_net.h"
#include "emu/net/neigh.h"

/* Per-id state (id->net[EMU_CMA_NET_ADDR]). */
struct addr_req {
	struct emu_cma_id *id;
	struct emu_timer t;           /* cma_resolve_loopback's work item */
	struct emu_neigh_req *neigh;  /* rdma_resolve_ip's request, until its callback ran */
};

size_t emu_cma_net_host(const struct emu_cma_id *id)
{
	return (size_t)(id->host - id->host->fabric->hosts);
}

const struct emu_port *emu_cma_net_port(const struct emu_cma_id *id)
{
	if (id->dev < 0 || (size_t)id->dev >= id->host->ndevices)
		return NULL;
	if (id->port < 1 || id->port > id->host->devices[id->dev].nports)
		return NULL;
	return &id->host->devices[id->dev].ports[id->port - 1];
}

bool emu_cma_net_is_ib(const struct emu_cma_id *id)
{
	const struct emu_port *p = emu_cma_net_port(id);

	return p && p->link_layer == 1 /* IBV_LINK_LAYER_INFINIBAND */;
}

static struct addr_req *req_of(struct emu_cma_id *id)
{
	struct addr_req *r = id->net[EMU_CMA_NET_ADDR];

	if (!r) {
		r = emu_kmem_zalloc(sizeof(*r));
		if (!r)
			return NULL;
		r->id = id;
		id->net[EMU_CMA_NET_ADDR] = r;
	}
	return r;
}

/* Copies the address part of `from` into the id's source address, keeping its port. */
static void set_src_addr(struct emu_cma_id *id, const struct sockaddr_storage *from)
{
	uint16_t port = emu_cma_port((const struct sockaddr *)&id->src);

	memset(&id->src, 0, sizeof(id->src));
	memcpy(&id->src, from, emu_cma_addr_size((const struct sockaddr *)from));
	emu_cma_set_port((struct sockaddr *)&id->src, port);
}

/* ---- cma_resolve_loopback ---- */

/* cma_bind_loopback: the first device with an ACTIVE port, else the first device's port 1. */
static int bind_loopback(struct emu_cma_id *id)
{
	const struct emu_host *h = id->host;
	int dev = -1;
	unsigned port = 1;
	const struct emu_port *p;

	/* cma_bind_loopback walks the registered devices (dev_list): removed ones are not */
	for (size_t d = 0; d < h->ndevices && dev < 0; d++)
		for (unsigned i = 0; !h->devices[d].removed && i < h->devices[d].nports; i++)
			if (h->devices[d].ports[i].state == 4 /* IBV_PORT_ACTIVE */) {
				dev = (int)d;
				port = i + 1;
				break;
			}
	for (size_t d = 0; d < h->ndevices && dev < 0; d++)
		if (!h->devices[d].removed)
			dev = (int)d;
	if (dev < 0)
		return -ENODEV;
	if (port > h->devices[dev].nports)
		return -ENODEV;
	p = &h->devices[dev].ports[port - 1];
	id->dev = dev;
	emu_cma_attach_dev(id);
	id->port = (uint8_t)port;
	id->netdev = -1; /* no bound netdev: RoCE route resolution then says ENODEV */
	id->gid_index = 0;
	id->pkey = p->npkeys ? p->pkeys[0] : 0xffff;
	/* cma_set_loopback: the source becomes 127.0.0.1 / ::1, the port stays */
	if (id->src.ss_family == AF_INET) {
		((struct sockaddr_in *)&id->src)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (id->src.ss_family == AF_INET6) {
		memset(&((struct sockaddr_in6 *)&id->src)->sin6_addr, 0, 16);
		((struct sockaddr_in6 *)&id->src)->sin6_addr.s6_addr[15] = 1;
	} else { /* AF_IB: ::1 as well (ib_addr_set(0, 0, 0, htonl(1))) */
		struct emu_sockaddr_ib *sib = (struct emu_sockaddr_ib *)&id->src;

		memset(sib->sib_addr, 0, 16);
		sib->sib_addr[15] = 1;
	}
	return 0;
}

static void loopback_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct addr_req *r = arg;

	(void)clk;
	(void)t;
	if (r->id->state != EMU_CMA_ADDR_QUERY) /* addr_handler's cma_comp_exch */
		return;
	emu_cma_trace("cma %u: loopback resolution done", r->id->handle);
	emu_cma_addr_resolved(r->id, 0);
}

static int resolve_loopback(struct emu_cma_id *id, struct addr_req *r)
{
	const struct emu_port *p;
	int ret;

	if (id->dev < 0) {
		ret = bind_loopback(id);
		if (ret)
			return ret;
	}
	/* rdma_addr_set_dgid(rdma_addr_get_sgid()) */
	p = emu_cma_net_port(id);
	memset(id->dgid, 0, 16);
	if (p && id->gid_index >= 0 && (size_t)id->gid_index < p->ngids)
		memcpy(id->dgid, p->gids[id->gid_index].raw, 16);
	id->dst_hw_len = 0;
	id->hop_limit = 0;
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	emu_timer_init(&r->t, loopback_done, r);
	emu_timer_arm_in(emu_engine_clock(emu_engine_get()), &r->t, 0);
	return 0;
}

/* ---- cma_resolve_ib_addr (an AF_IB destination) ---- */

/* ib_find_cached_pkey: the P_Key is in the port's table (membership bit ignored). */
static bool port_has_pkey(const struct emu_port *p, uint16_t pkey)
{
	for (size_t i = 0; i < p->npkeys; i++)
		if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return true;
	return false;
}

/* cma_resolve_ib_dev: the first port (RoCE ports have the AF_IB capability too) holding the
 * destination's P_Key whose GID table has the destination GID itself, or, on an ACTIVE port,
 * a GID of the same subnet prefix. The source address takes that GID (cma_translate_ib keeps
 * its P_Key). Measured on rxe (docs/cma.md "AF_IB"): P_Key 0 finds nothing (ENODEV), 0x7fff
 * and 0xffff find rxe's 0xffff; ::ffff:192.0.2.84 takes GID 1 by its zero prefix. The id has
 * no bound netdev, so a RoCE route resolution then fails with ENODEV, as on rxe. */
static int resolve_ib_dev(struct emu_cma_id *id)
{
	const struct emu_sockaddr_ib *dst = (const struct emu_sockaddr_ib *)&id->dst;
	struct emu_sockaddr_ib *src = (struct emu_sockaddr_ib *)&id->src;
	const struct emu_host *h = id->host;

	for (size_t d = 0; d < h->ndevices; d++) {
		for (unsigned pi = 0; !h->devices[d].removed && pi < h->devices[d].nports; pi++) {
			const struct emu_port *p = &h->devices[d].ports[pi];

			if (!port_has_pkey(p, ntohs(dst->sib_pkey)))
				continue;
			for (size_t g = 0; g < p->ngids; g++) {
				const uint8_t *gid = p->gids[g].raw;

				if (memcmp(gid, dst->sib_addr, 16) &&
				    (memcmp(gid, dst->sib_addr, 8) ||
				     p->state != 4 /* IBV_PORT_ACTIVE */))
					continue;
				id->dev = (int)d;
				emu_cma_attach_dev(id);
				id->port = (uint8_t)(pi + 1);
				id->gid_index = (int)g;
				id->pkey = ntohs(src->sib_pkey);
				/* IB: the port's IPoIB netdev, as an AF_IB bind takes it */
				id->netdev = -1;
				for (size_t n = 0; p->link_layer == 1 && n < h->nnetdevs; n++)
					if (h->netdevs[n].device == (int)d &&
					    h->netdevs[n].port == pi + 1)
						id->netdev = (int)n;
				memcpy(src->sib_addr, gid, 16);
				return 0;
			}
		}
	}
	return -ENODEV;
}

static void ib_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct addr_req *r = arg;

	(void)clk;
	(void)t;
	if (r->id->state != EMU_CMA_ADDR_QUERY)
		return;
	emu_cma_trace("cma %u: AF_IB resolution done", r->id->handle);
	emu_cma_addr_resolved(r->id, 0);
}

/* No neighbour lookup: the destination GID is the address, set at once; ADDR_RESOLVED comes
 * from the work queue (a zero-delay timer, as for the loopback). */
static int resolve_ib_addr(struct emu_cma_id *id, struct addr_req *r)
{
	if (id->dev < 0) {
		int ret = resolve_ib_dev(id);

		if (ret)
			return ret;
	}
	memcpy(id->dgid, ((const struct emu_sockaddr_ib *)&id->dst)->sib_addr, 16);
	id->dst_hw_len = 0;
	id->hop_limit = 0;
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	emu_timer_init(&r->t, ib_done, r);
	emu_timer_arm_in(emu_engine_clock(emu_engine_get()), &r->t, 0);
	return 0;
}

/* ---- rdma_resolve_ip + addr_handler ---- */

static void ip_done(void *ctx, const struct emu_neigh_result *res)
{
	struct addr_req *r = ctx;
	struct emu_cma_id *id = r->id;
	struct emu_cma_sockaddr old = id->src;
	int status = res->status;

	r->neigh = NULL;
	if (id->state != EMU_CMA_ADDR_QUERY)
		return;
	if (!status) {
		set_src_addr(id, &res->src);
		if (id->dev < 0) {
			/* cma_acquire_dev_by_src_ip; an IPoIB id on an Ethernet netdev: -EINVAL */
			if (id->ps == EMU_CMA_PS_IPOIB && res->hw_len != 20)
				status = -EINVAL;
			else
				status = res->device < 0 ? -ENODEV :
					emu_cma_acquire_dev(id, res->netdev);
		}
	}
	if (status) {
		id->src = old;
	} else {
		if (emu_cma_net_is_ib(id))
			memcpy(id->dgid, res->dgid, 16);
		else
			memset(id->dgid, 0, 16);
		memcpy(id->dst_hw, res->dst_hw, sizeof(id->dst_hw));
		id->dst_hw_len = res->hw_len;
		id->hop_limit = EMU_CMA_DEFAULT_HOPLIMIT;
	}
	emu_cma_trace("cma %u: address resolution status %d", id->handle, status);
	emu_cma_addr_resolved(id, status);
}

static int resolve_addr(struct emu_cma_id *id, uint32_t timeout_ms)
{
	struct addr_req *r = req_of(id);
	const struct sockaddr *src = (const struct sockaddr *)&id->src;
	const struct sockaddr *dst = (const struct sockaddr *)&id->dst;

	if (!r)
		return -ENOMEM;
	if (emu_cma_any_addr(dst) || emu_cma_loopback_addr(dst))
		return resolve_loopback(id, r);
	if (dst->sa_family == 27 /* AF_IB */)
		return resolve_ib_addr(id, r);
	/* rdma_addr_cancel of an earlier request that ended through an error path */
	if (r->neigh) {
		emu_neigh_cancel(emu_engine_get(), r->neigh);
		r->neigh = NULL;
	}
	return emu_neigh_resolve(emu_engine_get(), emu_cma_net_host(id),
				 emu_cma_any_addr(src) ? NULL : src, dst,
				 (uint64_t)timeout_ms * 1000000u, ip_done, r, &r->neigh);
}

static void cancel(struct emu_cma_id *id)
{
	struct addr_req *r = id->net[EMU_CMA_NET_ADDR];

	if (!r)
		return;
	if (r->neigh)
		emu_neigh_cancel(emu_engine_get(), r->neigh);
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	id->net[EMU_CMA_NET_ADDR] = NULL;
	emu_kmem_free(r);
}

static const struct emu_cma_addr_ops addr_ops = {
	.resolve_addr = resolve_addr,
	.cancel = cancel,
};

/* Installed when the library loads, as the kernel module registers with the core. */
__attribute__((constructor)) static void install(void)
{
	emu_cma_set_addr_ops(&addr_ops);
}
