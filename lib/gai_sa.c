/* RAI_SA: rdma_getaddrinfo (spec §4.6) and rdma_resolve_addrinfo (§5) asking the subnet
 * administrator for ServiceRecords through the kernel's RESOLVE_IB_SERVICE command (rdma-core
 * >= v60 on a kernel with the 2025 patches; the emulated kernel has them, emu/rdma_cm/cma_svc.c).
 *
 * rdma_getaddrinfo binds a private RDMA_PS_IB id to GID 0 of every active InfiniBand port of the
 * library's devices (ibv_query_port, ibv_query_gid, as rdma-core walks them) in
 * turn, asks for `service` (strtoull(service, 0): a number is a ServiceID, anything else a
 * ServiceName of at most 63 characters) and waits for the outcome; the first port whose
 * answer has records wins, none gives ENOENT. RoCE and iWARP ports are skipped, so a RoCE-only
 * host always gets ENOENT.
 *
 * The records come back with QUERY option IB_SERVICE (lib/id_addrinfo.c) as AF_IB entries,
 * to which this file adds the source: the port's GID in the IB port space.
 *
 * The bind goes to the kernel as a BIND command directly (no QUERY round trips: only the
 * kernel's answer to the service lookup is wanted). */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "util/failcall.h"

#define GAI_SA_PS_IB_SID 0x00000000013F0000ULL /* RDMA_IB_IP_PS_IB */

/* Binds id to GID 0 of (dev, port) as AF_IB in the IB port space (the kernel's BIND). */
static int bind_gid(struct rdma_cm_id *id, const uint8_t gid[16])
{
	struct ucma_abi_bind cmd;
	struct sockaddr_ib sib;

	memset(&sib, 0, sizeof sib);
	sib.sib_family = AF_IB;
	sib.sib_pkey = htobe16(0xffff);
	memcpy(&sib.sib_addr, gid, 16);
	sib.sib_sid = htobe64(GAI_SA_PS_IB_SID);
	sib.sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
	CMA_INIT_CMD(&cmd, sizeof cmd, BIND);
	cmd.id = cma_priv(id)->handle;
	cmd.addr_size = sizeof sib;
	memcpy(&cmd.addr, &sib, sizeof sib);
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

/* One port: 0 with *res, or -1 (errno) when it has nothing. */
static int resolve_on_gid(struct rdma_event_channel *ch, const uint8_t gid[16],
			  const char *service, struct rdma_addrinfo **res)
{
	struct rdma_cm_event *ev = NULL;
	struct rdma_cm_id *id;
	struct rdma_addrinfo *ai;
	int ret;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_IB))
		return -1;
	ret = bind_gid(id, gid);
	if (!ret) {
		cma_priv(id)->resolving_ai = true;
		ret = cma_resolve_ib_service(cma_priv(id), service);
	}
	if (!ret)
		ret = rdma_get_cm_event(ch, &ev);
	if (!ret && ev->event != RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED)
		ret = cma_err(ENOENT);
	if (ev)
		rdma_ack_cm_event(ev);
	if (!ret && rdma_query_addrinfo(id, res))
		ret = -1;
	if (!ret) {
		for (ai = *res; ai; ai = ai->ai_next) {
			struct sockaddr_ib *src = emu_calloc(1, sizeof(*src));

			if (!src) {
				rdma_freeaddrinfo(*res);
				ret = cma_err(ENOMEM);
				break;
			}
			src->sib_family = AF_IB;
			src->sib_pkey = ((struct sockaddr_ib *)ai->ai_dst_addr)->sib_pkey;
			memcpy(&src->sib_addr, gid, 16);
			src->sib_sid = htobe64(GAI_SA_PS_IB_SID);
			src->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
			ai->ai_src_addr = (struct sockaddr *)src;
			ai->ai_src_len = sizeof(*src);
		}
	}
	rdma_destroy_id(id);
	return ret;
}

int cma_gai_sa(const char *service, struct rdma_addrinfo **res)
{
	struct rdma_event_channel *ch;
	struct ibv_context **devs;
	int ndevs = 0, ret = -1;

	if (!service)
		return cma_err(EINVAL);
	ch = rdma_create_event_channel();
	if (!ch)
		return -1;
	devs = rdma_get_devices(&ndevs);
	for (int d = 0; ret && devs && d < ndevs; d++) {
		struct ibv_device_attr da;

		if (ibv_query_device(devs[d], &da))
			continue;
		for (uint8_t p = 1; ret && p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			union ibv_gid gid;

			if (ibv_query_port(devs[d], p, &pa) ||
			    pa.link_layer != IBV_LINK_LAYER_INFINIBAND ||
			    pa.state < IBV_PORT_ACTIVE || !pa.gid_tbl_len ||
			    ibv_query_gid(devs[d], p, 0, &gid))
				continue;
			ret = resolve_on_gid(ch, gid.raw, service, res);
		}
	}
	if (devs)
		rdma_free_devices(devs);
	rdma_destroy_event_channel(ch);
	return ret ? cma_err(ENOENT) : 0;
}
