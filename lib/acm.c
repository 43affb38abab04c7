/* ibacm's part of rdma_getaddrinfo (spec §4.5): the acm.h RESOLVE request librdmacm sends for
 * every active lookup and what it keeps of the reply (rdma-core's librdmacm/acm.c, v44).
 *
 * The real library sends the request to ibacm's socket; when ibacm is not running nothing
 * happens and the result has no source address and no route. Here the request goes to a
 * server named by RDMAEMU_IBACM_* (lib/acm_sock.c) when there is one, else to the emulated
 * host's own ibacm (emu/net/ibacm_api.h: it runs where the fabric file says `acm on`). Either
 * answers with the source address it would use for the destination, and on InfiniBand a
 * PathRecord as one ibv_path_data; that source fills ai_src_addr when the result has none.
 * A reply counts only when its length is at least the 16-byte header, equals the header's
 * length and the status is 0; anything else is ignored silently, as the real library does.
 *
 * With a route, the AF_IB entry with ai_connect goes in front of the result (lib/gai_afib.c),
 * since the emulated kernel takes AF_IB as Linux 6.1 does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "emu/net/ibacm_api.h"
#include "util/failcall.h"
#include "util/failnth.h"

_Static_assert(sizeof(struct ibv_path_data) == EMU_IBACM_EP_LEN,
	       "a PATH entry is an ibv_path_data");

static bool inet_addr_of(const struct sockaddr *sa, socklen_t len)
{
	return len && sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
}

static bool ib_addr_of(const struct sockaddr *sa, socklen_t len)
{
	return len && sa && sa->sa_family == AF_IB;
}

static void set_ep_addr(struct emu_ibacm_ep *ep, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		ep->type = EMU_IBACM_EP_INFO_ADDRESS_IP;
		memcpy(ep->info.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		ep->type = EMU_IBACM_EP_INFO_ADDRESS_IP6;
		memcpy(ep->info.addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

/* The request: SOURCE (a source address is known), DEST (NODELAY for numeric or no-route
 * lookups), and a PATH entry when the hints carry a route or an address is AF_IB. */
static void build_request(struct emu_ibacm_msg *m, const struct rdma_addrinfo *rai,
			  const struct rdma_addrinfo *hints)
{
	struct emu_ibacm_ep *ep = m->ep;

	/* a request has at most three entries; only they are sent */
	memset(m, 0, sizeof(m->hdr) + 3 * sizeof(m->ep[0]));
	m->hdr.version = EMU_IBACM_VERSION;
	m->hdr.opcode = EMU_IBACM_OP_RESOLVE;
	m->hdr.length = EMU_IBACM_HDR_LEN;
	if (inet_addr_of(rai->ai_src_addr, rai->ai_src_len)) {
		ep->flags = EMU_IBACM_EP_FLAG_SOURCE;
		set_ep_addr(ep++, rai->ai_src_addr);
		m->hdr.length += EMU_IBACM_EP_LEN;
	}
	if (inet_addr_of(rai->ai_dst_addr, rai->ai_dst_len)) {
		ep->flags = EMU_IBACM_EP_FLAG_DEST;
		if (hints->ai_flags & (RAI_NUMERICHOST | RAI_NOROUTE))
			ep->flags |= EMU_IBACM_FLAGS_NODELAY;
		set_ep_addr(ep++, rai->ai_dst_addr);
		m->hdr.length += EMU_IBACM_EP_LEN;
	}
	if (hints->ai_route_len || ib_addr_of(rai->ai_src_addr, rai->ai_src_len) ||
	    ib_addr_of(rai->ai_dst_addr, rai->ai_dst_len)) {
		/* only a route of exactly one record or one path_data is passed on */
		if (hints->ai_route_len == sizeof(struct ibv_path_record))
			memcpy(&ep->info.path, hints->ai_route, sizeof(struct ibv_path_record));
		else if (hints->ai_route_len == sizeof(struct ibv_path_data))
			memcpy(&ep->info.path, &((const struct ibv_path_data *)hints->ai_route)->path,
			       sizeof(struct ibv_path_record));
		if (ib_addr_of(rai->ai_src_addr, rai->ai_src_len))
			memcpy(&ep->info.path.sgid,
			       &((const struct sockaddr_ib *)rai->ai_src_addr)->sib_addr, 16);
		if (ib_addr_of(rai->ai_dst_addr, rai->ai_dst_len))
			memcpy(&ep->info.path.dgid,
			       &((const struct sockaddr_ib *)rai->ai_dst_addr)->sib_addr, 16);
		ep->type = EMU_IBACM_EP_INFO_PATH;
		m->hdr.length += EMU_IBACM_EP_LEN;
	}
}

/* ibacm failures are silent in the real library: out of memory just means no source, or no
 * route (a failure sweep is told: emu_fail_lost). */
#define LOST_SOURCE "the source address ibacm answered (rdma-core's ucma_ib_save_resp drops it)"
#define LOST_ROUTE "the route ibacm answered (rdma-core's ucma_ib_save_resp drops it)"

static void save_source(struct rdma_addrinfo *rai, const struct emu_ibacm_ep *ep)
{
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;

	if (!(ep->flags & EMU_IBACM_EP_FLAG_SOURCE) || rai->ai_src_len)
		return;
	if (ep->type == EMU_IBACM_EP_INFO_ADDRESS_IP) {
		if (!(sin = emu_calloc(1, sizeof(*sin)))) {
			emu_fail_lost(LOST_SOURCE);
			return;
		}
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, ep->info.addr, 4);
		rai->ai_src_addr = (struct sockaddr *)sin;
		rai->ai_src_len = sizeof(*sin);
	} else {
		if (!(sin6 = emu_calloc(1, sizeof(*sin6)))) {
			emu_fail_lost(LOST_SOURCE);
			return;
		}
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, ep->info.addr, 16);
		rai->ai_src_addr = (struct sockaddr *)sin6;
		rai->ai_src_len = sizeof(*sin6);
	}
}

/* ucma_ib_save_resp. Faithful to rdma-core, including two quirks a test can see: the route is
 * the run of path_cnt entries starting at the FIRST path entry (entries in between that are
 * not paths are copied too, their type left as is), and a reply without any path still
 * allocates ai_route (calloc of zero bytes: a non-NULL pointer with ai_route_len 0). The
 * emulated host's ibacm has always left ai_route NULL without a path (empty_route false): its
 * results stay what they were when it answered inside the library. */
static void save_reply(struct rdma_addrinfo *rai, struct emu_ibacm_msg *m, bool empty_route)
{
	struct emu_ibacm_ep *first = NULL;
	size_t cnt = (m->hdr.length - EMU_IBACM_HDR_LEN) / EMU_IBACM_EP_LEN, paths = 0;

	for (size_t i = 0; i < cnt; i++) {
		struct emu_ibacm_ep *ep = &m->ep[i];

		switch (ep->type) {
		case EMU_IBACM_EP_INFO_PATH:
			ep->type = 0; /* becomes ibv_path_data.reserved */
			if (!first)
				first = ep;
			paths++;
			break;
		case EMU_IBACM_EP_INFO_ADDRESS_IP:
		case EMU_IBACM_EP_INFO_ADDRESS_IP6:
			save_source(rai, ep);
			break;
		default:
			break;
		}
	}
	if (!paths && !empty_route)
		return;
	rai->ai_route = emu_calloc(paths ? paths : 1, sizeof(struct ibv_path_data));
	if (rai->ai_route) {
		if (paths)
			memcpy(rai->ai_route, first, paths * sizeof(struct ibv_path_data));
		rai->ai_route_len = paths * sizeof(struct ibv_path_data);
	} else {
		emu_fail_lost(LOST_ROUTE);
	}
}

void cma_acm_resolve(struct rdma_addrinfo **raip, const struct rdma_addrinfo *hints)
{
	struct emu_ibacm_msg m;
	bool named = cma_acm_sock_named();
	ssize_t n;

	/* the host's ibacm: nothing to ask where none runs (the connection to it fails) */
	if (!named && emu_ibacm_exchange(NULL, 0, NULL, 0))
		return;
	build_request(&m, *raip, hints);
	if (named)
		n = cma_acm_sock_exchange(&m, m.hdr.length, sizeof(m));
	else
		n = emu_ibacm_exchange(&m, m.hdr.length, &m, sizeof(m));
	if (n < EMU_IBACM_HDR_LEN || n != (ssize_t)m.hdr.length || m.hdr.status)
		return;
	save_reply(*raip, &m, named);
	if (cma_af_ib_support() && !(hints->ai_flags & RAI_ROUTEONLY) && (*raip)->ai_route_len)
		cma_resolve_af_ib(raip);
}
