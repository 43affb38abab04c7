/* Who receives what arrives at a host port: the engine's demultiplexer, what the NIC does with
 * a frame before anything else. It hooks into every engine at its creation (emu_engine_on_create)
 * as the topology's receiver of every host port and the engine's input (emu_engine_deliver).
 *
 * On a real host a frame reaching the NIC is not all for the HCA: Ethernet ARP and IPv6
 * neighbour discovery go to the kernel's neighbour code, MADs for QP1 go to the MAD layer (the
 * CM agent, the SA client) and, on InfiniBand, IPoIB's ARP travels in UD packets to the IPoIB
 * QP. The engine owns the topology's receiver of every host port and hands each arriving frame
 * to exactly one of the receivers registered here, by looking at its headers only:
 *
 *   1. a transport packet (RoCEv2: Ethernet/IPv4 or IPv6/UDP 4791/BTH; IB: LRH [GRH] BTH)
 *      whose BTH DestQP was claimed on that port (emu_engine_port_set_rx_qpn: QP1 by the MAD
 *      layer, the IPoIB QP by the neighbour code)               -> that claim's receiver;
 *   2. any other transport packet                               -> EMU_RX_HCA;
 *   3. an Ethernet frame that is not RoCEv2 (ARP, ICMPv6, ...)  -> EMU_RX_NET;
 *   4. no receiver for the class or claim: counted as unclaimed and dropped, as before.
 *
 * Everything runs with the engine lock held (receivers are wire callbacks). */
#ifndef RDMAEMU_EMU_ENGINE_RX_H
#define RDMAEMU_EMU_ENGINE_RX_H

#include <stddef.h>
#include <stdint.h>

#include "emu/sim/wire.h"

struct emu_engine;

enum emu_rx_class {
	EMU_RX_HCA, /* transport packets nobody claimed by QPN: the HCA data path */
	EMU_RX_NET, /* non-RoCE Ethernet frames: the host's network stack (ARP, ND) */
	EMU_RX_NCLASS
};

/* At most this many DestQP claims per port (QP1, the IPoIB QP, room for tests). */
#define EMU_RX_MAX_QPN_CLAIMS 4

/* Classification of one frame, exposed for tests and traces. */
enum emu_rx_kind {
	EMU_RX_KIND_MALFORMED, /* too short for the headers its link layer promises */
	EMU_RX_KIND_TRANSPORT, /* a BTH was found: *dqpn is its DestQP */
	EMU_RX_KIND_NET,       /* Ethernet, not RoCEv2 */
	EMU_RX_KIND_OTHER,     /* IB without a BTH (raw, IPv6 over LRH) */
};
/* link_layer: EMU_LL_ETHERNET or EMU_LL_INFINIBAND (emu/sim/pcap.h). */
enum emu_rx_kind emu_rx_classify(int link_layer, const uint8_t *frame, size_t len,
				 uint32_t *dqpn);

/* Receiver of a class on port `port` (1-based) of device `dev` of host `host` (indices into
 * the fabric's arrays); fn NULL removes it. 0, -ENOENT (no such port), -EINVAL (bad class). */
int emu_engine_port_set_rx_class(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				 enum emu_rx_class cls, emu_wire_rx_fn *fn, void *ctx);
/* The receiver of a class on that port now (both NULL: none), so that an upper layer can stand
 * in front of it and pass frames on. 0, -ENOENT, -EINVAL as above. */
int emu_engine_port_get_rx_class(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				 enum emu_rx_class cls, emu_wire_rx_fn **fn, void **ctx);
/* The same for EMU_RX_HCA: the receiver of the transport packets that no QPN claim takes,
 * the HCA's data path. NULL: such frames are counted and dropped. */
int emu_engine_port_set_rx(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   emu_wire_rx_fn *fn, void *ctx);

/* Claims the transport packets for DestQP `qpn` on that port (fn NULL releases the claim).
 * 0, -ENOENT (no such port), -ENOSPC (EMU_RX_MAX_QPN_CLAIMS already), -EINVAL (qpn above
 * 24 bits). A second claim of the same QPN replaces the first. */
int emu_engine_port_set_rx_qpn(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			       uint32_t qpn, emu_wire_rx_fn *fn, void *ctx);
/* Adds a lazy receive function (emu/sim/wire.h) to the claim of `qpn` on that port, called with
 * the claim's ctx for described frames to that DestQP; declined ones come through fn as
 * bytes. 0, -ENOENT (no such port or no such claim). */
int emu_engine_port_set_rx_qpn_lazy(struct emu_engine *e, size_t host, size_t dev,
				    unsigned port, uint32_t qpn, emu_wire_rx_lazy_fn *lazy);

#endif
