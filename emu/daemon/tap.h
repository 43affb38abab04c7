/* Tap devices of host sandboxes (emu/host): the kernel's IP traffic on the emulated wire.
 *
 * A sandbox gives each of its Ethernet netdevs a real kernel interface, a tap device, and hands
 * the tap to the daemon (TAP_ATTACH, emu/link/proto.h). What the sandbox's kernel sends (ARP,
 * IPv4, IPv6: TCP, UDP, ICMP) goes on the wire at the netdev's port, as the host's RoCE frames
 * do, so the links' delays and faults and the pcap taps see it; what reaches the port and is
 * not RoCE (the engine's EMU_RX_NET class) goes to the tap when it is for the netdev's MAC or
 * is broadcast or multicast, and on to the host's neighbour layer as before, which then only
 * listens (emu_neigh_set_replies): the sandbox's kernel answers for its addresses.
 *
 * Main thread; taps are attached and detached under the engine lock. */
#ifndef RDMAEMU_EMU_DAEMON_TAP_H
#define RDMAEMU_EMU_DAEMON_TAP_H
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct emu_engine;

/* Serves tap `fd` (taken over: closed on failure too) as netdev `netdev` of host `host`, for
 * the connection `owner`. 0, or -ENOENT (no such netdev), -ENODEV (not an Ethernet netdev on a
 * port of the wire), -EBUSY (a tap serves it), -ENOSPC, -ENOMEM. Engine lock held. */
int emu_dtap_attach(struct emu_engine *e, size_t host, const char *netdev, int fd,
		    unsigned owner);
/* Closes the taps of connection `owner`: their netdevs' stacks answer again. Engine lock held. */
void emu_dtap_close_owner(struct emu_engine *e, unsigned owner);
/* Adds a POLLIN entry per tap at pfd (room for max); returns how many. */
size_t emu_dtap_poll_set(struct pollfd *pfd, size_t max);
/* The taps' turn after poll: each readable tap's frames (a burst) go on the wire; a tap that
 * fails is closed. pfd/n as filled by emu_dtap_poll_set. Takes the engine lock. */
void emu_dtap_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n, uint8_t *buf);
/* One status line per tap into buf; bytes written. */
size_t emu_dtap_status(const struct emu_engine *e, char *buf, size_t len);
/* The most taps served at once. */
#define EMU_DTAP_MAX 64

#endif
