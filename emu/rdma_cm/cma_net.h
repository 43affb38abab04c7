/* The network half of the emulated rdma_cm (docs/cma.md, "Address and route resolution"):
 * what fills emu/rdma_cm/cma.h's addr and route ops. Private to emu/rdma_cm/cma_addr.c, cma_route.c and
 * cma_mcast.c.
 *
 *   cma_addr.c   rdma_resolve_addr: cma_resolve_loopback / rdma_resolve_ip + addr_handler
 *                (emu/net/neigh.h), cma_acquire_dev_by_src_ip, the netdev notifier
 *   cma_route.c  rdma_resolve_route: cma_resolve_ib_route (SA PathRecord, emu/ib/sa_client.h)
 *                and cma_resolve_iboe_route (built locally)
 *   cma_mcast.c  rdma_join_multicast: cma_join_ib_multicast (SA MCMemberRecord) and
 *                cma_iboe_join_multicast (local), leave
 *
 * Everything runs with the engine lock held. */
#ifndef RDMAEMU_EMU_CMA_NET_H
#define RDMAEMU_EMU_CMA_NET_H

#include "emu/rdma_cm/cma.h"
#include "emu/sim/engine.h"

/* The index of the id's host in its fabric (what emu/net/neigh.h and emu/ib/sa_client.h take). */
size_t emu_cma_net_host(const struct emu_cma_id *id);
/* The port the id is bound to (dev/port set), or NULL. */
const struct emu_port *emu_cma_net_port(const struct emu_cma_id *id);
bool emu_cma_net_is_ib(const struct emu_cma_id *id);

/* iboe_get_mtu: the IB MTU enum that fits a netdev MTU after RoCE v2's headers; 0 if none. */
uint8_t emu_cma_net_iboe_mtu(uint32_t netdev_mtu);
/* The index of a GID of the id's port equal to gid, of type RoCE v2 when there is one. */
int emu_cma_net_gid_index(const struct emu_cma_id *id, const uint8_t gid[16]);

/* Multicast (cma_mcast.c), called through the route ops. */
int emu_cma_mcast_join(struct emu_cma_id *id, struct emu_cma_mc *mc);
void emu_cma_mcast_leave(struct emu_cma_id *id, struct emu_cma_mc *mc);

/* CMA_IBOE_PACKET_LIFETIME: 18 in Linux 6.1 (measured on the reference VM; later kernels
 * use 16), and the IPv4/IPv6 default hop limit. */
#define EMU_CMA_IBOE_PACKET_LIFETIME 18
#define EMU_CMA_DEFAULT_HOPLIMIT 64
/* Timeout of the SA MCMemberRecord join (multicast.c's send_join). */
#define EMU_CMA_MC_JOIN_TIMEOUT_MS 3000

#endif
