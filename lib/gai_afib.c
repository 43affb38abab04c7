/* rdma_getaddrinfo's AF_IB entry (spec §4.5, rdma-core's ucma_resolve_af_ib): when ibacm gave a
 * route for an IP lookup and the kernel takes AF_IB, the library puts an AF_IB twin of the
 * result in front of it. Its addresses come from the first path (P_Key, flow label, SGID/DGID;
 * service IDs from the port space and the IP entry's ports, ucma_set_sid), and for an IP
 * lookup it carries ai_connect: the 36-byte header that rdma_connect puts in front of the
 * private data, so that an IP listener sees the IP addresses of an AF_IB connection (the
 * header's port stays 0, as rdma-core leaves it). Failures are silent: the IP result stays. */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "util/failcall.h"
#include "util/failnth.h"

/* ucma_get_port: the port of an IP or AF_IB address, host order; 0 for none. */
static uint16_t addr_port(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case AF_IB:
		return (uint16_t)be64toh(((const struct sockaddr_ib *)sa)->sib_sid);
	default:
		return 0;
	}
}

/* ucma_set_sid (spec §2.3) */
static void set_sid(int ps, const struct sockaddr *from, struct sockaddr_ib *sib)
{
	uint16_t port = addr_port(from);
	uint64_t mask = 0;

	sib->sib_sid = htobe64(((uint64_t)ps << 16) + port);
	if (ps)
		mask |= RDMA_IB_IP_PS_MASK;
	if (port)
		mask |= RDMA_IB_IP_PORT_MASK;
	sib->sib_sid_mask = htobe64(mask);
}

static struct sockaddr_ib *path_addr(const struct ibv_path_record *path, const uint8_t *gid,
				     int ps, const struct sockaddr *from)
{
	struct sockaddr_ib *sib = emu_calloc(1, sizeof(*sib));

	if (!sib)
		return NULL;
	sib->sib_family = AF_IB;
	sib->sib_pkey = path->pkey;
	sib->sib_flowinfo = htobe32(be32toh(path->flowlabel_hoplimit) >> 8);
	memcpy(&sib->sib_addr, gid, 16);
	set_sid(ps, from, sib);
	return sib;
}

/* ucma_ib_set_connect: nothing for an AF_IB lookup. A missing source or destination (a
 * hints-only lookup answered with a route) leaves zeros where rdma-core dereferences NULL. */
static int set_connect(struct rdma_addrinfo *ib, const struct rdma_addrinfo *ip)
{
	struct cma_ib_connect_hdr *hdr;

	if (ip->ai_family == AF_IB)
		return 0;
	hdr = emu_calloc(1, sizeof(*hdr));
	if (!hdr)
		return -1;
	if (ip->ai_family == AF_INET) {
		hdr->ip_version = 4 << 4;
		if (ip->ai_src_addr)
			memcpy(&hdr->src_addr[3], &((struct sockaddr_in *)ip->ai_src_addr)->sin_addr, 4);
		if (ip->ai_dst_addr)
			memcpy(&hdr->dst_addr[3], &((struct sockaddr_in *)ip->ai_dst_addr)->sin_addr, 4);
	} else {
		hdr->ip_version = 6 << 4;
		if (ip->ai_src_addr)
			memcpy(hdr->src_addr, &((struct sockaddr_in6 *)ip->ai_src_addr)->sin6_addr, 16);
		if (ip->ai_dst_addr)
			memcpy(hdr->dst_addr, &((struct sockaddr_in6 *)ip->ai_dst_addr)->sin6_addr, 16);
	}
	ib->ai_connect = hdr;
	ib->ai_connect_len = sizeof(*hdr);
	return 0;
}

void cma_resolve_af_ib(struct rdma_addrinfo **rai)
{
	struct rdma_addrinfo *ip = *rai, *ib = emu_calloc(1, sizeof(*ib));
	const struct ibv_path_record *path;

	if (!ib) {
		emu_fail_lost("the AF_IB entry in front of the result (rdma-core's "
			      "ucma_resolve_af_ib drops it)");
		return;
	}
	ib->ai_flags = ip->ai_flags;
	ib->ai_family = AF_IB;
	ib->ai_qp_type = ip->ai_qp_type;
	ib->ai_port_space = ip->ai_port_space;
	ib->ai_route = emu_malloc(ip->ai_route_len);
	if (!ib->ai_route)
		goto err;
	memcpy(ib->ai_route, ip->ai_route, ip->ai_route_len);
	ib->ai_route_len = ip->ai_route_len;
	if (ip->ai_src_canonname && !(ib->ai_src_canonname = emu_strdup(ip->ai_src_canonname)))
		goto err;
	if (ip->ai_dst_canonname && !(ib->ai_dst_canonname = emu_strdup(ip->ai_dst_canonname)))
		goto err;
	if (set_connect(ib, ip))
		goto err;
	path = &((const struct ibv_path_data *)ib->ai_route)->path;
	ib->ai_src_addr = (struct sockaddr *)path_addr(path, path->sgid.raw, ib->ai_port_space,
						       ip->ai_src_addr);
	ib->ai_dst_addr = (struct sockaddr *)path_addr(path, path->dgid.raw, ib->ai_port_space,
						       ip->ai_dst_addr);
	if (!ib->ai_src_addr || !ib->ai_dst_addr)
		goto err;
	ib->ai_src_len = ib->ai_dst_len = sizeof(struct sockaddr_ib);
	ib->ai_next = ip;
	*rai = ib;
	return;
err:
	/* as rdma-core's ucma_resolve_af_ib: the IP entry alone, without a word */
	emu_fail_lost("the AF_IB entry in front of the result (rdma-core's ucma_resolve_af_ib "
		      "drops it)");
	rdma_freeaddrinfo(ib);
}
