/* roce_gid_mgmt for the emulated RoCE ports (Linux 6.1 drivers/infiniband/core/roce_gid_mgmt.c
 * and cache.c), driven by the neighbour layer's address events:
 *
 *   - an address added to a netdev that carries a RoCE port gets a RoCE v2 GID (rxe's only
 *     type): ::ffff:a.b.c.d or the IPv6 address, in the first empty entry of the table
 *     (ib_cache_gid_add -> find_gid's first free slot), unless the table already has that
 *     GID for the netdev (an IPv6 link-local address equal to the default GID adds nothing);
 *   - an address removed clears its entry (the slot stays empty: the other GIDs keep their
 *     indices); the default GID (fe80:: from the MAC) is never removed by an address;
 *   - InfiniBand ports do not follow IP addresses.
 *
 * The same listener moves a RoCE port's state with its netdev's link, as rxe's netdev notifier
 * does: ACTIVE (LinkUp) while the netdev is up, DOWN (Disabled) while it is down
 * (docs/reference/kernel-rxe-sysfs.md).
 *
 * Measured on Linux 6.1 + rxe (scripts/rxe-vm, docs/neigh.md "GID table"): 192.0.2.2 added to
 * d0 became GID 2, 2001:db8::1 GID 3; deleting an address emptied its entry, and the next
 * address took the first empty one. An empty entry reads as zeros (ibv_query_gid) and is
 * ENODATA for ibv_query_gid_ex, which the verbs layer already does for zero GIDs.
 *
 * The fabric model is the one table the whole process reads (verbs, rdma_cm, GSI), so the
 * entries are changed in place under the engine lock; the loader gives every RoCE table its
 * full length (gid_tbl_len, emu/sim/fabric_finish.c), so it is never reallocated under a reader.
 * Processes attached to rdmaemud keep their own copy of the table: they do not see changes
 * made in the daemon. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/sim/fabric.h"
#include "emu/hca/gid_table.h"
#include "emu/net/neigh_priv.h"
#include "emu/net/roce_gid.h"
#include "emu/sim/trace.h"
#include "util/failcall.h"

/* The one attachment per engine: its presence says the listener is registered. */
struct roce_gid {
	struct emu_engine *e;
};

static void gid_free(struct emu_engine *e, void *obj)
{
	(void)e;
	free(obj);
}

static const struct emu_engine_ext_type roce_gid_ext = { "roce_gid", gid_free };

/* RDMAEMU_TRACE=neigh: one line per GID table change (they follow the neighbour layer's
 * address events). */
static void gid_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gid_trace(const char *fmt, ...)
{
	static int cache = -1;
	va_list ap;

	if (!emu_trace_enabled(&cache, "neigh"))
		return;
	va_start(ap, fmt);
	emu_trace_vprint("", fmt, ap);
	va_end(ap);
}

/* The RoCE port behind netdev nd of host h, or NULL. The fabric is the process's own model:
 * only this module writes GIDs after loading. */
static struct emu_port *roce_port(const struct emu_fabric *f, size_t h, int nd)
{
	struct emu_host *host;
	const struct emu_netdev *n;
	struct emu_device *d;

	if (h >= f->nhosts)
		return NULL;
	host = (struct emu_host *)&f->hosts[h];
	if (nd < 0 || (size_t)nd >= host->nnetdevs)
		return NULL;
	n = &host->netdevs[nd];
	if (n->device < 0 || (size_t)n->device >= host->ndevices)
		return NULL;
	d = &host->devices[n->device];
	if (n->port < 1 || n->port > d->nports)
		return NULL;
	if (d->ports[n->port - 1].link_layer != 2 /* IBV_LINK_LAYER_ETHERNET */)
		return NULL;
	return &d->ports[n->port - 1];
}

static bool gid_empty(const struct emu_gid *g)
{
	static const uint8_t zero[16];

	return !memcmp(g->raw, zero, 16);
}

/* The default GID of netdev nd: fe80::/64 + the EUI-64 of its MAC. */
static void default_gid(const struct emu_netdev *n, uint8_t raw[16])
{
	memset(raw, 0, 16);
	raw[0] = 0xfe;
	raw[1] = 0x80;
	raw[8] = n->hwaddr[0] ^ 0x02;
	raw[9] = n->hwaddr[1];
	raw[10] = n->hwaddr[2];
	raw[11] = 0xff;
	raw[12] = 0xfe;
	raw[13] = n->hwaddr[3];
	raw[14] = n->hwaddr[4];
	raw[15] = n->hwaddr[5];
}

static void addr_gid(const struct sockaddr_storage *a, uint8_t raw[16])
{
	memset(raw, 0, 16);
	if (a->ss_family == AF_INET) {
		raw[10] = raw[11] = 0xff;
		memcpy(raw + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
	} else {
		memcpy(raw, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
	}
}

static int find(const struct emu_port *p, const uint8_t raw[16], int nd)
{
	for (size_t i = 0; i < p->ngids; i++)
		if (p->gids[i].netdev == nd && p->gids[i].type == EMU_GID_ROCE_V2 &&
		    !memcmp(p->gids[i].raw, raw, 16))
			return (int)i;
	return -1;
}

static void gid_add(struct emu_port *p, const uint8_t raw[16], int nd)
{
	size_t i;

	if (find(p, raw, nd) >= 0)
		return;
	for (i = 0; i < p->ngids && !gid_empty(&p->gids[i]); i++)
		;
	if (i == p->gid_tbl_len) {
		gid_trace("gid: table full, no entry for the new address");
		return;
	}
	memcpy(p->gids[i].raw, raw, 16);
	p->gids[i].type = EMU_GID_ROCE_V2;
	p->gids[i].netdev = nd;
	if (i == p->ngids)
		p->ngids++;
	emu_gid_table_changed();
	gid_trace("gid: port %u GID %zu added", p->num, i);
}

static void gid_del(struct emu_port *p, const struct emu_netdev *n, const uint8_t raw[16],
		    int nd)
{
	uint8_t def[16];
	int i = find(p, raw, nd);

	default_gid(n, def);
	if (i < 0 || !memcmp(raw, def, 16))
		return;
	memset(&p->gids[i], 0, sizeof(p->gids[i]));
	p->gids[i].netdev = -1;
	emu_gid_table_changed();
	gid_trace("gid: port %u GID %d removed", p->num, i);
}

static void on_event(void *ctx, const struct emu_neigh_event *ev)
{
	struct roce_gid *r = ctx;
	const struct emu_fabric *f = emu_engine_fabric(r->e);
	struct emu_port *p;
	uint8_t raw[16];

	if (ev->type != EMU_NEIGH_EV_ADDR_ADD && ev->type != EMU_NEIGH_EV_ADDR_DEL &&
	    ev->type != EMU_NEIGH_EV_LINK_UP && ev->type != EMU_NEIGH_EV_LINK_DOWN)
		return;
	p = roce_port(f, ev->host, ev->netdev);
	if (!p)
		return;
	if (ev->type == EMU_NEIGH_EV_LINK_UP || ev->type == EMU_NEIGH_EV_LINK_DOWN) {
		/* rxe's netdev notifier (rxe_port_up / rxe_port_down), measured: ACTIVE and
		 * LinkUp while the netdev is up, DOWN and Disabled while it is down */
		bool up = ev->type == EMU_NEIGH_EV_LINK_UP;

		p->state = up ? 4 : 1;
		p->phys_state = up ? 5 : 3;
		return;
	}
	addr_gid(&ev->addr, raw);
	if (ev->type == EMU_NEIGH_EV_ADDR_ADD)
		gid_add(p, raw, ev->netdev);
	else
		gid_del(p, &f->hosts[ev->host].netdevs[ev->netdev], raw, ev->netdev);
}

int emu_roce_gid_attach(struct emu_engine *e, struct emu_neigh *n)
{
	struct roce_gid *r;
	int ret;

	if (emu_engine_ext_get(e, &roce_gid_ext))
		return 0;
	r = emu_calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->e = e;
	ret = emu_neigh_add_listener(n, on_event, r);
	if (!ret)
		ret = emu_engine_ext_set(e, &roce_gid_ext, r);
	if (ret) {
		emu_neigh_del_listener(n, on_event, r);
		free(r);
	}
	return ret;
}
