/* The nodes' Performance Management Agents: PerfMgt MADs answered from the wire's port
 * counters (pma.h). */
#include "emu/ib/pma.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "emu/ib/mad.h"
#include "emu/sim/wire.h"

#define PMA_DATA 64 /* the MAD header and 40 reserved bytes (struct ib_pma_mad) */
#define PMA_CLASS_VERSION 1
#define ALL_PORTS 0xff

/* PortCounters' CounterSelect bits the model has a counter for (IB_PMA_SEL_*) and
 * PortCountersExtended's (IB_PMA_SELX_*). */
#define SEL_RCV_ERRORS 0x0008
#define SEL_RCV_RELAY_ERRORS 0x0020
#define SEL_XMIT_DISCARDS 0x0040
#define SEL_XMIT_DATA 0x1000
#define SEL_RCV_DATA 0x2000
#define SEL_XMIT_PKTS 0x4000
#define SEL_RCV_PKTS 0x8000
#define SELX_XMIT_DATA 0x01
#define SELX_RCV_DATA 0x02
#define SELX_XMIT_PKTS 0x04
#define SELX_RCV_PKTS 0x08
#define SELX_UCAST_XMIT 0x10
#define SELX_UCAST_RCV 0x20
#define SELX_MCAST_XMIT 0x40
#define SELX_MCAST_RCV 0x80

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint16_t sat16(uint64_t v)
{
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The node's ports PortSelect names: [*lo, *hi], the wire endpoints found through t. A CA
 * answers for the port the MAD reached only; a switch for port 0 (which counts nothing), one
 * external port, or all of them. false: an invalid PortSelect. */
static bool select_ports(const struct emu_fabric *f, const struct emu_sma_node *n, unsigned sel,
			 unsigned *lo, unsigned *hi)
{
	if (n->kind == EMU_EP_HOST_PORT) {
		*lo = *hi = n->port;
		return sel == n->port;
	}
	if (sel == ALL_PORTS) {
		*lo = 1;
		*hi = (unsigned)f->switches[n->node].nports;
		return true;
	}
	*lo = *hi = sel;
	return sel <= f->switches[n->node].nports;
}

static int port_ep(const struct emu_topology *t, const struct emu_sma_node *n, unsigned port)
{
	if (!t || !port)
		return -ENOENT;
	if (n->kind == EMU_EP_HOST_PORT)
		return emu_topology_port_endpoint(t, (size_t)n->node, (size_t)n->device, port);
	return emu_topology_switch_endpoint(t, (size_t)n->node, port);
}

/* The sum of the selected ports' counters, each field saturating. */
static void sum(const struct emu_topology *t, const struct emu_sma_node *n, unsigned lo,
		unsigned hi, struct emu_wire_port_counters *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned p = lo; p <= hi; p++) {
		struct emu_wire_port_counters one;
		int ep = port_ep(t, n, p);

		if (ep < 0 || emu_wire_port_counters(emu_topology_wire(t), ep, &one))
			continue;
		c->xmit_octets = add_sat(c->xmit_octets, one.xmit_octets);
		c->rcv_octets = add_sat(c->rcv_octets, one.rcv_octets);
		c->xmit_pkts = add_sat(c->xmit_pkts, one.xmit_pkts);
		c->rcv_pkts = add_sat(c->rcv_pkts, one.rcv_pkts);
		c->xmit_ucast = add_sat(c->xmit_ucast, one.xmit_ucast);
		c->rcv_ucast = add_sat(c->rcv_ucast, one.rcv_ucast);
		c->xmit_mcast = add_sat(c->xmit_mcast, one.xmit_mcast);
		c->rcv_mcast = add_sat(c->rcv_mcast, one.rcv_mcast);
		c->xmit_discards = add_sat(c->xmit_discards, one.xmit_discards);
		c->rcv_errors = add_sat(c->rcv_errors, one.rcv_errors);
		c->rcv_relay_errors = add_sat(c->rcv_relay_errors, one.rcv_relay_errors);
	}
}

/* Set: the counters the select masks name go to 0, on every selected port. */
static void clear(struct emu_topology *t, const struct emu_sma_node *n, unsigned lo,
		  unsigned hi, uint16_t attr, uint16_t sel)
{
	for (unsigned p = lo; p <= hi; p++) {
		struct emu_wire_port_counters c;
		int ep = port_ep(t, n, p);

		if (ep < 0 || emu_wire_port_counters(emu_topology_wire(t), ep, &c))
			continue;
		if (attr == EMU_PMA_ATTR_PORT_COUNTERS) {
			c.rcv_errors = sel & SEL_RCV_ERRORS ? 0 : c.rcv_errors;
			c.rcv_relay_errors = sel & SEL_RCV_RELAY_ERRORS ? 0 : c.rcv_relay_errors;
			c.xmit_discards = sel & SEL_XMIT_DISCARDS ? 0 : c.xmit_discards;
			c.xmit_octets = sel & SEL_XMIT_DATA ? 0 : c.xmit_octets;
			c.rcv_octets = sel & SEL_RCV_DATA ? 0 : c.rcv_octets;
			c.xmit_pkts = sel & SEL_XMIT_PKTS ? 0 : c.xmit_pkts;
			c.rcv_pkts = sel & SEL_RCV_PKTS ? 0 : c.rcv_pkts;
		} else {
			c.xmit_octets = sel & SELX_XMIT_DATA ? 0 : c.xmit_octets;
			c.rcv_octets = sel & SELX_RCV_DATA ? 0 : c.rcv_octets;
			c.xmit_pkts = sel & SELX_XMIT_PKTS ? 0 : c.xmit_pkts;
			c.rcv_pkts = sel & SELX_RCV_PKTS ? 0 : c.rcv_pkts;
			c.xmit_ucast = sel & SELX_UCAST_XMIT ? 0 : c.xmit_ucast;
			c.rcv_ucast = sel & SELX_UCAST_RCV ? 0 : c.rcv_ucast;
			c.xmit_mcast = sel & SELX_MCAST_XMIT ? 0 : c.xmit_mcast;
			c.rcv_mcast = sel & SELX_MCAST_RCV ? 0 : c.rcv_mcast;
		}
		emu_wire_port_counters_set(emu_topology_wire(t), ep, &c);
	}
}

/* PortCounters (<rdma/ib_pma.h> struct ib_pma_portcounters) at d. */
static void port_counters(const struct emu_wire_port_counters *c, uint8_t *d)
{
	put16(d + 8, sat16(c->rcv_errors));
	put16(d + 12, sat16(c->rcv_relay_errors));
	put16(d + 14, sat16(c->xmit_discards));
	put32(d + 24, sat32(c->xmit_octets / 4));
	put32(d + 28, sat32(c->rcv_octets / 4));
	put32(d + 32, sat32(c->xmit_pkts));
	put32(d + 36, sat32(c->rcv_pkts));
}

/* PortCountersExtended (struct ib_pma_portcounters_ext) at d. */
static void port_counters_ext(const struct emu_wire_port_counters *c, uint8_t *d)
{
	put64(d + 8, c->xmit_octets / 4);
	put64(d + 16, c->rcv_octets / 4);
	put64(d + 24, c->xmit_pkts);
	put64(d + 32, c->rcv_pkts);
	put64(d + 40, c->xmit_ucast);
	put64(d + 48, c->rcv_ucast);
	put64(d + 56, c->xmit_mcast);
	put64(d + 64, c->rcv_mcast);
}

static uint16_t cap_mask(const struct emu_sma_node *n)
{
	if (n->kind == EMU_EP_HOST_PORT)
		return EMU_PMA_CAP_EXT_WIDTH;
	return EMU_PMA_CAP_ALL_PORT_SELECT | EMU_PMA_CAP_EXT_WIDTH | EMU_PMA_CAP_XMIT_WAIT;
}

/* The counters' attributes: Get, or Set then Get. Returns the MAD status. */
static uint16_t counters(const struct emu_fabric *f, struct emu_topology *t,
			 const struct emu_sma_node *n, uint16_t attr, uint32_t mod, bool set,
			 uint8_t *d)
{
	unsigned sel = d[1], lo, hi;
	uint16_t mask = get16(d + 2);
	struct emu_wire_port_counters c;

	/* the answer is the Get's, CounterSelect 0 after a Set too (qib_mad.c answers a Set
	 * with its Get, which clears the attribute but PortSelect) */
	memset(d, 0, EMU_MAD_LEN - PMA_DATA);
	d[1] = (uint8_t)sel;
	if (mod || !select_ports(f, n, sel, &lo, &hi))
		return EMU_MAD_STATUS_INVALID_FIELD;
	if (set)
		clear(t, n, lo, hi, attr, mask);
	sum(t, n, lo, hi, &c);
	if (attr == EMU_PMA_ATTR_PORT_COUNTERS)
		port_counters(&c, d);
	else
		port_counters_ext(&c, d);
	return 0;
}

/* ClassPortInfo (IBA 13.4.8.1) at d; status 0. */
static uint16_t class_port_info(const struct emu_sma_node *n, uint8_t *d)
{
	memset(d, 0, EMU_MAD_LEN - PMA_DATA);
	d[0] = EMU_MAD_BASE_VERSION;
	d[1] = PMA_CLASS_VERSION;
	put16(d + 2, cap_mask(n));
	d[7] = 18; /* RespTimeValue: 4.096 us * 2^18, as qib answers */
	return 0;
}

static bool has_pma(const struct emu_fabric *f, const struct emu_sma_node *n)
{
	if (n->kind != EMU_EP_HOST_PORT)
		return true;
	const struct emu_device *dv = &f->hosts[n->node].devices[n->device];

	return dv->ports[n->port - 1].link_layer == EMU_LL_INFINIBAND;
}

int emu_pma_process(const struct emu_fabric *f, struct emu_topology *t,
		    const struct emu_sma_node *n, uint8_t mad[256])
{
	uint8_t method = mad[3];
	uint16_t attr = get16(mad + 16), status;

	if (mad[0] != EMU_MAD_BASE_VERSION || mad[1] != EMU_MGMT_CLASS_PERF ||
	    (method & EMU_MAD_METHOD_RESP_BIT))
		return -EINVAL;
	if (!has_pma(f, n))
		return -ETIMEDOUT;
	if (mad[2] != PMA_CLASS_VERSION)
		status = EMU_MAD_STATUS_BAD_VERSION;
	else if (method != EMU_MAD_METHOD_GET && method != EMU_MAD_METHOD_SET)
		status = EMU_MAD_STATUS_UNSUP_METHOD;
	else if (attr == EMU_PMA_ATTR_CLASS_PORT_INFO && method == EMU_MAD_METHOD_GET)
		status = class_port_info(n, mad + PMA_DATA);
	else if (attr == EMU_PMA_ATTR_PORT_COUNTERS || attr == EMU_PMA_ATTR_PORT_COUNTERS_EXT)
		status = counters(f, t, n, attr, get32(mad + 20), method == EMU_MAD_METHOD_SET,
				  mad + PMA_DATA);
	else
		status = EMU_MAD_STATUS_UNSUP_METHOD_ATTR;
	mad[3] = EMU_MAD_METHOD_GET_RESP;
	put16(mad + 4, status);
	return 0;
}
