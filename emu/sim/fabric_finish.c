/* The finishing pass of fabric loading: resolves names recorded by the readers, checks the
 * model for consistency and derives what the kernel would (GIDs from netdev addresses, active
 * MTU from the netdev MTU, port states, LIDs an SM would hand out, deterministic GUIDs).
 * Every error names the line of the directive at fault. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"
#include "util/failcall.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether every device and switch node GUID differs (true when out of memory: the caller's
 * pairwise check then decides). */
static bool guids_unique(const struct emu_fabric *f)
{
	size_t n = f->nswitches, k = 0;
	uint64_t *g;
	bool ok = true;

	for (size_t h = 0; h < f->nhosts; h++)
		n += f->hosts[h].ndevices;
	g = emu_malloc((n ? n : 1) * sizeof(*g));
	if (!g)
		return false;
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			g[k++] = f->hosts[h].devices[d].node_guid;
	for (size_t s = 0; s < f->nswitches; s++)
		g[k++] = f->switches[s].node_guid;
	qsort(g, n, sizeof(*g), cmp_u64);
	for (size_t i = 1; i < n && ok; i++)
		ok = g[i] != g[i - 1];
	free(g);
	return ok;
}

#define ETH 2
#define IB 1
#define RXE_MAX_HDR_LENGTH 80 /* rxe subtracts this from the netdev MTU (rxe_param.h) */
#define IPOIB_ENCAP_LEN 4

static int nomem(struct emu_loader *L)
{
	return emu_loader_error(L, NULL, ENOMEM, "out of memory");
}

static struct emu_port *port_at(struct emu_loader *L, int h, int d, unsigned p)
{
	return &L->f->hosts[h].devices[d].ports[p - 1];
}

static void ep_name(const struct emu_loader *L, const struct emu_endpoint *e, char *buf, size_t n)
{
	if (e->kind == EMU_EP_SWITCH_PORT)
		snprintf(buf, n, "%s/%u", L->switches[e->node].name, e->port);
	else
		snprintf(buf, n, "%s/%s/%u", L->f->hosts[e->node].name,
			 L->f->hosts[e->node].devices[e->device].name, e->port);
}

static uint8_t ep_link_layer(struct emu_loader *L, const struct emu_endpoint *e)
{
	if (e->kind == EMU_EP_SWITCH_PORT)
		return IB;
	return port_at(L, e->node, e->device, e->port)->link_layer;
}

/* ---------- links ---------- */

static int resolve_ep(struct emu_loader *L, const struct emu_pending_link *pl,
		      const struct emu_pending_ep *pe, struct emu_endpoint *e)
{
	uint32_t port;
	int h, d, s;

	memset(e, 0, sizeof(*e));
	if (emu_parse_u32_max(pe->part[pe->nparts - 1], 254, &port) || !port)
		return emu_loader_error(L, &pl->src, EINVAL, "expected a port number at the end of "
					"link endpoint, got '%s'", pe->part[pe->nparts - 1]);
	e->port = (uint8_t)port;
	if (pe->nparts == 2) {
		s = emu_loader_find_switch(L, pe->part[0]);
		if (s < 0)
			return emu_loader_error(L, &pl->src, EINVAL, "unknown switch '%s' in link",
						pe->part[0]);
		if (port > L->f->switches[s].nports)
			return emu_loader_error(L, &pl->src, EINVAL, "switch '%s' has no port %u "
						"(ports 1..%zu)", pe->part[0], port,
						L->f->switches[s].nports);
		e->kind = EMU_EP_SWITCH_PORT;
		e->node = s;
		return 0;
	}
	h = emu_loader_find_host(L, pe->part[0]);
	if (h < 0)
		return emu_loader_error(L, &pl->src, EINVAL, "unknown host '%s' in link",
					pe->part[0]);
	d = emu_loader_find_device(L, h, pe->part[1]);
	if (d < 0)
		return emu_loader_error(L, &pl->src, EINVAL, "host '%s' has no device '%s' (in "
					"link)", pe->part[0], pe->part[1]);
	if (port > L->f->hosts[h].devices[d].nports)
		return emu_loader_error(L, &pl->src, EINVAL, "device '%s/%s' has no port %u (in "
					"link)", pe->part[0], pe->part[1], port);
	e->kind = EMU_EP_HOST_PORT;
	e->node = h;
	e->device = d;
	return 0;
}

static bool ep_eq(const struct emu_endpoint *a, const struct emu_endpoint *b)
{
	return a->kind == b->kind && a->node == b->node && a->port == b->port &&
	       (a->kind == EMU_EP_SWITCH_PORT || a->device == b->device);
}

static void apply_faults(struct emu_faults *dst, const struct emu_faults *src, unsigned set)
{
	if (set & EMU_FSET_DELAY)
		dst->delay_ns = src->delay_ns;
	if (set & EMU_FSET_JITTER)
		dst->jitter_ns = src->jitter_ns;
	if (set & EMU_FSET_LOSS)
		dst->loss = src->loss;
	if (set & EMU_FSET_DUPLICATE)
		dst->duplicate = src->duplicate;
	if (set & EMU_FSET_REORDER)
		dst->reorder = src->reorder;
	if (set & EMU_FSET_CORRUPT)
		dst->corrupt = src->corrupt;
	if (set & EMU_FSET_DOWN)
		dst->down = src->down;
	if (set & EMU_FSET_MATCH) {
		dst->nmatch = src->nmatch;
		memcpy(dst->match, src->match, sizeof(dst->match));
	}
}

/* Each port belongs to at most one link: a second claim is a fixture error. */
static int claim(struct emu_loader *L, const struct emu_endpoint *e, int link)
{
	int *slot;

	if (e->kind == EMU_EP_SWITCH_PORT)
		slot = &L->f->switches[e->node].port_link[e->port];
	else
		slot = &port_at(L, e->node, e->device, e->port)->link;
	if (*slot >= 0) {
		char a[3 * EMU_NAME_MAX + 8];
		const struct emu_src *o = &L->link_src[*slot];

		ep_name(L, e, a, sizeof(a));
		return emu_loader_error(L, &L->link_src[link], EINVAL, "port %s is linked twice "
					"(also at %s:%u)", a, o->file, o->line);
	}
	*slot = link;
	return 0;
}

static int finish_links(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;
	size_t topo_links = f->nlinks;

	for (size_t i = 0; i < L->nlinks; i++) {
		struct emu_pending_link *pl = &L->links[i];
		struct emu_endpoint a, b;
		int merged = -1;

		if (resolve_ep(L, pl, &pl->a, &a))
			return -1;
		if (!pl->b.nparts)
			continue;
		if (resolve_ep(L, pl, &pl->b, &b))
			return -1;
		if (ep_eq(&a, &b))
			return emu_loader_error(L, &pl->src, EINVAL, "link from a port to itself");
		/* a link line naming a cable from a topology file adds settings to it */
		for (size_t k = 0; k < topo_links; k++) {
			struct emu_link *lk = &f->links[k];

			if ((ep_eq(&lk->a, &a) && ep_eq(&lk->b, &b)) ||
			    (ep_eq(&lk->a, &b) && ep_eq(&lk->b, &a)))
				merged = (int)k;
		}
		if (merged < 0) {
			struct emu_src keep = L->cur;

			L->cur = pl->src;
			merged = emu_loader_add_link(L, a, b);
			L->cur = keep;
			if (merged < 0)
				return nomem(L);
		} else if (L->link_set[merged] & ~(EMU_FSET_WIDTH | EMU_FSET_SPEED) & pl->set) {
			return emu_loader_error(L, &pl->src, EINVAL, "link settings given twice for "
						"the same cable (also at %s:%u)",
						L->link_src[merged].file, L->link_src[merged].line);
		}
		apply_faults(&f->links[merged].faults, &pl->faults, pl->set);
		if (pl->set & EMU_FSET_WIDTH)
			f->links[merged].width = pl->width;
		if (pl->set & EMU_FSET_SPEED)
			f->links[merged].speed = pl->speed;
		L->link_set[merged] |= pl->set;
	}
	/* every link starts from the fabric defaults, then its own settings */
	for (size_t i = 0; i < f->nlinks; i++) {
		struct emu_faults own = f->links[i].faults;

		f->links[i].faults = f->default_faults;
		apply_faults(&f->links[i].faults, &own, L->link_set[i]);
	}
	/* claims, link-layer agreement */
	for (size_t i = 0; i < f->nlinks; i++) {
		struct emu_link *lk = &f->links[i];
		uint8_t la = ep_link_layer(L, &lk->a), lb = ep_link_layer(L, &lk->b);

		if (la != lb) {
			char a[3 * EMU_NAME_MAX + 8], b[3 * EMU_NAME_MAX + 8];

			ep_name(L, &lk->a, a, sizeof(a));
			ep_name(L, &lk->b, b, sizeof(b));
			return emu_loader_error(L, &L->link_src[i], EINVAL, "link layer mismatch: %s "
						"is %s, %s is %s", a, emu_link_layer_str(la), b,
						emu_link_layer_str(lb));
		}
		if (claim(L, &lk->a, (int)i) || claim(L, &lk->b, (int)i))
			return -1;
		if (!(L->link_set[i] & EMU_FSET_WIDTH))
			lk->width = la == IB ? 2 : 1;
		if (!(L->link_set[i] & EMU_FSET_SPEED))
			lk->speed = la == IB ? 4 : 1;
	}
	/* `X none`: X stays unconnected, and no other link may take it */
	for (size_t i = 0; i < L->nlinks; i++) {
		struct emu_pending_link *pl = &L->links[i];
		struct emu_endpoint a;

		if (pl->b.nparts)
			continue;
		resolve_ep(L, pl, &pl->a, &a);
		{
			int *slot = a.kind == EMU_EP_SWITCH_PORT
					    ? &f->switches[a.node].port_link[a.port]
					    : &port_at(L, a.node, a.device, a.port)->link;
			char n[3 * EMU_NAME_MAX + 8];

			ep_name(L, &a, n, sizeof(n));
			if (*slot >= 0)
				return emu_loader_error(L, &pl->src, EINVAL, "port %s is linked twice "
							"(also at %s:%u)", n,
							L->link_src[*slot].file,
							L->link_src[*slot].line);
			for (size_t k = 0; k < i; k++) {
				struct emu_endpoint o;

				if (L->links[k].b.nparts)
					continue;
				resolve_ep(L, &L->links[k], &L->links[k].a, &o);
				if (ep_eq(&o, &a))
					return emu_loader_error(L, &pl->src, EINVAL, "port %s is linked "
								"twice (also at %s:%u)", n,
								L->links[k].src.file,
								L->links[k].src.line);
			}
		}
	}
	return 0;
}

/* ---------- netdevs ---------- */

static int bind_netdevs(struct emu_loader *L)
{
	for (size_t h = 0; h < L->f->nhosts; h++) {
		struct emu_host *ho = &L->f->hosts[h];

		for (size_t n = 0; n < ho->nnetdevs; n++) {
			struct emu_netdev *nd = &ho->netdevs[n];
			struct emu_netdev_meta *nm = &L->hosts[h].netdevs[n];
			int d;

			if (!nm->rdma_dev[0])
				continue;
			d = emu_loader_find_device(L, (int)h, nm->rdma_dev);
			if (d < 0)
				return emu_loader_error(L, &nm->src, EINVAL, "netdev '%s' is bound to "
							"device '%s', which host '%s' does not have",
							nd->name, nm->rdma_dev, ho->name);
			if (nm->rdma_port > ho->devices[d].nports)
				return emu_loader_error(L, &nm->src, EINVAL, "netdev '%s' is bound to "
							"port %u of '%s', which has %zu port(s)",
							nd->name, nm->rdma_port, nm->rdma_dev,
							ho->devices[d].nports);
			nd->device = d;
			nd->port = (uint8_t)nm->rdma_port;
		}
	}
	return 0;
}

static bool netdev_is_ipoib(struct emu_loader *L, int h, const struct emu_netdev *nd)
{
	return nd->device >= 0 && port_at(L, h, nd->device, nd->port)->link_layer == IB;
}

/* Ethernet netdevs: deterministic locally administered MACs 02:00:00:HH:HH:NN (1-based host
 * and netdev numbers) unless given; MTU 1500. */
static int eth_defaults(struct emu_loader *L)
{
	for (size_t h = 0; h < L->f->nhosts; h++) {
		struct emu_host *ho = &L->f->hosts[h];

		for (size_t n = 0; n < ho->nnetdevs; n++) {
			struct emu_netdev *nd = &ho->netdevs[n];
			struct emu_netdev_meta *nm = &L->hosts[h].netdevs[n];
			bool ipoib = netdev_is_ipoib(L, (int)h, nd);

			if (nm->hwaddr_set && nd->hwaddr_len != (ipoib ? 20 : 6))
				return emu_loader_error(L, &nm->src, EINVAL, "netdev '%s' is %s: its "
							"hardware address has %d bytes, not %u",
							nd->name, ipoib ? "IPoIB" : "Ethernet",
							ipoib ? 20 : 6, nd->hwaddr_len);
			if (ipoib)
				continue;
			if (!nm->hwaddr_set) {
				uint8_t mac[6] = { 0x02, 0, 0, (uint8_t)((h + 1) >> 8),
						   (uint8_t)(h + 1), (uint8_t)(n + 1) };

				memcpy(nd->hwaddr, mac, 6);
				nd->hwaddr_len = 6;
			}
			if (!nm->mtu_set)
				nd->mtu = 1500;
		}
	}
	return 0;
}

/* ---------- GUIDs ---------- */

static const struct emu_netdev *first_netdev_of(const struct emu_host *ho, int d, unsigned port)
{
	for (size_t n = 0; n < ho->nnetdevs; n++)
		if (ho->netdevs[n].device == d && (port == 0 || ho->netdevs[n].port == port))
			return &ho->netdevs[n];
	return NULL;
}

static int guids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++) {
		struct emu_host *ho = &f->hosts[h];

		for (size_t d = 0; d < ho->ndevices; d++) {
			struct emu_device *dv = &ho->devices[d];
			struct emu_dev_meta *dm = &L->hosts[h].devs[d];
			const struct emu_netdev *nd = first_netdev_of(ho, (int)d, 0);

			if (!dm->guid_set) {
				/* rxe takes its node GUID from the MAC, as an EUI-64 */
				if (dv->nports && dv->ports[0].link_layer == ETH && nd)
					dv->node_guid = emu_eui64_from_mac(nd->hwaddr);
				else
					dv->node_guid = 0x0200000000000000ull |
							(uint64_t)(h + 1) << 16 | (uint64_t)(d + 1) << 8;
			}
			if (!dm->sysguid_set)
				dv->sys_image_guid = dv->node_guid;
			for (size_t p = 0; p < dv->nports; p++)
				if (!(dm->ports[p].set & EMU_PSET_GUID))
					dv->ports[p].port_guid = dv->ports[p].link_layer == ETH
									 ? dv->node_guid
									 : dv->node_guid + p + 1;
			if (!dv->node_desc[0])
				snprintf(dv->node_desc, sizeof(dv->node_desc), "%.30s %.30s", ho->name,
					 dv->name);
		}
	}
	for (size_t s = 0; s < f->nswitches; s++)
		if (!f->switches[s].node_guid)
			f->switches[s].node_guid = 0x0200000100000000ull | (uint64_t)(s + 1) << 8;
	for (size_t s = 0; s < f->nswitches; s++)
		if (!f->switches[s].sys_image_guid)
			f->switches[s].sys_image_guid = f->switches[s].node_guid;
	/* node GUIDs identify nodes to the SM: two equal ones are a broken fixture (sorted
	 * first: the pairwise search that names the culprits runs only when there is one) */
	if (!guids_unique(f))
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
			uint64_t g = f->hosts[h].devices[d].node_guid;

			for (size_t h2 = h; h2 < f->nhosts; h2++)
				for (size_t d2 = h2 == h ? d + 1 : 0; d2 < f->hosts[h2].ndevices; d2++)
					if (f->hosts[h2].devices[d2].node_guid == g)
						return emu_loader_error(
							L, &L->hosts[h2].devs[d2].src, EINVAL,
							"device '%s/%s' has the node GUID of '%s/%s' "
							"(0x%016llx)", f->hosts[h2].name,
							f->hosts[h2].devices[d2].name, f->hosts[h].name,
							f->hosts[h].devices[d].name, (unsigned long long)g);
			for (size_t s = 0; s < f->nswitches; s++)
				if (f->switches[s].node_guid == g)
					return emu_loader_error(L, &L->switches[s].src, EINVAL,
								"switch '%s' has the node GUID of "
								"device '%s/%s'", L->switches[s].name,
								f->hosts[h].name,
								f->hosts[h].devices[d].name);
		}
	return 0;
}

/* ---------- SM, port states, LIDs ---------- */

static bool any_ib_port(const struct emu_fabric *f)
{
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++)
				if (f->hosts[h].devices[d].ports[p].link_layer == IB)
					return true;
	return f->nswitches > 0;
}

static int lid_owner(struct emu_loader *L, uint16_t lid, char *who, size_t n)
{
	struct emu_fabric *f = L->f;

	for (size_t s = 0; s < f->nswitches; s++) {
		struct emu_switch *sw = &f->switches[s];

		if (sw->lid && lid >= sw->lid && lid < sw->lid + (1u << sw->lmc)) {
			snprintf(who, n, "switch %s", L->switches[s].name);
			return 1;
		}
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];

				if (po->link_layer == IB && po->lid && lid >= po->lid &&
				    lid < po->lid + (1u << po->lmc)) {
					snprintf(who, n, "%s/%s/%zu", f->hosts[h].name,
						 f->hosts[h].devices[d].name, p + 1);
					return 1;
				}
			}
	return 0;
}

/* Every LID range (lid .. lid + 2^lmc - 1) must be aligned and belong to one port. */
struct lid_item {
	uint16_t lid;
	uint8_t lmc;
	char what[3 * EMU_NAME_MAX + 16];
	const struct emu_src *src;
};

static int check_lids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;
	struct lid_item *items = NULL;
	size_t n = 0;
	bool overlap = false;
	int r = 0;

	for (size_t s = 0; s < f->nswitches; s++) {
		int i;

		if (!f->switches[s].lid)
			continue;
		if ((i = emu_array_push(&items, &n, sizeof(*items))) < 0)
			goto oom;
		items[i].lid = f->switches[s].lid;
		items[i].lmc = f->switches[s].lmc;
		snprintf(items[i].what, sizeof(items[i].what), "switch %s", L->switches[s].name);
		items[i].src = &L->switches[s].src;
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];
				int i;

				if (po->link_layer != IB || !po->lid)
					continue;
				if ((i = emu_array_push(&items, &n, sizeof(*items))) < 0)
					goto oom;
				items[i].lid = po->lid;
				items[i].lmc = po->lmc;
				snprintf(items[i].what, sizeof(items[i].what), "%s/%s/%zu",
					 f->hosts[h].name, f->hosts[h].devices[d].name, p + 1);
				items[i].src = &L->hosts[h].devs[d].ports[p].src;
			}
	/* a LID map first: the pairwise search that names the culprits runs only on an overlap */
	{
		uint8_t *used = emu_calloc(0x10000 + 256, 1);

		if (!used)
			goto oom;
		for (size_t i = 0; i < n && !overlap; i++)
			for (uint32_t l = items[i].lid; l < items[i].lid + (1u << items[i].lmc); l++)
				overlap |= used[l]++ != 0;
		free(used);
	}
	for (size_t i = 0; i < n && !r; i++) {
		unsigned span = 1u << items[i].lmc;

		if (items[i].lid % span) {
			r = emu_loader_error(L, items[i].src, EINVAL, "LID %u of %s is not a multiple "
					     "of 2^lmc (%u)", items[i].lid, items[i].what, span);
		} else if (items[i].lid + span - 1 > 0xbfff) {
			r = emu_loader_error(L, items[i].src, EINVAL, "LIDs of %s run past 49151",
					     items[i].what);
		}
		for (size_t j = 0; overlap && j < i && !r; j++) {
			unsigned lo = items[j].lid, hi = lo + (1u << items[j].lmc);

			if (items[i].lid < hi && lo < items[i].lid + span)
				r = emu_loader_error(L, items[i].src, EINVAL, "LID %u of %s is also "
						     "used by %s", items[i].lid > lo ? items[i].lid : lo,
						     items[i].what, items[j].what);
		}
	}
	free(items);
	return r;
oom:
	free(items);
	return nomem(L);
}

static uint16_t next_free_lid(struct emu_loader *L, uint16_t *next)
{
	char who[8];

	while (*next <= 0xbfff && lid_owner(L, *next, who, sizeof(who)))
		(*next)++;
	return *next <= 0xbfff ? (*next)++ : 0;
}

/* A port's MTUs: the maximum 4096 unless given, the active one as rxe derives it. */
static int port_mtus(struct emu_loader *L, size_t h, size_t d, size_t p,
		     const struct emu_netdev *nd)
{
	struct emu_device *dv = &L->f->hosts[h].devices[d];
	struct emu_port *po = &dv->ports[p];
	struct emu_port_meta *pm = &L->hosts[h].devs[d].ports[p];
	bool eth = po->link_layer == ETH;

	if (!(pm->set & EMU_PSET_MAX_MTU))
		po->max_mtu = 5;
	if (!(pm->set & EMU_PSET_ACTIVE_MTU)) {
		/* rxe: largest IB MTU that fits the netdev MTU minus headers */
		uint8_t m = eth ? emu_mtu_from_bytes((nd ? nd->mtu : 1500) - RXE_MAX_HDR_LENGTH)
				: 5;

		po->active_mtu = m < po->max_mtu ? m : po->max_mtu;
	}
	if (po->active_mtu > po->max_mtu)
		return emu_loader_error(L, &pm->src, EINVAL, "active MTU %d of port %zu of '%s' "
					"exceeds its MTU %d", emu_mtu_bytes(po->active_mtu), p + 1,
					dv->name, emu_mtu_bytes(po->max_mtu));
	return 0;
}

/* A port's P_Key table: the default P_Key alone unless given. */
static int port_pkeys(struct emu_loader *L, size_t h, size_t d, size_t p)
{
	struct emu_device *dv = &L->f->hosts[h].devices[d];
	struct emu_port *po = &dv->ports[p];
	struct emu_port_meta *pm = &L->hosts[h].devs[d].ports[p];
	bool eth = po->link_layer == ETH;

	if (!(pm->set & EMU_PSET_PKEY_TBL_LEN))
		po->pkey_tbl_len = eth ? 1 : 128;
	if (!(pm->set & EMU_PSET_PKEYS)) {
		po->pkeys = emu_malloc(sizeof(uint16_t));
		if (!po->pkeys)
			return nomem(L);
		po->pkeys[0] = 0xffff;
		po->npkeys = 1;
	}
	if (po->npkeys > po->pkey_tbl_len)
		return emu_loader_error(L, &pm->src, EINVAL, "port %zu of '%s' has %zu P_Keys but "
					"a table of %u", p + 1, dv->name, po->npkeys,
					po->pkey_tbl_len);
	return 0;
}

/* A port's logical and physical state, where the files gave none. */
static void port_state(struct emu_loader *L, struct emu_port *po,
		       const struct emu_port_meta *pm, const struct emu_netdev *nd)
{
	bool eth = po->link_layer == ETH;

	if (!(pm->set & EMU_PSET_STATE)) {
		if (eth)
			/* rxe follows the netdev: up (dummy: carrier on) = active */
			po->state = nd && nd->up ? 4 : 1;
		else if (po->link >= 0)
			/* without an SM a linked IB port stays in INIT */
			po->state = L->f->sm.present ? 4 : 2;
		else
			po->state = 1;
	}
	if (po->state == 1)
		po->phys_state = !eth && !(pm->set & EMU_PSET_STATE) ? 2 : 3;
	else
		po->phys_state = 5;
}

/* What the files left out of port p of device d of host h, checked against what they said. */
static int port_defaults(struct emu_loader *L, size_t h, size_t d, size_t p)
{
	struct emu_fabric *f = L->f;
	struct emu_host *ho = &f->hosts[h];
	struct emu_device *dv = &ho->devices[d];
	struct emu_port *po = &dv->ports[p];
	struct emu_port_meta *pm = &L->hosts[h].devs[d].ports[p];
	const struct emu_netdev *nd = first_netdev_of(ho, (int)d, (unsigned)p + 1);
	bool eth = po->link_layer == ETH;
	int err;

	if (eth && (pm->set & (EMU_PSET_LID | EMU_PSET_SM_LID | EMU_PSET_LMC)))
		return emu_loader_error(L, &pm->src, EINVAL, "port %zu of '%s' is Ethernet: it "
					"has no LID, LMC or SM LID", p + 1, dv->name);
	err = port_mtus(L, h, d, p, nd);
	if (err)
		return err;
	if (!(pm->set & EMU_PSET_WIDTH))
		po->active_width = po->link >= 0 ? f->links[po->link].width : (eth ? 1 : 2);
	if (!(pm->set & EMU_PSET_SPEED))
		po->active_speed = po->link >= 0 ? f->links[po->link].speed : (eth ? 1 : 4);
	if (!(pm->set & EMU_PSET_GID_TBL_LEN))
		po->gid_tbl_len = eth ? 1024 : 128;
	err = port_pkeys(L, h, d, p);
	if (err)
		return err;
	port_state(L, po, pm, nd);
	if (!eth && !(pm->set & EMU_PSET_LID) && (!f->sm.present || po->state < 3))
		po->lid = 0;
	return 0;
}

/* LIDs the SM hands out where the files gave none: switches first, then CA ports. */
static int sm_assign_lids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;
	uint16_t next = 1;

	for (size_t s = 0; s < f->nswitches; s++)
		if (!f->switches[s].lid && !(f->switches[s].lid = next_free_lid(L, &next)))
			return emu_loader_error(L, &L->switches[s].src, EINVAL, "out of LIDs");
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];

				if (po->link_layer != IB || po->lid || po->state < 3)
					continue;
				/* ranges with LMC > 0 start on a multiple of 2^lmc */
				while (next % (1u << po->lmc))
					next++;
				po->lid = next_free_lid(L, &next);
				if (!po->lid)
					return emu_loader_error(L, &L->hosts[h].devs[d].ports[p].src,
								EINVAL, "out of LIDs");
				next = (uint16_t)(po->lid + (1u << po->lmc));
			}
	return 0;
}

/* The SM's LID: the given one, which must be some switch's or port's, else the first
 * switch's, else the first active CA port's; 0 without an SM. */
static int sm_lid(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;
	char who[3 * EMU_NAME_MAX + 16];

	if (!f->sm.present) {
		f->sm.sm_lid = 0;
		return 0;
	}
	if (L->sm_lid_set) {
		if (!lid_owner(L, f->sm.sm_lid, who, sizeof(who)))
			return emu_loader_error(L, &L->sm_src, EINVAL, "SM LID %u is not the LID of "
						"any switch or IB port", f->sm.sm_lid);
		return 0;
	}
	f->sm.sm_lid = 0;
	if (f->nswitches)
		f->sm.sm_lid = f->switches[0].lid;
	for (size_t h = 0; h < f->nhosts && !f->sm.sm_lid; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices && !f->sm.sm_lid; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];

				if (po->link_layer == IB && po->lid) {
					f->sm.sm_lid = po->lid;
					break;
				}
			}
	return 0;
}

/* Every IB port's SM LID (where the files gave none; 0 for a port without a LID) and SM SL. */
static void ports_sm(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];

				if (po->link_layer == IB &&
				    !(L->hosts[h].devs[d].ports[p].set & EMU_PSET_SM_LID))
					po->sm_lid = po->lid ? f->sm.sm_lid : 0;
				if (po->link_layer == IB)
					po->sm_sl = f->sm.sl;
			}
}

static int ports_and_lids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;
	int err;

	if (!L->sm_set)
		f->sm.present = any_ib_port(f);
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				err = port_defaults(L, h, d, p);
				if (err)
					return err;
			}
	if (f->sm.present) {
		err = sm_assign_lids(L);
		if (err)
			return err;
	}
	if (check_lids(L))
		return -1;
	err = sm_lid(L);
	if (err)
		return err;
	ports_sm(L);
	return 0;
}

/* ---------- GIDs ---------- */

static int push_gid(struct emu_port *po, const uint8_t raw[16], enum emu_gid_type type, int nd)
{
	int i;

	for (size_t k = 0; k < po->ngids; k++)
		if (!memcmp(po->gids[k].raw, raw, 16))
			return 0; /* the kernel keeps one entry per GID value and type */
	i = emu_array_push(&po->gids, &po->ngids, sizeof(*po->gids));
	if (i < 0)
		return -1;
	memcpy(po->gids[i].raw, raw, 16);
	po->gids[i].type = type;
	po->gids[i].netdev = nd;
	return 0;
}

static int ib_gids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[h].devices[d].ports[p];
				struct emu_port_meta *pm = &L->hosts[h].devs[d].ports[p];

				if (po->link_layer != IB)
					continue;
				if (pm->set & EMU_PSET_GIDS) {
					for (size_t k = 0; k < po->ngids; k++)
						po->gids[k].type = EMU_GID_IB;
				} else {
					uint8_t raw[16];

					emu_gid_set(raw, f->sm.subnet_prefix, po->port_guid);
					if (push_gid(po, raw, EMU_GID_IB, -1))
						return nomem(L);
				}
				if (po->ngids > po->gid_tbl_len)
					return emu_loader_error(L, &pm->src, EINVAL, "port %zu of '%s' has "
								"%zu GIDs but a table of %u", p + 1,
								f->hosts[h].devices[d].name, po->ngids,
								po->gid_tbl_len);
			}
	return 0;
}

/* IPv6 link-local addresses, as Linux's addrconf gives every up netdev with IPv6 enabled:
 * fe80::/64 with the EUI-64 of the MAC (Ethernet) or the port GUID (IPoIB: the last 8 bytes
 * of the 20-byte hardware address). They matter to the library: glibc's AI_ADDRCONFIG counts
 * any IPv6 address but ::1, so a real host with IPv4 only on its interfaces still "has IPv6"
 * (measured in the reference VM: d0 and s0 carry fe80::ff:fe00:101/102). */
static int link_local_addrs(struct emu_loader *L)
{
	for (size_t h = 0; h < L->f->nhosts; h++) {
		struct emu_host *ho = &L->f->hosts[h];

		for (size_t n = 0; n < ho->nnetdevs; n++) {
			struct emu_netdev *nd = &ho->netdevs[n];
			struct emu_ifaddr ll;
			uint64_t iid;
			int i;

			if (!nd->up || !nd->ipv6 || (nd->hwaddr_len != 6 && nd->hwaddr_len != 20))
				continue;
			for (i = 0; i < (int)nd->naddrs; i++)
				if (nd->addrs[i].family == AF_INET6 &&
				    IN6_IS_ADDR_LINKLOCAL(&nd->addrs[i].addr.v6))
					break;
			if (i < (int)nd->naddrs)
				continue; /* the file gave one */
			if (nd->hwaddr_len == 6) {
				iid = emu_eui64_from_mac(nd->hwaddr);
			} else {
				/* addrconf_ifid_infiniband(): the GUID with the U/L bit set */
				iid = 0;
				for (int b = 12; b < 20; b++)
					iid = iid << 8 | nd->hwaddr[b];
				iid |= 0x0200000000000000ull;
			}
			memset(&ll, 0, sizeof(ll));
			ll.family = AF_INET6;
			ll.prefixlen = 64;
			emu_gid_set(ll.addr.v6.s6_addr, 0xfe80000000000000ull, iid);
			i = emu_array_push(&nd->addrs, &nd->naddrs, sizeof(*nd->addrs));
			if (i < 0)
				return nomem(L);
			nd->addrs[i] = ll;
		}
	}
	return 0;
}

/* RoCE: the kernel's roce_gid_mgmt order per netdev: the default GID (fe80:: + EUI-64 of the
 * MAC), then each IPv4 address as ::ffff:a.b.c.d, then each IPv6 address. rxe on 6.1 exposes
 * them as RoCE v2 only. Explicit gid= values follow. */
static int roce_gids(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++) {
		struct emu_host *ho = &f->hosts[h];

		for (size_t d = 0; d < ho->ndevices; d++)
			for (size_t p = 0; p < ho->devices[d].nports; p++) {
				struct emu_port *po = &ho->devices[d].ports[p];
				struct emu_port_meta *pm = &L->hosts[h].devs[d].ports[p];

				if (po->link_layer != ETH)
					continue;
				if ((pm->set & EMU_PSET_GIDS) && !pm->explicit_gids && po->ngids) {
					pm->explicit_gids = po->gids;
					pm->nexplicit_gids = po->ngids;
					po->gids = NULL;
				}
				free(po->gids);
				po->gids = NULL;
				po->ngids = 0;
				for (size_t n = 0; n < ho->nnetdevs; n++) {
					struct emu_netdev *nd = &ho->netdevs[n];
					uint8_t raw[16];

					if (nd->device != (int)d || nd->port != p + 1)
						continue;
					emu_gid_set(raw, 0xfe80000000000000ull,
						    emu_eui64_from_mac(nd->hwaddr));
					if (push_gid(po, raw, EMU_GID_ROCE_V2, (int)n))
						return nomem(L);
					for (int fam = 0; fam < 2; fam++)
						for (size_t k = 0; k < nd->naddrs; k++) {
							struct emu_ifaddr *a = &nd->addrs[k];

							if (a->family != (fam ? AF_INET6 : AF_INET))
								continue;
							memset(raw, 0, 16);
							if (a->family == AF_INET) {
								raw[10] = raw[11] = 0xff;
								memcpy(raw + 12, &a->addr.v4, 4);
							} else {
								memcpy(raw, &a->addr.v6, 16);
							}
							if (push_gid(po, raw, EMU_GID_ROCE_V2, (int)n))
								return nomem(L);
						}
				}
				for (size_t k = 0; k < pm->nexplicit_gids; k++)
					if (push_gid(po, pm->explicit_gids[k].raw, EMU_GID_ROCE_V2, -1))
						return nomem(L);
				if (po->ngids > po->gid_tbl_len)
					return emu_loader_error(L, &pm->src, EINVAL, "port %zu of '%s' has "
								"%zu GIDs but a table of %u", p + 1,
								ho->devices[d].name, po->ngids,
								po->gid_tbl_len);
				/* room for the whole table: entries come and go with the netdev's
				 * addresses (emu/net/roce_gid.c) and must never move under a reader */
				if (po->gid_tbl_len) {
					struct emu_gid *all = emu_calloc(po->gid_tbl_len, sizeof(*all));

					if (!all)
						return nomem(L);
					if (po->ngids)
						memcpy(all, po->gids, po->ngids * sizeof(*all));
					free(po->gids);
					po->gids = all;
				}
			}
	}
	return 0;
}

/* IPoIB: hardware address = 4 bytes (flags 0x00 + QPN 0x000048) + the port's GID 0; MTU =
 * the port's active MTU minus the 4-byte IPoIB header (datagram mode). */
static int ipoib_defaults(struct emu_loader *L)
{
	for (size_t h = 0; h < L->f->nhosts; h++) {
		struct emu_host *ho = &L->f->hosts[h];

		for (size_t n = 0; n < ho->nnetdevs; n++) {
			struct emu_netdev *nd = &ho->netdevs[n];
			struct emu_netdev_meta *nm = &L->hosts[h].netdevs[n];
			struct emu_port *po;

			if (!netdev_is_ipoib(L, (int)h, nd))
				continue;
			po = port_at(L, (int)h, nd->device, nd->port);
			if (!nm->hwaddr_set) {
				static const uint8_t qpn[4] = { 0x00, 0x00, 0x00, 0x48 };

				memcpy(nd->hwaddr, qpn, 4);
				if (po->ngids)
					memcpy(nd->hwaddr + 4, po->gids[0].raw, 16);
				nd->hwaddr_len = 20;
			}
			if (!nm->mtu_set)
				nd->mtu = (uint32_t)emu_mtu_bytes(po->active_mtu) - IPOIB_ENCAP_LEN;
			for (size_t k = 0; k < po->ngids; k++)
				if (po->gids[k].netdev < 0)
					po->gids[k].netdev = (int)n;
		}
	}
	return 0;
}

/* ---------- addresses, routes, hosts-data ---------- */

static bool same_addr(const struct emu_ifaddr *a, const struct emu_ifaddr *b)
{
	return a->family == b->family &&
	       !memcmp(&a->addr, &b->addr, a->family == AF_INET ? 4 : 16);
}

static int check_addresses(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t n = 0; n < f->hosts[h].nnetdevs; n++) {
			struct emu_netdev *nd = &f->hosts[h].netdevs[n];

			for (size_t k = 0; k < nd->naddrs; k++)
				for (size_t h2 = 0; h2 <= h; h2++)
					for (size_t n2 = 0; n2 < f->hosts[h2].nnetdevs; n2++) {
						struct emu_netdev *o = &f->hosts[h2].netdevs[n2];
						size_t lim = (h2 == h && n2 == n) ? k : o->naddrs;

						if (h2 == h && n2 > n)
							break;
						for (size_t k2 = 0; k2 < lim; k2++) {
							char s[INET6_ADDRSTRLEN];

							if (!same_addr(&nd->addrs[k], &o->addrs[k2]))
								continue;
							inet_ntop(nd->addrs[k].family, &nd->addrs[k].addr,
								  s, sizeof(s));
							return emu_loader_error(
								L, &L->hosts[h].netdevs[n].src, EINVAL,
								"duplicate address %s (also on %s/%s)", s,
								f->hosts[h2].name, o->name);
						}
					}
		}
	return 0;
}

static int finish_routes(struct emu_loader *L)
{
	for (size_t i = 0; i < L->nroutes; i++) {
		struct emu_pending_route *pr = &L->routes[i];
		struct emu_host *ho = &L->f->hosts[pr->host];
		int nd = -1, k;

		if (pr->dev[0]) {
			for (size_t n = 0; n < ho->nnetdevs; n++)
				if (!strcmp(ho->netdevs[n].name, pr->dev))
					nd = (int)n;
			if (nd < 0)
				return emu_loader_error(L, &pr->src, EINVAL, "route via netdev '%s', "
							"which host '%s' does not have", pr->dev,
							ho->name);
		} else {
			/* like `ip route add ... via GW`: GW must be on a connected subnet */
			for (size_t n = 0; n < ho->nnetdevs && nd < 0; n++)
				for (size_t a = 0; a < ho->netdevs[n].naddrs; a++) {
					struct emu_ifaddr *ia = &ho->netdevs[n].addrs[a];

					if (ia->family == pr->route.family &&
					    emu_addr_in_prefix(ia->family, &pr->route.gateway, &ia->addr,
							       ia->prefixlen)) {
						nd = (int)n;
						break;
					}
				}
			if (nd < 0) {
				char s[INET6_ADDRSTRLEN];

				inet_ntop(pr->route.family, &pr->route.gateway, s, sizeof(s));
				return emu_loader_error(L, &pr->src, EINVAL, "gateway %s is not in a "
							"connected subnet of host '%s'", s, ho->name);
			}
		}
		pr->route.netdev = nd;
		k = emu_array_push(&ho->routes, &ho->nroutes, sizeof(*ho->routes));
		if (k < 0)
			return nomem(L);
		ho->routes[k] = pr->route;
	}
	return 0;
}

/* Finds the netdev behind the port that has GID `gid` (its own netdev for a RoCE GID, the
 * port's first IPoIB netdev for an IB GID). Returns 0 with *h and *n set, 1 when no port has it,
 * 2 when the port has no netdev. */
static int netdev_of_gid(struct emu_loader *L, const uint8_t gid[16], int *h, int *n)
{
	struct emu_fabric *f = L->f;

	for (size_t hh = 0; hh < f->nhosts; hh++)
		for (size_t d = 0; d < f->hosts[hh].ndevices; d++)
			for (size_t p = 0; p < f->hosts[hh].devices[d].nports; p++) {
				struct emu_port *po = &f->hosts[hh].devices[d].ports[p];

				for (size_t k = 0; k < po->ngids; k++) {
					const struct emu_netdev *nd;

					if (memcmp(po->gids[k].raw, gid, 16))
						continue;
					*h = (int)hh;
					if (po->gids[k].netdev >= 0) {
						*n = po->gids[k].netdev;
						return 0;
					}
					nd = first_netdev_of(&f->hosts[hh], (int)d, (unsigned)p + 1);
					if (!nd)
						return 2;
					*n = (int)(nd - f->hosts[hh].netdevs);
					return 0;
				}
			}
	return 1;
}

static int apply_hostsdata(struct emu_loader *L)
{
	struct emu_fabric *f = L->f;

	for (size_t i = 0; i < L->nhostsdata; i++) {
		struct emu_pending_hostsdata *e = &L->hostsdata[i];
		char gs[INET6_ADDRSTRLEN];
		struct emu_netdev *nd;
		int h = -1, n = -1, r = netdev_of_gid(L, e->gid, &h, &n);

		inet_ntop(AF_INET6, e->gid, gs, sizeof(gs));
		if (r == 1)
			return emu_loader_error(L, &e->src, EINVAL, "no port in the fabric has GID %s",
						gs);
		if (r == 2)
			return emu_loader_error(L, &e->src, EINVAL, "the port with GID %s has no "
						"netdev to carry address '%s'", gs, e->name);
		nd = &f->hosts[h].netdevs[n];
		if (e->family == AF_UNSPEC) {
			/* a host name: it names the addresses of that netdev, except link-local
			 * ones, which mean nothing without a scope */
			size_t named = 0;

			for (size_t k = 0; k < nd->naddrs; k++) {
				int j;

				if (nd->addrs[k].family == AF_INET6 &&
				    IN6_IS_ADDR_LINKLOCAL(&nd->addrs[k].addr.v6))
					continue;
				j = emu_array_push(&f->names, &f->nnames, sizeof(*f->names));
				named++;

				if (j < 0)
					return nomem(L);
				snprintf(f->names[j].name, sizeof(f->names[j].name), "%s", e->name);
				f->names[j].family = nd->addrs[k].family;
				memcpy(&f->names[j].addr, &nd->addrs[k].addr, sizeof(f->names[j].addr));
			}
			if (!named)
				return emu_loader_error(L, &e->src, EINVAL, "netdev %s/%s (GID %s) has "
							"no address for name '%s'",
							f->hosts[h].name, nd->name, gs, e->name);
			continue;
		}
		{
			struct emu_ifaddr want;
			bool here = false;
			int k;

			memset(&want, 0, sizeof(want));
			want.family = e->family;
			memcpy(&want.addr, &e->addr, e->family == AF_INET ? 4 : 16);
			for (size_t hh = 0; hh < f->nhosts; hh++)
				for (size_t nn = 0; nn < f->hosts[hh].nnetdevs; nn++)
					for (size_t a = 0; a < f->hosts[hh].netdevs[nn].naddrs; a++) {
						if (!same_addr(&want, &f->hosts[hh].netdevs[nn].addrs[a]))
							continue;
						if ((int)hh == h && (int)nn == n) {
							here = true;
							continue;
						}
						return emu_loader_error(
							L, &e->src, EINVAL, "address %s maps to GID %s "
							"(%s/%s) but is on %s/%s", e->name, gs,
							f->hosts[h].name, nd->name, f->hosts[hh].name,
							f->hosts[hh].netdevs[nn].name);
					}
			if (here)
				continue;
			/* a new address joins the subnet of the first address of the netdev that
			 * contains it; outside every subnet it gets a host prefix */
			want.prefixlen = e->family == AF_INET ? 32 : 128;
			for (size_t a = 0; a < nd->naddrs; a++)
				if (nd->addrs[a].family == e->family &&
				    emu_addr_in_prefix(e->family, &want.addr, &nd->addrs[a].addr,
						       nd->addrs[a].prefixlen)) {
					want.prefixlen = nd->addrs[a].prefixlen;
					break;
				}
			k = emu_array_push(&nd->addrs, &nd->naddrs, sizeof(*nd->addrs));
			if (k < 0)
				return nomem(L);
			nd->addrs[k] = want;
		}
	}
	return 0;
}

static void back_pointers(struct emu_fabric *f)
{
	for (size_t h = 0; h < f->nhosts; h++) {
		struct emu_host *ho = &f->hosts[h];

		ho->fabric = f;
		for (size_t d = 0; d < ho->ndevices; d++) {
			ho->devices[d].host = ho;
			for (size_t p = 0; p < ho->devices[d].nports; p++)
				ho->devices[d].ports[p].dev = &ho->devices[d];
		}
	}
}

int emu_loader_finish(struct emu_loader *L)
{
	if (finish_links(L) || bind_netdevs(L) || eth_defaults(L) || guids(L) ||
	    ports_and_lids(L) || ib_gids(L) || ipoib_defaults(L) || link_local_addrs(L) || roce_gids(L) ||
	    apply_hostsdata(L) || roce_gids(L) || check_addresses(L) || finish_routes(L) ||
	    emu_loader_finish_daemons(L))
		return -1;
	back_pointers(L->f);
	return 0;
}
