/* The hosts' IP layer as the rdma_cm sees it: routes, source address selection, and the
 * neighbour tables of the kernel (net/core/neighbour.c, net/ipv4/arp.c, net/ipv6/ndisc.c),
 * driven by drivers/infiniband/core/addr.c's address resolution (docs/neigh.md).
 *
 * One neighbour layer per engine (emu_neigh_get), holding every host of the fabric: each host
 * answers ARP and neighbour solicitations for its own addresses, on the wire, as real frames:
 *   - Ethernet (RoCE netdevs): ARP request (broadcast) / reply; IPv6 NS to the solicited-node
 *     multicast address / NA. Received as EMU_RX_NET frames (emu/hca/engine_rx.h).
 *   - InfiniBand (IPoIB netdevs): IPoIB ARP in UD SEND packets to the IPoIB QP (the QPN of the
 *     netdev's hardware address, claimed with emu_engine_port_set_rx_qpn); requests go to the
 *     IPv4 broadcast group of the default partition (MGID ff12:401b:ffff::ffff:ffff, MLID
 *     0xC000), which every up IPoIB port joins in the topology's multicast table; IPv6 NS
 *     likewise, to the solicited-node group's MGID/MLID, which the netdevs join through the
 *     SA (emu/net/neigh_mcast.c: full members of their own groups, send-only joins before
 *     sending to another's); unicast frames (ARP replies, NAs, unicast probes) go to the DLID
 *     of an SA PathRecord, asked once per destination GID as ipoib does (emu/net/neigh_path.c).
 *
 * Neighbour entries follow the kernel's NUD states and timers with Linux's default parameters
 * (ucast_solicit 3, mcast_solicit 3, retrans_time 1 s, base_reachable_time 30 s, delay_first_
 * probe_time 5 s): an unanswered entry sends 3 broadcast (multicast) probes 1 s apart and goes
 * FAILED 3 s after it was created. RDMAEMU_TRACE=neigh prints one line per state transition.
 *
 * Everything here runs with the engine lock held; callbacks (resolution results, events) are
 * called with it held and must not call the engine's lock/unlock/wait.
 */
#ifndef RDMAEMU_EMU_NEIGH_H
#define RDMAEMU_EMU_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "emu/sim/engine.h"

/* Kernel NUD states (include/uapi/linux/neighbour.h values, so `ip neigh` names match). */
enum emu_nud {
	EMU_NUD_NONE = 0x00,
	EMU_NUD_INCOMPLETE = 0x01,
	EMU_NUD_REACHABLE = 0x02,
	EMU_NUD_STALE = 0x04,
	EMU_NUD_DELAY = 0x08,
	EMU_NUD_PROBE = 0x10,
	EMU_NUD_FAILED = 0x20,
	EMU_NUD_NOARP = 0x40,
	EMU_NUD_PERMANENT = 0x80,
};
#define EMU_NUD_VALID (EMU_NUD_PERMANENT | EMU_NUD_NOARP | EMU_NUD_REACHABLE | EMU_NUD_PROBE | \
		       EMU_NUD_STALE | EMU_NUD_DELAY)
/* "INCOMPLETE", "REACHABLE", ... as `ip neigh` prints them; "?" for a non-state. */
const char *emu_nud_name(enum emu_nud s);

/* Neighbour table parameters: Linux's defaults for arp_tbl and nd_tbl (identical). */
struct emu_neigh_parms {
	unsigned ucast_probes, mcast_probes, app_probes, mcast_reprobes;
	uint64_t retrans_ns, base_reachable_ns, delay_probe_ns;
};
extern const struct emu_neigh_parms emu_neigh_default_parms;

/* rdma_dev_addr.network (include/rdma/ib_addr.h). */
enum emu_neigh_network { EMU_NET_IB = 0, EMU_NET_IPV4 = 1, EMU_NET_IPV6 = 2 };

/* What addr.c hands rdma_cm: the outgoing netdev and the RDMA port behind it, both addresses,
 * the destination hardware address. */
struct emu_neigh_result {
	int status; /* 0, -ETIMEDOUT, -ENETUNREACH, -EHOSTUNREACH, -ENODEV, -EINVAL, ... */
	size_t host;
	int netdev;    /* host->netdevs index of the source netdev */
	int device;    /* host->devices index behind it, -1: none (rdma_cm then says ENODEV) */
	unsigned port; /* 1-based */
	struct sockaddr_storage src, dst; /* src: the selected (or given) source address */
	uint8_t src_hw[20], dst_hw[20];	  /* 6 (Ethernet) or 20 (IPoIB) bytes */
	uint8_t hw_len;
	bool loopback; /* dst is an address of the host itself (routed through lo) */
	bool gateway;  /* reached through a gateway: dst_hw is the gateway's */
	enum emu_neigh_network network;
	uint8_t sgid[16], dgid[16]; /* IB: port GID 0 / from dst_hw; RoCE: the IP addresses as
				     * GIDs (IPv4-mapped for IPv4) */
};

struct emu_neigh_req;
typedef void emu_neigh_resolve_fn(void *ctx, const struct emu_neigh_result *r);

/* rdma_resolve_ip(): resolves dst from host `host` (index into the fabric's hosts), with src
 * the bound source address or NULL/wildcard (the route picks it, as the kernel does).
 * Synchronous errors, returned and no callback: -ENETUNREACH (no route), -EINVAL (src is not
 * an address of the host, families differ), -EADDRNOTAVAIL (a gateway route on IPoIB: the
 * kernel asks ibacm over netlink, and nobody listens), -EAFNOSUPPORT, -ENOMEM. (-EHOSTUNREACH
 * needs `unreachable` routes, which fabric files cannot express.)
 * Otherwise 0: `cb` runs later with the engine lock held, exactly once (unless cancelled):
 *   - at once (a zero-delay timer at the same virtual instant) for a loopback destination, a
 *     NOARP netdev or a valid neighbour entry;
 *   - when the neighbour entry becomes valid (an ARP reply / NA arrived);
 *   - with -ETIMEDOUT at exactly now + timeout_ns when it never does. As addr.c, the request is
 *     re-evaluated (route and neighbour) whenever any neighbour becomes valid, so a route that
 *     vanished meanwhile ends it with that error.
 * *reqp (may be NULL) receives a handle for emu_neigh_cancel, valid until the callback ran. */
int emu_neigh_resolve(struct emu_engine *e, size_t host, const struct sockaddr *src,
		      const struct sockaddr *dst, uint64_t timeout_ns, emu_neigh_resolve_fn *cb,
		      void *ctx, struct emu_neigh_req **reqp);
/* The same, blocking in virtual time (emu_engine_wait, named `what` in diagnostics) until
 * the result: what ib_resolve_eth_dmac does for an AH (rdma_resolve_ip with 1000 ms and
 * wait_for_completion). Returns the synchronous error, or the result's status with *out
 * filled, or -EDEADLK / -ELOOP from the wait. Engine lock held, not from a callback. */
int emu_neigh_resolve_wait(struct emu_engine *e, size_t host, const struct sockaddr *src,
			   const struct sockaddr *dst, uint64_t timeout_ns, const char *what,
			   struct emu_neigh_result *out);
/* rdma_addr_cancel(): the callback will not run (it has not yet). */
void emu_neigh_cancel(struct emu_engine *e, struct emu_neigh_req *req);


/* Route lookup only (no neighbour): fills r->netdev/device/port/src/loopback/gateway and
 * returns 0 or the synchronous error of emu_neigh_resolve. */
int emu_neigh_route(struct emu_engine *e, size_t host, const struct sockaddr *src,
		    const struct sockaddr *dst, struct emu_neigh_result *r);

/* The neighbour entry of (host, netdev, address): its state and, when valid, hardware address
 * (hw has room for 20 bytes). -ENOENT when there is no entry. Nothing is sent. */
int emu_neigh_lookup(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr,
		     enum emu_nud *state, uint8_t *hw, uint8_t *hw_len);
/* IP traffic (not RDMA: addr.c reads entries without using them) sent to addr through
 * netdev: neigh_event_send() on the entry, created if needed. A STALE entry goes DELAY and,
 * unconfirmed after delay_first_probe_time, PROBE with unicast solicitations; NONE/FAILED
 * starts resolution. Returns the entry's state after it, or -ENOENT / -ENOMEM. */
int emu_neigh_touch(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr);
/* Drops every entry of a host's netdev (netdev -1: all netdevs); pending probes stop.
 * `ip neigh flush dev X`. Returns the number of entries dropped, or -ENOENT. */
int emu_neigh_flush(struct emu_engine *e, size_t host, int netdev);

/* Counters of a host's neighbour code, for tests. */
struct emu_neigh_stats {
	uint64_t arp_req_sent, arp_rep_sent, arp_rcvd, ns_sent, na_sent, nd_rcvd;
	uint64_t ipoib_sent, ipoib_rcvd, dropped;
	uint64_t path_queries, path_failed; /* IPoIB SA PathRecord queries sent / failed */
};
int emu_neigh_stats(struct emu_engine *e, size_t host, struct emu_neigh_stats *out);

/* ---- the host's interfaces: address and link changes, and who hears of them ---- */

enum emu_neigh_event_type {
	EMU_NEIGH_EV_ADDR_ADD,	/* an address appeared on a netdev (NETDEV/inetaddr notifier) */
	EMU_NEIGH_EV_ADDR_DEL,	/* an address went away */
	EMU_NEIGH_EV_LINK_DOWN, /* the netdev went down (NETDEV_DOWN) */
	EMU_NEIGH_EV_LINK_UP,	/* the netdev came up (NETDEV_UP) */
};
const char *emu_neigh_event_name(enum emu_neigh_event_type t);

struct emu_neigh_event {
	enum emu_neigh_event_type type;
	size_t host;
	int netdev;
	struct sockaddr_storage addr; /* ADDR_*: the address; otherwise zeroed */
	uint8_t prefixlen;
};
typedef void emu_neigh_event_fn(void *ctx, const struct emu_neigh_event *ev);

/* Registers a listener of every host's events (the rdma_cm model turns them into
 * RDMA_CM_EVENT_ADDR_CHANGE / DEVICE_REMOVAL). At most 8. 0, -ENOSPC, -EINVAL. */
int emu_neigh_listen(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx);
int emu_neigh_unlisten(struct emu_engine *e, emu_neigh_event_fn *fn, void *ctx);

/* A host's neighbour generation (starts at 1): it moves whenever an answer of
 * emu_neigh_resolve for that host could change without a new resolution being asked for: an
 * entry leaves the valid states (PROBE -> FAILED) or gets another link-layer address, entries
 * are flushed, an address is added or deleted, a link goes up or down. A valid entry is read
 * without side effects (dst_fetch_ha), so a result stays right while the generation stays:
 * rdmaemud's processes keep the MACs of their verbs AHs and QPs that long (emu/link/link.c). The
 * hook hears every move (engine lock held); one hook. */
uint32_t emu_neigh_gen(struct emu_engine *e, size_t host);
typedef void emu_neigh_gen_fn(void *ctx, size_t host, uint32_t gen);
void emu_neigh_set_gen_hook(struct emu_engine *e, emu_neigh_gen_fn *fn, void *ctx);

/* `ip neigh flush` of the control API (rdmaemu_ctl_neigh_flush) when the host's neighbour
 * tables are in another process: the link to rdmaemud installs the request that forwards it
 * there (node NULL: the attached host; netdev NULL: all; the number of entries dropped or a
 * negative errno, as emu_neigh_flush); NULL: this process's tables. */
typedef int emu_neigh_flush_fn(const char *node, const char *netdev);
void emu_neigh_set_flush_remote(emu_neigh_flush_fn *fn);
/* `ip link set` of the control API (rdmaemu_ctl_link_set) when the host's interfaces are in
 * another process, as the flush above: 0 or a negative errno; NULL: this process's. */
typedef int emu_neigh_link_fn(const char *node, const char *netdev, bool up);
void emu_neigh_set_link_remote(emu_neigh_link_fn *fn);

/* The current addresses of a host's netdev (they change with emu_neigh_addr_add/del; the
 * fabric's are the initial ones). Returns the count (may exceed max). -ENOENT: no netdev. */
int emu_neigh_addrs(struct emu_engine *e, size_t host, int netdev, struct sockaddr_storage *out,
		    uint8_t *prefixlen, size_t max);
/* `ip addr add/del`. 0, -EEXIST (already there), -EADDRNOTAVAIL (del: not there), -ENOENT (no
 * such host/netdev), -EINVAL (bad family/prefix), -ENOMEM. Listeners hear ADDR_ADD/DEL. Deleting
 * an address drops the connected route it made. */
int emu_neigh_addr_add(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *a,
		       uint8_t prefixlen);
int emu_neigh_addr_del(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *a,
		       uint8_t prefixlen);
/* `ip link set X up/down`: a down netdev has no routes, answers nothing and its neighbour
 * entries are flushed (neigh_ifdown). 0 (also when unchanged, with no event), -ENOENT. */
int emu_neigh_link_set(struct emu_engine *e, size_t host, int netdev, bool up);
bool emu_neigh_link_up(struct emu_engine *e, size_t host, int netdev);

/* Whether the host's stack answers ARP requests and neighbour solicitations for the netdev's
 * addresses (it does unless told otherwise). A sandbox of the host (emu/host) has a real
 * kernel interface for the netdev whose kernel answers them itself; the layer then only
 * listens, so that the wire carries one reply, as from a real host. 0 or -ENOENT. */
int emu_neigh_set_replies(struct emu_engine *e, size_t host, int netdev, bool replies);

/* The layer itself: created with the engine (emu_engine_get), or here if that failed, with its
 * receivers, QPN claims and IPoIB multicast memberships installed; freed with the engine. NULL
 * with errno ENOMEM. Lock held (or the engine not yet published). */
struct emu_neigh;
struct emu_neigh *emu_neigh_get(struct emu_engine *e);

/* IPoIB constants (RFC 4391, IBA): the IPv4 broadcast group of partition 0xffff. */
#define EMU_IPOIB_BCAST_MLID 0xc000
#define EMU_IPOIB_QKEY 0x00000b1bu /* OpenSM's IPoIB groups (emu/ib/sa.c) */
#define EMU_IPOIB_HDR_LEN 4
extern const uint8_t emu_ipoib_bcast_mgid[16];

#endif
