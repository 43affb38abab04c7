/* The topology: the wire (emu/sim/wire.h) built from a loaded fabric (emu/sim/fabric.h), with IB
 * switches that forward by destination LID and optional pcap taps.
 *
 * Endpoints. One wire endpoint per host device port and per switch external port, numbered in
 * a fixed order: hosts in fabric order, their devices, their ports (1..nports); then switches in
 * fabric order, their ports 1..nports. The wire endpoint index is the handle. Unconnected ports
 * get an endpoint too (their frames are refused with -ENOTCONN by emu_wire_send).
 *
 * Links. Fabric link i becomes wire link i (same index), from link.a to link.b, with the
 * link's faults (the loader has already merged the fabric's `faults` defaults into every link's
 * own settings) and the link layer of its ports (IB when a switch is at either end). The wire
 * is seeded with fabric->seed: same fabric + same traffic => same events and same pcap bytes.
 *
 * Host ports. Frames arriving at a host port go to the receiver set with emu_topology_set_rx;
 * without one they are counted (unclaimed) and dropped. Hosts send with emu_wire_send on their
 * endpoint (emu_topology_wire()).
 *
 * Switches (IB only; Ethernet links are point-to-point in the model, there is no Ethernet
 * switch). A frame arriving at a switch port is forwarded, with no added delay and unchanged
 * (the VCRC is not recomputed), by the LRH's DLID (bytes 2-3, big-endian) through a linear
 * forwarding table computed at build time:
 *  - a breadth-first search over the switch-to-switch links from each switch gives, for every
 *    reachable switch, the first-hop port of a shortest path (ties: the lowest port number, in
 *    the order the search meets them);
 *  - every LID of a switch or CA port range (base .. base + 2^LMC - 1) maps to the port toward
 *    it (all LIDs of a range take the same path: no LMC multipathing); a switch's own range
 *    maps to its management port 0 (the local receiver, emu_topology_set_switch_local_rx).
 *  - Dropped and counted: frames shorter than an LRH or with LVer != 0 (malformed); DLID with no
 *    entry (unknown: LID 0, unassigned LIDs, ports without LIDs because no SM runs); multicast
 *    DLIDs 0xC000..0xFFFE of no group, or whose group has no port to go to but the input port
 *    (see Multicast); the permissive DLID 0xFFFF (directed
 *    route SMPs are not modelled yet); a frame whose output port is its input port (loop: the
 *    IBA forbids sending a packet back out its arrival port); frames for the switch's own LIDs
 *    when no local receiver is set.
 * Multicast. A frame to an MLID that has members (emu_topology_mcast_attach: the host ports
 * that joined, today the IPoIB broadcast group of the neighbour layer, later the SA's
 * MCMemberRecord joins) goes out of every port of the group's tree except its input port: the
 * tree is one breadth-first spanning forest of the switches (in switch order) pruned to the
 * branches that lead to members, so every member port gets exactly one copy and a sender that
 * is a member does not get its own frame back.
 * Port states are not consulted: a port without a LID simply has no entry, and link `down`
 * faults are the wire's business.
 *
 * pcap. With a prefix, `<prefix>-eth.pcap` and `<prefix>-ib.pcap` are created for the link
 * layers that the fabric's links use (only those) and set as the wire's taps; a frame crossing a
 * switch is recorded once per link it is sent on. They are closed by emu_topology_free.
 *
 * Not thread-safe, like the clock and the wire it runs on.
 */
#ifndef RDMAEMU_EMU_TOPOLOGY_H
#define RDMAEMU_EMU_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "emu/sim/clock.h"
#include "emu/sim/fabric.h"
#include "emu/sim/pcap.h"
#include "emu/sim/wire.h"

/* IBA LID classes. */
#define EMU_LID_UNICAST_MAX 0xbfff
#define EMU_LID_MCAST_MIN 0xc000
#define EMU_LID_PERMISSIVE 0xffff

struct emu_topology;

struct emu_topology_port_counters {
	uint64_t received;  /* frames delivered to the port */
	uint64_t unclaimed; /* of those, dropped because no receiver was set */
};

struct emu_topology_switch_counters {
	uint64_t received;           /* frames arriving at its external ports */
	uint64_t forwarded;          /* sent on toward their DLID */
	uint64_t local;              /* for the switch's own LIDs, handed to the local receiver */
	uint64_t sent_local;         /* frames sent by the local port 0 (emu_topology_switch_send) */
	uint64_t dropped_malformed;  /* shorter than the 8-byte LRH, or LVer != 0 */
	uint64_t dropped_unknown;    /* unicast DLID without a forwarding entry */
	uint64_t dropped_mcast;      /* DLID 0xC000..0xFFFE */
	uint64_t dropped_permissive; /* DLID 0xFFFF */
	uint64_t dropped_loop;       /* output port = input port */
	uint64_t dropped_local;      /* own LID, no local receiver */
	uint64_t dropped_send;       /* the wire refused the frame (never expected) */
};

/* Builds the wire of `f` on `clk`. f and clk must outlive the topology; f must not change while
 * it exists. pcap_prefix may be NULL (no capture). Returns NULL with errno set and *err filled
 * (err may be NULL): ENOMEM, or the error of creating a capture file. */
struct emu_topology *emu_topology_build(const struct emu_fabric *f, struct emu_clock *clk,
					const char *pcap_prefix, struct emu_error *err);
/* Frees the wire (frames in flight are dropped) and closes the captures. Returns 0, or -errno
 * of the first capture write error. NULL is a no-op returning 0. */
int emu_topology_free(struct emu_topology *t);
/* Writes buffered capture frames to the files: 0 or -errno. */
int emu_topology_flush(struct emu_topology *t);
/* The engine ran what was due: the captures' buffered frames go to the files once a capture
 * has EMU_PCAP_IDLE_BYTES waiting (emu_pcap_idle). NULL is a no-op. */
void emu_topology_idle(struct emu_topology *t);

struct emu_wire *emu_topology_wire(const struct emu_topology *t);
const struct emu_fabric *emu_topology_fabric(const struct emu_topology *t);
/* The capture of a link layer (EMU_LL_*), NULL when there is none. */
struct emu_pcap *emu_topology_tap(const struct emu_topology *t, int link_layer);
size_t emu_topology_nendpoints(const struct emu_topology *t);

/* Endpoint of port `port` (1-based) of device `dev` of host `host` (indices into the fabric's
 * arrays), or of external port `port` of switch `sw`. -ENOENT when there is no such port. */
int emu_topology_port_endpoint(const struct emu_topology *t, size_t host, size_t dev,
			       unsigned port);
int emu_topology_switch_endpoint(const struct emu_topology *t, size_t sw, unsigned port);
/* What an endpoint is (kind, node, device, port): 0, or -EINVAL for a bad endpoint. */
int emu_topology_endpoint_info(const struct emu_topology *t, int ep, struct emu_endpoint *out);

/* Receiver of a host port endpoint (NULL: unclaimed). -EINVAL for a bad or switch endpoint. */
int emu_topology_set_rx(struct emu_topology *t, int ep, emu_wire_rx_fn *rx, void *ctx);
/* Its taker of described frames (emu_wire_rx_lazy_fn, same ctx); emu_topology_set_rx clears
 * it. -EINVAL for a bad or switch endpoint. */
int emu_topology_set_rx_lazy(struct emu_topology *t, int ep, emu_wire_rx_lazy_fn *fn);
int emu_topology_port_counters(const struct emu_topology *t, int ep,
			       struct emu_topology_port_counters *out);

/* Receiver of what reaches a switch's own LIDs (its management port 0: where an SMA or an SM/SA
 * on the switch would listen). -EINVAL for a bad switch. */
int emu_topology_set_switch_local_rx(struct emu_topology *t, size_t sw, emu_wire_rx_fn *rx,
				     void *ctx);
/* Sends a frame from switch `sw`'s port 0, forwarded by its DLID like an arriving frame.
 * 0 when it was put on a wire (or dropped and counted by the switch's rules), -EINVAL (bad
 * switch, NULL or empty frame), or the error of emu_wire_send. */
int emu_topology_switch_send(struct emu_topology *t, size_t sw, const void *frame, size_t len);
/* The forwarding entry of switch `sw` for `dlid`: the output port (1..nports), 0 for the
 * switch itself, -ENOENT for none, -EINVAL for a bad switch. */
int emu_topology_switch_route(const struct emu_topology *t, size_t sw, uint16_t dlid);
/* Multicast membership of a host port endpoint in group `mlid` (0xC000..0xFFFE). attach:
 * 0 (also when already a member), -EINVAL, -ENOMEM. detach: 0, -ENOENT (not a member),
 * -EINVAL. */
int emu_topology_mcast_attach(struct emu_topology *t, uint16_t mlid, int ep);
int emu_topology_mcast_detach(struct emu_topology *t, uint16_t mlid, int ep);
/* The ports switch `sw` sends group `mlid` out of (ascending), up to max of them in ports;
 * returns how many there are (0: none or no such group), -EINVAL for a bad switch. */
int emu_topology_switch_mcast_ports(const struct emu_topology *t, size_t sw, uint16_t mlid,
				    uint8_t *ports, size_t max);
int emu_topology_switch_counters(const struct emu_topology *t, size_t sw,
				 struct emu_topology_switch_counters *out);

#endif
