/* The emulated host's ibacm (spec §4.5): what ibacm's acmp provider answers to librdmacm's
 * RESOLVE request, on a host whose fabric line says `acm on` (emu/net/ibacm_api.h).
 *
 * It resolves the request's DEST address (any SOURCE the request names is the library's own
 * business): the source it answers with is the address of the host's netdev that reaches the
 * destination (a non-link-local one first). On an InfiniBand port it also resolves the
 * destination to its GID (its address table: on the emulated fabric, the IB port behind the
 * netdev that owns the address) and asks the SA for a PathRecord (Get, component mask
 * DGID|SGID|TClass|PKey, acmp.c's acmp_resolve_path_sa; SA timeout 2000 ms, 2 retries:
 * ibacm's defaults) through the SA client on the wire, so the SA's faults apply. Its answer
 * becomes one PATH entry (flags GMP|PRIMARY|BIDIRECTIONAL = 0x2b, the record as the SA sent
 * it) after the SOURCE entry. When ibacm cannot resolve (no destination, no route, unknown
 * destination, SA timeout or error) the reply carries only the header with a non-zero status.
 * The waits run on the virtual clock. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "emu/ib/mad.h"
#include "emu/ib/sa_client.h"
#include "emu/net/ibacm_api.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"

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
 * reply carries an error status). */
static int acm_resolve_path(const struct emu_host *h, const struct emu_netdev *nd, int family,
			    const void *dst, struct emu_ibacm_ep *path)
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
		return -EDESTADDRREQ;
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
	path->type = EMU_IBACM_EP_INFO_PATH;
	emu_mad_record_pack(&emu_sa_path_rec_desc, &w.rec, (uint8_t *)&path->info.path);
	return 0;
}

static uint8_t acm_status(int err)
{
	switch (err) {
	case -EDESTADDRREQ:
		return EMU_IBACM_STATUS_EDESTADDR;
	case -ETIMEDOUT:
		return EMU_IBACM_STATUS_ETIMEDOUT;
	default:
		return EMU_IBACM_STATUS_ENODATA;
	}
}

/* The request's DEST entry: its family and address, or 0. */
static int dest_of(const struct emu_ibacm_msg *m, size_t len, const void **dst)
{
	size_t cnt;

	if (len < EMU_IBACM_HDR_LEN || m->hdr.length != len)
		return 0;
	cnt = (len - EMU_IBACM_HDR_LEN) / EMU_IBACM_EP_LEN;
	for (size_t i = 0; i < cnt && i < EMU_IBACM_MAX_EPS; i++) {
		const struct emu_ibacm_ep *ep = &m->ep[i];

		if (!(ep->flags & EMU_IBACM_EP_FLAG_DEST))
			continue;
		*dst = ep->info.addr;
		if (ep->type == EMU_IBACM_EP_INFO_ADDRESS_IP)
			return AF_INET;
		if (ep->type == EMU_IBACM_EP_INFO_ADDRESS_IP6)
			return AF_INET6;
	}
	return 0;
}

/* Resolves for host h into the reply's entries: 0, or an ACM status. */
static uint8_t resolve(const struct emu_host *h, int family, const void *dst,
		       struct emu_ibacm_msg *r)
{
	const struct emu_netdev *nd;
	const struct emu_ifaddr *src;
	struct emu_ibacm_ep *ep = r->ep;
	int i, err;

	if (!family)
		return EMU_IBACM_STATUS_EINVAL;
	i = emu_host_route(h, family, dst);
	if (i < 0 || !(src = netdev_source(&h->netdevs[i], family)))
		return EMU_IBACM_STATUS_ENODATA;
	nd = &h->netdevs[i];
	ep->flags = EMU_IBACM_EP_FLAG_SOURCE;
	ep->type = family == AF_INET ? EMU_IBACM_EP_INFO_ADDRESS_IP : EMU_IBACM_EP_INFO_ADDRESS_IP6;
	memcpy(ep->info.addr, &src->addr, family == AF_INET ? 4 : 16);
	ep++;
	if (nd->device >= 0 && nd->port && (size_t)nd->device < h->ndevices &&
	    nd->port <= h->devices[nd->device].nports &&
	    h->devices[nd->device].ports[nd->port - 1].link_layer == IBV_LINK_LAYER_INFINIBAND) {
		err = acm_resolve_path(h, nd, family, dst, ep);
		if (err)
			return acm_status(err);
		ep++;
	}
	r->hdr.length = (uint16_t)(EMU_IBACM_HDR_LEN + (size_t)(ep - r->ep) * EMU_IBACM_EP_LEN);
	return EMU_IBACM_STATUS_SUCCESS;
}

ssize_t emu_ibacm_exchange(const void *req, size_t len, void *reply, size_t size)
{
	const struct emu_host *h = emu_process_host();
	struct emu_ibacm_msg in, out;
	const void *dst = NULL;
	int family;

	if (!h)
		return -ENODEV;
	if (!h->acm)
		return -ECONNREFUSED;
	if (!len)
		return 0;
	memset(&in, 0, sizeof(in));
	memcpy(&in, req, len < sizeof(in) ? len : sizeof(in));
	family = dest_of(&in, len, &dst);
	memset(&out, 0, sizeof(out));
	out.hdr = in.hdr;
	out.hdr.opcode |= EMU_IBACM_OP_ACK;
	out.hdr.length = EMU_IBACM_HDR_LEN;
	out.hdr.status = resolve(h, family, family ? dst : NULL, &out);
	if (out.hdr.status)
		out.hdr.length = EMU_IBACM_HDR_LEN;
	if (size > out.hdr.length)
		size = out.hdr.length;
	memcpy(reply, &out, size);
	return (ssize_t)size;
}
