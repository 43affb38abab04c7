/* The fake SA's NodeRecords (Get, GetTable): one per end port, as OpenSM's
 * osm_sa_node_record.c builds them: each CA port with its LID and port GUID, a switch once for
 * its management port 0. docs/sa.md "NodeRecord". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_priv.h"
#include "util/failcall.h"

#define NODE_TYPE_CA 1
#define NODE_TYPE_SWITCH 2

/* OpenSM walks its node table, a qmap keyed by the node GUID as stored (network byte order)
 * and compared as a host integer: on a little-endian host that is the GUID's bytes reversed,
 * so the low byte of the GUID orders first. */
static uint64_t walk_key(uint64_t guid)
{
	return __builtin_bswap64(guid);
}

static int by_walk_key(const void *a, const void *b)
{
	uint64_t ka = walk_key(((const struct emu_sa_node_ref *)a)->guid);
	uint64_t kb = walk_key(((const struct emu_sa_node_ref *)b)->guid);

	return ka < kb ? -1 : ka > kb;
}

static void desc_copy(uint8_t out[64], const char *desc)
{
	size_t n = strlen(desc);

	memset(out, 0, 64);
	memcpy(out, desc, n < 64 ? n : 64);
}

static void ca_record(const struct emu_device *dev, const struct emu_port *po, size_t port_num,
		      struct emu_sa_node_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->lid = po->lid;
	r->base_version = 1;
	r->class_version = 1;
	r->node_type = NODE_TYPE_CA;
	r->num_ports = (uint8_t)dev->nports;
	r->sys_guid = dev->sys_image_guid;
	r->node_guid = dev->node_guid;
	r->port_guid = po->port_guid;
	r->partition_cap = (uint16_t)dev->caps.max_pkeys;
	r->device_id = (uint16_t)dev->vendor_part_id;
	r->revision = dev->hw_ver;
	r->local_port_num = (uint8_t)port_num;
	r->vendor_id = dev->vendor_id;
	desc_copy(r->node_desc, dev->node_desc);
}

/* A switch's NodeInfo as its port 0 gives it: the port GUID is the node GUID (ibnetdiscover's
 * switchguid), the system image GUID too when the topology names no other. */
static void switch_record(const struct emu_switch *sw, struct emu_sa_node_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->lid = sw->lid;
	r->base_version = 1;
	r->class_version = 1;
	r->node_type = NODE_TYPE_SWITCH;
	r->num_ports = (uint8_t)sw->nports;
	r->sys_guid = sw->sys_image_guid ? sw->sys_image_guid : sw->node_guid;
	r->node_guid = sw->node_guid;
	r->port_guid = sw->node_guid;
	/* as the switch's SMA answers NodeInfo (sma.c): its P_Key table holds 8 entries */
	r->partition_cap = 8;
	r->device_id = (uint16_t)sw->device_id;
	r->vendor_id = sw->vendor_id;
	desc_copy(r->node_desc, sw->node_desc);
}

struct emu_sa_node_ref *emu_sa_nodes(const struct emu_fabric *f, size_t *n)
{
	struct emu_sa_node_ref *v = emu_calloc(f->nswitches + 1, sizeof(*v));
	size_t cap = f->nswitches + 1, k = 0;

	if (!v)
		return NULL;
	for (size_t s = 0; s < f->nswitches; s++)
		v[k++] = (struct emu_sa_node_ref){ .guid = f->switches[s].node_guid,
						   .sw = &f->switches[s], .node = (int)s };
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
			const struct emu_device *dev = &f->hosts[h].devices[d];
			struct emu_sa_node_ref *nv;

			if (!dev->nports || dev->ports[0].link_layer != 1)
				continue;
			if (k == cap) {
				cap *= 2;
				nv = emu_realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return NULL;
				}
				v = nv;
			}
			v[k++] = (struct emu_sa_node_ref){ .guid = dev->node_guid, .dev = dev,
							   .node = (int)h, .device = (int)d };
		}
	qsort(v, k, sizeof(*v), by_walk_key);
	*n = k;
	return v;
}

/* Adds the records of one node that match the query. */
static int node_records(const struct emu_sa_node_ref *n, const uint8_t *query, uint64_t mask,
			struct emu_sa_reclist *l)
{
	struct emu_sa_node_rec r;
	uint8_t w[108];
	size_t nports = n->sw ? 1 : n->dev->nports;

	for (size_t p = 0; p < nports; p++) {
		if (n->sw) {
			switch_record(n->sw, &r);
		} else {
			if (n->dev->ports[p].link_layer != 1 || !n->dev->ports[p].lid)
				continue;
			ca_record(n->dev, &n->dev->ports[p], p + 1, &r);
		}
		emu_mad_record_pack(&emu_sa_node_rec_desc, &r, w);
		if (emu_mad_record_match(&emu_sa_node_rec_desc, query, w, mask, 0) &&
		    emu_sa_reclist_add(l, w, sizeof(w)))
			return -ENOMEM;
	}
	return 0;
}

int emu_sa_node(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		size_t *resp_len)
{
	struct emu_sa_hdr sh;
	struct emu_sa_reclist l = { 0 };
	struct emu_sa_node_ref *nodes;
	size_t n = 0;
	int ret = 0;

	emu_sa_hdr_get(mad + 36, &sh);
	nodes = emu_sa_nodes(sa->f, &n);
	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++)
		ret = node_records(&nodes[i], mad + EMU_SA_HDR_LEN, sh.comp_mask, &l);
	free(nodes);
	if (!ret)
		ret = emu_sa_respond_records(mad, len, &emu_sa_node_rec_desc, l.buf, l.n, resp,
					     resp_len);
	free(l.buf);
	return ret;
}
