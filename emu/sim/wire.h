/* The wire: point-to-point links between endpoints (ports), with per-link faults, delivering
 * frames on the virtual clock.
 *
 * Endpoints and links are numbered from 0 in creation order (the numbers are their handles), so
 * a wire built from a struct emu_fabric can use the fabric's link indices unchanged. A link has
 * two directions: EMU_WIRE_A_TO_B carries what endpoint a sends, EMU_WIRE_B_TO_A what b sends.
 *
 * A sent frame is copied; the sender's buffer is free on return. What happens to it on its way:
 *
 *  - down: a link that is down drops every frame sent on it, and every frame still in flight on
 *    it when its delivery time comes (counted in dropped_down). No random draw is made.
 *    An endpoint can be down on its own (no carrier: the NIC of a netdev that is down,
 *    emu_wire_set_endpoint_down): its frames are dropped at send and the frames for it at
 *    their delivery time, in the same way and the same counter, whatever the link's faults.
 *  - Otherwise four decisions are drawn, in this order, from the direction's own PRNG stream
 *    (always four, whatever the fault values, so the stream position is the number of frames
 *    sent and changing a probability does not shift later decisions): loss, duplicate,
 *    reorder, jitter.
 *  - loss: the frame is dropped (dropped_loss).
 *  - delivery time = now + delay_ns + uniform [0, jitter_ns], raised if needed to the delivery
 *    time of the previous frame of the direction: each direction is FIFO, jitter never
 *    reorders; frames due at the same instant arrive in the order sent.
 *  - duplicate: the frame is delivered twice, back to back (duplicated counts the extra copies).
 *  - reorder: the frame is held back. The next frame sent in the same direction that is not
 *    dropped overtakes it: the held frame is delivered right after that frame (same instant,
 *    just behind it). If no frame follows within the reorder hold time (emu_wire_set_reorder_hold, default
 *    EMU_WIRE_REORDER_HOLD_NS) the held frame is delivered at its own delivery time + hold
 *    time, so nothing is held forever. One frame at most is held per direction: while one is
 *    held, the reorder decisions of the frames that follow are drawn but not applied.
 *    reordered counts frames that were actually overtaken.
 *
 * The random streams: the wire's root stream is forked from the seed with EMU_PRNG_DOMAIN_WIRE,
 * link L direction D uses fork(root, 2 * L + D). Same seed + same traffic => same decisions,
 * and traffic on one link direction never changes another's decisions.
 *
 * pcap tap: each frame is recorded once, with its send time, when it is put on the wire, in the
 * tap of its link's link layer (emu_wire_set_tap): like a capture at the sending port, frames
 * later lost or held back are in the trace (at their send time), duplicates appear once, and
 * frames sent on a down link or from a down endpoint are not (a down port transmits nothing).
 *
 * Receivers: rx(ctx, frame, len, now) is called at delivery time from a clock timer. It may send
 * frames, add endpoints and links and change faults, but not free the wire; the frame buffer is
 * only valid during the call.
 *
 * Not thread-safe, like the clock it runs on.
 */
#ifndef RDMAEMU_EMU_WIRE_H
#define RDMAEMU_EMU_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "emu/sim/clock.h"
#include "emu/sim/fabric.h"
#include "emu/sim/pcap.h"

/* Largest frame: an IB 4096-MTU packet or a RoCE 9000-byte jumbo frame plus every header,
 * rounded up. */
#define EMU_WIRE_MAX_FRAME 12288

/* How long a frame held back by the reorder fault waits for a frame to overtake it. */
#define EMU_WIRE_REORDER_HOLD_NS (50 * EMU_NSEC_PER_USEC)

enum emu_wire_dir { EMU_WIRE_A_TO_B = 0, EMU_WIRE_B_TO_A = 1 };

typedef void emu_wire_rx_fn(void *ctx, const uint8_t *frame, size_t len, uint64_t now);

struct emu_wire_counters {
	uint64_t sent;         /* frames handed to emu_wire_send, down or not */
	uint64_t delivered;    /* rx calls, duplicates included */
	uint64_t dropped_loss;
	uint64_t dropped_down; /* at send, or in flight when the link went down */
	uint64_t duplicated;   /* extra copies delivered */
	uint64_t reordered;    /* frames overtaken by a later frame */
	uint64_t corrupted;    /* frames delivered with one bit flipped (the corrupt fault) */
};

/* The port counters of an endpoint: what a port's Performance Management Agent reports
 * (IBA PortCounters and PortCountersExtended, emu/ib/pma.h), kept 64 bits wide and saturating;
 * the agent narrows them. Octets are those the IBA's PortXmitData/PortRcvData count, before
 * their division by 4: on an IB link the packet from the LRH through the ICRC (the VCRC and
 * the link layer's delimiters excluded), on Ethernet the whole frame as carried. Multicast: an
 * IB DLID 0xC000..0xFFFE, an Ethernet group address (the first octet's low bit); the rest is
 * unicast. Described frames (emu_wire_send_lazy: MADs) are unicast.
 *  - sent: counted when the port puts the frame on its link (a frame then lost to a fault
 *    still left the port); a frame a down port or link refuses counts in xmit_discards only;
 *  - received: counted when the frame arrives, before any receiver looks at it;
 *  - rcv_errors: frames the receiver dropped as malformed (a bad ICRC among them), told by
 *    emu_wire_count_rcv_error; rcv_relay_errors: frames a switch could not forward. */
struct emu_wire_port_counters {
	uint64_t xmit_octets, rcv_octets;
	uint64_t xmit_pkts, rcv_pkts;
	uint64_t xmit_ucast, rcv_ucast;
	uint64_t xmit_mcast, rcv_mcast;
	uint64_t xmit_discards;
	uint64_t rcv_errors;
	uint64_t rcv_relay_errors;
};

struct emu_wire;

/* The wire runs on clk (which must outlive it). NULL with errno = ENOMEM on failure. */
struct emu_wire *emu_wire_new(struct emu_clock *clk, uint64_t seed);
/* Drops the frames still in flight (cancelling their timers) and frees the wire. Taps are not
 * closed: they belong to the caller. NULL is a no-op. */
void emu_wire_free(struct emu_wire *w);

/* Adds an endpoint; `id` is the caller's (opaque to the wire). Returns its index, or -ENOMEM. */
int emu_wire_add_endpoint(struct emu_wire *w, uint64_t id, emu_wire_rx_fn *rx, void *ctx);
uint64_t emu_wire_endpoint_id(const struct emu_wire *w, int ep);
/* Link of an endpoint, -1 when it is not connected (or ep is invalid). */
int emu_wire_endpoint_link(const struct emu_wire *w, int ep);
/* An endpoint's carrier, apart from its link's faults: a down endpoint sends nothing and
 * receives nothing (see "down" above). Endpoints start up. 0 or -EINVAL (no such endpoint). */
int emu_wire_set_endpoint_down(struct emu_wire *w, int ep, bool down);
bool emu_wire_endpoint_down(const struct emu_wire *w, int ep);
/* Replaces an endpoint's receiver (e.g. once the host engine behind it exists). */
int emu_wire_set_rx(struct emu_wire *w, int ep, emu_wire_rx_fn *rx, void *ctx);

/* Connects two distinct, unconnected endpoints with a link of `link_layer` (EMU_LL_ETHERNET or
 * EMU_LL_INFINIBAND); faults may be NULL for a perfect wire. Returns the link index, or -EINVAL
 * (bad endpoint, same endpoint twice, bad link layer, bad faults), -EBUSY (an endpoint is
 * already connected), -ENOMEM. */
int emu_wire_connect(struct emu_wire *w, int ep_a, int ep_b, int link_layer,
		     const struct emu_faults *faults);
/* Gives back the room the endpoint and link tables grew beyond their counts (a topology calls
 * it once built: on the 10,000-node fabric the doubling left 3.7 MiB a process unused). They
 * grow again on the next add. */
void emu_wire_trim(struct emu_wire *w);
/* Faults apply to frames sent from now on (and `down` also to frames in flight).
 * -EINVAL for a bad link or probabilities outside [0, 1] (NaN included), -ENOMEM.
 * A link's state (faults, random streams, counters) and an endpoint's port counters are made
 * when first needed (faults set, a frame sent or counted); until then they read as a perfect
 * link and zeros. A link's streams are forked from the wire's seed by its index, so when they
 * are made changes nothing. A send that cannot make them fails with -ENOMEM, the wire as it
 * was. */
int emu_wire_set_faults(struct emu_wire *w, int link, const struct emu_faults *faults);
int emu_wire_get_faults(const struct emu_wire *w, int link, struct emu_faults *out);
int emu_wire_link_layer(const struct emu_wire *w, int link);
int emu_wire_counters(const struct emu_wire *w, int link, enum emu_wire_dir dir,
		      struct emu_wire_counters *out);
size_t emu_wire_nlinks(const struct emu_wire *w);
size_t emu_wire_nendpoints(const struct emu_wire *w);
/* Frames copied and not yet delivered or dropped (held frames included). */
size_t emu_wire_in_flight(const struct emu_wire *w);

/* Records frames of links of `link_layer` into tap (NULL stops recording). The tap's own link
 * layer must match: -EINVAL otherwise. */
int emu_wire_set_tap(struct emu_wire *w, int link_layer, struct emu_pcap *tap);
void emu_wire_set_reorder_hold(struct emu_wire *w, uint64_t hold_ns);

/* Sends a frame from endpoint `ep` to its link peer. Returns 0 when the frame was put on the
 * wire (even if a fault then drops it), -EINVAL (bad endpoint, NULL frame, empty frame),
 * -EMSGSIZE (len > EMU_WIRE_MAX_FRAME), -ENOTCONN (endpoint not connected), -ENOMEM. */
int emu_wire_send(struct emu_wire *w, int ep, const void *frame, size_t len);
/* The same with the frame written in place, no copy: emu_wire_send_buf gives room for len
 * bytes (a packet buffer of the wire's own; NULL with errno EINVAL, EMSGSIZE, ENOTCONN or
 * ENOMEM, what emu_wire_send would return), the caller writes the frame there, then
 * emu_wire_send_commit sends its len bytes (at most the len asked for) exactly as
 * emu_wire_send would, or emu_wire_send_abort gives the buffer back unsent. Either takes the
 * buffer; nothing on the wire changes before the commit. built: the sender's packet builder
 * wrote these bytes, CRCs included (emu_wire_rx_built). */
void *emu_wire_send_buf(struct emu_wire *w, int ep, size_t len);
int emu_wire_send_commit(struct emu_wire *w, int ep, void *buf, size_t len, bool built);
/* Inside a receiver's callback: true when the frame it is given was committed as built and
 * reaches it byte for byte (no corrupt fault flipped a bit of it), so its CRCs are the
 * builder's own over these bytes and a parse need not compute them again. */
bool emu_wire_rx_built(void);
void emu_wire_send_abort(struct emu_wire *w, void *buf);

/* An endpoint's port counters: 0, or -EINVAL (bad endpoint, NULL out). set replaces them
 * (a PMA clearing the counters its Set selects). */
int emu_wire_port_counters(const struct emu_wire *w, int ep, struct emu_wire_port_counters *out);
int emu_wire_port_counters_set(struct emu_wire *w, int ep, const struct emu_wire_port_counters *in);
/* Counts a frame the port at ep sent (rx false) or received (rx true) on a path that does not
 * cross this wire: a loopback inside the HCA or to another process of its host, or the link
 * of rdmaemud carrying the port's frames. link_layer is the port's (EMU_LL_*). Bad endpoints
 * are ignored. */
void emu_wire_count(struct emu_wire *w, int ep, bool rx, int link_layer, const uint8_t *frame,
		    size_t len);
/* A frame the port at ep received and dropped as malformed (PortRcvErrors). */
void emu_wire_count_rcv_error(struct emu_wire *w, int ep);

/* ---- frames made only when somebody reads their bytes ----
 * A sender that can describe a frame (e.g. addresses, headers and a MAD) more cheaply than it
 * builds one hands the description instead. The wire treats it exactly as emu_wire_send
 * treats the frame it stands for (same counters, faults, random draws, delivery instant and
 * order) and builds the bytes only for a capture (at send, as emu_wire_send would write them)
 * or for a receiver without a lazy receive function, or whose lazy function declines it (at
 * delivery). Nothing a capture or a receiver can observe changes. */
struct emu_wire_lazy {
	/* Writes the frame, exactly the `len` bytes given to emu_wire_send_lazy, into buf. */
	void (*build)(const void *obj, uint8_t *buf, size_t len);
	/* BTH DestQP of the frame, for receive demultiplexers. */
	uint32_t (*dqpn)(const void *obj);
};
/* Returns true when it took the frame, false to receive its bytes through the endpoint's rx
 * instead (then it must have changed nothing). */
typedef bool emu_wire_rx_lazy_fn(void *ctx, const struct emu_wire_lazy *ops, const void *obj,
				 uint64_t now);
/* Sets the lazy receive function of endpoint ep, called with the ctx of its rx;
 * emu_wire_set_rx clears it. 0 or -EINVAL. */
int emu_wire_set_rx_lazy(struct emu_wire *w, int ep, emu_wire_rx_lazy_fn *fn);
/* emu_wire_send of the frame `ops->build(obj)` makes, `len` bytes; obj (objlen bytes) is
 * copied. Same returns as emu_wire_send. */
int emu_wire_send_lazy(struct emu_wire *w, int ep, const struct emu_wire_lazy *ops,
		       const void *obj, size_t objlen, size_t len);

#endif
