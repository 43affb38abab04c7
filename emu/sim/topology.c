/* The topology: wire endpoints and links from a fabric, IB switches forwarding by DLID through
 * linear forwarding tables computed at build time. See topology.h. */
#include "config.h"

#include "emu/sim/topology.h"
#include "util/failcall.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Linear forwarding table: one byte per unicast LID; ports are 1..254, 0 = the switch. */
#define LFT_SIZE (EMU_LID_UNICAST_MAX + 1)
#define LFT_NONE 0xff

struct topo_ep {
	struct emu_topology *t;
	struct emu_endpoint what;
	emu_wire_rx_fn *rx; /* host ports: the receiver set by the caller */
	emu_wire_rx_lazy_fn *rx_lazy; /* and its taker of described frames (emu/sim/wire.h) */
	void *ctx;
	struct emu_topology_port_counters ctr;
};

struct topo_switch {
	int first_ep;  /* endpoint of port 1; port p is first_ep + p - 1 */
	uint8_t *lft;  /* [LFT_SIZE], built on first use (sw_lft) */
	emu_wire_rx_fn *local_rx;
	void *local_ctx;
	struct emu_topology_switch_counters ctr;
};

/* A multicast group: its member host ports and, per switch, the ports it goes out of. */
struct topo_mgroup {
	uint16_t mlid;
	int *members; /* host port endpoints */
	size_t nmembers;
	uint8_t **out; /* [nswitches][nports + 1]: 1 = forward out of that port */
};

struct emu_topology {
	struct topo_mgroup *mgroups;
	size_t nmgroups;
	const struct emu_fabric *f;
	struct emu_clock *clk;
	struct emu_wire *w;
	struct topo_ep *eps;
	size_t neps;
	int *host_first_ep; /* [nhosts]: endpoint of the first port of the host's first device */
	struct topo_switch *sws;
	struct emu_pcap *tap[2]; /* [0] Ethernet, [1] InfiniBand */
};

__attribute__((format(printf, 4, 5)))
static void set_err(struct emu_error *err, const struct emu_fabric *f, int e, const char *fmt,
		    ...)
{
	va_list ap;

	if (err) {
		memset(err, 0, sizeof(*err));
		snprintf(err->file, sizeof(err->file), "%s", f->source);
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	errno = e;
}

/* Opaque wire ids: kind in bits 56..63, node 32..55, device 8..31, port 0..7. */
static uint64_t ep_id(const struct emu_endpoint *e)
{
	return (uint64_t)e->kind << 56 | ((uint64_t)e->node & 0xffffff) << 32 |
	       ((uint64_t)(e->device < 0 ? 0 : e->device) & 0xffffff) << 8 | e->port;
}

/* ---------- lookups ---------- */

int emu_topology_port_endpoint(const struct emu_topology *t, size_t host, size_t dev,
			       unsigned port)
{
	const struct emu_host *h;
	int ep;

	if (!t || host >= t->f->nhosts)
		return -ENOENT;
	h = &t->f->hosts[host];
	if (dev >= h->ndevices || port < 1 || port > h->devices[dev].nports)
		return -ENOENT;
	ep = t->host_first_ep[host];
	for (size_t d = 0; d < dev; d++)
		ep += (int)h->devices[d].nports;
	return ep + (int)port - 1;
}

int emu_topology_switch_endpoint(const struct emu_topology *t, size_t sw, unsigned port)
{
	if (!t || sw >= t->f->nswitches || port < 1 || port > t->f->switches[sw].nports)
		return -ENOENT;
	return t->sws[sw].first_ep + (int)port - 1;
}

static int ep_of(const struct emu_topology *t, const struct emu_endpoint *e)
{
	if (e->kind == EMU_EP_SWITCH_PORT)
		return emu_topology_switch_endpoint(t, (size_t)e->node, e->port);
	if (e->kind == EMU_EP_HOST_PORT && e->node >= 0 && e->device >= 0)
		return emu_topology_port_endpoint(t, (size_t)e->node, (size_t)e->device, e->port);
	return -ENOENT;
}

static bool ep_ok(const struct emu_topology *t, int ep)
{
	return t && ep >= 0 && (size_t)ep < t->neps;
}

int emu_topology_endpoint_info(const struct emu_topology *t, int ep, struct emu_endpoint *out)
{
	if (!ep_ok(t, ep) || !out)
		return -EINVAL;
	*out = t->eps[ep].what;
	return 0;
}

struct emu_wire *emu_topology_wire(const struct emu_topology *t)
{
	return t ? t->w : NULL;
}

const struct emu_fabric *emu_topology_fabric(const struct emu_topology *t)
{
	return t ? t->f : NULL;
}

struct emu_pcap *emu_topology_tap(const struct emu_topology *t, int link_layer)
{
	if (!t)
		return NULL;
	if (link_layer == EMU_LL_ETHERNET)
		return t->tap[0];
	if (link_layer == EMU_LL_INFINIBAND)
		return t->tap[1];
	return NULL;
}

size_t emu_topology_nendpoints(const struct emu_topology *t)
{
	return t ? t->neps : 0;
}

/* ---------- host ports ---------- */

static void host_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct topo_ep *e = ctx;

	e->ctr.received++;
	if (!e->rx) {
		e->ctr.unclaimed++;
		return;
	}
	e->rx(e->ctx, frame, len, now);
}

/* A described frame is counted before the receiver runs, as host_rx counts a frame; a
 * declined one is uncounted and comes back as bytes through host_rx, which counts it. */
static bool host_rx_lazy(void *ctx, const struct emu_wire_lazy *ops, const void *obj,
			 uint64_t now)
{
	struct topo_ep *e = ctx;

	if (!e->rx || !e->rx_lazy)
		return false;
	e->ctr.received++;
	if (e->rx_lazy(e->ctx, ops, obj, now))
		return true;
	e->ctr.received--;
	return false;
}

int emu_topology_set_rx(struct emu_topology *t, int ep, emu_wire_rx_fn *rx, void *ctx)
{
	if (!ep_ok(t, ep) || t->eps[ep].what.kind != EMU_EP_HOST_PORT)
		return -EINVAL;
	t->eps[ep].rx = rx;
	t->eps[ep].rx_lazy = NULL;
	t->eps[ep].ctx = ctx;
	return 0;
}

int emu_topology_set_rx_lazy(struct emu_topology *t, int ep, emu_wire_rx_lazy_fn *fn)
{
	if (!ep_ok(t, ep) || t->eps[ep].what.kind != EMU_EP_HOST_PORT)
		return -EINVAL;
	t->eps[ep].rx_lazy = fn;
	return 0;
}

int emu_topology_port_counters(const struct emu_topology *t, int ep,
			       struct emu_topology_port_counters *out)
{
	if (!ep_ok(t, ep) || !out || t->eps[ep].what.kind != EMU_EP_HOST_PORT)
		return -EINVAL;
	*out = t->eps[ep].ctr;
	return 0;
}

/* ---------- switches ---------- */

/* A frame that arrived at port in_port (0: sent by the switch itself) and that the switch
 * drops: PortRcvErrors of that port for a malformed one, PortRcvSwitchRelayErrors for one it
 * has nowhere to send (IBA 16.1.3.5). */
static void port_error(struct emu_topology *t, size_t sw, unsigned in_port, bool relay)
{
	int ep = t->sws[sw].first_ep + (int)in_port - 1;
	struct emu_wire_port_counters c;

	if (!in_port || emu_wire_port_counters(t->w, ep, &c))
		return;
	if (relay)
		c.rcv_relay_errors += c.rcv_relay_errors != UINT64_MAX;
	else
		c.rcv_errors += c.rcv_errors != UINT64_MAX;
	emu_wire_port_counters_set(t->w, ep, &c);
}

static struct topo_mgroup *mgroup_find(const struct emu_topology *t, uint16_t mlid)
{
	for (size_t i = 0; i < t->nmgroups; i++)
		if (t->mgroups[i].mlid == mlid)
			return &t->mgroups[i];
	return NULL;
}

/* A copy out of every port of the group's tree but the input port (IBA 18.2.4.3.2). */
static int forward_mcast(struct emu_topology *t, size_t sw, unsigned in_port, uint16_t dlid,
			 const uint8_t *frame, size_t len)
{
	struct topo_switch *s = &t->sws[sw];
	struct topo_mgroup *g = mgroup_find(t, dlid);
	bool sent = false;

	if (!g || !g->out) {
		s->ctr.dropped_mcast++;
		port_error(t, sw, in_port, true);
		return 0;
	}
	for (unsigned p = 1; p <= t->f->switches[sw].nports; p++) {
		if (!g->out[sw][p] || p == in_port)
			continue;
		if (emu_wire_send(t->w, s->first_ep + (int)p - 1, frame, len))
			s->ctr.dropped_send++;
		else
			s->ctr.forwarded++;
		sent = true;
	}
	if (!sent) {
		s->ctr.dropped_mcast++;
		port_error(t, sw, in_port, true);
	}
	return 0;
}

static void build_lft(const struct emu_topology *t, size_t src, uint8_t *lft, size_t *queue,
		      uint8_t *hop);

/* Switch sw's LFT, built the first time a frame or a route asks for it: a process attached to
 * a daemon never switches a frame (the daemon does), and on the 10,000-node fabric the 400
 * switches' tables are 19 MiB it would never read. NULL when out of memory (the frame is
 * dropped as unroutable). Any thread (the SA reads routes under its own lock). */
static const uint8_t *sw_lft(const struct emu_topology *t, size_t sw)
{
	static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
	uint8_t *lft = __atomic_load_n(&t->sws[sw].lft, __ATOMIC_ACQUIRE), *fresh;
	size_t *queue;
	uint8_t *hop;

	if (lft)
		return lft;
	pthread_mutex_lock(&build_lock);
	lft = t->sws[sw].lft;
	if (!lft) {
		fresh = emu_malloc(LFT_SIZE);
		queue = emu_calloc(t->f->nswitches, sizeof(*queue));
		hop = emu_calloc(t->f->nswitches, 1);
		if (fresh && queue && hop) {
			build_lft(t, sw, fresh, queue, hop);
			__atomic_store_n(&((struct emu_topology *)t)->sws[sw].lft, fresh,
					 __ATOMIC_RELEASE);
			lft = fresh;
		} else {
			free(fresh);
		}
		free(queue);
		free(hop);
	}
	pthread_mutex_unlock(&build_lock);
	return lft;
}

/* Forwards one frame that arrived at port in_port (0 = sent by the switch itself). */
static int forward(struct emu_topology *t, size_t sw, unsigned in_port, const uint8_t *frame,
		   size_t len, uint64_t now)
{
	struct topo_switch *s = &t->sws[sw];
	const uint8_t *lft;
	uint16_t dlid;
	unsigned out;
	int ret;

	if (len < 8 || (frame[0] & 0x0f) != 0) {
		s->ctr.dropped_malformed++;
		port_error(t, sw, in_port, false);
		return 0;
	}
	dlid = (uint16_t)(frame[2] << 8 | frame[3]);
	if (dlid == EMU_LID_PERMISSIVE) {
		s->ctr.dropped_permissive++;
		return 0;
	}
	if (dlid >= EMU_LID_MCAST_MIN)
		return forward_mcast(t, sw, in_port, dlid, frame, len);
	lft = sw_lft(t, sw);
	out = lft ? lft[dlid] : LFT_NONE;
	if (out == LFT_NONE) {
		s->ctr.dropped_unknown++;
		port_error(t, sw, in_port, true);
		return 0;
	}
	if (out == in_port) {
		s->ctr.dropped_loop++;
		port_error(t, sw, in_port, true);
		return 0;
	}
	if (out == 0) {
		if (!s->local_rx) {
			s->ctr.dropped_local++;
			return 0;
		}
		s->ctr.local++;
		s->local_rx(s->local_ctx, frame, len, now);
		return 0;
	}
	ret = emu_wire_send(t->w, s->first_ep + (int)out - 1, frame, len);
	if (ret) {
		s->ctr.dropped_send++;
		return ret;
	}
	s->ctr.forwarded++;
	return 0;
}

static void switch_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct topo_ep *e = ctx;
	struct topo_switch *s = &e->t->sws[e->what.node];

	s->ctr.received++;
	forward(e->t, (size_t)e->what.node, e->what.port, frame, len, now);
}

int emu_topology_set_switch_local_rx(struct emu_topology *t, size_t sw, emu_wire_rx_fn *rx,
				     void *ctx)
{
	if (!t || sw >= t->f->nswitches)
		return -EINVAL;
	t->sws[sw].local_rx = rx;
	t->sws[sw].local_ctx = ctx;
	return 0;
}

int emu_topology_switch_send(struct emu_topology *t, size_t sw, const void *frame, size_t len)
{
	int ret;

	if (!t || sw >= t->f->nswitches || !frame || !len)
		return -EINVAL;
	if (len > EMU_WIRE_MAX_FRAME)
		return -EMSGSIZE;
	t->sws[sw].ctr.sent_local++;
	ret = forward(t, sw, 0, frame, len, emu_clock_now(t->clk));
	return ret;
}

int emu_topology_switch_route(const struct emu_topology *t, size_t sw, uint16_t dlid)
{
	const uint8_t *lft;

	if (!t || sw >= t->f->nswitches)
		return -EINVAL;
	lft = dlid <= EMU_LID_UNICAST_MAX ? sw_lft(t, sw) : NULL;
	if (!lft || lft[dlid] == LFT_NONE)
		return -ENOENT;
	return lft[dlid];
}

int emu_topology_switch_counters(const struct emu_topology *t, size_t sw,
				 struct emu_topology_switch_counters *out)
{
	if (!t || sw >= t->f->nswitches || !out)
		return -EINVAL;
	*out = t->sws[sw].ctr;
	return 0;
}

/* The far end of the link behind switch s's port p; false when the port is unconnected. */
static bool peer_of(const struct emu_fabric *f, size_t s, unsigned p, struct emu_endpoint *peer)
{
	int l = f->switches[s].port_link[p];
	const struct emu_link *lk;

	if (l < 0)
		return false;
	lk = &f->links[l];
	if (lk->a.kind == EMU_EP_SWITCH_PORT && (size_t)lk->a.node == s && lk->a.port == p)
		*peer = lk->b;
	else
		*peer = lk->a;
	return true;
}

static void lft_set(uint8_t *lft, uint16_t base, uint8_t lmc, uint8_t port)
{
	uint32_t end = (uint32_t)base + (1u << lmc);

	if (!base)
		return;
	for (uint32_t lid = base; lid < end && lid <= EMU_LID_UNICAST_MAX; lid++)
		lft[lid] = port;
}

/* Fills the LFT of switch `src`: BFS over switch-to-switch links; hop[t] = first-hop port toward
 * switch t (0 for src itself, LFT_NONE when unreachable). queue and hop have nswitches slots. */
static void build_lft(const struct emu_topology *t, size_t src, uint8_t *lft, size_t *queue,
		      uint8_t *hop)
{
	const struct emu_fabric *f = t->f;
	size_t head = 0, tail = 0;
	struct emu_endpoint peer;

	memset(lft, LFT_NONE, LFT_SIZE);
	memset(hop, LFT_NONE, f->nswitches);
	hop[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		size_t u = queue[head++];

		for (unsigned p = 1; p <= f->switches[u].nports; p++) {
			size_t v;

			if (!peer_of(f, u, p, &peer) || peer.kind != EMU_EP_SWITCH_PORT)
				continue;
			v = (size_t)peer.node;
			if (hop[v] != LFT_NONE)
				continue;
			hop[v] = u == src ? (uint8_t)p : hop[u];
			queue[tail++] = v;
		}
	}
	/* every reachable switch's own LIDs, then the CA ports cabled to it; in BFS order so
	 * the table does not depend on anything but the topology */
	for (size_t i = 0; i < tail; i++) {
		size_t u = queue[i];
		const struct emu_switch *sw = &f->switches[u];

		lft_set(lft, sw->lid, sw->lmc, hop[u]);
		for (unsigned p = 1; p <= sw->nports; p++) {
			const struct emu_port *po;

			if (!peer_of(f, u, p, &peer) || peer.kind != EMU_EP_HOST_PORT)
				continue;
			po = &f->hosts[peer.node].devices[peer.device].ports[peer.port - 1];
			lft_set(lft, po->lid, po->lmc, u == src ? (uint8_t)p : hop[u]);
		}
	}
}

/* ---------- multicast ---------- */

/* The switch and port a host port endpoint is cabled to; false when it is not on a switch. */
static bool host_ep_switch(const struct emu_topology *t, int ep, size_t *sw, unsigned *port)
{
	const struct emu_fabric *f = t->f;
	const struct emu_endpoint *e = &t->eps[ep].what;
	int l = f->hosts[e->node].devices[e->device].ports[e->port - 1].link;
	const struct emu_link *lk;
	const struct emu_endpoint *peer;

	if (l < 0)
		return false;
	lk = &f->links[l];
	peer = (lk->a.kind == EMU_EP_HOST_PORT && lk->a.node == e->node &&
		lk->a.device == e->device && lk->a.port == e->port) ? &lk->b : &lk->a;
	if (peer->kind != EMU_EP_SWITCH_PORT)
		return false;
	*sw = (size_t)peer->node;
	*port = peer->port;
	return true;
}

/* Recomputes a group's forwarding: one spanning tree of the switches (a breadth-first forest
 * in switch order, the same for every group), pruned to the branches that lead to members, so
 * that every member gets exactly one copy whatever the cabling. */
static int mgroup_compute(struct emu_topology *t, struct topo_mgroup *g)
{
	const struct emu_fabric *f = t->f;
	size_t n = f->nswitches, head = 0, tail = 0;
	size_t *order = emu_calloc(n ? n : 1, sizeof(*order));
	long *parent = emu_calloc(n ? n : 1, sizeof(*parent)), *root = emu_calloc(n ? n : 1, sizeof(*root));
	unsigned *up = emu_calloc(n ? n : 1, sizeof(*up)), *down = emu_calloc(n ? n : 1, sizeof(*down));
	size_t *sub = emu_calloc(n ? n : 1, sizeof(*sub));
	bool *seen = emu_calloc(n ? n : 1, sizeof(*seen));
	int ret = -ENOMEM;

	if (!order || !parent || !root || !up || !down || !sub || !seen)
		goto out;
	if (!g->out) {
		/* the group takes the table only whole: a row that could not be had frees the
		 * rest, and the next computation tries again */
		uint8_t **out = emu_calloc(n ? n : 1, sizeof(*out));

		if (!out)
			goto out;
		for (size_t s = 0; s < n; s++) {
			out[s] = emu_calloc(f->switches[s].nports + 1u, 1);
			if (!out[s]) {
				while (s--)
					free(out[s]);
				free(out);
				goto out;
			}
		}
		g->out = out;
	}
	for (size_t r = 0; r < n; r++) {
		if (seen[r])
			continue;
		seen[r] = true;
		parent[r] = -1;
		root[r] = (long)r;
		order[tail++] = r;
		while (head < tail) {
			size_t u = order[head++];
			struct emu_endpoint peer;

			for (unsigned p = 1; p <= f->switches[u].nports; p++) {
				if (!peer_of(f, u, p, &peer) || peer.kind != EMU_EP_SWITCH_PORT ||
				    seen[peer.node])
					continue;
				seen[peer.node] = true;
				parent[peer.node] = (long)u;
				root[peer.node] = root[u];
				down[peer.node] = p;
				up[peer.node] = peer.port;
				order[tail++] = (size_t)peer.node;
			}
		}
	}
	for (size_t s = 0; s < n; s++)
		memset(g->out[s], 0, f->switches[s].nports + 1u);
	for (size_t i = 0; i < g->nmembers; i++) {
		size_t sw;
		unsigned port;

		if (host_ep_switch(t, g->members[i], &sw, &port)) {
			g->out[sw][port] = 1;
			sub[sw]++;
		}
	}
	for (size_t i = tail; i-- > 0;)
		if (parent[order[i]] >= 0)
			sub[parent[order[i]]] += sub[order[i]];
	for (size_t s = 0; s < n; s++) {
		if (parent[s] < 0)
			continue;
		if (sub[s])
			g->out[parent[s]][down[s]] = 1;
		if (sub[root[s]] > sub[s])
			g->out[s][up[s]] = 1;
	}
	ret = 0;
out:
	free(order);
	free(parent);
	free(root);
	free(up);
	free(down);
	free(sub);
	free(seen);
	return ret;
}

static bool host_ep_ok(const struct emu_topology *t, int ep)
{
	return t && ep >= 0 && (size_t)ep < t->neps && t->eps[ep].what.kind == EMU_EP_HOST_PORT;
}

int emu_topology_mcast_attach(struct emu_topology *t, uint16_t mlid, int ep)
{
	struct topo_mgroup *g;
	int *m;

	if (!host_ep_ok(t, ep) || mlid < EMU_LID_MCAST_MIN || mlid == EMU_LID_PERMISSIVE)
		return -EINVAL;
	g = mgroup_find(t, mlid);
	if (!g) {
		g = emu_realloc(t->mgroups, (t->nmgroups + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		t->mgroups = g;
		g = &t->mgroups[t->nmgroups++];
		memset(g, 0, sizeof(*g));
		g->mlid = mlid;
	}
	for (size_t i = 0; i < g->nmembers; i++)
		if (g->members[i] == ep)
			return 0;
	m = emu_realloc(g->members, (g->nmembers + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	g->members = m;
	m[g->nmembers++] = ep;
	return mgroup_compute(t, g);
}

int emu_topology_mcast_detach(struct emu_topology *t, uint16_t mlid, int ep)
{
	struct topo_mgroup *g;

	if (!host_ep_ok(t, ep))
		return -EINVAL;
	g = mgroup_find(t, mlid);
	for (size_t i = 0; g && i < g->nmembers; i++)
		if (g->members[i] == ep) {
			g->members[i] = g->members[--g->nmembers];
			return mgroup_compute(t, g);
		}
	return -ENOENT;
}

int emu_topology_switch_mcast_ports(const struct emu_topology *t, size_t sw, uint16_t mlid,
				    uint8_t *ports, size_t max)
{
	const struct topo_mgroup *g;
	int n = 0;

	if (!t || sw >= t->f->nswitches)
		return -EINVAL;
	g = mgroup_find(t, mlid);
	if (!g || !g->out)
		return 0;
	for (unsigned p = 1; p <= t->f->switches[sw].nports; p++)
		if (g->out[sw][p]) {
			if ((size_t)n < max)
				ports[n] = (uint8_t)p;
			n++;
		}
	return n;
}

static void mgroups_free(struct emu_topology *t)
{
	for (size_t i = 0; i < t->nmgroups; i++) {
		struct topo_mgroup *g = &t->mgroups[i];

		for (size_t s = 0; g->out && s < t->f->nswitches; s++)
			free(g->out[s]);
		free(g->out);
		free(g->members);
	}
	free(t->mgroups);
}

/* ---------- build / free ---------- */

static int open_tap(struct emu_topology *t, const char *prefix, int ll, struct emu_error *err)
{
	const char *suffix = ll == EMU_LL_ETHERNET ? "eth" : "ib";
	struct emu_pcap **slot = &t->tap[ll == EMU_LL_ETHERNET ? 0 : 1];
	size_t n = strlen(prefix) + 16;
	char *path = emu_malloc(n);
	int e;

	if (!path) {
		set_err(err, t->f, ENOMEM, "out of memory");
		return -1;
	}
	snprintf(path, n, "%s-%s.pcap", prefix, suffix);
	*slot = emu_pcap_open(path, ll);
	if (!*slot) {
		e = errno ? errno : EIO;
		set_err(err, t->f, e, "cannot create capture %s: %s", path, strerror(e));
		free(path);
		return -1;
	}
	free(path);
	if (emu_wire_set_tap(t->w, ll, *slot)) {
		set_err(err, t->f, EINVAL, "capture %s-%s.pcap: link layer refused", prefix, suffix);
		return -1;
	}
	return 0;
}

static int link_layer_of(const struct emu_fabric *f, const struct emu_link *lk)
{
	const struct emu_endpoint *e = lk->a.kind == EMU_EP_HOST_PORT ? &lk->a : &lk->b;

	if (e->kind != EMU_EP_HOST_PORT)
		return EMU_LL_INFINIBAND; /* switch to switch */
	return f->hosts[e->node].devices[e->device].ports[e->port - 1].link_layer;
}

static int add_ep(struct emu_topology *t, const struct emu_endpoint *what, emu_wire_rx_fn *rx,
		  struct emu_error *err)
{
	struct topo_ep *e = &t->eps[t->neps];
	int ret;

	*e = (struct topo_ep){ .t = t, .what = *what };
	ret = emu_wire_add_endpoint(t->w, ep_id(what), rx, e);
	if (ret < 0 || (size_t)ret != t->neps) {
		set_err(err, t->f, ret < 0 ? -ret : EIO, "cannot add wire endpoint %zu", t->neps);
		return -1;
	}
	if (rx == host_rx)
		emu_wire_set_rx_lazy(t->w, ret, host_rx_lazy);
	t->neps++;
	return 0;
}

struct emu_topology *emu_topology_build(const struct emu_fabric *f, struct emu_clock *clk,
					const char *pcap_prefix, struct emu_error *err)
{
	struct emu_topology *t;
	size_t neps = 0;
	bool has_ll[2] = { false, false };

	if (!f || !clk) {
		if (err) {
			memset(err, 0, sizeof(*err));
			snprintf(err->msg, sizeof(err->msg), "no fabric or no clock");
		}
		errno = EINVAL;
		return NULL;
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			neps += f->hosts[h].devices[d].nports;
	for (size_t s = 0; s < f->nswitches; s++)
		neps += f->switches[s].nports;

	t = emu_calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	t->f = f;
	t->clk = clk;
	t->eps = emu_calloc(neps ? neps : 1, sizeof(*t->eps));
	t->host_first_ep = emu_calloc(f->nhosts ? f->nhosts : 1, sizeof(*t->host_first_ep));
	t->sws = emu_calloc(f->nswitches ? f->nswitches : 1, sizeof(*t->sws));
	t->w = emu_wire_new(clk, f->seed);
	if (!t->eps || !t->host_first_ep || !t->sws || !t->w)
		goto nomem;

	/* endpoints: hosts, devices, ports; then switches, ports */
	for (size_t h = 0; h < f->nhosts; h++) {
		t->host_first_ep[h] = (int)t->neps;
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 1; p <= f->hosts[h].devices[d].nports; p++) {
				struct emu_endpoint e = { EMU_EP_HOST_PORT, (int)h, (int)d,
							  (uint8_t)p };

				if (add_ep(t, &e, host_rx, err))
					goto fail;
			}
	}
	for (size_t s = 0; s < f->nswitches; s++) {
		t->sws[s].first_ep = (int)t->neps;
		for (size_t p = 1; p <= f->switches[s].nports; p++) {
			struct emu_endpoint e = { EMU_EP_SWITCH_PORT, (int)s, -1, (uint8_t)p };

			if (add_ep(t, &e, switch_rx, err))
				goto fail;
		}
	}

	/* links, in fabric order: wire link i = fabric link i */
	for (size_t i = 0; i < f->nlinks; i++) {
		const struct emu_link *lk = &f->links[i];
		int a = ep_of(t, &lk->a), b = ep_of(t, &lk->b), ll = link_layer_of(f, lk), ret;

		ret = a < 0 || b < 0 ? -EINVAL : emu_wire_connect(t->w, a, b, ll, &lk->faults);
		if (ret != (int)i) {
			set_err(err, f, ret < 0 ? -ret : EIO, "cannot connect link %zu: %s", i,
				strerror(ret < 0 ? -ret : EIO));
			goto fail;
		}
		has_ll[ll == EMU_LL_ETHERNET ? 0 : 1] = true;
	}
	emu_wire_trim(t->w);

	if (pcap_prefix) {
		if ((has_ll[0] && open_tap(t, pcap_prefix, EMU_LL_ETHERNET, err)) ||
		    (has_ll[1] && open_tap(t, pcap_prefix, EMU_LL_INFINIBAND, err)))
			goto fail;
	}
	return t;

nomem:
	set_err(err, f, ENOMEM, "out of memory");
fail: {
	int e = errno;

	emu_topology_free(t);
	errno = e;
	return NULL;
}
}

void emu_topology_idle(struct emu_topology *t)
{
	for (int i = 0; t && i < 2; i++)
		if (t->tap[i])
			emu_pcap_idle(t->tap[i]);
}

int emu_topology_flush(struct emu_topology *t)
{
	int ret = 0;

	if (!t)
		return 0;
	for (int i = 0; i < 2; i++) {
		int r = t->tap[i] ? emu_pcap_flush(t->tap[i]) : 0;

		if (r && !ret)
			ret = r;
	}
	return ret;
}

int emu_topology_free(struct emu_topology *t)
{
	int ret = 0;

	if (!t)
		return 0;
	/* the wire first: it stops using the taps and the endpoint contexts */
	emu_wire_free(t->w);
	for (int i = 0; i < 2; i++) {
		int r = emu_pcap_close(t->tap[i]);

		if (r && !ret)
			ret = r;
	}
	if (t->sws)
		for (size_t s = 0; s < t->f->nswitches; s++)
			free(t->sws[s].lft);
	mgroups_free(t);
	free(t->sws);
	free(t->eps);
	free(t->host_first_ep);
	free(t);
	return ret;
}
