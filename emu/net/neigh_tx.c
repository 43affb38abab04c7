/* Frames out of a netdev's port: as they are (Ethernet), or as IPoIB UD SEND packets (the
 * 4-byte IPoIB header first) to a LID and QPN, with a GRH for a multicast group; the carrier
 * of an Ethernet port, which its netdev's state sets. The counters of the netdev's host say
 * what went and what was dropped. */
#include "config.h"

#include <string.h>

#include "emu/net/neigh_priv.h"
#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"

#define FRAME_MAX 256

void emu_neigh_send_port(struct neigh_dev *d, const uint8_t *frame, size_t len)
{
	struct emu_neigh *n = d->host->n;

	if (d->nd->device < 0 ||
	    emu_engine_port_send(n->e, d->host->idx, (size_t)d->nd->device, d->nd->port, frame,
				 len))
		d->host->st.dropped++;
}

void emu_neigh_carrier(struct neigh_dev *d)
{
	if (d->nic)
		emu_wire_set_endpoint_down(emu_topology_wire(emu_engine_topology(d->host->n->e)),
					   d->ep, !d->up);
}

void emu_neigh_ipoib_send(struct neigh_dev *d, uint16_t dlid, uint8_t sl, uint32_t dqpn,
			  const uint8_t *mgid, const uint8_t *payload, size_t paylen)
{
	struct emu_pkt_addr a;
	struct emu_bth bth;
	struct emu_pkt_ext ext;
	uint8_t frame[FRAME_MAX];
	ssize_t len;

	memset(&a, 0, sizeof(a));
	memset(&bth, 0, sizeof(bth));
	memset(&ext, 0, sizeof(ext));
	a.link_layer = EMU_LL_INFINIBAND;
	a.slid = d->lid;
	a.dlid = dlid;
	a.sl = sl & 0xf;
	if (mgid) {
		a.grh = true;
		memcpy(a.sgid, d->gid, 16);
		memcpy(a.dgid, mgid, 16);
	}
	bth.opcode = EMU_OP_UD | EMU_OP_SEND_ONLY;
	bth.pkey = EMU_PKEY_DEFAULT;
	bth.dqpn = dqpn;
	bth.psn = d->psn++ & EMU_PSN_MASK;
	ext.deth.qkey = EMU_IPOIB_QKEY;
	ext.deth.sqpn = d->qpn;
	len = emu_pkt_build(frame, sizeof(frame), &a, &bth, &ext, payload, paylen, NULL);
	if (len < 0) {
		d->host->st.dropped++;
		return;
	}
	d->host->st.ipoib_sent++;
	emu_neigh_send_port(d, frame, (size_t)len);
}
