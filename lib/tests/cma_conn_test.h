/* Shared by the connection tests and the connection benchmark: two emulated hosts (A and B of
 * fixtures/rxe-ref2.fabric) in one process, a stand-in address module until the neighbour
 * module lands (it binds the id to its host's first netdev and answers at once), and the
 * route through rdma_set_option(RDMA_OPTION_IB_PATH) with the path the kernel synthesises
 * for RoCE (packet lifetime CMA_IBOE_PACKET_LIFETIME 16, hop limit 64, MTU 1024). */
#ifndef RDMAEMU_LIB_TESTS_CMA_CONN_TEST_H
#define RDMAEMU_LIB_TESTS_CMA_CONN_TEST_H

#include <arpa/inet.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <infiniband/sa.h>

#include "emu/rdma_cm/cma.h"

static int standin_resolve(struct emu_cma_id *id, uint32_t timeout_ms)
{
	const struct emu_netdev *n = &id->host->netdevs[0];

	(void)timeout_ms;
	for (size_t i = 0; i < n->naddrs; i++) {
		if (n->addrs[i].family != AF_INET)
			continue;
		memcpy(&((struct sockaddr_in *)&id->src)->sin_addr, &n->addrs[i].addr.v4, 4);
		break;
	}
	emu_cma_addr_resolved(id, emu_cma_acquire_dev(id, 0));
	return 0;
}

static const struct emu_cma_addr_ops standin_addr_ops = { standin_resolve, NULL };

/* The RoCE path the kernel's cma_resolve_iboe_route would build, set as IB_PATH. */
static inline int standin_route(struct rdma_cm_id *id)
{
	struct ibv_path_data pd;

	memset(&pd, 0, sizeof pd);
	pd.flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
	memcpy(&pd.path.sgid, id->route.addr.addr.ibaddr.sgid.raw, 16);
	memcpy(&pd.path.dgid, id->route.addr.addr.ibaddr.dgid.raw, 16);
	pd.path.pkey = htons(0xffff);
	pd.path.mtu = 0x80 | IBV_MTU_1024;
	pd.path.rate = 0x80 | 3 /* 10 Gb/s */;
	pd.path.packetlifetime = 0x80 | 16;
	pd.path.flowlabel_hoplimit = htonl(64);
	pd.path.reversible_numpath = 0x81;
	return rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &pd, sizeof pd);
}

static inline void standin_dst(struct sockaddr_in *sin, const char *ip, uint16_t port)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
}

#endif
