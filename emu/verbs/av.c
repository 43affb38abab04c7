/* Address vectors: rdma_check_ah_attr() + rdma_fill_sgid_attr() + ib_resolve_eth_dmac() +
 * rxe_av_chk_attr() as measured on rxe (Linux 6.1): a port outside the device is EINVAL, an
 * address without GRH on a RoCE port is EINVAL, an empty or out-of-table sgid_index is
 * ENODATA, then the destination MAC is resolved (below), then a RoCE v1 source GID is EINVAL
 * (rxe sends RoCE v2 only). A source GID of another IP family than a unicast destination is
 * EINVAL from rdma_resolve_ip. Made for create_ah (emu/verbs/ah.c) and modify_qp
 * (emu/verbs/qp.c); the data path looks up the MAC of one it sends on (emu_av_resolve_dmac). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/link/link.h"
#include "emu/net/neigh.h"
#include "emu/hca/pkt.h"
#include "emu/verbs/datapath.h"

/* rdma_addr_find_l2_eth_by_grh(): rdma_resolve_ip(..., 1000 ms, resolve_by_gid_attr) */
#define AV_RESOLVE_TIMEOUT_NS (1000 * EMU_NSEC_PER_MSEC)
/* the hop limit rdma_addr_find_l2_eth_by_grh() hands back: addr4_resolve's
 * ip4_dst_hoplimit() / addr6_resolve's ip6_dst_hoplimit(), 64 with the default sysctls
 * (net.ipv4.ip_default_ttl, net.ipv6.conf.*.hop_limit); the emulated routes carry none */
#define AV_ROUTE_HOPLIMIT 64

/* ib_resolve_unicast_gid_dmac() -> rdma_addr_find_l2_eth_by_grh() (Linux 6.1
 * drivers/infiniband/core/verbs.c, addr.c): the source GID's and the destination GID's
 * addresses (rdma_gid2ip: IPv4-mapped => IPv4, else IPv6) go to rdma_resolve_ip with a
 * 1000 ms timeout, and the caller sleeps in wait_for_completion, so ibv_create_ah /
 * ibv_modify_qp block until the neighbour answers or the request times out
 * (process_one_req: -ETIMEDOUT at the deadline; the user sees errno ETIMEDOUT after exactly
 * 1 s of virtual time). Synchronous errors of rdma_resolve_ip come back as they are
 * (ENETUNREACH: no route; EINVAL: families differ). On success the MAC goes into the AV and
 * grh.hop_limit becomes the route's hop limit (`grh->hop_limit = hop_limit`).
 * resolve_by_gid_attr binds the lookup to the source GID's netdev: the emulated route
 * lookup has no oif, so only an IPv6 link-local destination gets that netdev as its scope.
 *
 * Engine lock held. Under rdmaemud (emu_link_active) the host's neighbour tables are the
 * daemon's, which hears the replies: the resolution runs there (emu_link_neigh_resolve, the
 * engine lock dropped while this thread waits for the answer, as it is in a wait). */
static int av_resolve_unicast(struct emu_engine *e, const struct emu_port *p,
			      const struct emu_gid *g, struct emu_av *av, const char *what)
{
	const struct emu_host *h = p->dev->host;
	struct sockaddr_storage src, dst;
	struct emu_neigh_result r;
	int ret;

	if (!e)
		return 0;
	emu_gid_to_sockaddr(g->raw, &src); /* rdma_gid2ip */
	emu_gid_to_sockaddr(av->dgid.raw, &dst); /* same family: checked by the caller */
	if (dst.ss_family == AF_INET6 && av->dgid.raw[0] == 0xfe &&
	    (av->dgid.raw[1] & 0xc0) == 0x80 && g->netdev >= 0)
		((struct sockaddr_in6 *)&dst)->sin6_scope_id = (uint32_t)g->netdev + 2;
	if (emu_link_active()) {
		size_t host = (size_t)(h - emu_engine_fabric(e)->hosts);

		emu_engine_unlock(e);
		ret = emu_link_neigh_resolve(host, (const struct sockaddr *)&src,
					     (const struct sockaddr *)&dst,
					     (unsigned)(AV_RESOLVE_TIMEOUT_NS / EMU_NSEC_PER_MSEC),
					     av->dmac);
		emu_engine_lock(e);
		if (ret)
			return -ret;
		av->dmac_valid = true;
		av->hop_limit = AV_ROUTE_HOPLIMIT;
		return 0;
	}
	ret = emu_neigh_resolve_wait(e, (size_t)(h - emu_engine_fabric(e)->hosts),
				     (const struct sockaddr *)&src, (const struct sockaddr *)&dst,
				     AV_RESOLVE_TIMEOUT_NS, what, &r);
	if (ret)
		return ret < 0 ? -ret : ret;
	memcpy(av->dmac, r.dst_hw, 6);
	av->dmac_valid = true;
	av->hop_limit = AV_ROUTE_HOPLIMIT;
	return 0;
}

int emu_av_from_attr(struct ibv_context *ctx, const struct ibv_ah_attr *attr, struct emu_av *av,
		     const char *resolve)
{
	const struct emu_port *p = emu_verbs_port(ctx, attr->port_num);
	const struct emu_gid *g;
	int err;

	if (!p)
		return EINVAL;
	memset(av, 0, sizeof(*av));
	av->port_num = attr->port_num;
	av->sl = attr->sl;
	av->static_rate = attr->static_rate;
	av->src_path_bits = attr->src_path_bits;
	av->dlid = attr->dlid;
	av->is_global = attr->is_global;
	if (p->link_layer == IBV_LINK_LAYER_ETHERNET && !attr->is_global)
		return EINVAL;
	if (!attr->is_global)
		return 0;
	if (attr->grh.sgid_index >= p->ngids || attr->grh.sgid_index >= p->gid_tbl_len)
		return ENODATA;
	g = &p->gids[attr->grh.sgid_index];
	{
		static const uint8_t zero[16];

		if (!memcmp(g->raw, zero, 16)) /* an empty slot of the table */
			return ENODATA;
	}
	av->sgid_index = attr->grh.sgid_index;
	av->hop_limit = attr->grh.hop_limit;
	av->traffic_class = attr->grh.traffic_class;
	av->flow_label = attr->grh.flow_label;
	av->dgid = attr->grh.dgid;
	memcpy(av->sgid.raw, g->raw, 16);
	if (p->link_layer != IBV_LINK_LAYER_ETHERNET)
		return 0;
	av->network = emu_gid_is_v4mapped(av->dgid.raw) ? 4 : 6;
	/* ib_resolve_eth_dmac(): a multicast destination (ff00::/8, or an IPv4-mapped
	 * 224.0.0.0/4 address) maps straight to its multicast MAC, before any family check
	 * (measured: create_ah towards ff0e:: from the IPv4-mapped GID succeeds) */
	if (av->network == 6 && av->dgid.raw[0] == 0xff) {
		static const uint8_t mc6[2] = { 0x33, 0x33 };

		memcpy(av->dmac, mc6, 2);
		memcpy(av->dmac + 2, av->dgid.raw + 12, 4);
		av->dmac_valid = true;
	} else if (av->network == 4 && (av->dgid.raw[12] & 0xf0) == 0xe0) {
		av->dmac[0] = 0x01;
		av->dmac[1] = 0x00;
		av->dmac[2] = 0x5e;
		av->dmac[3] = av->dgid.raw[13] & 0x7f;
		av->dmac[4] = av->dgid.raw[14];
		av->dmac[5] = av->dgid.raw[15];
		av->dmac_valid = true;
	} else if (g->type == EMU_GID_ROCE_V1 && av->dgid.raw[0] == 0xfe &&
		   (av->dgid.raw[1] & 0xc0) == 0x80) {
		/* ib_resolve_unicast_gid_dmac(): a link-local destination from a RoCE v1 GID
		 * takes its MAC from the GID (rdma_get_ll_mac), no IP stack; rxe then refuses
		 * the v1 GID below */
	} else if (av->network != (emu_gid_is_v4mapped(g->raw) ? 4 : 6)) {
		/* the fe80:: GID towards an IPv4-mapped one: rdma_resolve_ip's family check,
		 * before anything is sent (measured: EINVAL at once) */
		return EINVAL;
	} else if (resolve) {
		err = av_resolve_unicast(emu_dp_engine(), p, g, av, resolve);
		if (err)
			return err;
	}
	/* rxe_av_chk_attr(), after the core's resolution */
	if (g->type != EMU_GID_ROCE_V2)
		return EINVAL;
	return 0;
}

int emu_av_resolve_dmac(const struct emu_fabric *f, const struct emu_av *av, uint8_t dmac[6])
{
	if (av->dgid.raw[0] == 0xff || (av->network == 4 && (av->dgid.raw[12] & 0xf0) == 0xe0)) {
		memcpy(dmac, av->dmac, 6); /* multicast: mapped at create time */
		return 0;
	}
	for (size_t h = 0; f && h < f->nhosts; h++) {
		const struct emu_host *host = &f->hosts[h];

		for (size_t d = 0; d < host->ndevices; d++)
			for (size_t p = 0; p < host->devices[d].nports; p++) {
				const struct emu_port *port = &host->devices[d].ports[p];

				for (size_t g = 0; g < port->ngids; g++) {
					const struct emu_gid *gid = &port->gids[g];

					if (memcmp(gid->raw, av->dgid.raw, 16) || gid->netdev < 0 ||
					    (size_t)gid->netdev >= host->nnetdevs)
						continue;
					memcpy(dmac, host->netdevs[gid->netdev].hwaddr, 6);
					return 0;
				}
			}
	}
	return -EHOSTUNREACH;
}
