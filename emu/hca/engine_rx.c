/* The engine's receive demultiplexer (emu/hca/engine_rx.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/hca/engine_rx.h"
#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"

struct rx_fn {
	emu_wire_rx_fn *fn;
	void *ctx;
};

struct rx_claim {
	uint32_t qpn;
	struct rx_fn to;
	emu_wire_rx_lazy_fn *lazy;
};

struct rx_port {
	int link_layer; /* EMU_LL_*; 0: not a host port */
	struct rx_fn cls[EMU_RX_NCLASS];
	struct rx_claim claims[EMU_RX_MAX_QPN_CLAIMS];
	unsigned nclaims;
	uint64_t unclaimed;
};

struct emu_engine_rx {
	struct rx_port *ports; /* by wire endpoint, up to the last host port's */
	size_t nports;
};

#define ETHERTYPE_VLAN 0x8100
#define LRH_LNH_MASK 0x3

static enum emu_rx_kind bth_at(const uint8_t *frame, size_t len, size_t off, uint32_t *dqpn)
{
	if (len < off + EMU_BTH_LEN)
		return EMU_RX_KIND_MALFORMED;
	/* DestQP: BTH bytes 5-7 (IBTA 9.2, figure 47) */
	*dqpn = emu_be24_get(frame + off + 5);
	return EMU_RX_KIND_TRANSPORT;
}

static enum emu_rx_kind classify_eth(const uint8_t *f, size_t len, uint32_t *dqpn)
{
	size_t off = EMU_ETH_LEN;
	uint16_t type;

	if (len < EMU_ETH_LEN)
		return EMU_RX_KIND_MALFORMED;
	type = emu_be16_get(f + 12);
	if (type == ETHERTYPE_VLAN) { /* one 802.1Q tag */
		if (len < EMU_ETH_LEN + 4)
			return EMU_RX_KIND_MALFORMED;
		type = emu_be16_get(f + 16);
		off += 4;
	}
	if (type == EMU_ETHERTYPE_IPV4) {
		size_t ihl;

		if (len < off + EMU_IPV4_LEN)
			return EMU_RX_KIND_MALFORMED;
		ihl = (size_t)(f[off] & 0x0f) * 4;
		if (ihl < EMU_IPV4_LEN || len < off + ihl)
			return EMU_RX_KIND_MALFORMED;
		/* a fragment's UDP header is not where it would be: not RoCE (rxe never fragments) */
		if (f[off + 9] != EMU_IPPROTO_UDP || (emu_be16_get(f + off + 6) & 0x3fff))
			return EMU_RX_KIND_NET;
		off += ihl;
	} else if (type == EMU_ETHERTYPE_IPV6) {
		if (len < off + EMU_IPV6_LEN)
			return EMU_RX_KIND_MALFORMED;
		if (f[off + 6] != EMU_IPPROTO_UDP) /* extension headers: never sent by rxe */
			return EMU_RX_KIND_NET;
		off += EMU_IPV6_LEN;
	} else {
		return EMU_RX_KIND_NET;
	}
	if (len < off + EMU_UDP_LEN)
		return EMU_RX_KIND_MALFORMED;
	if (emu_be16_get(f + off + 2) != EMU_ROCE_UDP_DPORT)
		return EMU_RX_KIND_NET;
	return bth_at(f, len, off + EMU_UDP_LEN, dqpn);
}

static enum emu_rx_kind classify_ib(const uint8_t *f, size_t len, uint32_t *dqpn)
{
	if (len < EMU_LRH_LEN)
		return EMU_RX_KIND_MALFORMED;
	switch (f[1] & LRH_LNH_MASK) {
	case EMU_LNH_IBA_LOCAL:
		return bth_at(f, len, EMU_LRH_LEN, dqpn);
	case EMU_LNH_IBA_GLOBAL:
		if (len < EMU_LRH_LEN + EMU_GRH_LEN)
			return EMU_RX_KIND_MALFORMED;
		if (f[EMU_LRH_LEN + 6] != EMU_GRH_NXTHDR_IBA)
			return EMU_RX_KIND_OTHER;
		return bth_at(f, len, EMU_LRH_LEN + EMU_GRH_LEN, dqpn);
	default:
		return EMU_RX_KIND_OTHER;
	}
}

enum emu_rx_kind emu_rx_classify(int link_layer, const uint8_t *frame, size_t len,
				 uint32_t *dqpn)
{
	uint32_t q = 0;
	enum emu_rx_kind k = link_layer == EMU_LL_ETHERNET ? classify_eth(frame, len, &q)
							     : classify_ib(frame, len, &q);

	if (dqpn)
		*dqpn = q;
	return k;
}

static void demux(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct rx_port *p = ctx;
	const struct rx_fn *to = NULL;
	uint32_t dqpn;

	switch (emu_rx_classify(p->link_layer, frame, len, &dqpn)) {
	case EMU_RX_KIND_TRANSPORT:
		for (unsigned i = 0; i < p->nclaims; i++)
			if (p->claims[i].qpn == dqpn) {
				to = &p->claims[i].to;
				break;
			}
		if (!to)
			to = &p->cls[EMU_RX_HCA];
		break;
	case EMU_RX_KIND_NET:
		to = &p->cls[EMU_RX_NET];
		break;
	case EMU_RX_KIND_MALFORMED:
	case EMU_RX_KIND_OTHER:
		/* the HCA counts and drops what it cannot parse, as a port would */
		to = &p->cls[EMU_RX_HCA];
		break;
	}
	if (!to || !to->fn) {
		p->unclaimed++;
		return;
	}
	to->fn(to->ctx, frame, len, now);
}

/* A described frame (emu_wire_send_lazy) goes to the lazy function of its DestQP's claim;
 * anything else is declined and comes back as bytes through demux(). */
static bool demux_lazy(void *ctx, const struct emu_wire_lazy *ops, const void *obj, uint64_t now)
{
	struct rx_port *p = ctx;
	uint32_t dqpn = ops->dqpn(obj);

	for (unsigned i = 0; i < p->nclaims; i++)
		if (p->claims[i].qpn == dqpn)
			return p->claims[i].lazy &&
			       p->claims[i].lazy(p->claims[i].to.ctx, ops, obj, now);
	return false;
}

/* Installs the demultiplexer as the receiver of every host port. NULL when out of memory. */
static struct emu_engine_rx *rx_new(struct emu_topology *t)
{
	const struct emu_fabric *f = emu_topology_fabric(t);
	struct emu_engine_rx *rx = emu_calloc(1, sizeof(*rx));

	if (!rx)
		return NULL;
	/* the host ports only: the topology numbers them before the switches' ports (on the
	 * 10,000-node fabric 9,600 of its 24,000 endpoints) */
	for (size_t ep = emu_topology_nendpoints(t); ep > 0; ep--) {
		struct emu_endpoint info;

		if (!emu_topology_endpoint_info(t, (int)ep - 1, &info) &&
		    info.kind == EMU_EP_HOST_PORT) {
			rx->nports = ep;
			break;
		}
	}
	rx->ports = emu_calloc(rx->nports ? rx->nports : 1, sizeof(*rx->ports));
	if (!rx->ports) {
		free(rx);
		return NULL;
	}
	for (size_t ep = 0; ep < rx->nports; ep++) {
		struct emu_endpoint info;
		const struct emu_port *port;

		if (emu_topology_endpoint_info(t, (int)ep, &info) ||
		    info.kind != EMU_EP_HOST_PORT)
			continue;
		port = &f->hosts[info.node].devices[info.device].ports[info.port - 1];
		rx->ports[ep].link_layer = port->link_layer == EMU_LL_ETHERNET ? EMU_LL_ETHERNET
										: EMU_LL_INFINIBAND;
		emu_topology_set_rx(t, (int)ep, demux, &rx->ports[ep]);
		emu_topology_set_rx_lazy(t, (int)ep, demux_lazy);
	}
	return rx;
}

static void rx_free(struct emu_engine_rx *rx)
{
	free(rx->ports);
	free(rx);
}

/* The engine's input (frames posted from outside the process in real-time mode, the link's
 * rings): dropped silently for an endpoint that is no host port. */
static void deliver(void *ctx, int ep, const uint8_t *frame, size_t len, uint64_t now)
{
	struct emu_engine_rx *rx = ctx;

	if (ep < 0 || (size_t)ep >= rx->nports || !rx->ports[ep].link_layer)
		return;
	demux(&rx->ports[ep], frame, len, now);
}

static void rx_ext_free(struct emu_engine *e, void *obj)
{
	(void)e;
	rx_free(obj);
}

/* Attached first (the lowest hook), so freed last of the attachments: a layer that releases
 * its claims when freed still finds the ports. */
static const struct emu_engine_ext_type rx_ext_type = {
	.name = "rx",
	.free = rx_ext_free,
};

static int rx_created(struct emu_engine *e)
{
	struct emu_engine_rx *rx = rx_new(emu_engine_topology(e));

	if (!rx)
		return -ENOMEM;
	if (emu_engine_ext_set(e, &rx_ext_type, rx)) {
		rx_free(rx);
		return -ENOMEM;
	}
	emu_engine_set_input(e, deliver, rx);
	return 0;
}

static struct emu_engine_hook rx_hook = { .order = 1, .created = rx_created };

__attribute__((constructor)) static void install(void)
{
	emu_engine_on_create(&rx_hook);
}

static struct rx_port *port_of(struct emu_engine *e, size_t host, size_t dev, unsigned port)
{
	struct emu_engine_rx *rx = emu_engine_ext_get(e, &rx_ext_type);
	int ep = emu_topology_port_endpoint(emu_engine_topology(e), host, dev, port);

	if (ep < 0 || !rx || (size_t)ep >= rx->nports || !rx->ports[ep].link_layer)
		return NULL;
	return &rx->ports[ep];
}

/* The receiver slot of class cls on that port; NULL with *err -EINVAL or -ENOENT. */
static struct rx_fn *class_of(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			      enum emu_rx_class cls, int *err)
{
	struct rx_port *p;

	*err = -EINVAL;
	if ((unsigned)cls >= EMU_RX_NCLASS)
		return NULL;
	*err = -ENOENT;
	p = port_of(e, host, dev, port);
	return p ? &p->cls[cls] : NULL;
}

int emu_engine_port_set_rx_class(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				 enum emu_rx_class cls, emu_wire_rx_fn *fn, void *ctx)
{
	int err;
	struct rx_fn *to = class_of(e, host, dev, port, cls, &err);

	if (!to)
		return err;
	to->fn = fn;
	to->ctx = fn ? ctx : NULL;
	return 0;
}

int emu_engine_port_get_rx_class(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				 enum emu_rx_class cls, emu_wire_rx_fn **fn, void **ctx)
{
	int err;
	const struct rx_fn *to = class_of(e, host, dev, port, cls, &err);

	if (!to)
		return err;
	*fn = to->fn;
	*ctx = to->ctx;
	return 0;
}

int emu_engine_port_set_rx(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   emu_wire_rx_fn *fn, void *ctx)
{
	return emu_engine_port_set_rx_class(e, host, dev, port, EMU_RX_HCA, fn, ctx);
}

int emu_engine_port_set_rx_qpn(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			       uint32_t qpn, emu_wire_rx_fn *fn, void *ctx)
{
	struct rx_port *p;
	unsigned i;

	if (qpn > EMU_QPN_MASK)
		return -EINVAL;
	p = port_of(e, host, dev, port);
	if (!p)
		return -ENOENT;
	for (i = 0; i < p->nclaims && p->claims[i].qpn != qpn; i++)
		;
	if (!fn) {
		if (i < p->nclaims)
			p->claims[i] = p->claims[--p->nclaims];
		return 0;
	}
	if (i == p->nclaims) {
		if (p->nclaims == EMU_RX_MAX_QPN_CLAIMS)
			return -ENOSPC;
		p->nclaims++;
	}
	p->claims[i] = (struct rx_claim){.qpn = qpn, .to = {fn, ctx}};
	return 0;
}

int emu_engine_port_set_rx_qpn_lazy(struct emu_engine *e, size_t host, size_t dev,
				    unsigned port, uint32_t qpn, emu_wire_rx_lazy_fn *lazy)
{
	struct rx_port *p = port_of(e, host, dev, port);

	for (unsigned i = 0; p && i < p->nclaims; i++)
		if (p->claims[i].qpn == qpn) {
			p->claims[i].lazy = lazy;
			return 0;
		}
	return -ENOENT;
}
