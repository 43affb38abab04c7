/* ibv_resolve_eth_l2_from_gid() (IBVERBS_1.1, deprecated): the destination MAC (and VLAN) of
 * a RoCE address vector. rdma-core 44 asks the kernel over netlink (libibverbs/neigh.c): the
 * source GID's address names the outgoing interface, a route lookup and the neighbour table
 * give the link-layer address, a VLAN netdev its id (0xffff otherwise). The emulator answers
 * from the fabric model instead, with verbs.c's return values:
 *   - ibv_query_gid() failing on the source GID index: its -1;
 *   - a source GID of no interface (neigh_get_oif_from_src() <= 0): -EINVAL;
 *   - a multicast destination: its mapped MAC (01:00:5e / 33:33), as neigh.c maps it;
 *   - a destination GID that no netdev of the fabric owns: -EHOSTUNREACH (the kernel gives up
 *     after neigh.c's 3 s timeout; no time passes here);
 *   - an address of another netdev of the same host: -EHOSTUNREACH (measured on rxe: the
 *     route lookup is bound to the source's interface, and a local address is not on it);
 *   - otherwise 0 with the MAC of the owning netdev (the source netdev's own address gives
 *     its own MAC, measured); *vid = 0xffff, the model has no VLAN netdevs.
 * Measured on the VM and not followed: an address nobody has on the dummy netdev d0 resolves
 * to d0's own MAC there (a dummy device is NOARP: its neighbours take the device address);
 * the emulator answers as a NIC that runs ARP does once neigh.c gives up: -EHOSTUNREACH. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/verbs/datapath.h"

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
				uint8_t eth_mac[6], uint16_t *vid)
{
	const struct emu_port *p;
	const struct emu_gid *g = NULL;
	struct emu_av av;
	union ibv_gid sgid;
	int err;

	err = ibv_query_gid(context, attr->port_num, attr->grh.sgid_index, &sgid);
	if (err)
		return err;
	p = emu_verbs_port(context, attr->port_num);
	for (size_t i = 0; p && i < p->ngids; i++)
		if (!memcmp(p->gids[i].raw, sgid.raw, 16))
			g = &p->gids[i];
	if (!g || g->netdev < 0)
		return -EINVAL;
	/* another netdev's address on this host */
	for (size_t d = 0; d < p->dev->host->ndevices; d++) {
		const struct emu_device *dev = &p->dev->host->devices[d];

		for (size_t i = 0; i < dev->nports; i++)
			for (size_t k = 0; k < dev->ports[i].ngids; k++) {
				const struct emu_gid *o = &dev->ports[i].gids[k];

				if (!memcmp(o->raw, attr->grh.dgid.raw, 16) && o->netdev >= 0 &&
				    o->netdev != g->netdev)
					return -EHOSTUNREACH;
			}
	}
	memset(&av, 0, sizeof(av));
	av.dgid = attr->grh.dgid;
	av.network = emu_gid_is_v4mapped(av.dgid.raw) ? 4 : 6;
	if (av.network == 6 && av.dgid.raw[0] == 0xff) {
		av.dmac[0] = av.dmac[1] = 0x33;
		memcpy(av.dmac + 2, av.dgid.raw + 12, 4);
	} else if (av.network == 4 && (av.dgid.raw[12] & 0xf0) == 0xe0) {
		av.dmac[0] = 0x01;
		av.dmac[1] = 0x00;
		av.dmac[2] = 0x5e;
		av.dmac[3] = av.dgid.raw[13] & 0x7f;
		av.dmac[4] = av.dgid.raw[14];
		av.dmac[5] = av.dgid.raw[15];
	}
	if (emu_av_resolve_dmac(emu_engine_fabric(emu_dp_engine()), &av, eth_mac))
		return -EHOSTUNREACH;
	if (vid)
		*vid = 0xffff;
	return 0;
}
