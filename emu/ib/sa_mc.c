/* MCMemberRecord (join/leave/query, OpenSM's osm_sa_mcmember_record.c) and ServiceRecord
 * (osm_sa_service_record.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_priv.h"
#include "util/failcall.h"

static const uint8_t zero_gid[16];

/* OpenSM's build_new_mgid: ff1<scope>:a01b, the subnet prefix in bytes 4-11, then a counter
 * (host order, as OpenSM memcpy's it) over bytes 10-13. */
static bool alloc_mgid(struct emu_sa *sa, uint8_t scope, uint8_t mgid[16])
{
	uint64_t pfx = sa->f->sm.subnet_prefix;

	for (unsigned i = 0; i < 1000; i++) {
		uint32_t c = sa->mgid_counter++;

		memset(mgid, 0, 16);
		mgid[0] = 0xff;
		mgid[1] = (uint8_t)(0x10 | (scope & 0xf));
		mgid[2] = 0xa0;
		mgid[3] = 0x1b;
		for (int b = 0; b < 8; b++)
			mgid[4 + b] = (uint8_t)(pfx >> (56 - 8 * b));
		mgid[10] = (uint8_t)c;
		mgid[11] = (uint8_t)(c >> 8);
		mgid[12] = (uint8_t)(c >> 16);
		mgid[13] = (uint8_t)(c >> 24);
		if (!emu_sa_group_by_mgid(&sa->mc, mgid))
			return true;
	}
	return false;
}

/* Lowest active MTU and link rate of the SA's ports: what OpenSM gives a group created without
 * MTU/rate components, so that every port can join. */
static void fabric_min(const struct emu_sa *sa, uint8_t *mtu, uint8_t *rate)
{
	unsigned mbps = UINT32_MAX;

	*mtu = 5;
	for (size_t i = 0; i < sa->nports; i++) {
		const struct emu_port *po = sa->ports[i].port;

		if (po->active_mtu && po->active_mtu < *mtu)
			*mtu = po->active_mtu;
		if (po->link >= 0) {
			const struct emu_link *l = &sa->f->links[po->link];
			/* the same lane arithmetic as paths: 4x QDR = 40 Gb/s */
			static const unsigned lanes[17] = { [1] = 1, [2] = 4, [4] = 8, [8] = 12,
							    [16] = 2 };
			unsigned lane = l->speed >= 64 ? 50000u * (l->speed / 64)
					: l->speed == 32 ? 25000 : l->speed == 16 ? 14000
					: l->speed >= 4 ? 10000 : l->speed == 2 ? 5000 : 2500;
			unsigned m = (l->width < 17 && lanes[l->width] ? lanes[l->width] : 1) * lane;

			if (m < mbps)
				mbps = m;
		}
	}
	*rate = mbps == UINT32_MAX ? 3 : emu_sa_rate_from_mbps(mbps);
}

static int mc_err(const uint8_t *mad, size_t len, unsigned code, uint8_t **resp, size_t *rl)
{
	return emu_sa_respond(mad, len, EMU_SA_STATUS(code), &emu_sa_mcmember_rec_desc, NULL, 0,
			      resp, rl);
}

#define MC_CREATE_COMPS                                                                        \
	(EMU_MCR_COMP_QKEY | EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_PKEY | EMU_MCR_COMP_FLOW_LABEL | \
	 EMU_MCR_COMP_SL)

/* The record of a group the join creates, from the request: 0, or the SA's error. Creating
 * needs a full member (or send-only full member) and the group's parameters. */
static unsigned mc_new_rec(struct emu_sa *sa, uint64_t mask, const struct emu_sa_mcmember_rec *q,
			   struct emu_sa_mcmember_rec *r)
{
	uint8_t scope = (mask & EMU_MCR_COMP_SCOPE) ? q->scope : 2;

	if (!(q->join_state & (EMU_MC_JOIN_FULL | EMU_MC_JOIN_SEND_ONLY_FULL)))
		return EMU_SA_ERR_REQ_INVALID;
	if ((mask & MC_CREATE_COMPS) != MC_CREATE_COMPS)
		return EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	memset(r, 0, sizeof(*r));
	if ((mask & EMU_MCR_COMP_MGID) && memcmp(q->mgid, zero_gid, 16)) {
		memcpy(r->mgid, q->mgid, 16);
		scope = q->mgid[1] & 0xf;
	} else if (!alloc_mgid(sa, scope, r->mgid)) {
		return EMU_SA_ERR_NO_RESOURCES;
	}
	r->mlid = emu_sa_group_free_mlid(&sa->mc);
	if (!r->mlid)
		return EMU_SA_ERR_NO_RESOURCES;
	fabric_min(sa, &r->mtu, &r->rate);
	r->packet_life_time = sa->f->sm.packet_lifetime;
	if ((mask & EMU_MCR_COMP_MTU) &&
	    !emu_sa_select((mask & EMU_MCR_COMP_MTU_SELECTOR) ? q->mtu_selector : EMU_SA_SEL_EQ,
			   q->mtu, &r->mtu, emu_sa_key_plain, emu_sa_below_plain))
		return EMU_SA_ERR_REQ_INVALID;
	if ((mask & EMU_MCR_COMP_RATE) &&
	    !emu_sa_select((mask & EMU_MCR_COMP_RATE_SELECTOR) ? q->rate_selector : EMU_SA_SEL_EQ,
			   q->rate, &r->rate, emu_sa_key_rate, emu_sa_below_rate))
		return EMU_SA_ERR_REQ_INVALID;
	if ((mask & EMU_MCR_COMP_PKT_LIFE) &&
	    !emu_sa_select((mask & EMU_MCR_COMP_PKT_LIFE_SELECTOR) ? q->packet_life_time_selector
								   : EMU_SA_SEL_EQ,
			   q->packet_life_time, &r->packet_life_time, emu_sa_key_plain,
			   emu_sa_below_plain))
		return EMU_SA_ERR_REQ_INVALID;
	r->qkey = q->qkey;
	r->traffic_class = q->traffic_class;
	r->pkey = q->pkey;
	r->sl = q->sl;
	r->flow_label = q->flow_label;
	r->hop_limit = (mask & EMU_MCR_COMP_HOP_LIMIT) ? q->hop_limit : 0;
	r->scope = scope;
	return 0;
}

/* Joining an existing group: what the request gives must agree with it. */
static bool mc_agrees(const struct emu_sa_mcgroup *g, uint64_t mask,
		      const struct emu_sa_mcmember_rec *q)
{
	uint8_t v;

	if (((mask & EMU_MCR_COMP_QKEY) && q->qkey != g->rec.qkey) ||
	    ((mask & EMU_MCR_COMP_PKEY) && (q->pkey & 0x7fff) != (g->rec.pkey & 0x7fff)) ||
	    ((mask & EMU_MCR_COMP_SL) && q->sl != g->rec.sl) ||
	    ((mask & EMU_MCR_COMP_TCLASS) && q->traffic_class != g->rec.traffic_class) ||
	    ((mask & EMU_MCR_COMP_FLOW_LABEL) && q->flow_label != g->rec.flow_label))
		return false;
	v = g->rec.mtu;
	if ((mask & EMU_MCR_COMP_MTU) &&
	    (!emu_sa_select((mask & EMU_MCR_COMP_MTU_SELECTOR) ? q->mtu_selector : EMU_SA_SEL_EQ,
			    q->mtu, &v, emu_sa_key_plain, emu_sa_below_plain) ||
	     v != g->rec.mtu))
		return false;
	v = g->rec.rate;
	if ((mask & EMU_MCR_COMP_RATE) &&
	    (!emu_sa_select((mask & EMU_MCR_COMP_RATE_SELECTOR) ? q->rate_selector
								 : EMU_SA_SEL_EQ,
			    q->rate, &v, emu_sa_key_rate, emu_sa_below_rate) ||
	     v != g->rec.rate))
		return false;
	return true;
}

/* The member of g with port_gid, added when there is none; NULL without memory. */
static struct emu_sa_member *mc_member(struct emu_sa_mcgroup *g, const uint8_t *port_gid)
{
	struct emu_sa_member *m = NULL, *n;

	for (size_t i = 0; i < g->nmembers; i++)
		if (!memcmp(g->members[i].port_gid, port_gid, 16))
			m = &g->members[i];
	if (m)
		return m;
	n = emu_realloc(g->members, (g->nmembers + 1) * sizeof(*n));
	if (!n)
		return NULL;
	g->members = n;
	m = &n[g->nmembers++];
	memset(m, 0, sizeof(*m));
	memcpy(m->port_gid, port_gid, 16);
	return m;
}

static int mc_join(struct emu_sa *sa, const uint8_t *mad, size_t len, uint64_t mask,
		   const struct emu_sa_mcmember_rec *q, uint8_t **resp, size_t *rl)
{
	struct emu_sa_mcgroup *g = NULL;
	struct emu_sa_member *m;
	struct emu_port *port;
	uint8_t w[52];

	if ((mask & (EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE)) !=
	    (EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE))
		return mc_err(mad, len, EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS, resp, rl);
	if (!q->join_state)
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	port = emu_sa_port_by_gid(sa, q->port_gid);
	if (!port)
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	if ((mask & EMU_MCR_COMP_MGID) && memcmp(q->mgid, zero_gid, 16)) {
		if (q->mgid[0] != 0xff)
			return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
		g = emu_sa_group_by_mgid(&sa->mc, q->mgid);
	}
	if (!g) {
		struct emu_sa_mcmember_rec r;
		unsigned err = mc_new_rec(sa, mask, q, &r);

		if (err)
			return mc_err(mad, len, err, resp, rl);
		g = emu_sa_group_add(&sa->mc, &r);
		if (!g)
			return -ENOMEM;
	} else if (!mc_agrees(g, mask, q)) {
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	}
	/* A port whose MTU is below the group's cannot take part. */
	if (port->active_mtu < g->rec.mtu) {
		if (!g->nmembers && !g->well_known)
			emu_sa_group_remove(&sa->mc, g); /* just created: undo */
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	}
	m = mc_member(g, q->port_gid);
	if (!m)
		return -ENOMEM;
	m->join_state |= q->join_state;
	m->proxy_join = (mask & EMU_MCR_COMP_PROXY_JOIN) ? q->proxy_join : 0;
	emu_sa_member_record(g, m->port_gid, m->join_state, m->proxy_join, w);
	return emu_sa_respond(mad, len, 0, &emu_sa_mcmember_rec_desc, w, 1, resp, rl);
}

static int mc_leave(struct emu_sa *sa, const uint8_t *mad, size_t len, uint64_t mask,
		    const struct emu_sa_mcmember_rec *q, uint8_t **resp, size_t *rl)
{
	struct emu_sa_mcgroup *g;
	size_t mi;
	uint8_t w[52];

	if ((mask & (EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE)) !=
	    (EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE))
		return mc_err(mad, len, EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS, resp, rl);
	g = emu_sa_group_by_mgid(&sa->mc, q->mgid);
	if (!g)
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	for (mi = 0; mi < g->nmembers; mi++)
		if (!memcmp(g->members[mi].port_gid, q->port_gid, 16))
			break;
	if (mi == g->nmembers || !(g->members[mi].join_state & q->join_state))
		return mc_err(mad, len, EMU_SA_ERR_REQ_INVALID, resp, rl);
	emu_sa_member_record(g, q->port_gid, q->join_state, g->members[mi].proxy_join, w);
	g->members[mi].join_state &= (uint8_t)~q->join_state;
	if (!g->members[mi].join_state) {
		g->members[mi] = g->members[--g->nmembers];
		if (!g->nmembers && !g->well_known)
			emu_sa_group_remove(&sa->mc, g);
	}
	return emu_sa_respond(mad, len, 0, &emu_sa_mcmember_rec_desc, w, 1, resp, rl);
}

/* The components that differ from one member of a group to the next. */
#define MC_MEMBER_COMPS (EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE | EMU_MCR_COMP_PROXY_JOIN)

/* Adds to l the records of g's members that match query; a group without members still
 * answers a query by MGID (OpenSM lists groups). grp_bits and mbr_bits are the bits the query
 * compares in the group's fields and in a member's (emu_mad_record_comp_bits): a group whose
 * fields differ is passed over without a member's record built. 0 or -ENOMEM. */
static int mc_group_records(const struct emu_sa_mcgroup *g, const uint8_t *query,
			    const uint8_t *grp_bits, const uint8_t *mbr_bits,
			    struct emu_sa_reclist *l)
{
	uint8_t w[52];

	if (!emu_mad_bits_agree(query, g->wire, grp_bits, 52))
		return 0;
	if (!g->nmembers)
		return emu_mad_bits_agree(query, g->wire, mbr_bits, 52)
			       ? emu_sa_reclist_add(l, g->wire, 52)
			       : 0;
	for (size_t m = 0; m < g->nmembers; m++) {
		emu_sa_member_record(g, g->members[m].port_gid, g->members[m].join_state,
				     g->members[m].proxy_join, w);
		if (emu_mad_bits_agree(query, w, mbr_bits, 52) && emu_sa_reclist_add(l, w, 52))
			return -ENOMEM;
	}
	return 0;
}

int emu_sa_mcmember(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		    size_t *resp_len)
{
	struct emu_sa_hdr sh;
	struct emu_sa_mcmember_rec q;
	struct emu_sa_reclist l = { 0 };
	const uint8_t *query = mad + EMU_SA_HDR_LEN;
	uint8_t grp_bits[52], mbr_bits[52];
	int ret;

	emu_sa_hdr_get(mad + 36, &sh);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, query, &q);
	if (mad[3] == EMU_MAD_METHOD_SET)
		return mc_join(sa, mad, len, sh.comp_mask, &q, resp, resp_len);
	if (mad[3] == EMU_MAD_METHOD_DELETE)
		return mc_leave(sa, mad, len, sh.comp_mask, &q, resp, resp_len);
	emu_mad_record_comp_bits(&emu_sa_mcmember_rec_desc, sh.comp_mask, MC_MEMBER_COMPS,
				 grp_bits);
	emu_mad_record_comp_bits(&emu_sa_mcmember_rec_desc, sh.comp_mask & MC_MEMBER_COMPS, 0,
				 mbr_bits);
	if (sh.comp_mask & EMU_MCR_COMP_MGID) {
		/* an MGID names one group at most */
		const struct emu_sa_mcgroup *g = emu_sa_group_by_mgid(&sa->mc, q.mgid);

		if (g && mc_group_records(g, query, grp_bits, mbr_bits, &l))
			goto nomem;
	} else {
		for (size_t i = 0; i < sa->mc.ngroups; i++)
			if (mc_group_records(&sa->mc.groups[i], query, grp_bits, mbr_bits, &l))
				goto nomem;
	}
	ret = emu_sa_respond_records(mad, len, &emu_sa_mcmember_rec_desc, l.buf, l.n, resp,
				     resp_len);
	free(l.buf);
	return ret;
nomem:
	free(l.buf);
	return -ENOMEM;
}

/* ---- ServiceRecord ---- */

static void expire(struct emu_sa *sa)
{
	for (size_t i = 0; i < sa->nservices;)
		if (sa->services[i].expires_ns <= sa->now_ns)
			sa->services[i] = sa->services[--sa->nservices];
		else
			i++;
}

static bool same_service(const struct emu_sa_service_rec *a, const struct emu_sa_service_rec *b)
{
	return a->id == b->id && !memcmp(a->gid, b->gid, 16) && a->pkey == b->pkey;
}

int emu_sa_service(struct emu_sa *sa, const uint8_t *mad, size_t len, uint8_t **resp,
		   size_t *resp_len)
{
	const struct emu_mad_record_desc *d = &emu_sa_service_rec_desc;
	struct emu_sa_hdr sh;
	struct emu_sa_service_rec q;
	struct emu_sa_reclist l = { 0 };
	uint8_t w[176];
	int ret;

	expire(sa);
	emu_sa_hdr_get(mad + 36, &sh);
	emu_mad_record_unpack(d, mad + EMU_SA_HDR_LEN, &q);
	if (mad[3] == EMU_MAD_METHOD_SET || mad[3] == EMU_MAD_METHOD_DELETE) {
		/* Registering or removing names the record: ID and GID (P_Key when given). */
		if ((sh.comp_mask & (EMU_SR_COMP_ID | EMU_SR_COMP_GID)) !=
		    (EMU_SR_COMP_ID | EMU_SR_COMP_GID))
			return emu_sa_respond(mad, len,
					      EMU_SA_STATUS(EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS),
					      d, NULL, 0, resp, resp_len);
	}
	if (mad[3] == EMU_MAD_METHOD_SET) {
		struct emu_sa_service *s = NULL;

		if (!emu_sa_port_by_gid(sa, q.gid))
			return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID_GID),
					      d, NULL, 0, resp, resp_len);
		for (size_t i = 0; i < sa->nservices; i++)
			if (same_service(&sa->services[i].rec, &q))
				s = &sa->services[i];
		if (!s) {
			struct emu_sa_service *n =
				emu_realloc(sa->services, (sa->nservices + 1) * sizeof(*n));

			if (!n)
				return -ENOMEM;
			sa->services = n;
			s = &n[sa->nservices++];
		}
		s->rec = q;
		s->expires_ns = q.lease == EMU_SR_LEASE_INFINITE
					? UINT64_MAX
					: sa->now_ns + (uint64_t)q.lease * 1000000000ull;
		emu_mad_record_pack(d, &s->rec, w);
		return emu_sa_respond(mad, len, 0, d, w, 1, resp, resp_len);
	}
	if (mad[3] == EMU_MAD_METHOD_DELETE) {
		for (size_t i = 0; i < sa->nservices; i++) {
			emu_mad_record_pack(d, &sa->services[i].rec, w);
			if (emu_mad_record_match(d, mad + EMU_SA_HDR_LEN, w, sh.comp_mask, 0)) {
				sa->services[i] = sa->services[--sa->nservices];
				return emu_sa_respond(mad, len, 0, d, w, 1, resp, resp_len);
			}
		}
		return emu_sa_respond(mad, len, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS), d, NULL, 0,
				      resp, resp_len);
	}
	for (size_t i = 0; i < sa->nservices; i++) {
		emu_mad_record_pack(d, &sa->services[i].rec, w);
		if (emu_mad_record_match(d, mad + EMU_SA_HDR_LEN, w, sh.comp_mask, 0) &&
		    emu_sa_reclist_add(&l, w, sizeof(w))) {
			free(l.buf);
			return -ENOMEM;
		}
	}
	ret = emu_sa_respond_records(mad, len, d, l.buf, l.n, resp, resp_len);
	free(l.buf);
	return ret;
}
