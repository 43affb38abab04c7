/* Links between daemons over UDP (docs/multi-daemon.md): a fabric whose `daemon` lines share
 * its hosts among several rdmaemud instances, each on its own machine or network namespace.
 *
 * Every daemon loads the whole fabric and builds the whole wire, switches included, but runs
 * only its own hosts (`--as NAME`). A frame one of its hosts sends crosses the link (delay,
 * faults, capture: all on the sending daemon's wire) and, when the port at the far end belongs
 * to a host of another daemon, is sent to that daemon in one UDP datagram, which hands it to
 * the port's receivers as its own wire would. The hosts of other daemons are ghosts here: what
 * reaches their ports leaves by UDP, what their stacks would send is dropped (emu_dudp_tx).
 *
 * A datagram is a 24-byte header in network byte order, then the frame as on the wire:
 *   magic u32 "RDEX" | version u8 (1) | end u8 (0: the link's a end receives, 1: b) |
 *   from u16 (the sender's index among the fabric's daemons) | link u32 (the fabric's link
 *   index) | seq u32 (per sending daemon and peer, from 1) | fabric u64 (emu_fabric_id)
 * Datagrams that are short, oversized, of another magic, version or fabric, from an address
 * that is not the daemon they name, or for a link whose receiving end is no port of a host of
 * this daemon or whose sending end is a host port of another daemon than the sender are
 * counted and dropped; gaps and backward steps of seq are counted.
 *
 * Main thread, except emu_dudp_tx and the forwarder, which run under the engine lock. */
#ifndef RDMAEMU_EMU_DAEMON_UDP_LINK_H
#define RDMAEMU_EMU_DAEMON_UDP_LINK_H
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_engine;
struct emu_fabric;

#define EMU_DUDP_MAGIC 0x52444558u
#define EMU_DUDP_VERSION 1
#define EMU_DUDP_HDR_LEN 24

/* The daemons of fabric f: with none, nothing to do (as must be NULL); else as names this one,
 * its UDP socket is bound, and the ports of the other daemons' hosts forward to them. vt: the
 * daemon runs virtual time, refused with several daemons. 0, or -1 after saying why on
 * stderr. Engine lock held, after the ports' receivers are installed. */
int emu_dudp_setup(struct emu_engine *e, const struct emu_fabric *f, const char *as, bool vt);
/* Whether the fabric has daemons (setup made this daemon one of them). */
bool emu_dudp_active(void);
/* The daemon that runs host `host` when it is not this one, else NULL. */
const char *emu_dudp_remote(size_t host);
/* The engine's sender (emu_engine_tx_fn) while active: a host of this daemon sends on the
 * wire, another daemon's host sends nothing from here. Engine lock held. */
int emu_dudp_tx(void *ctx, int ep, size_t host, size_t dev, unsigned port, const void *frame,
		size_t len);
/* Adds the UDP socket's POLLIN entry at pfd (room for max); returns how many (0 or 1). */
size_t emu_dudp_poll_set(struct pollfd *pfd, size_t max);
/* After poll: the datagrams waiting (a burst) checked and delivered. Takes the engine lock. */
void emu_dudp_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n);
/* The status line (counters) into buf; bytes written. */
size_t emu_dudp_status(char *buf, size_t len);
/* Closes the socket. */
void emu_dudp_close(void);

#endif
