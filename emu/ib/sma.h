/* The subnet management agents of the fabric's nodes (IBA vol. 1 ch. 14): every CA and switch
 * answers SMPs (management class 0x01 LID-routed, 0x81 directed route) from the fabric model.
 *
 * An SMP leaves a host port (the umad port it was sent on) and reaches its node either by the
 * destination LID (a CA port's LID range, or a switch's LID: its port 0) or by its directed
 * route, walked through the model's links: each hop leaves through initial_path[hop] and
 * arrives at the port across the link. A hop out of a CA other than the first, through a port
 * without a link, or across a link whose port is down, loses the SMP: no answer, as on a real
 * subnet. The node's SMA then answers Get (and Set, which changes nothing: the model is fixed)
 * of the attributes below as the IBA lays them out (libibmad's field table fields.c is the
 * reference used for the bit positions):
 *   NodeInfo, NodeDescription, PortInfo, SwitchInfo, LinearForwardingTable (switches, from the
 *   topology's forwarding tables), GUIDInfo, P_KeyTable, and Mellanox' ExtendedPortInfo
 *   (0xff90, all zero: no FDR10) that ibnetdiscover asks of Mellanox nodes at QDR.
 * Others are answered with status 0x0c (unsupported method/attribute combination).
 */
#ifndef RDMAEMU_EMU_IB_SMA_H
#define RDMAEMU_EMU_IB_SMA_H

#include <stdint.h>

#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"

#define EMU_MGMT_CLASS_SUBN_LID 0x01
#define EMU_MGMT_CLASS_SUBN_DR 0x81

enum {
	EMU_SMP_ATTR_NODE_DESC = 0x0010,
	EMU_SMP_ATTR_NODE_INFO = 0x0011,
	EMU_SMP_ATTR_SWITCH_INFO = 0x0012,
	EMU_SMP_ATTR_GUID_INFO = 0x0014,
	EMU_SMP_ATTR_PORT_INFO = 0x0015,
	EMU_SMP_ATTR_PKEY_TABLE = 0x0016,
	EMU_SMP_ATTR_LFT = 0x0019,
	EMU_SMP_ATTR_MLNX_EXT_PORT_INFO = 0xff90,
};

/* A node of the fabric as the SMA layer names it. */
struct emu_sma_node {
	enum emu_endpoint_kind kind; /* EMU_EP_HOST_PORT (a CA) or EMU_EP_SWITCH_PORT */
	int node;                    /* host or switch index */
	int device;                  /* the CA's device index */
	uint8_t port;                /* the port the SMP arrived at (0: a switch's own port 0) */
};

/* Answers the 256-byte SMP `mad` sent from port `port` of device `dev` of host `host`: 0 with
 * mad turned into the response (GetResp; for directed route the direction bit set), -ETIMEDOUT when the SMP is lost on the way (no answer comes), -EINVAL
 * when it is no SMP request. t gives the switches' forwarding tables (NULL: every entry 0xff). */
int emu_sma_process(const struct emu_fabric *f, const struct emu_topology *t, size_t host,
		    size_t dev, unsigned port, uint16_t dlid, uint8_t mad[256]);

/* Where an SMP ends: by LID (0 or -ENOENT) or by a directed route from a host port (0 or
 * -ETIMEDOUT). */
int emu_sma_find_lid(const struct emu_fabric *f, uint16_t lid, struct emu_sma_node *out);
int emu_sma_walk(const struct emu_fabric *f, size_t host, size_t dev, unsigned port,
		 const uint8_t *path, unsigned hops, struct emu_sma_node *out);

/* The 64-byte PortInfo that node n's SMA gives for `port` when asked through n->port (a CA's
 * port 0 means the port asked through; a switch's 0 its management port): what the SM reads
 * and the SA's PortInfoRecords carry. 0, or -EINVAL for a port the node does not have. */
int emu_sma_port_info(const struct emu_fabric *f, const struct emu_sma_node *n, unsigned port,
		      uint8_t d[64]);

#endif
