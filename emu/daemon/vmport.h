/* Kernel soft-RoCE VMs as hosts of the emulated wire (docs/mixed-fabric.md).
 *
 * A fabric host of kind rxe-vm is a QEMU guest whose NIC is QEMU's socket netdev over a Unix
 * datagram socket (`-netdev dgram,local.type=unix,...,remote.type=unix,remote.path=P`): every
 * datagram is one Ethernet frame, with no header of its own. For each Ethernet netdev of such a
 * host that has an RDMA port on the wire, the daemon binds P = `vm-HOST-NETDEV.sock` beside
 * its own socket and makes the port's endpoint the VM's NIC: what the guest sends goes on the
 * wire at that endpoint, as a frame of an emulated HCA or of a sandbox's tap does, so links'
 * delays, faults and the pcap taps apply; everything that reaches the endpoint (RoCE, ARP,
 * IP) goes to the guest and nothing of the emulator sees it: the endpoint's receiver is
 * replaced, so the host's emulated stacks (neighbours, QP1, HCA) never act for it.
 *
 * The guest's own address is learnt from its first datagram (QEMU binds its local path
 * before it sends); until then frames for the VM are dropped, as for a NIC whose host is off.
 *
 * Main thread, except emu_dvm_* receivers (wire callbacks, engine lock held). */
#ifndef RDMAEMU_EMU_DAEMON_VMPORT_H
#define RDMAEMU_EMU_DAEMON_VMPORT_H
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct emu_engine;

/* The most VM ports served. */
#define EMU_DVM_MAX 16
#define EMU_DVM_POLL_MAX (2 * EMU_DVM_MAX)

/* Binds the socket of every VM port of the engine's fabric in directory `dir` and takes over
 * their endpoints; wake() is called (engine lock held) when a frame waits for a VM whose
 * socket was full, so that the main loop polls it for POLLOUT. 0, or -1 with the reason said
 * on stderr. Engine lock held. */
int emu_dvm_open(struct emu_engine *e, const char *dir, void (*wake)(void));
/* Closes the sockets and removes their paths. */
void emu_dvm_close(void);
/* Adds the entries of the VM ports at pfd (room for max, EMU_DVM_POLL_MAX for them all);
 * returns how many. Takes the engine lock. */
size_t emu_dvm_poll_set(struct emu_engine *e, struct pollfd *pfd, size_t max);
/* The VM ports' turn after poll: queued frames to the guests, the guests' frames (a burst
 * each) onto the wire. Takes the engine lock. */
void emu_dvm_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n, uint8_t *buf);
/* One status line per VM port into buf; bytes written. Engine lock held. */
size_t emu_dvm_status(const struct emu_engine *e, char *buf, size_t len);

#endif
