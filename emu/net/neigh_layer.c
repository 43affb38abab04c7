/* The neighbour layer on the engine: created with it (an engine creation hook) or at first
 * use, with every host's interface state, its receivers, QPN claims and the RoCE GIDs'
 * listener; freed with the engine. See emu/net/neigh.h. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine_ext.h"
#include "emu/net/neigh_priv.h"
#include "emu/net/roce_gid.h"
#include "util/failcall.h"

static void neigh_free(void *p)
{
	struct emu_neigh *n = p;

	n->gen_fn = NULL; /* the flushes below are the end, not a change anybody must hear */
	emu_neigh_reqs_free(n);
	for (size_t h = 0; n->hosts && h < n->nhosts; h++) {
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
	d->addrs = emu_calloc(nd->naddrs ? nd->naddrs : 1, sizeof(*d->addrs));
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

	if (n) {
		/* a GID manager that could not be attached is attached at the next use: the
		 * kernel's roce_gid_mgmt always follows the netdevs */
		if (!n->gid_attached) {
			ret = emu_roce_gid_attach(e, n);
			if (ret) {
				errno = -ret;
				return NULL;
			}
			n->gid_attached = true;
		}
		return n;
	}
	n = emu_calloc(1, sizeof(*n));
	if (!n)
		goto nomem;
	n->e = e;
	n->f = emu_engine_fabric(e);
	n->clk = emu_engine_clock(e);
	/* a stream of its own, so that the neighbour layer does not shift other draws */
	emu_prng_seed(&root, n->f->seed);
	emu_prng_fork(&root, 0x6e65696768ull /* "neigh" */, &n->prng);
	n->nhosts = n->f->nhosts;
	n->hosts = emu_calloc(n->nhosts ? n->nhosts : 1, sizeof(*n->hosts));
	if (!n->hosts)
		goto nomem_free;
	for (size_t h = 0; h < n->nhosts; h++) {
		struct neigh_host *nh = &n->hosts[h];

		nh->n = n;
		nh->idx = h;
		nh->gen = 1; /* 0 says "no generation" in rdmaemud's answers */
		nh->h = &n->f->hosts[h];
		nh->ndevs = nh->h->nnetdevs;
		nh->devs = emu_calloc(nh->ndevs ? nh->ndevs : 1, sizeof(*nh->devs));
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
	ret = emu_roce_gid_attach(e, n);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	n->gid_attached = true;
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
