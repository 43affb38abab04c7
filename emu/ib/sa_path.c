/* PathRecord Get/GetTable: end points, the route through the topology, OpenSM's parameter
 * selection (osm_sa_path_record.c: pr_rcv_get_path_parms, pr_rcv_get_port_pair_paths). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "emu/ib/sa_priv.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"

/* ---- selectors ---- */

unsigned emu_sa_key_plain(uint8_t v)
{
	return v;
}

uint8_t emu_sa_below_plain(uint8_t v)
{
	return v > 1 ? (uint8_t)(v - 1) : 0;
}

unsigned emu_sa_key_rate(uint8_t v)
{
	return emu_sa_rate_mbps(v);
}

uint8_t emu_sa_below_rate(uint8_t v)
{
	unsigned m = emu_sa_rate_mbps(v);

	return m > 1 ? emu_sa_rate_from_mbps(m - 1) : 0;
}

bool emu_sa_select(uint8_t sel, uint8_t req, uint8_t *val, unsigned (*key)(uint8_t),
		   uint8_t (*below)(uint8_t))
{
	switch (sel) {
	case EMU_SA_SEL_GT:
		return key(*val) > key(req);
	case EMU_SA_SEL_LT:
		/* OpenSM lowers the path's value under the limit when it can. */
		if (key(*val) >= key(req)) {
			uint8_t b = below(req);

			if (!b)
				return false;
			*val = b;
		}
		return true;
	case EMU_SA_SEL_EQ:
		if (key(*val) < key(req))
			return false;
		*val = req;
		return true;
	default:
		return true;
	}
}

/* ---- ports and routes ---- */

int emu_sa_index_ports(struct emu_sa *sa)
{
	size_t ngids = 0, cap = 16;

	sa->by_lid = emu_calloc(EMU_SA_MLID_MIN, sizeof(*sa->by_lid));
	if (!sa->by_lid)
		return -ENOMEM;
	for (size_t i = 0; i < sa->nports; i++)
		ngids += sa->ports[i].port->ngids;
	while (cap < 2 * ngids)
		cap *= 2;
	sa->by_gid = emu_calloc(cap, sizeof(*sa->by_gid));
	if (!sa->by_gid)
		return -ENOMEM;
	sa->by_gid_cap = cap;
	for (size_t i = 0; i < sa->nports; i++) {
		struct emu_port *po = sa->ports[i].port;

		/* in port order, first owner kept: what a scan of the ports would find */
		for (uint32_t l = po->lid; po->lid && l < po->lid + (1u << po->lmc); l++)
			if (l < EMU_SA_MLID_MIN && !sa->by_lid[l])
				sa->by_lid[l] = po;
		for (size_t g = 0; g < po->ngids; g++) {
			size_t h = emu_sa_gid_hash(po->gids[g].raw) & (cap - 1);

			while (sa->by_gid[h].port && memcmp(sa->by_gid[h].gid, po->gids[g].raw, 16))
				h = (h + 1) & (cap - 1);
			if (!sa->by_gid[h].port) {
				memcpy(sa->by_gid[h].gid, po->gids[g].raw, 16);
				sa->by_gid[h].port = po;
			}
		}
	}
	return 0;
}

struct emu_port *emu_sa_port_by_gid(const struct emu_sa *sa, const uint8_t gid[16])
{
	size_t m = sa->by_gid_cap - 1;

	for (size_t h = emu_sa_gid_hash(gid) & m; sa->by_gid[h].port; h = (h + 1) & m)
		if (!memcmp(sa->by_gid[h].gid, gid, 16))
			return sa->by_gid[h].port;
	return NULL;
}

struct emu_port *emu_sa_port_by_lid(const struct emu_sa *sa, uint16_t lid)
{
	return lid < EMU_SA_MLID_MIN ? sa->by_lid[lid] : NULL;
}

static unsigned link_mbps(const struct emu_link *l)
{
	unsigned lanes, lane;

	switch (l->width) {
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: lanes = 1; break;
	}
	switch (l->speed) {
	case 1: lane = 2500; break;
	case 2: lane = 5000; break;
	case 4: lane = 10000; break;
	case 8: lane = 10000; break; /* FDR10: 10 Gb/s per lane of data, as OpenSM rates it */
	case 16: lane = 14000; break;
	case 32: lane = 25000; break;
	case 64: lane = 50000; break;
	case 128: lane = 100000; break;
	default: lane = 2500; break;
	}
	return lanes * lane;
}

static bool same_port(const struct emu_endpoint *e, const struct emu_port *po)
{
	const struct emu_device *dev = po->dev;
	const struct emu_host *h = dev->host;

	return e->kind == EMU_EP_HOST_PORT && &h->fabric->hosts[e->node] == h &&
	       &h->devices[e->device] == dev && e->port == po->num;
}

static const struct emu_endpoint *far_end(const struct emu_link *l, const struct emu_endpoint *near)
{
	/* Field by field: the structs' padding bytes are unspecified. */
	const struct emu_endpoint *a = &l->a;
	bool is_a = a->kind == near->kind && a->node == near->node && a->port == near->port &&
		    (a->kind == EMU_EP_SWITCH_PORT || a->device == near->device);

	return is_a ? &l->b : &l->a;
}

static void port_endpoint(const struct emu_port *po, struct emu_endpoint *e)
{
	const struct emu_host *h = po->dev->host;

	memset(e, 0, sizeof(*e));
	e->kind = EMU_EP_HOST_PORT;
	e->node = (int)(h - h->fabric->hosts);
	e->device = (int)(po->dev - h->devices);
	e->port = po->num;
}

/* Walks from src toward dlid. True when it reaches dst; *mbps = the slowest link. */
static bool route(const struct emu_sa *sa, const struct emu_port *src, const struct emu_port *dst,
		  uint16_t dlid, unsigned *mbps)
{
	const struct emu_fabric *f = sa->f;
	struct emu_endpoint at;
	int li = src->link;

	if (src == dst) {
		*mbps = li >= 0 ? link_mbps(&f->links[li]) : 0;
		return li >= 0;
	}
	port_endpoint(src, &at);
	*mbps = UINT32_MAX;
	for (unsigned hops = 0; hops < 64 && li >= 0; hops++) {
		const struct emu_link *l = &f->links[li];
		const struct emu_endpoint *e = far_end(l, &at);
		const struct emu_switch *sw;
		int out;

		if (link_mbps(l) < *mbps)
			*mbps = link_mbps(l);
		if (l->faults.down)
			return false;
		if (e->kind == EMU_EP_HOST_PORT)
			return same_port(e, dst);
		sw = &f->switches[e->node];
		if (sa->t) {
			out = emu_topology_switch_route(sa->t, (size_t)e->node, dlid);
		} else {
			/* No wire: one switch between the two ports at most. */
			out = -ENOENT;
			for (size_t p = 1; p <= sw->nports; p++) {
				int pl = sw->port_link[p];

				if (pl >= 0) {
					struct emu_endpoint se = { EMU_EP_SWITCH_PORT, e->node, 0,
								   (uint8_t)p };
					if (same_port(far_end(&f->links[pl], &se), dst))
						out = (int)p;
				}
			}
		}
		if (out <= 0 || (size_t)out > sw->nports)
			return false;
		at = (struct emu_endpoint){ EMU_EP_SWITCH_PORT, e->node, 0, (uint8_t)out };
		li = sw->port_link[out];
	}
	return false;
}

static bool unreachable(const struct emu_sa *sa, const struct emu_port *dst)
{
	for (size_t i = 0; i < sa->nunreachable; i++)
		for (size_t g = 0; g < dst->ngids; g++)
			if (!memcmp(sa->unreachable[i].raw, dst->gids[g].raw, 16))
				return true;
	return false;
}

/* The P_Key of a path: the requested one if both ports hold it, else the first of src's table
 * that dst holds; never one both hold as limited members. 0: none. */
static uint16_t common_pkey(const struct emu_port *a, const struct emu_port *b, bool want,
			    uint16_t req)
{
	for (size_t i = 0; i < a->npkeys; i++) {
		uint16_t pa = a->pkeys[i];

		if ((pa & 0x7fff) == 0 || (want && (pa & 0x7fff) != (req & 0x7fff)))
			continue;
		for (size_t j = 0; j < b->npkeys; j++) {
			uint16_t pb = b->pkeys[j];

			if ((pb & 0x7fff) == (pa & 0x7fff) && ((pa | pb) & 0x8000))
				return want ? req : pa;
		}
	}
	return 0;
}

/* Builds the record for one (SLID, DLID) pair, or returns false (no path, or the request's
 * component mask excludes it). */
static bool build(const struct emu_sa *sa, const struct emu_sa_path_rec *q, const uint8_t *qw,
		  uint64_t mask, const struct emu_port *src, const struct emu_port *dst,
		  const uint8_t *sgid, const uint8_t *dgid, uint16_t slid, uint16_t dlid,
		  uint8_t preference, uint8_t *wire)
{
	const struct emu_sm *sm = &sa->f->sm;
	struct emu_sa_path_rec r;
	unsigned mbps, rev;
	uint8_t mtu, rate;

	if (src->state != 4 || dst->state != 4 || unreachable(sa, dst))
		return false;
	if (!route(sa, src, dst, dlid, &mbps))
		return false;
	memset(&r, 0, sizeof(r));
	memcpy(r.sgid, sgid, 16);
	memcpy(r.dgid, dgid, 16);
	r.slid = slid;
	r.dlid = dlid;
	r.reversible = route(sa, dst, src, slid, &rev);
	if ((mask & EMU_PR_COMP_REVERSIBLE) && q->reversible && !r.reversible)
		return false;
	r.pkey = common_pkey(src, dst, mask & EMU_PR_COMP_PKEY, q->pkey);
	if (!r.pkey)
		return false;
	r.sl = (mask & EMU_PR_COMP_SL) ? q->sl : sm->sl;
	mtu = src->active_mtu < dst->active_mtu ? src->active_mtu : dst->active_mtu;
	if (sm->mtu && sm->mtu < mtu)
		mtu = sm->mtu;
	rate = emu_sa_rate_from_mbps(mbps);
	if (sm->rate && emu_sa_rate_mbps(sm->rate) < emu_sa_rate_mbps(rate))
		rate = sm->rate;
	r.packet_life_time = sm->packet_lifetime;
	/* A value without its selector is taken as "exactly". */
	if ((mask & EMU_PR_COMP_MTU) &&
	    !emu_sa_select((mask & EMU_PR_COMP_MTU_SELECTOR) ? q->mtu_selector : EMU_SA_SEL_EQ,
			   q->mtu, &mtu, emu_sa_key_plain, emu_sa_below_plain))
		return false;
	if ((mask & EMU_PR_COMP_RATE) &&
	    !emu_sa_select((mask & EMU_PR_COMP_RATE_SELECTOR) ? q->rate_selector : EMU_SA_SEL_EQ,
			   q->rate, &rate, emu_sa_key_rate, emu_sa_below_rate))
		return false;
	if ((mask & EMU_PR_COMP_PKT_LIFE) &&
	    !emu_sa_select((mask & EMU_PR_COMP_PKT_LIFE_SELECTOR) ? q->packet_life_time_selector
								   : EMU_SA_SEL_EQ,
			   q->packet_life_time, &r.packet_life_time, emu_sa_key_plain,
			   emu_sa_below_plain))
		return false;
	if (!mtu || !rate)
		return false;
	r.mtu = mtu;
	r.rate = rate;
	r.mtu_selector = r.rate_selector = r.packet_life_time_selector = EMU_SA_SEL_EQ;
	/* What the request gives and the SA has no opinion on is copied. */
	if (mask & EMU_PR_COMP_SERVICE_ID)
		r.service_id = q->service_id;
	if (mask & EMU_PR_COMP_TCLASS)
		r.traffic_class = q->traffic_class;
	if (mask & EMU_PR_COMP_FLOW_LABEL)
		r.flow_label = q->flow_label;
	if (mask & EMU_PR_COMP_HOP_LIMIT)
		r.hop_limit = q->hop_limit;
	if (mask & EMU_PR_COMP_RAW_TRAFFIC)
		r.raw_traffic = q->raw_traffic;
	r.preference = preference;
	emu_mad_record_pack(&emu_sa_path_rec_desc, &r, wire);
	/* Remaining components (SLID, DLID, QoS class, preference, ...) must match as given. */
	return emu_mad_record_match(&emu_sa_path_rec_desc, qw, wire, mask,
				    EMU_PR_COMP_SERVICE_ID | EMU_PR_COMP_DGID | EMU_PR_COMP_SGID |
					    EMU_PR_COMP_REVERSIBLE | EMU_PR_COMP_NUMB_PATH |
					    EMU_PR_COMP_PKEY | EMU_PR_COMP_SL |
					    EMU_PR_COMP_MTU_SELECTOR | EMU_PR_COMP_MTU |
					    EMU_PR_COMP_RATE_SELECTOR | EMU_PR_COMP_RATE |
					    EMU_PR_COMP_PKT_LIFE_SELECTOR | EMU_PR_COMP_PKT_LIFE);
}

/* The paths of one port pair, OpenSM's order: diagonal LID pairs (Preference 0), then the
 * rest (Preference 2), at most `max`. */
static int pair_paths(const struct emu_sa *sa, const struct emu_sa_path_rec *q, const uint8_t *qw,
		      uint64_t mask, const struct emu_port *src, const struct emu_port *dst,
		      unsigned max, struct emu_sa_reclist *out)
{
	unsigned ns = 1u << src->lmc, nd = 1u << dst->lmc, got = 0;
	const uint8_t *sgid = (mask & EMU_PR_COMP_SGID) ? q->sgid : src->gids[0].raw;
	const uint8_t *dgid = (mask & EMU_PR_COMP_DGID) ? q->dgid : dst->gids[0].raw;
	uint8_t w[64];

	if (!src->ngids || !dst->ngids || !src->lid || !dst->lid)
		return 0;
	for (unsigned i = 0; i < ns && i < nd && got < max; i++)
		if (build(sa, q, qw, mask, src, dst, sgid, dgid, (uint16_t)(src->lid + i),
			  (uint16_t)(dst->lid + i), 0, w)) {
			if (emu_sa_reclist_add(out, w, 64))
				return -ENOMEM;
			got++;
		}
	for (unsigned i = 0; i < ns && got < max; i++)
		for (unsigned j = 0; j < nd && got < max; j++)
			if (i != j && build(sa, q, qw, mask, src, dst, sgid, dgid,
					    (uint16_t)(src->lid + i), (uint16_t)(dst->lid + j), 2,
					    w)) {
				if (emu_sa_reclist_add(out, w, 64))
					return -ENOMEM;
				got++;
			}
	return 0;
}

int emu_sa_path(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		size_t *resp_len)
{
	const uint8_t *qw = mad + EMU_SA_HDR_LEN;
	struct emu_sa_hdr sh;
	struct emu_sa_path_rec q;
	struct emu_port *src = NULL, *dst = NULL;
	struct emu_sa_reclist l = { 0 };
	bool get = mad[3] == EMU_MAD_METHOD_GET;
	unsigned max;
	int ret = 0;

	emu_sa_hdr_get(mad + 36, &sh);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, qw, &q);
	/* Replayed records answer first. */
	for (size_t i = 0; i < sa->nreplay; i++)
		if (emu_mad_record_match(&emu_sa_path_rec_desc, qw, sa->replay[i], sh.comp_mask,
					 EMU_PR_COMP_NUMB_PATH | EMU_PR_COMP_REVERSIBLE |
						 EMU_PR_COMP_MTU_SELECTOR |
						 EMU_PR_COMP_RATE_SELECTOR |
						 EMU_PR_COMP_PKT_LIFE_SELECTOR) &&
		    emu_sa_reclist_add(&l, sa->replay[i], 64)) {
			free(l.buf);
			return -ENOMEM;
		}
	if (l.n) {
		ret = emu_sa_respond_records(mad, len, &emu_sa_path_rec_desc, l.buf,
					     get ? 1 : l.n, resp, resp_len);
		free(l.buf);
		return ret;
	}
	/* A Get names one path: it needs both ends. */
	if (get && (!(sh.comp_mask & (EMU_PR_COMP_SGID | EMU_PR_COMP_SLID)) ||
		    !(sh.comp_mask & (EMU_PR_COMP_DGID | EMU_PR_COMP_DLID))))
		return emu_sa_respond(mad, len,
				      EMU_SA_STATUS(EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS),
				      &emu_sa_path_rec_desc, NULL, 0, resp, resp_len);
	if (sh.comp_mask & EMU_PR_COMP_SGID) {
		src = emu_sa_port_by_gid(sa, q.sgid);
		if (!src)
			return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID_GID),
					      &emu_sa_path_rec_desc, NULL, 0, resp, resp_len);
	}
	if (sh.comp_mask & EMU_PR_COMP_SLID) {
		struct emu_port *p = emu_sa_port_by_lid(sa, q.slid);

		if (!p || (src && p != src))
			return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS),
					      &emu_sa_path_rec_desc, NULL, 0, resp, resp_len);
		src = p;
	}
	if (sh.comp_mask & EMU_PR_COMP_DGID) {
		dst = emu_sa_port_by_gid(sa, q.dgid);
		if (!dst)
			return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID_GID),
					      &emu_sa_path_rec_desc, NULL, 0, resp, resp_len);
	}
	if (sh.comp_mask & EMU_PR_COMP_DLID) {
		struct emu_port *p = emu_sa_port_by_lid(sa, q.dlid);

		if (!p || (dst && p != dst))
			return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS),
					      &emu_sa_path_rec_desc, NULL, 0, resp, resp_len);
		dst = p;
	}
	/* If SubnAdmGet, NumbPath is 1 (IBA 1.2 erratum, as OpenSM); GetTable: NumbPath when
	 * given, else every LID pair. */
	if (get)
		max = 1;
	else if (sh.comp_mask & EMU_PR_COMP_NUMB_PATH)
		max = q.numb_path;
	else
		max = UINT32_MAX;
	/* a known end is the only candidate on its side (the loops then take one turn) */
	for (size_t s = 0; s < (src ? 1 : sa->nports) && !ret; s++) {
		struct emu_port *ps = src ? src : sa->ports[s].port;

		for (size_t d = 0; d < (dst ? 1 : sa->nports) && !ret; d++) {
			struct emu_port *pd = dst ? dst : sa->ports[d].port;

			ret = pair_paths(sa, &q, qw, sh.comp_mask, ps, pd, max, &l);
			if (get && l.n)
				break;
		}
		if (get && l.n)
			break;
	}
	if (!ret)
		ret = emu_sa_respond_records(mad, len, &emu_sa_path_rec_desc, l.buf, l.n, resp,
					     resp_len);
	free(l.buf);
	return ret;
}
