/* rdma_getaddrinfo / rdma_freeaddrinfo (spec §4).
 *
 * The steps and their order are the real library's (addrinfo.c:rdma_getaddrinfo at rdma-core
 * v61; personality 44 has no RAI_SA step, as v44): the all-NULL check comes before library initialisation, RAI_SA is decided before any
 * allocation, glibc's EAI_* codes are returned unchanged, and only the first getaddrinfo(3)
 * result is used. Where the real library dereferences a NULL pointer or over-reads, this one
 * returns -1/EINVAL or reads zeros instead (spec §16 item 12), and says so below.
 */
#include "config.h"

#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <endian.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "rdmaemu/ctl.h"
#include "util/failcall.h"

static const struct rdma_addrinfo nohints;

/* rdma hints -> getaddrinfo(3) hints (ucma_convert_to_ai, spec §4.2). */
static void convert_to_ai(struct addrinfo *ai, const struct rdma_addrinfo *rai)
{
	memset(ai, 0, sizeof(*ai));
	/* Every other RAI_* bit, known or not, is dropped: never EAI_BADFLAGS. */
	if (rai->ai_flags & RAI_PASSIVE)
		ai->ai_flags = AI_PASSIVE;
	if (rai->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (rai->ai_family != AF_IB)
		ai->ai_family = rai->ai_family;
	else
		ai->ai_family = AF_UNSPEC;

	switch (rai->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	}

	switch (rai->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_IPOIB:
	case RDMA_PS_UDP:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		if (ai->ai_socktype == SOCK_STREAM)
			ai->ai_protocol = IPPROTO_TCP;
		else if (ai->ai_socktype == SOCK_DGRAM)
			ai->ai_protocol = IPPROTO_UDP;
		break;
	}
	/* The real library also passes the hint address and canonical name; getaddrinfo(3)
	 * ignores both, so they are left out. AI_CANONNAME is never requested. */
}

/* sib_sid/sib_sid_mask for an AF_IB address of port space ps (ucma_set_sid, spec §2.3). */
static void set_sid(enum rdma_port_space ps, uint16_t port, struct sockaddr_ib *sib)
{
	sib->sib_sid = htobe64(((uint64_t)ps << 16) + port);
	sib->sib_sid_mask = htobe64((ps ? RDMA_IB_IP_PS_MASK : 0) | (port ? RDMA_IB_IP_PORT_MASK : 0));
}

/* The sockaddr glibc returned, as a 48-byte sockaddr_ib (ucma_convert_in6). The real library
 * reads any result as a sockaddr_in6, so an IPv4 result makes it read past the 16-byte
 * sockaddr_in into heap garbage (spec §4.3, row 69). Here the sockaddr is first copied into a
 * zeroed sockaddr_in6-sized buffer: the layout of the result is the real one (the IPv4 address
 * lands in sib_flowinfo) and the over-read bytes are zeros, deterministically. */
static struct sockaddr_ib *convert_in6(enum rdma_port_space ps, const struct sockaddr *sa,
				       socklen_t salen)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_ib *sib;

	memset(&sin6, 0, sizeof(sin6));
	memcpy(&sin6, sa, salen < sizeof(sin6) ? salen : sizeof(sin6));
	sib = emu_calloc(1, sizeof(*sib));
	if (!sib)
		return NULL;
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff);
	sib->sib_flowinfo = sin6.sin6_flowinfo;
	memcpy(&sib->sib_addr, &sin6.sin6_addr, sizeof(sin6.sin6_addr));
	set_sid(ps, be16toh(sin6.sin6_port), sib);
	sib->sib_scope_id = sin6.sin6_scope_id;
	return sib;
}

/* getaddrinfo(3) result -> rdma_addrinfo (ucma_convert_to_rai, spec §4.3). */
static int convert_to_rai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *hints,
			  const struct addrinfo *ai)
{
	struct sockaddr *addr;
	socklen_t len;

	if (hints->ai_qp_type)
		rai->ai_qp_type = hints->ai_qp_type;
	else if (ai->ai_socktype == SOCK_STREAM)
		rai->ai_qp_type = IBV_QPT_RC;
	else if (ai->ai_socktype == SOCK_DGRAM)
		rai->ai_qp_type = IBV_QPT_UD;

	if (hints->ai_port_space)
		rai->ai_port_space = hints->ai_port_space;
	else if (ai->ai_protocol == IPPROTO_TCP)
		rai->ai_port_space = RDMA_PS_TCP;
	else if (ai->ai_protocol == IPPROTO_UDP)
		rai->ai_port_space = RDMA_PS_UDP;

	if ((hints->ai_flags & RAI_FAMILY) && hints->ai_family == AF_IB &&
	    (hints->ai_flags & RAI_NUMERICHOST)) {
		addr = (struct sockaddr *)convert_in6(rai->ai_port_space, ai->ai_addr, ai->ai_addrlen);
		len = sizeof(struct sockaddr_ib);
		rai->ai_family = AF_IB;
	} else {
		addr = emu_malloc(ai->ai_addrlen);
		if (addr)
			memcpy(addr, ai->ai_addr, ai->ai_addrlen);
		len = ai->ai_addrlen;
		rai->ai_family = ai->ai_family;
	}
	if (!addr)
		return cma_err(ENOMEM);

	/* glibc echoes AI_PASSIVE in the result; every other input flag is dropped. */
	if (ai->ai_flags & AI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		rai->ai_src_addr = addr;
		rai->ai_src_len = len;
	} else {
		rai->ai_flags = 0;
		rai->ai_dst_addr = addr;
		rai->ai_dst_len = len;
	}
	if (ai->ai_canonname) {
		rai->ai_dst_canonname = emu_strdup(ai->ai_canonname);
		if (!rai->ai_dst_canonname)
			return cma_err(ENOMEM);
	}
	return 0;
}

/* getaddrinfo(3) as the emulated host sees it: its names and interfaces, never DNS unless the
 * fabric allows (rdmaemu_ctl_getaddrinfo). */
static int do_getaddrinfo(const char *node, const char *service,
			  const struct rdma_addrinfo *hints, struct rdma_addrinfo *rai)
{
	struct addrinfo ai_hints, *ai;
	int ret;

	if (hints != &nohints) {
		convert_to_ai(&ai_hints, hints);
		ret = rdmaemu_ctl_getaddrinfo(node, service, &ai_hints, &ai);
	} else {
		ret = rdmaemu_ctl_getaddrinfo(node, service, NULL, &ai);
	}
	if (ret)
		return ret; /* a negative EAI_* code, returned unchanged */
	ret = convert_to_rai(rai, hints, ai);
	freeaddrinfo(ai);
	return ret;
}

/* Copies `len` bytes of a caller's sockaddr. The real library memcpy()s from the pointer
 * without looking; a NULL pointer with a length is refused here instead of crashing. */
static int copy_addr(struct sockaddr **dst, const struct sockaddr *src, socklen_t len)
{
	if (!src)
		return cma_err(EINVAL);
	*dst = emu_malloc(len);
	if (!*dst)
		return cma_err(ENOMEM);
	memcpy(*dst, src, len);
	return 0;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int ret;

	if (!service && !node && !hints)
		return cma_err(EINVAL);
	if (cma_init())
		return -1;
	if (!res)
		return cma_err(EINVAL); /* the real library writes through it: a crash */

	/* v60 (dfc0afdea): RAI_SA asks the SA; before it RAI_SA and RAI_DNS are bits nobody
	 * reads */
	if (cma_rdma_core >= 60 && hints && (hints->ai_flags & RAI_SA)) {
		if (node || (hints->ai_flags & RAI_DNS))
			return cma_err(EOPNOTSUPP);
		return cma_gai_sa(service, res);
	}

	rai = emu_calloc(1, sizeof(*rai));
	if (!rai)
		return cma_err(ENOMEM);
	if (!hints)
		hints = &nohints;

	if (node || service) {
		ret = do_getaddrinfo(node, service, hints, rai);
	} else {
		/* hints-only mode: the four scalars verbatim, including unknown flag bits */
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		ret = 0;
		if (hints->ai_dst_len) {
			ret = copy_addr(&rai->ai_dst_addr, hints->ai_dst_addr, hints->ai_dst_len);
			if (!ret)
				rai->ai_dst_len = hints->ai_dst_len;
		}
	}
	if (ret)
		goto err;

	if (!rai->ai_src_len && hints->ai_src_len) {
		ret = copy_addr(&rai->ai_src_addr, hints->ai_src_addr, hints->ai_src_len);
		if (ret)
			goto err;
		rai->ai_src_len = hints->ai_src_len;
	}

	if (!(rai->ai_flags & RAI_PASSIVE))
		cma_acm_resolve(&rai, hints);

	*res = rai;
	return 0;
err:
	rdma_freeaddrinfo(rai);
	return ret;
}
