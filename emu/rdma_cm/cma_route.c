/* rdma_resolve_route's kernel half (Linux 6.1 cma.c): the emulated rdma_cm's route module,
 * filling emu/rdma_cm/cma.h's route ops (multicast: emu/rdma_cm/cma_mcast.c).
 *
 * InfiniBand (cma_resolve_ib_route -> cma_query_ib_route): one SA PathRecord Get from the
 * id's port (emu/ib/sa_client.h) with SGID, DGID, P_Key, NumbPath 1, Reversible 1, the service
 * ID (port space << 16 | destination port) and the QoS class (the TOS, IPv4) or traffic class
 * (the IPv6 flow info's top byte), timeout = the caller's timeout_ms, no retries. The SA's
 * record becomes the id's path as it arrived (ib_sa_unpack_path then ib_sa_pack_path on
 * QUERY: the 64-byte wire record); an SA error status gives ROUTE_ERROR -EINVAL, no answer
 * ROUTE_ERROR -ETIMEDOUT exactly timeout_ms later.
 *
 * RoCE (cma_resolve_iboe_route): no SA; the path is built at once and ROUTE_RESOLVED comes
 * from the work queue (a zero-delay timer). An id without a bound netdev (bound by
 * cma_bind_loopback) fails the command with -ENODEV, a netdev MTU too small for RoCE v2's
 * 96 bytes of headers with -EINVAL. The record, as ib_sa_pack_path packs the kernel's
 * struct sa_path_rec of RoCE type:
 *   SGID/DGID        the IP addresses as GIDs (rdma_ip2gid)
 *   DLID/SLID/Raw    the path record's "ib" union member read over its "roce" member
 *                    { bool route_resolved = 1; u8 dmac[6] }: DLID = 0x01 dmac[0],
 *                    SLID = dmac[1] dmac[2], RawTraffic = dmac[3] & 1
 *   FlowLabel        RoCE v2 (rxe): (sport * 31 + dport) & 0xfffff, or an IPv6 source's flow
 *                    label (cma_get_roce_udp_flow_label)
 *   HopLimit         the route's (64), TClass the TOS, Reversible 1, NumbPath 0, P_Key 0xffff
 *   SL               0 (iboe_tos_to_sl: only VLAN netdevs map priorities)
 *   MTU              selector 2 (=), iboe_get_mtu(netdev MTU); Rate selector 2, 0 (port current)
 *   PacketLifeTime   selector 2, CMA_IBOE_PACKET_LIFETIME (18 in 6.1) or ACK timeout - 1 when set
 * Stored paths carry flags 0x2b (GMP | PRIMARY | BIDIRECTIONAL), what ucma_query_path reports. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/hca/pkt.h"
#include "emu/sim/clock.h"
#include "util/kmem.h"
#include "emu/rdma_cm/cma_net.h"
#include "emu/ib/sa_client.h"

#define PATH_FLAGS 0x2b

/* Per-id state (id->net[EMU_CMA_NET_ROUTE]). */
struct route_req {
	struct emu_cma_id *id;   /* NULL once the id is gone (the SA callback frees) */
	struct emu_timer t;      /* the RoCE work item */
	struct emu_sa_query *q;  /* the IB PathRecord query in flight */
	struct ib_path_rec_data path;
};

uint8_t emu_cma_net_iboe_mtu(uint32_t mtu)
{
	/* GRH 40 + UDP 8 + BTH 12 + XRC ext 4 + AtomicETH 28 + ICRC 4 */
	int m = (int)mtu - 96;

	if (m >= 4096)
		return 5;
	if (m >= 2048)
		return 4;
	if (m >= 1024)
		return 3;
	if (m >= 512)
		return 2;
	if (m >= 256)
		return 1;
	return 0;
}

int emu_cma_net_gid_index(const struct emu_cma_id *id, const uint8_t gid[16])
{
	const struct emu_port *p = emu_cma_net_port(id);
	int v1 = -1;

	if (!p)
		return -1;
	for (size_t g = 0; g < p->ngids; g++) {
		if (memcmp(p->gids[g].raw, gid, 16))
			continue;
		if (p->gids[g].type == EMU_GID_ROCE_V2 || p->link_layer == 1)
			return (int)g;
		if (v1 < 0)
			v1 = (int)g;
	}
	return v1;
}

static struct route_req *req_of(struct emu_cma_id *id)
{
	struct route_req *r = id->net[EMU_CMA_NET_ROUTE];

	if (!r) {
		r = emu_kmem_zalloc(sizeof(*r));
		if (!r)
			return NULL;
		r->id = id;
		id->net[EMU_CMA_NET_ROUTE] = r;
	}
	return r;
}

/* ---- InfiniBand: the SA ---- */

static void ib_done(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		    size_t nrecs, size_t rec_size, void *ctx)
{
	struct route_req *r = ctx;
	struct emu_cma_id *id = r->id;

	(void)q;
	(void)rec_size;
	r->q = NULL;
	if (!id) { /* the id was destroyed meanwhile */
		emu_kmem_free(r);
		return;
	}
	if (id->state != EMU_CMA_ROUTE_QUERY)
		return;
	if (!status && !nrecs)
		status = -EINVAL;
	emu_cma_trace("cma %u: path record query status %d (MAD status 0x%x)", id->handle, status,
		      mad_status);
	if (status) {
		emu_cma_route_resolved(id, NULL, 0, status);
		return;
	}
	memset(&r->path, 0, sizeof(r->path));
	r->path.flags = PATH_FLAGS;
	emu_mad_record_pack(&emu_sa_path_rec_desc, recs, (uint8_t *)r->path.path_rec);
	emu_cma_route_resolved(id, &r->path, 1, 0);
}

static int resolve_ib(struct emu_cma_id *id, struct route_req *r, uint32_t timeout_ms)
{
	const struct emu_port *p = emu_cma_net_port(id);
	struct emu_sa_client_port from = { emu_cma_net_host(id), (size_t)id->dev, id->port };
	struct emu_sa_query_opts opts = { timeout_ms, 0 };
	struct emu_sa_path_rec rec;
	uint64_t mask = EMU_PR_COMP_DGID | EMU_PR_COMP_SGID | EMU_PR_COMP_PKEY |
			EMU_PR_COMP_NUMB_PATH | EMU_PR_COMP_REVERSIBLE | EMU_PR_COMP_SERVICE_ID;
	int err = -ENOMEM;

	memset(&rec, 0, sizeof(rec));
	if (id->gid_index >= 0 && (size_t)id->gid_index < p->ngids)
		memcpy(rec.sgid, p->gids[id->gid_index].raw, 16);
	memcpy(rec.dgid, id->dgid, 16);
	rec.pkey = id->pkey;
	rec.numb_path = 1;
	rec.reversible = 1;
	/* rdma_get_service_id */
	rec.service_id = ((uint64_t)id->ps << 16) + emu_cma_port((const struct sockaddr *)&id->dst);
	if (id->src.ss_family == AF_INET) {
		rec.qos_class = id->tos;
		mask |= EMU_PR_COMP_QOS_CLASS;
	} else {
		rec.traffic_class = (uint8_t)(ntohl(((struct sockaddr_in6 *)&id->src)->sin6_flowinfo)
					      >> 20);
		mask |= EMU_PR_COMP_TCLASS;
	}
	/* timeout 0 would mean the SA client's default; the kernel would time out at once */
	if (!opts.timeout_ms)
		opts.timeout_ms = 1;
	r->q = emu_sa_path_query(emu_engine_get(), &from, &rec, mask, false, &opts, ib_done, r,
				 &err);
	return r->q ? 0 : err;
}

/* ---- RoCE: built locally ---- */

static void iboe_done(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct route_req *r = arg;

	(void)clk;
	(void)t;
	if (r->id->state == EMU_CMA_ROUTE_QUERY)
		emu_cma_route_resolved(r->id, &r->path, 1, 0);
}

/* What can fail a RoCE route before it is built: the netdev and its MTU, both set when the
 * address was resolved. */
static int iboe_check(const struct emu_cma_id *id)
{
	const struct emu_host *h = id->host;

	if (id->netdev < 0 || (size_t)id->netdev >= h->nnetdevs)
		return -ENODEV; /* cma_iboe_set_path_rec_l2_fields: no bound netdev */
	return emu_cma_net_iboe_mtu(h->netdevs[id->netdev].mtu) ? 0 : -EINVAL;
}

static int resolve_iboe(struct emu_cma_id *id, struct route_req *r)
{
	const struct emu_host *h = id->host;
	const struct sockaddr *src = (const struct sockaddr *)&id->src;
	const struct sockaddr *dst = (const struct sockaddr *)&id->dst;
	struct emu_sa_path_rec rec;
	uint32_t fl = 0;
	int err = iboe_check(id);

	if (err)
		return err;
	memset(&rec, 0, sizeof(rec));
	emu_gid_from_sockaddr(src, rec.sgid);
	emu_gid_from_sockaddr(dst, rec.dgid);
	/* the roce union member as the ib one: route_resolved, then the destination MAC */
	rec.dlid = (uint16_t)(0x0100 | id->dst_hw[0]);
	rec.slid = (uint16_t)(id->dst_hw[1] << 8 | id->dst_hw[2]);
	rec.raw_traffic = id->dst_hw[3] & 1;
	rec.hop_limit = id->hop_limit;
	rec.reversible = 1;
	rec.pkey = 0xffff;
	rec.mtu_selector = 2;
	rec.sl = 0;
	rec.traffic_class = id->tos_set ? id->tos : 0;
	rec.mtu = emu_cma_net_iboe_mtu(h->netdevs[id->netdev].mtu);
	rec.rate_selector = 2;
	rec.rate = 0;
	rec.packet_life_time_selector = 2;
	rec.packet_life_time = id->timeout_set && id->timeout ? (uint8_t)(id->timeout - 1) :
		EMU_CMA_IBOE_PACKET_LIFETIME;
	/* cma_get_roce_udp_flow_label (rxe's ports do RoCE v2) */
	if (src->sa_family == AF_INET6)
		fl = ntohl(((const struct sockaddr_in6 *)src)->sin6_flowinfo) & 0xfffff;
	if (!fl)
		fl = ((uint32_t)emu_cma_port(src) * 31 + emu_cma_port(dst)) & 0xfffff;
	rec.flow_label = fl;
	memset(&r->path, 0, sizeof(r->path));
	r->path.flags = PATH_FLAGS;
	emu_mad_record_pack(&emu_sa_path_rec_desc, &rec, (uint8_t *)r->path.path_rec);
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	emu_timer_init(&r->t, iboe_done, r);
	emu_timer_arm_in(emu_engine_clock(emu_engine_get()), &r->t, 0);
	return 0;
}

static int resolve_route(struct emu_cma_id *id, uint32_t timeout_ms)
{
	struct route_req *r = req_of(id);

	if (!r)
		return -ENOMEM;
	if (!emu_cma_net_port(id))
		return -EINVAL;
	return emu_cma_net_is_ib(id) ? resolve_ib(id, r, timeout_ms) : resolve_iboe(id, r);
}

/* Whether resolve_route, now, surely succeeds (the id's state is checked by the caller): a
 * RoCE route is built here from what the address resolution set, an IB route needs the SA
 * client, whose failures (no SM, ...) are not told ahead. Memory aside. */
static bool sure(const struct emu_cma_id *id)
{
	return emu_cma_net_port(id) && !emu_cma_net_is_ib(id) && !iboe_check(id);
}

static void cancel(struct emu_cma_id *id)
{
	struct route_req *r = id->net[EMU_CMA_NET_ROUTE];

	if (!r)
		return;
	id->net[EMU_CMA_NET_ROUTE] = NULL;
	if (emu_timer_pending(&r->t))
		emu_timer_cancel(emu_engine_clock(emu_engine_get()), &r->t);
	r->id = NULL;
	if (r->q) {
		struct emu_sa_query *q = r->q;

		/* the callback runs with -EINTR and frees r */
		emu_sa_query_cancel(q);
		return;
	}
	emu_kmem_free(r);
}

static const struct emu_cma_route_ops route_ops = {
	.resolve_route = resolve_route,
	.sure = sure,
	.join = emu_cma_mcast_join,
	.leave = emu_cma_mcast_leave,
	.cancel = cancel,
};

__attribute__((constructor)) static void install(void)
{
	emu_cma_set_route_ops(&route_ops);
}
