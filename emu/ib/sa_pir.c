/* The fake SA's PortInfoRecords (Get, GetTable): one per port of every node, carrying the
 * PortInfo its SMA gives (emu/ib/sma.c), in the order and with the matching rules of OpenSM's
 * osm_sa_portinfo_record.c. docs/sa.md "PortInfoRecord". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "emu/ib/sa_priv.h"
#include "emu/ib/sma.h"

/* PortInfo CapabilityMask bit 14: IsExtendedSpeedsSupported. */
#define CAP_EXT_SPEEDS (1u << 14)

/* Mask bits OpenSM compares by rules of its own (below) or not at all: the RID's LID (a LID
 * range) and PortNum (chooses the port), Options (a request option), the capability masks
 * (equality or, with EMU_PIR_ENHANCED_MATCH, bits set), and fields it never compares. */
#define SKIP_ALWAYS                                                                     \
	(EMU_PIR_COMP_LID | EMU_PIR_COMP_PORT_NUM | EMU_PIR_COMP_OPTIONS |             \
	 EMU_PIR_COMP_CAP_MASK | EMU_PIR_COMP_CAP_MASK2 | EMU_PIR_COMP_INIT_TYPE_REPLY | \
	 EMU_PIR_COMP_CLIENT_REREG | EMU_PIR_COMP_MCAST_TRAP_SUPP |                     \
	 EMU_PIR_COMP_MAX_CREDIT_HINT | EMU_PIR_COMP_ROUND_TRIP)

struct pir_query {
	const uint8_t *rec; /* the request's record, wire form */
	uint64_t mask;
	bool enhanced, trusted;
};

static bool mask_ok(uint32_t want, uint32_t have, bool enhanced)
{
	return enhanced ? (want & have) == want : want == have;
}

static bool port_matches(const struct pir_query *q, const uint8_t *w, uint32_t node_cap)
{
	uint64_t skip = SKIP_ALWAYS;

	/* the extended speeds are compared only where the node says it has them */
	if (!(node_cap & CAP_EXT_SPEEDS))
		skip |= EMU_PIR_COMP_SPEED_EXT;
	if ((q->mask & EMU_PIR_COMP_CAP_MASK) &&
	    !mask_ok(emu_be32_get(q->rec + 24), emu_be32_get(w + 24), q->enhanced))
		return false;
	if ((q->mask & EMU_PIR_COMP_CAP_MASK2) &&
	    !mask_ok(emu_be16_get(q->rec + 64), emu_be16_get(w + 64), q->enhanced))
		return false;
	return emu_mad_record_match(&emu_sa_portinfo_rec_desc, q->rec, w, q->mask, skip);
}

/* The record of port p of node n, added when it matches. lid is the node's base LID (a
 * switch's for all its ports), lmc its range. */
static int port_record(const struct emu_sa *sa, const struct pir_query *q,
		       const struct emu_sma_node *n, unsigned p, uint16_t lid, uint8_t lmc,
		       struct emu_sa_reclist *l)
{
	uint8_t w[68], cap0[64];
	uint32_t node_cap;

	memset(w, 0, sizeof(w));
	if (emu_sma_port_info(sa->f, n, p, w + 4))
		return 0;
	if (q->mask & EMU_PIR_COMP_LID) {
		uint16_t want = emu_be16_get(q->rec);

		if (want < lid || want > lid + (1u << lmc) - 1)
			return 0;
	}
	emu_be16_put(w, lid);
	w[2] = (uint8_t)p;
	if (q->mask & EMU_PIR_COMP_OPTIONS)
		w[3] = q->rec[3];
	/* a switch's capabilities are its port 0's */
	node_cap = emu_be32_get(w + 24);
	if (n->kind == EMU_EP_SWITCH_PORT && p && !emu_sma_port_info(sa->f, n, 0, cap0))
		node_cap = emu_be32_get(cap0 + 20);
	if (!port_matches(q, w, node_cap))
		return 0;
	/* the M_Key is given to trusted requests only (a nonzero, valid SM_Key) */
	if (!q->trusted)
		memset(w + 4, 0, 8);
	return emu_sa_reclist_add(l, w, sizeof(w)) ? -ENOMEM : 0;
}

static int node_ports(const struct emu_sa *sa, const struct pir_query *q,
		      const struct emu_sa_node_ref *r, struct emu_sa_reclist *l)
{
	bool one = q->mask & EMU_PIR_COMP_PORT_NUM;
	unsigned want = q->rec[2];
	int ret = 0;

	if (r->sw) {
		struct emu_sma_node n = { .kind = EMU_EP_SWITCH_PORT, .node = r->node };

		for (unsigned p = 0; p <= r->sw->nports && !ret; p++)
			if (!one || p == want)
				ret = port_record(sa, q, &n, p, r->sw->lid, 0, l);
		return ret;
	}
	for (unsigned p = 1; p <= r->dev->nports && !ret; p++) {
		const struct emu_port *po = &r->dev->ports[p - 1];
		struct emu_sma_node n = { .kind = EMU_EP_HOST_PORT, .node = r->node,
					  .device = r->device, .port = (uint8_t)p };

		if ((one && p != want) || po->link_layer != 1 || !po->lid)
			continue;
		ret = port_record(sa, q, &n, p, po->lid, po->lmc, l);
	}
	return ret;
}

/* The node owning the LID of the query's RID, as OpenSM's osm_get_port_by_lid: NULL when no
 * port has it. */
static const struct emu_sa_node_ref *node_of_lid(const struct emu_fabric *f,
						 const struct emu_sa_node_ref *nodes, size_t n,
						 uint16_t lid)
{
	struct emu_sma_node sn;

	if (!lid || emu_sma_find_lid(f, lid, &sn))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool sw = sn.kind == EMU_EP_SWITCH_PORT;

		if ((sw && nodes[i].sw && nodes[i].node == sn.node) ||
		    (!sw && nodes[i].dev && nodes[i].node == sn.node &&
		     nodes[i].device == sn.device))
			return &nodes[i];
	}
	return NULL;
}

int emu_sa_portinfo(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		    size_t *resp_len)
{
	struct emu_mad_hdr h;
	struct emu_sa_hdr sh;
	struct emu_sa_reclist l = { 0 };
	struct emu_sa_node_ref *nodes;
	struct pir_query q;
	size_t n = 0;
	int ret = 0;

	emu_mad_hdr_get(mad, &h);
	emu_sa_hdr_get(mad + 36, &sh);
	q = (struct pir_query){ .rec = mad + EMU_SA_HDR_LEN, .mask = sh.comp_mask,
				.enhanced = h.attr_mod & EMU_PIR_ENHANCED_MATCH,
				.trusted = sh.sm_key != 0 };
	nodes = emu_sa_nodes(sa->f, &n);
	if (!nodes)
		return -ENOMEM;
	if (q.mask & (EMU_PIR_COMP_LID | EMU_PIR_COMP_BASE_LID)) {
		const struct emu_sa_node_ref *r = node_of_lid(sa->f, nodes, n,
							      emu_be16_get(q.rec));

		if (r)
			ret = node_ports(sa, &q, r, &l);
	} else {
		for (size_t i = 0; i < n && !ret; i++)
			ret = node_ports(sa, &q, &nodes[i], &l);
	}
	free(nodes);
	if (!ret)
		ret = emu_sa_respond_records(mad, len, &emu_sa_portinfo_rec_desc, l.buf, l.n,
					     resp, resp_len);
	free(l.buf);
	return ret;
}
