/* A process attached to a fabric through rdmaemud (docs/daemon.md): the client end of the
 * daemon protocol (emu/link/proto.h), and the per-user runtime directory both ends use.
 *
 * With $RDMAEMU_DAEMON naming the daemon's socket, emu_process_host() attaches through it:
 * the daemon checks the fabric and the host and gives this process its slice of the host's QP
 * numbers; the engine runs in real time, the attached host's port sends go to the daemon, and
 * a receive thread posts the frames the daemon delivers into the engine. The layers below
 * never call this: emu/link/link_attach.c registers the link's hooks with them (the process's
 * attach and reset, the engine's creation) when the library loads. */
#ifndef RDMAEMU_EMU_LINK_H
#define RDMAEMU_EMU_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "emu/sim/fabric.h"
#include "emu/link/link_shm.h"

struct emu_engine;

/* Connects to $RDMAEMU_DAEMON and says hello for host h of fabric f (fabric_path: as loaded,
 * NULL or "" for the built-in). 0, or an errno after printing why on stderr. The devices the
 * daemon has removed, now and later, are marked removed in f. */
int emu_link_attach(struct emu_fabric *f, const struct emu_host *h, const char *fabric_path);
/* true once attached through a daemon */
bool emu_link_active(void);
/* Run at each engine's creation: real-time mode and port sends to the daemon when attached,
 * nothing otherwise. */
void emu_link_engine_created(struct emu_engine *e);
/* true when attached and qpn is not in this process's slice of the host's QP numbers: a
 * loopback frame for it belongs to another process of the same host. */
bool emu_link_qpn_elsewhere(uint32_t qpn);
/* Sends a loopback frame (one the HCA would hand to itself, never on the wire) for DestQP
 * dqpn to the process of the same host that owns it: through the shared-memory ring the
 * daemon set up between the two (emu/link/link_shm.h), else through the daemon. 0 or a negative
 * errno. Engine lock held. */
int emu_link_send_loopback(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   uint32_t dqpn, const void *frame, size_t len);
/* The same without copying the frame: a place for it in the ring to dqpn's process, to build
 * it in, then emu_link_loopback_commit (emu_link_shm_reserve). NULL: use
 * emu_link_send_loopback. Engine lock held across both. */
void *emu_link_loopback_reserve(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				uint32_t dqpn, size_t len, struct emu_link_shm_resv *rv);
void emu_link_loopback_commit(const struct emu_link_shm_resv *rv, size_t len);
/* A descriptor of the data path's (emu_link_shm_send_desc) to the process owning dqpn, through
 * the ring of the port's endpoint: 0, or -ENOENT when no ring joins us to that process (nothing
 * is sent; descriptors never go to the daemon). Engine lock held. */
int emu_link_loopback_desc(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   uint32_t dqpn, const void *desc, size_t len);
/* Brackets a burst of loopback reserve/commit pairs (emu_link_shm_burst_begin/end). */
void emu_link_loopback_burst(bool begin);
/* `rdma link delete dev` on host `node`, through the daemon at sock (NULL: $RDMAEMU_DAEMON) on
 * a control connection of its own. Returns
 * when the daemon has removed it and this process's device lists no longer hold it: 0, or a
 * negative errno (-ENOENT: no such host or device, -ENOSPC: the daemon's removal table is
 * full, -ENOTCONN: no daemon). */
int emu_link_device_remove(const char *sock, const char *node, const char *dev);
/* `ip neigh flush dev netdev` (NULL: every netdev) on host node, through the daemon at sock as
 * emu_link_device_remove: the number of entries dropped, or a negative errno (-ENOENT: no such
 * host or netdev, -ENOTCONN: no daemon). */
int emu_link_neigh_flush(const char *sock, const char *node, const char *netdev);
/* `ip link set netdev up|down` on host node (NULL: this process's), through the daemon at sock
 * as emu_link_device_remove: returns when the daemon's engine has applied it and, for this
 * process's own host, when this process's copy of the port shows it: 0, or a negative errno
 * (-ENOENT: no such host or netdev, -ENOTCONN: no daemon). */
int emu_link_link_set(const char *sock, const char *node, const char *netdev, bool up);
/* rdmaemu_ctl_cm_fault on the daemon's CM agents (emu_cm_fault_remote_fn), on a control
 * connection of its own: 0 or a negative errno (-ENOTCONN: no daemon). */
struct rdmaemu_cm_fault;
int emu_link_cm_fault(const char *node, const char *device, const char *msg,
		      const struct rdmaemu_cm_fault *set, struct rdmaemu_cm_fault *old);
/* A PerfMgt MAD to the PMA of the node owning dlid, answered by the daemon from its wire's port
 * counters (the frames of every process of the fabric cross it), on a control connection of
 * its own: 0 with mad turned into the answer, or a negative errno (-ETIMEDOUT: no PMA
 * answers, -ENOTCONN: no daemon). */
int emu_link_pma(uint16_t dlid, uint8_t mad[256]);
/* Waits (at most 2 s) until this process has applied the daemon's device removals up to
 * generation gen: an rdma_cm answer carrying gen was produced after them, so a
 * DEVICE_REMOVAL it delivers is never seen before the device lists drop the device. */
void emu_link_devrm_sync(uint32_t gen);
/* rdma_resolve_ip for a verbs AH or QP of this process (ib_resolve_eth_dmac), run by the
 * daemon's neighbour layer, which owns the host's neighbour tables and hears the replies: a
 * control connection of its own, blocking until the daemon answers (at the timeout at the
 * latest). 0 with mac filled, or a negative errno (-ETIMEDOUT, -ENETUNREACH, ...; -ENOTCONN:
 * no daemon). Call without the engine lock. */
int emu_link_neigh_resolve(size_t host, const struct sockaddr *src, const struct sockaddr *dst,
			   unsigned timeout_ms, uint8_t mac[6]);
/* Virtual time across processes (docs/daemon.md "Virtual time"): the daemon runs its fabric
 * with --virtual-time and this process asked for it (RDMAEMU_TIME=virtual): its engine
 * follows the daemon's clock. */
bool emu_link_virtual_time(void);
/* Every message sent to the daemon, on any connection, counted (delta 1) before it is sent
 * (-1 when the send failed): the VT_IDLE answers carry the count. */
uint64_t emu_link_count_sent(int delta); /* the count after it */
/* Virtual time: the calling thread is about to block on an answer or event of the daemon's
 * (begin), or is back (end, before it takes any lock): a wait of its own with no deadline
 * (emu_engine_appwait_begin), so the process counts as idle while it sleeps there. No-op
 * otherwise. Without the engine lock. */
void emu_link_vt_block(bool begin, const char *what);
/* Virtual time: the calling thread waits (on) for an answer the daemon sends at once (an
 * rdma_cm command's), or has it (off): the process is not idle meanwhile, since the answer
 * is on its way (emu_engine_hold). No-op otherwise. Without the engine lock. */
void emu_link_vt_hold(bool on);
/* Virtual time: what the daemon sent on the main link before now is in the engine (its clock
 * moved): called after an answer or event of another connection arrived, which the daemon
 * sent after it, before the program can read its clock. No-op otherwise. No lock held. */
void emu_link_vt_sync(void);
/* For tests (a reset hook of emu_process_reset): closes the link. */
void emu_link_reset(void);

/* The per-user runtime directory: $RDMAEMU_RUNTIME_DIR, else $XDG_RUNTIME_DIR/rdmaemu, else
 * /tmp/rdmaemu-UID; created mode 0700 when missing; refused (EPERM, with a message) unless it
 * is a directory owned by this user with no access for group or others. 0 or an errno. */
int emu_link_runtime_dir(char *buf, size_t len, bool create);
/* The daemon's socket in it ("<dir>/rdmaemud.sock"). */
int emu_link_socket_path(char *buf, size_t len, bool create);

/* Connects a SOCK_SEQPACKET socket to path: the fd, or -1 with errno. Refused (EPERM, with a
 * message) unless path is a socket owned by this user with mode 0600 and the process that
 * listens on it runs as this user (SO_PEERCRED). */
int emu_link_connect(const char *path);

/* sendmsg of the n buffers of iov on sock, with nfds descriptors (at most 2, 0 for none)
 * passed along (SCM_RIGHTS); flags as sendmsg's. What sendmsg returns (-1 with errno;
 * EINVAL for more than 2 descriptors). */
ssize_t emu_link_sendmsg_fds(int sock, const struct iovec *iov, int n, const int *fds,
			     int nfds, int flags);

#endif
