/* rdma_join_multicast's kernel half (Linux 6.1 cma.c): joins and leaves for the emulated
 * rdma_cm, through the route ops (emu/rdma_cm/cma_route.c installs them).
 *
 * InfiniBand (cma_join_ib_multicast): an SA MCMemberRecord Set from the id's port with MGID,
 * PortGID, P_Key, JoinState, Q_Key, SL, FlowLabel and TClass (IPoIB ids add rate, MTU and hop
 * limit), the SL/flow label/traffic class taken from the partition's IPv4 broadcast group as
 * ib_sa_get_mcmember_rec does (OpenSM creates it with 0s). The MGID (cma_set_mgid): an IPv4
 * group maps as ip_ib_mc_map onto the broadcast group's scope and P_Key
 * (ff12:401b:PPPP::0a.bb.cc.dd, RDMA_PS_UDP writing 0x01 into byte 3: "ff12:4001"), an IPv6
 * group as ipv6_ib_mc_map (ff12:601b:PPPP: + its last 10 bytes), an IPv6 address of the form
 * ff1x:a01b:: is an SA-assigned MGID used as is, and the wildcard asks the SA for one. The
 * SA's answer gives MULTICAST_JOIN (dlid = MLID, SL, rate, hop limit, flow label, traffic
 * class of the group; Q_Key the group's); a failure MULTICAST_ERROR with the SA status
 * (-ETIMEDOUT after multicast.c's 3000 ms, -EINVAL for an error MAD status).
 *
 * RoCE (cma_iboe_join_multicast): nothing on the wire but IGMP, which the emulated netdevs do
 * not model; the wildcard -EINVAL, an id without bound netdev -ENODEV, an IPv6 group on RoCE
 * v2 -ENOTSUPP (524), then MULTICAST_JOIN from the work queue (a zero-delay timer): MGID
 * ::ffff:a.b.c.d (RoCE v2), hop limit 64 (IPv4 on v2, else 1), rate 0, no LID, the source
 * GID's index, qp_num 0xffffff, the id's Q_Key (RDMA_UDP_QKEY for RDMA_PS_UDP/IB, else 0). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <rdma/rdma_user_cm.h>

#include "emu/hca/pkt.h"
#include "emu/sim/clock.h"
#include "emu/rdma_cm/cma_net.h"
#include "emu/ib/sa_client.h"
#include "util/failcall.h"

#define MC_QPN 0xffffff
#define ENOTSUPP_KERNEL 524

/* Per-membership state (mc->net). */
struct mc_req {
	struct emu_cma_id *id;
	struct emu_cma_mc *mc;          /* NULL once left (the SA callback frees) */
	struct emu_timer t;             /* RoCE: the join's work item */
	struct emu_sa_query *q;         /* IB: the join in flight */
	struct emu_sa_mcmember_rec rec; /* what was asked; then what the SA granted */
	uint64_t mask;
	bool joined;
	struct rdma_ucm_event_resp ev;
};

static uint32_t default_qkey(const struct emu_cma_id *id)
{
	/* cma_set_default_qkey */
	if (id->ps == EMU_CMA_PS_UDP || id->ps == EMU_CMA_PS_IB)
		return EMU_CMA_QKEY;
	if (id->ps == EMU_CMA_PS_IPOIB)
		return 0x00000b1b; /* the broadcast group's (emu/net/neigh.h EMU_IPOIB_QKEY) */
	return 0;
}

static void fill_ah(struct emu_cma_id *id, const struct emu_sa_mcmember_rec *rec,
		    struct rdma_ucm_event_resp *ev)
{
	struct ib_uverbs_ah_attr *ah = &ev->param.ud.ah_attr;
	int sgid = emu_cma_net_gid_index(id, rec->port_gid);

	memcpy(ah->grh.dgid, rec->mgid, 16);
	ah->grh.flow_label = rec->flow_label;
	ah->grh.sgid_index = (uint8_t)(sgid < 0 ? 0 : sgid);
	ah->grh.hop_limit = rec->hop_limit;
	ah->grh.traffic_class = rec->traffic_class;
	ah->dlid = emu_cma_net_is_ib(id) ? rec->mlid : 0;
	ah->sl = rec->sl;
	ah->static_rate = rec->rate;
	ah->is_global = 1;
	ah->port_num = id->port;
	ev->param.ud.qp_num = MC_QPN;
	ev->param.ud.qkey = rec->qkey;
}

/* ---- RoCE ---- */

static void iboe_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct mc_req *r = arg;

	(void)clk;
	(void)t;
	emu_cma_event(r->id, r->mc, EMU_CMA_EVENT_MULTICAST_JOIN, 0, &r->ev);
}

static int join_iboe(struct emu_cma_id *id, struct emu_cma_mc *mc, struct mc_req *r)
{
	const struct sockaddr *a = (const struct sockaddr *)&mc->addr;
	const struct emu_host *h = id->host;
	struct emu_sa_mcmember_rec *rec = &r->rec;

	if (emu_cma_any_addr(a))
		return -EINVAL; /* cma_zero_addr */
	/* cma_iboe_set_mgid for RoCE v2 (rxe's default GID type for the CM) */
	memset(rec->mgid, 0, 16);
	if (!emu_cma_loopback_addr(a)) {
		if (a->sa_family == AF_INET6)
			memcpy(rec->mgid, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
		else
			emu_gid_from_sockaddr(a, rec->mgid);
	}
	rec->pkey = 0xffff;
	if (id->netdev < 0 || (size_t)id->netdev >= h->nnetdevs)
		return -ENODEV;
	rec->rate = 0;
	rec->hop_limit = 1;
	rec->mtu = emu_cma_net_iboe_mtu(h->netdevs[id->netdev].mtu);
	if (a->sa_family == AF_INET)
		rec->hop_limit = EMU_CMA_DEFAULT_HOPLIMIT;
	else
		return -ENOTSUPP_KERNEL;
	if (!rec->mtu)
		return -EINVAL;
	rec->qkey = default_qkey(id);
	if (id->ps == EMU_CMA_PS_IPOIB)
		rec->qkey = 0; /* no broadcast group to read it from on Ethernet */
	emu_gid_from_sockaddr((const struct sockaddr *)&id->src, rec->port_gid);
	fill_ah(id, rec, &r->ev);
	emu_timer_init(&r->t, iboe_done, r);
	emu_timer_arm_in(emu_engine_clock(emu_engine_get()), &r->t, 0);
	return 0;
}

/* ---- InfiniBand ---- */

/* ip_ib_mc_map / ipv6_ib_mc_map onto the broadcast group (scope 2, the id's P_Key). */
static void ib_mgid(const struct emu_cma_id *id, const struct sockaddr *a, uint8_t mgid[16])
{
	memset(mgid, 0, 16);
	if (emu_cma_any_addr(a) || emu_cma_loopback_addr(a))
		return;
	if (a->sa_family == 27 /* AF_IB */) {
		/* cma_set_mgid: an AF_IB group address is the MGID itself */
		memcpy(mgid, ((const struct emu_sockaddr_ib *)a)->sib_addr, 16);
		return;
	}
	if (a->sa_family == AF_INET6) {
		const uint8_t *g = ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr;

		uint32_t w0 = (uint32_t)g[0] << 24 | (uint32_t)g[1] << 16 | (uint32_t)g[2] << 8 | g[3];

		if ((w0 & 0xFFF0FFFF) == 0xFF10A01B) {
			memcpy(mgid, g, 16); /* an SA-assigned MGID */
			return;
		}
		mgid[0] = 0xff;
		mgid[1] = 0x12;
		mgid[2] = 0x60;
		mgid[3] = 0x1b;
		mgid[4] = (uint8_t)(id->pkey >> 8);
		mgid[5] = (uint8_t)id->pkey;
		memcpy(mgid + 6, g + 6, 10);
	} else {
		uint32_t v = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);

		mgid[0] = 0xff;
		mgid[1] = 0x12;
		mgid[2] = 0x40;
		mgid[3] = 0x1b;
		mgid[4] = (uint8_t)(id->pkey >> 8);
		mgid[5] = (uint8_t)id->pkey;
		mgid[12] = (uint8_t)((v >> 24) & 0x0f);
		mgid[13] = (uint8_t)(v >> 16);
		mgid[14] = (uint8_t)(v >> 8);
		mgid[15] = (uint8_t)v;
	}
	if (id->ps == EMU_CMA_PS_UDP)
		mgid[3] = 0x01; /* the RDMA CM signature */
}

static void ib_done(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		    size_t nrecs, size_t rec_size, void *ctx)
{
	struct mc_req *r = ctx;

	(void)q;
	(void)rec_size;
	r->q = NULL;
	if (!r->mc) {
		free(r);
		return;
	}
	if (r->id->state == EMU_CMA_DEVICE_REMOVAL || r->id->state == EMU_CMA_DESTROYING)
		return;
	if (!status && !nrecs)
		status = -EINVAL;
	emu_cma_trace("cma %u: multicast join status %d (MAD status 0x%x)", r->id->handle, status,
		      mad_status);
	if (status) {
		memset(&r->ev, 0, sizeof(r->ev));
		emu_cma_event(r->id, r->mc, EMU_CMA_EVENT_MULTICAST_ERROR, status, &r->ev);
		return;
	}
	r->joined = true;
	memcpy(&r->rec, recs, sizeof(r->rec));
	memset(&r->ev, 0, sizeof(r->ev));
	fill_ah(r->id, &r->rec, &r->ev);
	emu_cma_event(r->id, r->mc, EMU_CMA_EVENT_MULTICAST_JOIN, 0, &r->ev);
}

static int join_ib(struct emu_cma_id *id, struct emu_cma_mc *mc, struct mc_req *r)
{
	const struct emu_port *p = emu_cma_net_port(id);
	struct emu_sa_client_port from = { emu_cma_net_host(id), (size_t)id->dev, id->port };
	struct emu_sa_query_opts opts = { EMU_CMA_MC_JOIN_TIMEOUT_MS, 0 };
	struct emu_sa_mcmember_rec *rec = &r->rec;
	int err = -ENOMEM;

	memset(rec, 0, sizeof(*rec));
	ib_mgid(id, (const struct sockaddr *)&mc->addr, rec->mgid);
	rec->qkey = default_qkey(id);
	if (id->gid_index >= 0 && (size_t)id->gid_index < p->ngids)
		memcpy(rec->port_gid, p->gids[id->gid_index].raw, 16);
	rec->pkey = id->pkey;
	/* join flags FULLMEMBER / SENDONLY_FULLMEMBER -> JoinState bits 0 / 3 */
	rec->join_state = mc->join_flags ? EMU_MC_JOIN_SEND_ONLY_FULL : EMU_MC_JOIN_FULL;
	r->mask = EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_PKEY |
		  EMU_MCR_COMP_JOIN_STATE | EMU_MCR_COMP_QKEY | EMU_MCR_COMP_SL |
		  EMU_MCR_COMP_FLOW_LABEL | EMU_MCR_COMP_TCLASS;
	if (id->ps == EMU_CMA_PS_IPOIB) {
		/* the broadcast group's: rate and MTU "exactly" the port's, hop limit 0 */
		rec->rate_selector = 2;
		rec->rate = 0;
		rec->mtu_selector = 2;
		rec->mtu = p->active_mtu;
		r->mask |= EMU_MCR_COMP_RATE | EMU_MCR_COMP_RATE_SELECTOR |
			   EMU_MCR_COMP_MTU_SELECTOR | EMU_MCR_COMP_MTU | EMU_MCR_COMP_HOP_LIMIT;
	}
	r->q = emu_sa_mcmember_join(emu_engine_get(), &from, rec, r->mask, &opts, ib_done, r,
				    &err);
	return r->q ? 0 : err;
}

static void leave_done(struct emu_sa_query *q, int status, uint16_t mad_status,
		       const void *recs, size_t nrecs, size_t rec_size, void *ctx)
{
	(void)q;
	(void)status;
	(void)mad_status;
	(void)recs;
	(void)nrecs;
	(void)rec_size;
	(void)ctx;
}

int emu_cma_mcast_join(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	struct mc_req *r;
	int ret;

	if (!emu_cma_net_port(id))
		return -EINVAL;
	r = emu_calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->id = id;
	r->mc = mc;
	ret = emu_cma_net_is_ib(id) ? join_ib(id, mc, r) : join_iboe(id, mc, r);
	if (ret) {
		free(r);
		return ret;
	}
	mc->net = r;
	return 0;
}

void emu_cma_mcast_leave(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	struct mc_req *r = mc->net;

	(void)id;
	if (!r)
		return;
	mc->net = NULL;
	r->mc = NULL;
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	if (r->joined) {
		/* the last member leaves the group: MCMemberRecord Delete with its JoinState */
		struct emu_sa_client_port from = { emu_cma_net_host(id), (size_t)id->dev, id->port };
		struct emu_sa_query_opts opts = { EMU_CMA_MC_JOIN_TIMEOUT_MS, 0 };

		emu_sa_mcmember_leave(emu_engine_get(), &from, &r->rec,
				      EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID |
					      EMU_MCR_COMP_JOIN_STATE,
				      &opts, leave_done, NULL, NULL);
	}
	if (r->q) {
		emu_sa_query_cancel(r->q); /* its callback frees r */
		return;
	}
	free(r);
}
