/* An address handle back to the sender of a received UD message: ibv_init_ah_from_wc() and
 * ibv_create_ah_from_wc() as rdma-core 44's libibverbs/verbs.c implements them (they are
 * library code above the provider, so the emulator follows the library, not the kernel).
 *
 * The 40 bytes ahead of a UD payload hold either an IPv6/IB GRH or, for RoCE v2 over IPv4,
 * 20 unspecified bytes followed by the IPv4 header (rxe zeroes the first 20). Which one it is
 * comes from get_grh_header_version(): a first nibble other than 6 with an IPv4 version
 * nibble at byte 20 is IPv4; a first nibble of 6 is IPv6 unless bytes 20.. are an IPv4 header
 * of 5 words whose checksum is right. The local GID is then looked up the way
 * ibv_find_gid_index() does, one ibv_query_gid()/ibv_query_gid_type() pair per index until
 * one matches the address and the GID type, so a GID that is not in the table ends at the
 * first index ibv_query_gid() refuses: -1 with its errno (EINVAL past the table). */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "emu/verbs/objects.h"

/* The GRH / IPv4 fields the conversion reads (IBTA 8.3, RFC 791), as offsets in the area. */
enum {
	GRH_VTF = 0,         /* version 4 bits, traffic class 8, flow label 20 */
	GRH_NEXT_HDR = 6,
	GRH_HOP_LIMIT = 7,
	GRH_SGID = 8,
	GRH_DGID = 24,
	IP4 = 20,            /* the IPv4 header's place in the area */
	IP4_VER_IHL = IP4 + 0,
	IP4_TOS = IP4 + 1,
	IP4_TTL = IP4 + 8,
	IP4_CHECK = IP4 + 10,
	IP4_SADDR = IP4 + 12,
	IP4_DADDR = IP4 + 16,
	NEXT_HDR_UDP = 17,   /* RoCE v2 over IPv6 */
	NEXT_HDR_IB = 0x1b,  /* IB / RoCE v1: the BTH follows */
	/* rdma-core's private enum ibv_gid_type_sysfs (ibv_query_gid_type) */
	GID_TYPE_IB_ROCE_V1 = 0,
	GID_TYPE_ROCE_V2 = 1,
};

static uint32_t vtf(const uint8_t *g)
{
	uint32_t v;

	memcpy(&v, g + GRH_VTF, 4);
	return be32toh(v);
}

/* ipv4_calc_hdr_csum() of verbs.c: ten 16-bit words in memory order, folded once. */
static uint16_t ip4_csum(const uint8_t *ip)
{
	uint8_t h[20];
	uint32_t sum = 0;

	memcpy(h, ip, 20);
	h[10] = h[11] = 0;
	for (int i = 0; i < 20; i += 2) {
		uint16_t w;

		memcpy(&w, h + i, 2);
		sum += w;
	}
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* 4, 6, or -1 with EPROTONOSUPPORT. */
static int grh_version(const uint8_t *g)
{
	uint16_t check;

	if (vtf(g) >> 28 != 6) {
		if (g[IP4_VER_IHL] >> 4 == 4)
			return 4;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if ((g[IP4_VER_IHL] & 0xf) != 5)
		return 6;
	memcpy(&check, g + IP4_CHECK, 2);
	return check == ip4_csum(g + IP4) ? 4 : 6;
}

/* ibv_find_gid_index(): the first index whose GID and sysfs GID type both match. */
static int find_gid_index(struct ibv_context *ctx, uint8_t port, const uint8_t gid[16],
			  int type)
{
	int t = 0;
	union ibv_gid g;
	int i = 0, ret;

	do {
		ret = ibv_query_gid(ctx, port, i, &g);
		if (!ret)
			ret = ibv_query_gid_type(ctx, port, i, &t);
		i++;
	} while (!ret && (memcmp(g.raw, gid, 16) || t != type));
	return ret ? ret : i - 1;
}

static void v4_mapped(uint8_t out[16], const uint8_t addr[4])
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, addr, 4);
}

static int from_ipv4(struct ibv_context *ctx, uint8_t port, const uint8_t *g,
		     struct ibv_ah_attr *ah)
{
	uint8_t sgid[16];
	int idx;

	if ((g[IP4_DADDR] & 0xf0) == 0xe0) { /* IN_CLASSD: no multicast GID in the table */
		errno = EINVAL;
		return -1;
	}
	v4_mapped(sgid, g + IP4_DADDR);
	idx = find_gid_index(ctx, port, sgid, GID_TYPE_ROCE_V2);
	if (idx < 0)
		return idx;
	v4_mapped(ah->grh.dgid.raw, g + IP4_SADDR);
	ah->grh.sgid_index = (uint8_t)idx;
	ah->grh.hop_limit = g[IP4_TTL];
	ah->grh.traffic_class = g[IP4_TOS];
	return 0;
}

static int from_ipv6(struct ibv_context *ctx, uint8_t port, const uint8_t *g,
		     struct ibv_ah_attr *ah)
{
	int type;
	int idx;

	if (g[GRH_DGID] == 0xff) {
		errno = EINVAL;
		return -1;
	}
	memcpy(ah->grh.dgid.raw, g + GRH_SGID, 16);
	if (g[GRH_NEXT_HDR] == NEXT_HDR_UDP) {
		type = GID_TYPE_ROCE_V2;
	} else if (g[GRH_NEXT_HDR] == NEXT_HDR_IB) {
		type = GID_TYPE_IB_ROCE_V1;
	} else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	idx = find_gid_index(ctx, port, g + GRH_DGID, type);
	if (idx < 0)
		return idx;
	ah->grh.sgid_index = (uint8_t)idx;
	ah->grh.hop_limit = g[GRH_HOP_LIMIT];
	ah->grh.traffic_class = (uint8_t)(vtf(g) >> 20);
	return 0;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *g = (const uint8_t *)grh;

	memset(ah_attr, 0, sizeof(*ah_attr));
	/* the generic fields come first, whatever follows fails */
	ah_attr->grh.flow_label = vtf(g) & 0xfffff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	switch (grh_version(g)) {
	case 4:
		return from_ipv4(context, port_num, g, ah_attr);
	case 6:
		return from_ipv6(context, port_num, g, ah_attr);
	default:
		return -1;
	}
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}
