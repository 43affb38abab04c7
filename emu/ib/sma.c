/* The nodes' subnet management agents: SMPs answered from the fabric model (sma.h). */
#include "emu/ib/sma.h"

#include <errno.h>
#include <string.h>

#include "emu/ib/mad.h"

/* The SMP's parts (IBA 14.2.1): the MAD header, M_Key at 24, directed route's DrSLID/DrDLID at
 * 32 and 34, SMP data at 64 (64 bytes), directed route's initial path at 128. */
#define SMP_DATA 64
#define SMP_DATA_LEN 64
#define SMP_INITIAL_PATH 128
#define SMP_MAX_HOPS 63

/* MAD status values (13.4.7): unsupported method/attribute, invalid attribute modifier. */
#define STATUS_UNSUP_ATTR 0x000c
#define STATUS_BAD_FIELD 0x001c
#define STATUS_DIRECTION 0x8000 /* directed route: the D bit, set in responses */

/* CA ports show IsDeviceManagementSupported as their sysfs cap_mask does (emu/hca); a switch's
 * port 0 adds IsSM where the subnet's SM runs. */
#define CAP_SM 0x00000002u
#define CAP_DEVICE_MGMT 0x00010000u

static void be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

static void be64(uint8_t *p, uint64_t v)
{
	be32(p, (uint32_t)(v >> 32));
	be32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

int emu_sma_find_lid(const struct emu_fabric *f, uint16_t lid, struct emu_sma_node *out)
{
	if (!lid || lid > EMU_LID_UNICAST_MAX)
		return -ENOENT;
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct emu_switch *sw = &f->switches[s];

		if (sw->lid && lid >= sw->lid && lid < sw->lid + (1u << sw->lmc)) {
			*out = (struct emu_sma_node){ EMU_EP_SWITCH_PORT, (int)s, 0, 0 };
			return 0;
		}
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
			const struct emu_device *dv = &f->hosts[h].devices[d];

			for (size_t p = 0; p < dv->nports; p++) {
				const struct emu_port *pt = &dv->ports[p];

				if (pt->lid && lid >= pt->lid && lid < pt->lid + (1u << pt->lmc)) {
					*out = (struct emu_sma_node){ EMU_EP_HOST_PORT, (int)h, (int)d,
								      pt->num };
					return 0;
				}
			}
		}
	return -ENOENT;
}

static int link_of(const struct emu_fabric *f, const struct emu_sma_node *n, unsigned port)
{
	if (n->kind == EMU_EP_SWITCH_PORT) {
		const struct emu_switch *sw = &f->switches[n->node];

		return port >= 1 && port <= sw->nports ? sw->port_link[port] : -1;
	}
	const struct emu_device *dv = &f->hosts[n->node].devices[n->device];

	return port >= 1 && port <= dv->nports ? dv->ports[port - 1].link : -1;
}

static bool ep_is(const struct emu_endpoint *e, const struct emu_sma_node *n, unsigned port)
{
	return e->kind == n->kind && e->node == n->node && e->port == port &&
	       (n->kind == EMU_EP_SWITCH_PORT || e->device == n->device);
}

/* A host port's link is up when the port is not DOWN; the link's own `down` fault cuts it. */
static bool host_port_up(const struct emu_fabric *f, const struct emu_endpoint *e)
{
	return e->kind != EMU_EP_HOST_PORT ||
	       f->hosts[e->node].devices[e->device].ports[e->port - 1].state > 1;
}

/* One hop: from node n out of `port` to the port across the link. */
static int hop(const struct emu_fabric *f, struct emu_sma_node *n, unsigned port)
{
	int l = link_of(f, n, port);
	const struct emu_link *lk;
	const struct emu_endpoint *far;

	if (l < 0)
		return -ETIMEDOUT;
	lk = &f->links[l];
	if (lk->faults.down)
		return -ETIMEDOUT;
	far = ep_is(&lk->a, n, port) ? &lk->b : &lk->a;
	if (!host_port_up(f, &lk->a) || !host_port_up(f, &lk->b))
		return -ETIMEDOUT;
	*n = (struct emu_sma_node){ far->kind, far->node, far->kind == EMU_EP_HOST_PORT ? far->device : 0,
				    far->port };
	return 0;
}

int emu_sma_walk(const struct emu_fabric *f, size_t host, size_t dev, unsigned port,
		 const uint8_t *path, unsigned hops, struct emu_sma_node *out)
{
	struct emu_sma_node n = { EMU_EP_HOST_PORT, (int)host, (int)dev, (uint8_t)port };

	if (hops > SMP_MAX_HOPS)
		return -ETIMEDOUT;
	for (unsigned i = 1; i <= hops; i++) {
		/* the sender's own hop leaves through the port it was sent on; a CA further on
		 * does not forward */
		unsigned outp = i == 1 && n.kind == EMU_EP_HOST_PORT ? port : path[i];

		if (i > 1 && n.kind == EMU_EP_HOST_PORT)
			return -ETIMEDOUT;
		if (hop(f, &n, outp))
			return -ETIMEDOUT;
	}
	*out = n;
	return 0;
}

/* ---- the attributes ---------------------------------------------------------------------- */

static const struct emu_device *node_dev(const struct emu_fabric *f, const struct emu_sma_node *n)
{
	return n->kind == EMU_EP_HOST_PORT ? &f->hosts[n->node].devices[n->device] : NULL;
}

static void node_info(const struct emu_fabric *f, const struct emu_sma_node *n, uint8_t *d)
{
	const struct emu_device *dv = node_dev(f, n);

	d[0] = EMU_MAD_BASE_VERSION;
	d[1] = 1; /* SMP class version */
	if (dv) {
		const struct emu_port *pt = &dv->ports[n->port - 1];

		d[2] = 1; /* CA */
		d[3] = (uint8_t)dv->nports;
		be64(d + 4, dv->sys_image_guid);
		be64(d + 12, dv->node_guid);
		be64(d + 20, pt->port_guid);
		/* PartitionCap: the device's P_Key table size, as the SA's NodeRecord says it
		 * (sa_node.c); an SM copies one into the other */
		be16(d + 28, (uint16_t)dv->caps.max_pkeys);
		be16(d + 30, (uint16_t)dv->vendor_part_id);
		be32(d + 32, dv->hw_ver);
		be32(d + 36, (uint32_t)n->port << 24 | (dv->vendor_id & 0xffffff));
		return;
	}
	const struct emu_switch *sw = &f->switches[n->node];

	d[2] = 2; /* switch */
	d[3] = (uint8_t)sw->nports;
	be64(d + 4, sw->sys_image_guid);
	be64(d + 12, sw->node_guid);
	be64(d + 20, sw->node_guid); /* port 0's GUID is the node GUID */
	be16(d + 28, 8);
	be16(d + 30, (uint16_t)sw->device_id);
	be32(d + 36, (uint32_t)n->port << 24 | (sw->vendor_id & 0xffffff));
}

/* Supported widths and speeds: every one up to the active one (1x and 4x for 4x; SDR, DDR, QDR
 * for QDR). Speeds past QDR are the extended speeds this model does not encode: QDR shows. */
static uint8_t width_sup(uint8_t w)
{
	return (uint8_t)(w | 1 | (w > 2 ? 2 : 0));
}

static uint8_t speed_field(uint8_t s)
{
	return s >= 1 && s <= 4 ? s : 4;
}

struct port_view {
	uint16_t lid, sm_lid;
	uint8_t lmc, sm_sl, state, phys, width, speed, mtu, max_mtu, local;
	uint32_t cap;
	uint8_t guid_cap;
};

static void port_info_bytes(const struct emu_fabric *f, const struct port_view *v, uint8_t *d)
{
	uint8_t sp = speed_field(v->speed);

	be64(d + 8, f->sm.subnet_prefix);
	be16(d + 16, v->lid);
	be16(d + 18, v->sm_lid);
	be32(d + 20, v->cap);
	d[28] = v->local;
	d[29] = width_sup(v->width);
	d[30] = width_sup(v->width);
	d[31] = v->width;
	d[32] = (uint8_t)((2 * sp - 1) << 4 | v->state);
	d[33] = (uint8_t)(v->phys << 4 | 2); /* LinkDownDefaultState: Polling */
	d[34] = v->lmc & 7;
	d[35] = (uint8_t)(sp << 4 | (2 * sp - 1));
	d[36] = (uint8_t)(v->mtu << 4 | (v->sm_sl & 0xf));
	d[37] = 1 << 4;                       /* VLCap: VL0 */
	d[41] = v->max_mtu & 0xf;
	d[42] = 7;                            /* HOQLife */
	d[43] = 1 << 4;                       /* OperVLs: VL0 */
	d[50] = v->guid_cap;
	d[51] = 18;                           /* SubnetTimeout, OpenSM's default */
}

/* The port of a switch as the model has it: through its link, or none. */
static void switch_port_view(const struct emu_fabric *f, const struct emu_switch *sw,
			     unsigned p, struct port_view *v)
{
	int l = p ? sw->port_link[p] : -1;

	if (!p) {
		v->lid = sw->lid;
		v->lmc = sw->lmc;
		v->sm_lid = f->sm.present ? f->sm.sm_lid : 0;
		v->sm_sl = f->sm.sl;
		v->cap = CAP_DEVICE_MGMT | (f->sm.present && f->sm.sm_lid == sw->lid ? CAP_SM : 0);
		v->state = sw->lid ? 4 : 2;
		v->phys = 5;
		v->width = 2;
		v->speed = 1;
		v->mtu = v->max_mtu = 5;
		v->guid_cap = 1;
		return;
	}
	v->max_mtu = 5;
	if (l < 0 || f->links[l].faults.down ||
	    !host_port_up(f, &f->links[l].a) || !host_port_up(f, &f->links[l].b)) {
		v->state = 1;
		v->phys = 2;
		v->width = 2;
		v->speed = 1;
		v->mtu = 5;
		return;
	}
	const struct emu_link *lk = &f->links[l];
	const struct emu_endpoint *far = lk->a.kind == EMU_EP_SWITCH_PORT &&
						 &f->switches[lk->a.node] == sw && lk->a.port == p
						 ? &lk->b : &lk->a;

	v->state = 4;
	v->phys = 5;
	v->width = lk->width ? lk->width : 2;
	v->speed = lk->speed ? lk->speed : 1;
	v->mtu = far->kind == EMU_EP_HOST_PORT
		 ? f->hosts[far->node].devices[far->device].ports[far->port - 1].active_mtu : 5;
}

static int port_info(const struct emu_fabric *f, const struct emu_sma_node *n, uint32_t mod,
		     uint8_t *d)
{
	const struct emu_device *dv = node_dev(f, n);
	struct port_view v = { 0 };

	if (dv) {
		unsigned p = mod ? mod : n->port; /* a CA's 0 is the port asked through */

		if (p > dv->nports)
			return STATUS_BAD_FIELD;
		const struct emu_port *pt = &dv->ports[p - 1];

		v.lid = pt->lid;
		v.sm_lid = pt->sm_lid;
		v.lmc = pt->lmc;
		v.sm_sl = pt->sm_sl;
		v.cap = CAP_DEVICE_MGMT;
		v.state = pt->state;
		v.phys = pt->phys_state;
		v.width = pt->active_width;
		v.speed = pt->active_speed;
		v.mtu = pt->active_mtu;
		v.max_mtu = pt->max_mtu;
		v.guid_cap = 1;
	} else {
		const struct emu_switch *sw = &f->switches[n->node];

		if (mod > sw->nports)
			return STATUS_BAD_FIELD;
		switch_port_view(f, sw, mod, &v);
	}
	v.local = n->port;
	port_info_bytes(f, &v, d);
	return 0;
}

int emu_sma_port_info(const struct emu_fabric *f, const struct emu_sma_node *n, unsigned port,
		      uint8_t d[64])
{
	memset(d, 0, 64);
	return port_info(f, n, port, d) ? -EINVAL : 0;
}

static uint16_t top_lid(const struct emu_fabric *f)
{
	unsigned top = 0;

	for (size_t s = 0; s < f->nswitches; s++)
		if (f->switches[s].lid + (1u << f->switches[s].lmc) - 1 > top && f->switches[s].lid)
			top = f->switches[s].lid + (1u << f->switches[s].lmc) - 1;
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			for (size_t p = 0; p < f->hosts[h].devices[d].nports; p++) {
				const struct emu_port *pt = &f->hosts[h].devices[d].ports[p];

				if (pt->lid && pt->lid + (1u << pt->lmc) - 1 > top)
					top = pt->lid + (1u << pt->lmc) - 1;
			}
	return (uint16_t)top;
}

static void switch_info(const struct emu_fabric *f, uint8_t *d)
{
	be16(d + 0, 0xc000); /* LinearFDBCap: every unicast LID */
	be16(d + 4, 0);      /* MulticastFDBCap: the model keeps no multicast tables here */
	be16(d + 6, top_lid(f));
	d[9] = 0xff;         /* DefaultMulticastPrimaryPort, NotPrimaryPort: none */
	d[10] = 0xff;
	d[11] = 18 << 3;     /* LifeTimeValue */
	be16(d + 14, 8);     /* PartitionEnforcementCap */
}

static void lft_block(const struct emu_topology *t, size_t sw, uint32_t block, uint8_t *d)
{
	for (unsigned i = 0; i < 64; i++) {
		uint32_t lid = block * 64 + i;
		int r = t && lid <= EMU_LID_UNICAST_MAX ? emu_topology_switch_route(t, sw, (uint16_t)lid)
							 : -ENOENT;

		d[i] = r >= 0 ? (uint8_t)r : 0xff;
	}
}

static int pkey_table(const struct emu_fabric *f, const struct emu_sma_node *n, uint32_t mod,
		      uint8_t *d)
{
	const struct emu_device *dv = node_dev(f, n);
	uint32_t block = mod & 0xffff;

	if (!dv) {
		/* a switch's table holds the default partition (full member) only */
		if (block == 0)
			be16(d, 0xffff);
		return (mod >> 16) > f->switches[n->node].nports ? STATUS_BAD_FIELD : 0;
	}
	const struct emu_port *pt = &dv->ports[n->port - 1];

	/* the table NodeInfo's PartitionCap announces */
	if (block * 32 >= dv->caps.max_pkeys)
		return STATUS_BAD_FIELD;
	for (unsigned i = 0; i < 32; i++)
		if (block * 32 + i < pt->npkeys)
			be16(d + 2 * i, pt->pkeys[block * 32 + i]);
	return 0;
}

static int attribute(const struct emu_fabric *f, const struct emu_topology *t,
		     const struct emu_sma_node *n, uint16_t attr, uint32_t mod, uint8_t *d)
{
	memset(d, 0, SMP_DATA_LEN);
	switch (attr) {
	case EMU_SMP_ATTR_NODE_INFO:
		node_info(f, n, d);
		return 0;
	case EMU_SMP_ATTR_NODE_DESC: {
		const struct emu_device *dv = node_dev(f, n);
		const char *s = dv ? dv->node_desc : f->switches[n->node].node_desc;

		memcpy(d, s, strnlen(s, SMP_DATA_LEN));
		return 0;
	}
	case EMU_SMP_ATTR_PORT_INFO:
		return port_info(f, n, mod, d);
	case EMU_SMP_ATTR_SWITCH_INFO:
		if (n->kind != EMU_EP_SWITCH_PORT)
			return STATUS_UNSUP_ATTR;
		switch_info(f, d);
		return 0;
	case EMU_SMP_ATTR_LFT:
		if (n->kind != EMU_EP_SWITCH_PORT)
			return STATUS_UNSUP_ATTR;
		if (mod >= 0xc000 / 64)
			return STATUS_BAD_FIELD;
		lft_block(t, (size_t)n->node, mod, d);
		return 0;
	case EMU_SMP_ATTR_GUID_INFO:
		if (mod == 0) {
			const struct emu_device *dv = node_dev(f, n);

			be64(d, dv ? dv->ports[n->port - 1].port_guid : f->switches[n->node].node_guid);
		}
		return 0;
	case EMU_SMP_ATTR_PKEY_TABLE:
		return pkey_table(f, n, mod, d);
	case EMU_SMP_ATTR_MLNX_EXT_PORT_INFO:
		return 0;
	default:
		return STATUS_UNSUP_ATTR;
	}
}

int emu_sma_process(const struct emu_fabric *f, const struct emu_topology *t, size_t host,
		    size_t dev, unsigned port, uint16_t dlid, uint8_t mad[256])
{
	uint8_t cls = mad[1], method = mad[3];
	struct emu_sma_node n;
	int status, rc;

	if (mad[0] != EMU_MAD_BASE_VERSION ||
	    (cls != EMU_MGMT_CLASS_SUBN_LID && cls != EMU_MGMT_CLASS_SUBN_DR) ||
	    (method != EMU_MAD_METHOD_GET && method != EMU_MAD_METHOD_SET))
		return -EINVAL;
	if (cls == EMU_MGMT_CLASS_SUBN_DR) {
		unsigned hops = mad[7];

		/* only whole directed routes: DrSLID and DrDLID permissive */
		if (get16(mad + 32) != EMU_LID_PERMISSIVE || get16(mad + 34) != EMU_LID_PERMISSIVE)
			return -ETIMEDOUT;
		rc = emu_sma_walk(f, host, dev, port, mad + SMP_INITIAL_PATH, hops, &n);
		if (rc)
			return rc;
	} else {
		const struct emu_port *src = &f->hosts[host].devices[dev].ports[port - 1];

		/* a LID-routed SMP needs the sender's port active and the LID assigned */
		if (src->state != 4 || emu_sma_find_lid(f, dlid, &n))
			return -ETIMEDOUT;
	}
	status = attribute(f, t, &n, get16(mad + 16), get32(mad + 20), mad + SMP_DATA);
	mad[3] = EMU_MAD_METHOD_GET_RESP;
	if (cls == EMU_MGMT_CLASS_SUBN_DR) {
		/* back at its sender: the direction bit set, the hop pointer run down to 0 */
		be16(mad + 4, (uint16_t)(status | STATUS_DIRECTION));
		mad[6] = 0;
	} else {
		be16(mad + 4, (uint16_t)status);
	}
	return 0;
}
