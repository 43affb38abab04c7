/* ibacm's part of rdma_getaddrinfo (spec §4.5).
 *
 * The real library sends every active lookup to ibacm (/run/ibacm.sock); when ibacm is not
 * running nothing happens and the result has no source address and no route. On the emulated
 * fabric "ibacm runs" is a property of the host (fabric file: acm on). When it does, ibacm
 * answers with the source address it would use for the destination (the address of the
 * host's netdev that reaches it, port 0), which fills ai_src_addr when the caller gave none.
 *
 * On an InfiniBand port ibacm (acmp provider) also resolves the destination to its GID (its
 * address table: on the emulated fabric, the IB port behind the netdev that owns the address)
 * and asks the SA for a PathRecord (Get, component mask DGID|SGID|TClass|PKey, acmp.c's
 * acmp_resolve_path_sa; SA timeout 2000 ms, 2 retries: ibacm's defaults) through the SA
 * client on the wire, so the SA's faults apply. Its answer becomes one ibv_path_data in
 * ai_route (flags GMP|PRIMARY|BIDIRECTIONAL = 0x2b, reserved 0, the record as the SA sent it)
 * plus the source address. When ibacm cannot resolve (unknown destination, SA timeout or
 * error) its reply has a non-zero status and the library ignores the whole reply: no route,
 * no source. The waits run on the virtual clock.
 *
 * With a route, the AF_IB entry with ai_connect goes in front of the result (lib/gai_afib.c),
 * since the emulated kernel takes AF_IB as Linux 6.1 does.
 *
 * NOT EMULATED: the acm.h socket protocol itself (conformance rows ACM-79..88 observe its
 * bytes). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "emu/sim/engine.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_client.h"

/* ibacm's defaults (ibacm_opts.cfg: timeout 2000, retries 2) */
#define ACM_SA_TIMEOUT_MS 2000
#define ACM_SA_RETRIES 2
/* IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL, as acmp answers */
#define ACM_PATH_FLAGS 0x2b

/* The first address of `family` on netdev nd, preferring a non-link-local one. */
static const struct emu_ifaddr *netdev_source(const struct emu_netdev *nd, int family)
{
	const struct emu_ifaddr *fallback = NULL;

	for (size_t i = 0; i < nd->naddrs; i++) {
		const struct emu_ifaddr *a = &nd->addrs[i];

		if (a->family != family)
			continue;
		if (family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&a->addr.v6)) {
			if (!fallback)
				fallback = a;
			continue;
		}
		return a;
	}
	return fallback;
}

struct acm_path_wait {
	bool done;
	int status;
	struct emu_sa_path_rec rec;
};

static void acm_path_done(struct emu_sa_query *q, int status, uint16_t mad_status,
			  const void *recs, size_t nrecs, size_t rec_size, void *ctx)
{
	struct acm_path_wait *w = ctx;

	(void)q;
	(void)mad_status;
	(void)rec_size;
	if (!status && !nrecs)
		status = -ENODATA;
	if (!status)
		memcpy(&w->rec, recs, sizeof(w->rec));
	w->status = status;
	w->done = true;
}

static bool acm_path_ready(void *arg)
{
	return ((const struct acm_path_wait *)arg)->done;
}

/* The GID 0 of the InfiniBand port behind the fabric netdev that owns address dst. */
static const struct emu_port *dest_port(const struct emu_fabric *f, int family, const void *dst)
{
	size_t alen = family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < f->nhosts; i++) {
		const struct emu_host *o = &f->hosts[i];

		for (size_t n = 0; n < o->nnetdevs; n++) {
			const struct emu_netdev *nd = &o->netdevs[n];

			for (size_t a = 0; a < nd->naddrs; a++) {
				if (nd->addrs[a].family != family || memcmp(&nd->addrs[a].addr, dst, alen))
					continue;
				if (nd->device < 0 || !nd->port)
					return NULL;
				const struct emu_device *d = &o->devices[nd->device];

				return nd->port <= d->nports ? &d->ports[nd->port - 1] : NULL;
			}
		}
	}
	return NULL;
}

/* acmp's path resolution from netdev nd of h towards dst: 0 with *path filled, or -errno (the
 * reply ibacm would send carries an error status). */
static int acm_resolve_path(const struct emu_host *h, const struct emu_netdev *nd, int family,
			    const void *dst, struct ibv_path_data *path)
{
	const struct emu_fabric *f = emu_process_fabric();
	const struct emu_device *dev;
	const struct emu_port *sp, *dp;
	struct emu_sa_query_opts opts = { ACM_SA_TIMEOUT_MS, ACM_SA_RETRIES };
	struct emu_sa_client_port from;
	struct acm_path_wait w = { .done = false };
	struct emu_sa_path_rec rec;
	struct emu_sa_query *q;
	struct emu_engine *e;
	int err = -ENOMEM, ret;

	if (!f || h < f->hosts || h >= f->hosts + f->nhosts)
		return -ENODEV;
	dev = &h->devices[nd->device];
	sp = &dev->ports[nd->port - 1];
	dp = dest_port(f, family, dst);
	if (!dp || dp->link_layer != IBV_LINK_LAYER_INFINIBAND || !dp->ngids || !sp->ngids)
		return -EDESTADDRREQ; /* ACM_STATUS_EDESTADDR */
	memset(&rec, 0, sizeof(rec));
	memcpy(rec.sgid, sp->gids[0].raw, 16);
	memcpy(rec.dgid, dp->gids[0].raw, 16);
	rec.pkey = 0xffff;
	rec.reversible = 1;
	rec.numb_path = 1;
	from.host = (size_t)(h - f->hosts);
	from.dev = (size_t)nd->device;
	from.port = nd->port;
	e = emu_engine_get();
	if (!e)
		return -ENODEV;
	emu_engine_lock(e);
	q = emu_sa_path_query(e, &from, &rec, EMU_PR_COMP_DGID | EMU_PR_COMP_SGID |
			      EMU_PR_COMP_TCLASS | EMU_PR_COMP_PKEY, false, &opts, acm_path_done,
			      &w, &err);
	if (!q) {
		emu_engine_unlock(e);
		return err;
	}
	/* the query's own timeout bounds the wait */
	ret = emu_engine_wait(e, "ibacm path record", acm_path_ready, &w, EMU_ENGINE_FOREVER);
	if (!w.done)
		emu_sa_query_cancel(q);
	emu_engine_unlock(e);
	if (!w.done)
		return ret ? -ret : -EDEADLK;
	if (w.status)
		return w.status;
	memset(path, 0, sizeof(*path));
	path->flags = ACM_PATH_FLAGS;
	emu_mad_record_pack(&emu_sa_path_rec_desc, &w.rec, (uint8_t *)&path->path);
	return 0;
}

/* ucma_ib_save_resp's source address: ibacm's choice, unless the result has one. */
static void save_source(struct rdma_addrinfo *rai, int family, const struct emu_ifaddr *src)
{
	if (rai->ai_src_len)
		return; /* a source the caller gave (or the lookup found) is kept */

	/* ibacm failures are silent in the real library: out of memory just means no source. */
	if (family == AF_INET) {
		struct sockaddr_in *sin = calloc(1, sizeof(*sin));

		if (!sin)
			return;
		sin->sin_family = AF_INET;
		sin->sin_addr = src->addr.v4;
		rai->ai_src_addr = (struct sockaddr *)sin;
		rai->ai_src_len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = calloc(1, sizeof(*sin6));

		if (!sin6)
			return;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = src->addr.v6;
		rai->ai_src_addr = (struct sockaddr *)sin6;
		rai->ai_src_len = sizeof(*sin6);
	}
}

void cma_acm_resolve(const struct emu_host *h, struct rdma_addrinfo **raip,
		     const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *rai = *raip;
	const struct emu_ifaddr *src;
	const struct emu_netdev *ndp;
	struct ibv_path_data *route = NULL;
	const void *dst;
	int family, nd;

	if (!h->acm || !rai->ai_dst_addr)
		return;
	family = rai->ai_dst_addr->sa_family;
	if (family == AF_INET)
		dst = &((struct sockaddr_in *)rai->ai_dst_addr)->sin_addr;
	else if (family == AF_INET6)
		dst = &((struct sockaddr_in6 *)rai->ai_dst_addr)->sin6_addr;
	else
		return;
	nd = emu_host_route(h, family, dst);
	if (nd < 0 || !(src = netdev_source(&h->netdevs[nd], family)))
		return;
	ndp = &h->netdevs[nd];
	if (ndp->device >= 0 && ndp->port && (size_t)ndp->device < h->ndevices &&
	    ndp->port <= h->devices[ndp->device].nports &&
	    h->devices[ndp->device].ports[ndp->port - 1].link_layer == IBV_LINK_LAYER_INFINIBAND) {
		route = calloc(1, sizeof(*route));
		if (!route)
			return;
		if (acm_resolve_path(h, ndp, family, dst, route)) {
			free(route); /* an error reply: ignored as a whole */
			return;
		}
		rai->ai_route = route;
		rai->ai_route_len = sizeof(*route);
	}
	save_source(rai, family, src);
	if (cma_af_ib_support() && !(hints->ai_flags & RAI_ROUTEONLY) && rai->ai_route_len)
		cma_resolve_af_ib(raip);
}
