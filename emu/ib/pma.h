/* The Performance Management Agents of the fabric's nodes (IBA vol. 1 ch. 16.1): every CA with
 * an InfiniBand port and every switch answers PerfMgt MADs (management class 0x04, on QP1,
 * LID-routed to the node owning the destination LID, as emu/ib/sma.h finds it) from the port
 * counters the wire keeps (emu/sim/wire.h, struct emu_wire_port_counters).
 *
 * Attributes (the layouts of the kernel's <rdma/ib_pma.h> and libibmad's field table,
 * libibmad/fields.c; the data starts at byte 64 of the MAD, after 40 reserved bytes):
 *   ClassPortInfo (0x0001)       BaseVersion 1, ClassVersion 1, RespTimeValue 18 and the
 *                                CapabilityMask below;
 *   PortCounters (0x0012)        the 32-bit data and packet counters (octets / 4), saturating,
 *                                PortRcvErrors, PortRcvSwitchRelayErrors, PortXmitDiscards as
 *                                counted (16 bits, saturating); every other error counter and
 *                                PortXmitWait 0: the model has no symbol errors, link
 *                                recoveries, VLs or credit stalls;
 *   PortCountersExtended (0x001D) the 64-bit data and packet counters, unicast and multicast.
 * Get answers the counters of the port PortSelect names; Set clears the counters its
 * CounterSelect selects, the IB_PMA_SEL_* and IB_PMA_SELX_* bits, and answers as Get does
 * after it (CounterSelect 0), as the kernel's qib agent does. PortCounters and
 * PortCountersExtended show one set of data and packet counters (qib's too): clearing
 * PortXmitData in either clears both. An attribute modifier other than 0: status 0x001C.
 *
 * CapabilityMask (<rdma/ib_pma.h>'s IB_PMA_CLASS_CAP_*): a CA's PMA sets ExtendedWidth (bit 9,
 * PortCountersExtended) only, as the kernel's mlx5 and qib agents answer; its PortSelect must
 * be the port the MAD arrived at (qib's rule), else status 0x001C. A switch sets AllPortSelect
 * (bit 8: PortSelect 0xFF sums, or clears, every external port), ExtendedWidth and
 * PortXmitWait (bit 12), as ibsim's switch does (docs/umad.md); its port 0 counts nothing.
 * Other methods: status 0x0008; other attributes: 0x000C; a class version other than 1:
 * 0x0004. */
#ifndef RDMAEMU_EMU_IB_PMA_H
#define RDMAEMU_EMU_IB_PMA_H

#include <stdint.h>

#include "emu/ib/sma.h"
#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"

#define EMU_MGMT_CLASS_PERF 0x04

enum {
	EMU_PMA_ATTR_CLASS_PORT_INFO = 0x0001,
	EMU_PMA_ATTR_PORT_COUNTERS = 0x0012,
	EMU_PMA_ATTR_PORT_COUNTERS_EXT = 0x001d,
};

#define EMU_PMA_CAP_ALL_PORT_SELECT 0x0100
#define EMU_PMA_CAP_EXT_WIDTH 0x0200
#define EMU_PMA_CAP_XMIT_WAIT 0x1000

/* Answers the 256-byte PerfMgt MAD `mad` that reached node n: 0 with mad turned into the
 * GetResp, -EINVAL when it is no PerfMgt Get or Set request, -ETIMEDOUT when the node has no
 * PMA (a CA port on Ethernet: rxe has none). t holds the counters (the wire of the engine
 * where the traffic runs); NULL: no frame has moved, every counter reads 0 and Set clears
 * nothing. */
int emu_pma_process(const struct emu_fabric *f, struct emu_topology *t,
		    const struct emu_sma_node *n, uint8_t mad[256]);

#endif
