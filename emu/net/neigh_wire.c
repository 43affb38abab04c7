/* Neighbour frames on the wire: ARP (RFC 826) on Ethernet and over IPoIB (RFC 4391: 20-byte
 * hardware addresses, in UD SEND packets behind the 4-byte IPoIB header), IPv6 neighbour
 * solicitation / advertisement (RFC 4861) on Ethernet and over IPoIB (24-byte link-layer
 * options, the multicast side in emu/net/neigh_mcast.c). Built and parsed byte by byte from the
 * layouts below; every host answers for its own addresses (arp_ignore 0: any address of the
 * host for ARP; the receiving netdev's addresses for ND, as ndisc_recv_ns). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "emu/hca/engine_rx.h"
#include "emu/net/neigh_priv.h"
#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"
#include "emu/sim/topology.h"

#define ETHERTYPE_ARP 0x0806
#define ARPHRD_ETHER 1
#define ARPHRD_INFINIBAND 32
#define ARPOP_REQUEST 1
#define ARPOP_REPLY 2
#define ARP_HDR_LEN 8 /* htype, ptype, hlen, plen, op */
#define ICMPV6_NS 135
#define ICMPV6_NA 136
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_NA_ROUTER 0x80
#define ND_NA_SOLICITED 0x40
#define ND_NA_OVERRIDE 0x20
#define ND_HOP_LIMIT 255
#define ND_BASE_LEN 24 /* ICMPv6 header 4 + reserved/flags 4 + target 16 */
/* The link-layer address option: 8 bytes on Ethernet; 24 over IPoIB, the 20-byte address
 * after two pad bytes (ndisc_addr_option_pad: 2 for ARPHRD_INFINIBAND) */
#define ND_OPT_LEN_ETH 8
#define ND_OPT_LEN_IB 24
#define ND_OPT_PAD_IB 2
#define IPOIB_MCAST_QPN 0xffffffu
#define FRAME_MAX 256

static const uint8_t eth_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct emu_neigh *n_of(const struct neigh_dev *d)
{
	return d->host->n;
}

/* ---------- ARP ---------- */

/* The ARP body: hardware type, IPv4, hlen-byte hardware addresses. Returns its length. */
static size_t arp_put(uint8_t *p, uint16_t htype, uint8_t hlen, uint16_t op, const uint8_t *sha,
		      const uint8_t *spa, const uint8_t *tha, const uint8_t *tpa)
{
	emu_be16_put(p, htype);
	emu_be16_put(p + 2, EMU_ETHERTYPE_IPV4);
	p[4] = hlen;
	p[5] = 4;
	emu_be16_put(p + 6, op);
	p += ARP_HDR_LEN;
	memcpy(p, sha, hlen);
	memcpy(p + hlen, spa, 4);
	if (tha)
		memcpy(p + hlen + 4, tha, hlen);
	else
		memset(p + hlen + 4, 0, hlen); /* arp_create(): no target hardware address */
	memcpy(p + 2 * hlen + 4, tpa, 4);
	return ARP_HDR_LEN + 2u * hlen + 8;
}

static void arp_send(struct neigh_dev *d, uint16_t op, const uint8_t *spa, const uint8_t *tha,
		     const uint8_t *tpa, const uint8_t *dst_hw)
{
	uint8_t frame[FRAME_MAX];

	if (d->ipoib) {
		size_t len;

		emu_be16_put(frame, ETHERTYPE_ARP); /* IPoIB header: type, 2 reserved bytes */
		emu_be16_put(frame + 2, 0);
		len = EMU_IPOIB_HDR_LEN + arp_put(frame + EMU_IPOIB_HDR_LEN, ARPHRD_INFINIBAND, 20,
						  op, d->nd->hwaddr, spa, tha, tpa);
		/* unicast (a reply, a unicast probe) needs the SA's path to the GID first; the
		 * broadcast group's SL is the SM's default, 0 */
		if (!dst_hw)
			emu_neigh_ipoib_send(d, EMU_IPOIB_BCAST_MLID, 0, IPOIB_MCAST_QPN,
					     emu_ipoib_bcast_mgid, frame, len);
		else
			emu_neigh_path_send(d, dst_hw, frame, len);
	} else {
		struct emu_eth eh;
		size_t len;

		memcpy(eh.dst, dst_hw ? dst_hw : eth_bcast, 6);
		memcpy(eh.src, d->nd->hwaddr, 6);
		eh.type = ETHERTYPE_ARP;
		emu_eth_put(frame, &eh);
		len = EMU_ETH_LEN + arp_put(frame + EMU_ETH_LEN, ARPHRD_ETHER, 6, op, d->nd->hwaddr,
					    spa, tha, tpa);
		memset(frame + len, 0, EMU_ETH_ZLEN - len); /* padded to the minimum frame */
		emu_neigh_send_port(d, frame, EMU_ETH_ZLEN);
	}
	if (op == ARPOP_REQUEST)
		d->host->st.arp_req_sent++;
	else
		d->host->st.arp_rep_sent++;
}

/* The netdev's IPv4 address in target's subnet, else its first (inet_select_addr). */
static const uint8_t *v4_src(const struct neigh_dev *d, const uint8_t *target)
{
	const uint8_t *first = NULL;

	for (size_t i = 0; i < d->naddrs; i++) {
		const struct emu_ifaddr *a = &d->addrs[i];
		const uint8_t *p = (const uint8_t *)&a->addr.v4;
		uint32_t mask;

		if (a->family != AF_INET)
			continue;
		mask = a->prefixlen ? ~0u << (32 - a->prefixlen) : 0;
		if (!first)
			first = p;
		if (((emu_be32_get(p) ^ emu_be32_get(target)) & mask) == 0)
			return p;
	}
	return first;
}

/* The receiving side of ARP (arp_process), for either link layer. */
static void arp_rx(struct neigh_dev *d, const uint8_t *p, size_t len, bool to_us)
{
	struct neigh_host *nh = d->host;
	uint8_t hlen = d->ipoib ? 20 : 6;
	uint16_t op;
	const uint8_t *sha, *spa, *tpa;
	struct neigh_entry *ne;
	static const uint8_t zero4[4];

	nh->st.arp_rcvd++;
	if (len < ARP_HDR_LEN + 2u * hlen + 8 ||
	    emu_be16_get(p) != (d->ipoib ? ARPHRD_INFINIBAND : ARPHRD_ETHER) ||
	    emu_be16_get(p + 2) != EMU_ETHERTYPE_IPV4 || p[4] != hlen || p[5] != 4) {
		nh->st.dropped++;
		return;
	}
	op = emu_be16_get(p + 6);
	sha = p + ARP_HDR_LEN;
	spa = sha + hlen;
	tpa = spa + 4 + hlen;
	if (!memcmp(spa, zero4, 4) || (op != ARPOP_REQUEST && op != ARPOP_REPLY))
		return; /* duplicate address detection probes and other operations: not modelled */
	if (op == ARPOP_REQUEST && emu_neigh_is_local(nh, AF_INET, tpa, NULL)) {
		ne = emu_neigh_entry_get(d, AF_INET, spa); /* neigh_event_ns: STALE */
		if (ne)
			emu_neigh_update(ne, sha, EMU_NUD_STALE);
		if (!d->quiet)
			arp_send(d, ARPOP_REPLY, tpa, sha, spa, sha);
		return;
	}
	ne = emu_neigh_entry_find(d, AF_INET, spa);
	if (ne)
		emu_neigh_update(ne, sha,
				 op == ARPOP_REPLY && to_us ? EMU_NUD_REACHABLE : EMU_NUD_STALE);
}

/* ---------- IPv6 neighbour discovery ---------- */

/* The netdev's link-local address, else its first IPv6 one (ipv6_dev_get_saddr toward a
 * link-scope multicast destination). NULL: none. */
static const uint8_t *v6_src(const struct neigh_dev *d)
{
	const uint8_t *first = NULL;

	for (size_t i = 0; i < d->naddrs; i++) {
		const uint8_t *p = (const uint8_t *)&d->addrs[i].addr.v6;

		if (d->addrs[i].family != AF_INET6)
			continue;
		if (p[0] == 0xfe && (p[1] & 0xc0) == 0x80)
			return p;
		if (!first)
			first = p;
	}
	return first;
}

static uint16_t icmp6_csum(const uint8_t *src, const uint8_t *dst, const uint8_t *icmp,
			   size_t len)
{
	uint8_t ph[8] = { 0 };
	uint32_t sum;

	emu_be32_put(ph, (uint32_t)len);
	ph[7] = 58; /* IPPROTO_ICMPV6 */
	sum = emu_inet_sum(0, src, 16);
	sum = emu_inet_sum(sum, dst, 16);
	sum = emu_inet_sum(sum, ph, 8);
	return emu_inet_csum_fold(emu_inet_sum(sum, icmp, len));
}

/* An NS or NA from saddr to daddr. Ethernet: to the MAC dst_hw. IPoIB: unicast to the 20-byte
 * hardware address dst_hw, or, with dst_hw NULL, to daddr's multicast group (joined first if
 * needed: emu_neigh_ib6_mcast_send). */
static void nd_send(struct neigh_dev *d, uint8_t type, uint8_t flags, const uint8_t *saddr,
		    const uint8_t *daddr, const uint8_t *dst_hw, const uint8_t *target)
{
	uint8_t frame[FRAME_MAX], *icmp;
	size_t l2 = d->ipoib ? EMU_IPOIB_HDR_LEN : EMU_ETH_LEN;
	size_t optlen = d->ipoib ? ND_OPT_LEN_IB : ND_OPT_LEN_ETH;
	size_t ilen = ND_BASE_LEN + optlen, len = l2 + EMU_IPV6_LEN + ilen;
	struct emu_ipv6 ih;

	if (d->ipoib) {
		emu_be16_put(frame, EMU_ETHERTYPE_IPV6); /* IPoIB header: type, 2 reserved bytes */
		emu_be16_put(frame + 2, 0);
	} else {
		struct emu_eth eh;

		memcpy(eh.dst, dst_hw, 6);
		memcpy(eh.src, d->nd->hwaddr, 6);
		eh.type = EMU_ETHERTYPE_IPV6;
		emu_eth_put(frame, &eh);
	}
	memset(&ih, 0, sizeof(ih));
	ih.payload_len = (uint16_t)ilen;
	ih.next_hdr = 58;
	ih.hop_limit = ND_HOP_LIMIT;
	memcpy(ih.saddr, saddr, 16);
	memcpy(ih.daddr, daddr, 16);
	emu_ipv6_put(frame + l2, &ih);
	icmp = frame + l2 + EMU_IPV6_LEN;
	memset(icmp, 0, ilen);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ICMPV6_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	icmp[25] = (uint8_t)(optlen / 8); /* in units of 8 bytes */
	memcpy(icmp + 26 + (d->ipoib ? ND_OPT_PAD_IB : 0), d->nd->hwaddr, d->nd->hwaddr_len);
	emu_be16_put(icmp + 2, icmp6_csum(saddr, daddr, icmp, ilen));
	if (type == ICMPV6_NS)
		d->host->st.ns_sent++;
	else
		d->host->st.na_sent++;
	if (!d->ipoib) {
		emu_neigh_send_port(d, frame, len);
	} else if (!dst_hw) {
		emu_neigh_ib6_mcast_send(d, daddr, frame, len);
	} else {
		/* unicast (an NA, a unicast probe): ipoib_start_xmit -> neigh_add_path ->
		 * path_rec_start, the same SA path as an ARP reply's */
		emu_neigh_path_send(d, dst_hw, frame, len);
	}
}

/* The link-layer address in the option of type `want` among the ND options, NULL if absent or
 * not of the netdev's size (ndisc_opt_addr_data: the option must be exactly
 * NDISC_OPT_SPACE(addr_len + pad), 8 bytes on Ethernet, 24 over IPoIB, the address after the
 * pad). */
static const uint8_t *nd_opt(const struct neigh_dev *d, const uint8_t *o, size_t len,
			     uint8_t want)
{
	size_t need = d->ipoib ? ND_OPT_LEN_IB : ND_OPT_LEN_ETH;

	while (len >= 8) {
		size_t ol = (size_t)o[1] * 8;

		if (!ol || ol > len)
			return NULL;
		if (o[0] == want)
			return ol == need ? o + 2 + (d->ipoib ? ND_OPT_PAD_IB : 0) : NULL;
		o += ol;
		len -= ol;
	}
	return NULL;
}

static bool dev_has_v6(const struct neigh_dev *d, const uint8_t *a)
{
	for (size_t i = 0; i < d->naddrs; i++)
		if (d->addrs[i].family == AF_INET6 && !memcmp(&d->addrs[i].addr.v6, a, 16))
			return true;
	return false;
}

/* An IPv6 packet (ip: its header, len bytes) received on d. */
static void nd_rx(struct neigh_dev *d, const uint8_t *ip, size_t len)
{
	struct neigh_host *nh = d->host;
	struct emu_ipv6 ih;
	const uint8_t *icmp, *ll;
	size_t ilen;
	struct neigh_entry *ne;
	static const uint8_t any[16];

	if (len < EMU_IPV6_LEN + ND_BASE_LEN)
		return;
	emu_ipv6_get(ip, &ih);
	icmp = ip + EMU_IPV6_LEN;
	ilen = ih.payload_len;
	if (ih.next_hdr != 58 || ilen < ND_BASE_LEN || EMU_IPV6_LEN + ilen > len ||
	    (icmp[0] != ICMPV6_NS && icmp[0] != ICMPV6_NA))
		return; /* not neighbour discovery: nothing else of IPv6 is modelled */
	nh->st.nd_rcvd++;
	/* RFC 4861 7.1.1/7.1.2: hop limit 255, code 0, a valid checksum */
	if (ih.hop_limit != ND_HOP_LIMIT || icmp[1] != 0 ||
	    icmp6_csum(ih.saddr, ih.daddr, icmp, ilen) != 0) {
		nh->st.dropped++;
		return;
	}
	if (icmp[0] == ICMPV6_NS) {
		ll = nd_opt(d, icmp + ND_BASE_LEN, ilen - ND_BASE_LEN, ND_OPT_SLLA);
		if (!dev_has_v6(d, icmp + 8) || !memcmp(ih.saddr, any, 16) || !ll)
			return; /* not ours; DAD (unspecified source): not modelled */
		ne = emu_neigh_entry_get(d, AF_INET6, ih.saddr);
		if (ne)
			emu_neigh_update(ne, ll, EMU_NUD_STALE);
		/* solicited; override unless the solicitation was unicast (ndisc_recv_ns) */
		if (!d->quiet)
			nd_send(d, ICMPV6_NA,
				ND_NA_SOLICITED | (ih.daddr[0] == 0xff ? ND_NA_OVERRIDE : 0),
				icmp + 8, ih.saddr, ll, icmp + 8);
		return;
	}
	ll = nd_opt(d, icmp + ND_BASE_LEN, ilen - ND_BASE_LEN, ND_OPT_TLLA);
	ne = emu_neigh_entry_find(d, AF_INET6, icmp + 8);
	if (ne && ll)
		emu_neigh_update(ne, ll,
				 (icmp[4] & ND_NA_SOLICITED) ? EMU_NUD_REACHABLE : EMU_NUD_STALE);
}

/* ---------- solicitations ---------- */

/* arp_solicit / ndisc_solicit: a solicitation for ne, broadcast/multicast, or unicast to
 * ne->hw when `ucast`. */
static void solicit(struct neigh_entry *ne, bool ucast)
{
	struct neigh_dev *d = ne->dev;

	if (!d->up)
		return;
	if (ne->family == AF_INET) {
		const uint8_t *src = v4_src(d, ne->key);

		if (!src) {
			d->host->st.dropped++;
			return;
		}
		/* arp_solicit(): unicast probes go to the known address, with the target hardware
		 * address still zero */
		arp_send(d, ARPOP_REQUEST, src, NULL, ne->key, ucast ? ne->hw : NULL);
		return;
	}
	{
		const uint8_t *src = v6_src(d);
		uint8_t mc[16], mac[6];

		if (!src) {
			d->host->st.dropped++;
			return;
		}
		emu_neigh_solicited_node(ne->key, mc);
		if (d->ipoib) {
			/* the netdevs' listening joins, made when IPv6 over IPoIB is first used */
			emu_neigh_ib6_start(n_of(d));
			nd_send(d, ICMPV6_NS, 0, src, ucast ? ne->key : mc, ucast ? ne->hw : NULL,
				ne->key);
			return;
		}
		mac[0] = mac[1] = 0x33; /* RFC 2464: 33:33 + the last 4 bytes */
		memcpy(mac + 2, mc + 12, 4);
		nd_send(d, ICMPV6_NS, 0, src, ucast ? ne->key : mc, ucast ? ne->hw : mac, ne->key);
	}
}

/* ---------- receivers ---------- */

/* Ethernet: the port's non-RoCE frames; every netdev bound to the port looks at those for its
 * MAC, broadcast or IPv6 multicast. */
static void eth_rx(void *ctx, const uint8_t *f, size_t len, uint64_t now)
{
	struct neigh_dev *first = ctx;
	struct neigh_host *nh = first->host;
	uint16_t type;

	(void)now;
	if (len < EMU_ETH_LEN)
		return;
	type = emu_be16_get(f + 12);
	for (size_t i = 0; i < nh->ndevs; i++) {
		struct neigh_dev *d = &nh->devs[i];
		bool to_us = !memcmp(f, d->nd->hwaddr, 6);

		if (d->nd->device != first->nd->device || d->nd->port != first->nd->port ||
		    d->ipoib || !d->up || d->noarp)
			continue;
		if (!to_us && !(f[0] & 1))
			continue;
		if (type == ETHERTYPE_ARP)
			arp_rx(d, f + EMU_ETH_LEN, len - EMU_ETH_LEN, to_us);
		else if (type == EMU_ETHERTYPE_IPV6)
			nd_rx(d, f + EMU_ETH_LEN, len - EMU_ETH_LEN);
	}
}

/* IPoIB: a UD packet to the netdev's QP, or to the broadcast group (the port's first IPoIB
 * netdev takes those: one IPoIB netdev per port, the default partition, is what is modelled). */
static void ipoib_rx(void *ctx, const uint8_t *f, size_t len, uint64_t now)
{
	struct neigh_dev *d = ctx;
	struct emu_pkt_info info;
	const uint8_t *p;
	bool mcast;

	(void)now;
	d->host->st.ipoib_rcvd++;
	if (emu_pkt_parse(f, len, EMU_LL_INFINIBAND, &info) ||
	    info.opcode != (EMU_OP_UD | EMU_OP_SEND_ONLY) || info.paylen < EMU_IPOIB_HDR_LEN) {
		d->host->st.dropped++;
		return;
	}
	mcast = info.dqpn == IPOIB_MCAST_QPN;
	/* multicast reaches the QP only for the groups it is attached to: the broadcast group
	 * and the IPv6 groups the netdev is a full member of (ipoib_mcast_join_finish attaches
	 * the QP for those only) */
	if (mcast && (info.grh_off == EMU_PKT_NO_HDR ||
		      (memcmp(f + info.grh_off + 24, emu_ipoib_bcast_mgid, 16) &&
		       !emu_neigh_ib6_listens(d, f + info.grh_off + 24)))) {
		d->host->st.dropped++;
		return;
	}
	if (emu_be32_get(f + info.hdr_off[EMU_PKT_H_DETH]) != EMU_IPOIB_QKEY) {
		d->host->st.dropped++;
		return;
	}
	if (!d->up)
		return;
	p = f + info.hdr_off[EMU_PKT_H_PAYLOAD];
	if (emu_be16_get(p) == ETHERTYPE_ARP)
		arp_rx(d, p + EMU_IPOIB_HDR_LEN, info.paylen - EMU_IPOIB_HDR_LEN, !mcast);
	else if (emu_be16_get(p) == EMU_ETHERTYPE_IPV6)
		nd_rx(d, p + EMU_IPOIB_HDR_LEN, info.paylen - EMU_IPOIB_HDR_LEN);
}

int emu_neigh_wire_init(struct emu_neigh *n)
{
	struct emu_topology *t = emu_engine_topology(n->e);

	/* the tables' probes go out as this module's frames (the neigh_ops of arp_tbl/nd_tbl) */
	n->solicit = solicit;

	for (size_t h = 0; h < n->nhosts; h++) {
		struct neigh_host *nh = &n->hosts[h];

		for (size_t i = 0; i < nh->ndevs; i++) {
			struct neigh_dev *d = &nh->devs[i];
			const struct emu_port *po;
			bool first = true;
			int ret;

			if (d->nd->device < 0 || !d->nd->port ||
			    (size_t)d->nd->device >= nh->h->ndevices ||
			    d->nd->port > nh->h->devices[d->nd->device].nports)
				continue;
			po = &nh->h->devices[d->nd->device].ports[d->nd->port - 1];
			for (size_t j = 0; j < i; j++)
				if (nh->devs[j].nd->device == d->nd->device &&
				    nh->devs[j].nd->port == d->nd->port)
					first = false;
			d->ep = emu_topology_port_endpoint(t, h, (size_t)d->nd->device, d->nd->port);
			if (!d->ipoib) {
				if (first && d->ep >= 0) {
					/* a netdev that starts down has no carrier either */
					d->nic = true;
					emu_neigh_carrier(d);
				}
				if (first) {
					ret = emu_engine_port_set_rx_class(n->e, h,
									   (size_t)d->nd->device,
									   d->nd->port, EMU_RX_NET,
									   eth_rx, d);
					if (ret)
						return ret;
				}
				continue;
			}
			d->lid = po->lid;
			ret = emu_engine_port_set_rx_qpn(n->e, h, (size_t)d->nd->device, d->nd->port,
							 d->qpn, ipoib_rx, d);
			if (!ret && first)
				ret = emu_engine_port_set_rx_qpn(n->e, h, (size_t)d->nd->device,
								 d->nd->port, IPOIB_MCAST_QPN,
								 ipoib_rx, d);
			/* ipoib_mcast_join_task: the port joins the broadcast group */
			if (!ret && first && d->ep >= 0)
				ret = emu_topology_mcast_attach(t, EMU_IPOIB_BCAST_MLID, d->ep);
			if (ret)
				return ret;
		}
	}
	return 0;
}
