/* Internals of the neighbour layer (emu/net/neigh*.c). Its files build on each other, none on a
 * later one: neigh.c (the common ground) < neigh_tbl.c (entries), neigh_tx.c (frames out) <
 * neigh_mcast.c, neigh_path.c (IPoIB groups and paths) < neigh_wire.c (ARP and ND) <
 * neigh_layer.c (the layer on the engine, with roce_gid.c) < neigh_route.c, neigh_addr.c,
 * neigh_iface.c, neigh_cache.c (the API taking an engine) < neigh_ctl.c (the control API).
 * Where a lower file needs what a higher one does (the tables probing), the higher one
 * installs a function in struct emu_neigh. */
#ifndef RDMAEMU_EMU_NEIGH_PRIV_H
#define RDMAEMU_EMU_NEIGH_PRIV_H

#include "emu/sim/clock.h"
#include "emu/sim/fabric.h"
#include "emu/net/neigh.h"
#include "emu/sim/prng.h"

#define NEIGH_MAX_LISTENERS 8
/* ipoib.h: packets waiting for a multicast join, per group */
#define NEIGH_IPOIB_MAX_MCAST_QUEUE 64

struct neigh_dev;
struct emu_sa_query;
struct neigh_path;

/* One neighbour (struct neighbour): an IP address on a netdev and what is known of it. */
struct neigh_entry {
	struct neigh_entry *next;
	struct neigh_dev *dev;
	int family;
	uint8_t key[16]; /* the address (4 bytes for IPv4) */
	enum emu_nud state;
	uint8_t hw[20];
	bool has_hw;
	unsigned probes;
	uint64_t updated, confirmed, used;
	struct emu_timer timer;
};

/* The state of an IPoIB multicast group on a netdev (ipoib_mcast), emu_neigh_mcast_name. */
enum neigh_mc_state {
	NEIGH_MC_IDLE,	  /* not joined, no join under way (a leave or a link down ended it) */
	NEIGH_MC_JOINING, /* MCMemberRecord Set sent, packets queue */
	NEIGH_MC_JOINED,  /* the SA answered: MLID known, packets go out */
	NEIGH_MC_FAILED,  /* the join failed: a retry after the backoff, packets queue again */
};

/* A packet waiting for its group's join: the IPoIB payload (IPoIB header + IPv6 packet). */
struct neigh_mc_pkt {
	struct neigh_mc_pkt *next;
	size_t len;
	uint8_t data[];
};

/* One IPoIB multicast group of a netdev (struct ipoib_mcast): a full member for the groups the
 * netdev listens to, a send-only one for the groups it only sends to. */
struct neigh_mcast {
	struct neigh_mcast *next;
	struct neigh_dev *dev;
	uint8_t mgid[16];
	uint16_t mlid;	/* from the SA's answer, 0 before */
	uint8_t sl;	/* the answer's SL (ipoib_mcast_join_finish: the group's AH) */
	bool sendonly;	/* IPOIB_MCAST_FLAG_SENDONLY */
	bool attached;	/* the port is in the topology's tree of mlid */
	enum neigh_mc_state state;
	struct emu_sa_query *q;
	unsigned backoff; /* seconds before the next retry, 1..16 (IPOIB_MAX_BACKOFF_SECONDS) */
	struct emu_timer retry;
	struct neigh_mc_pkt *qhead, **qtail;
	unsigned qlen;
};

/* A netdev as the host's IP stack sees it now. */
struct neigh_dev {
	struct neigh_host *host;
	int idx;
	const struct emu_netdev *nd; /* name, hardware address, MTU, RDMA port (fixed) */
	bool up, noarp, ipoib;
	bool quiet; /* emu_neigh_set_replies(false): a kernel interface answers for it */
	bool nic;   /* the NIC of its Ethernet port: the port's carrier follows `up` */
	struct emu_ifaddr *addrs;
	size_t naddrs;
	struct neigh_entry *entries;
	uint64_t reachable_ns[2]; /* [0] ARP, [1] ND: neigh_rand_reach_time(base), drawn once */
	/* IPoIB */
	uint32_t qpn, psn;
	uint16_t lid;
	uint8_t gid[16];
	int ep; /* topology endpoint of the port, -1: not bound */
	struct neigh_mcast *mcasts; /* IPv6 multicast groups (the IPv4 broadcast is not here) */
	struct neigh_path *paths;   /* IPoIB path records (emu/net/neigh_path.c) */
};

struct neigh_host {
	struct emu_neigh *n;
	size_t idx;
	const struct emu_host *h;
	struct neigh_dev *devs;
	size_t ndevs;
	struct emu_neigh_stats st;
	uint32_t gen; /* emu_neigh_gen */
};

struct emu_neigh_req {
	struct emu_neigh_req *next, **pprev;
	struct emu_neigh *n;
	size_t host;
	bool has_src;
	struct sockaddr_storage src, dst;
	uint64_t deadline;
	int status; /* -ENODATA while pending */
	struct emu_neigh_result res;
	emu_neigh_resolve_fn *cb;
	void *ctx;
	struct emu_timer timer;
};

struct neigh_listener {
	emu_neigh_event_fn *fn;
	void *ctx;
};

struct emu_neigh {
	bool gid_attached; /* emu_roce_gid_attach succeeded (tried again by emu_neigh_get) */
	struct emu_engine *e;
	const struct emu_fabric *f;
	struct emu_clock *clk;
	struct neigh_host *hosts;
	size_t nhosts;
	struct emu_prng prng;
	struct emu_neigh_req *reqs;
	struct neigh_listener listeners[NEIGH_MAX_LISTENERS];
	emu_neigh_gen_fn *gen_fn;
	void *gen_ctx;
	/* the tables' probes on the wire (arp_solicit / ndisc_solicit): a solicitation for ne,
	 * broadcast/multicast, or unicast to ne->hw when `ucast`; neigh_wire.c installs it */
	void (*solicit)(struct neigh_entry *ne, bool ucast);
	/* IPv6 over IPoIB in use: the IPoIB netdevs have made their listening joins (done on
	 * first use, docs/neigh.md "IPv6 over IPoIB") */
	bool ib6_on;
};

/* neigh.c */
bool emu_neigh_trace_on(void);
void emu_neigh_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct neigh_host *emu_neigh_host(struct emu_neigh *n, size_t host);
/* Something a resolution of host h reads has changed: its generation moves (emu_neigh_gen). */
void emu_neigh_host_changed(struct neigh_host *h);
struct neigh_dev *emu_neigh_dev(struct emu_neigh *n, size_t host, int netdev);
/* Whether addr (family's bytes) is an address of host h on an up netdev; *dev gets it. */
bool emu_neigh_is_local(const struct neigh_host *h, int family, const void *addr,
			struct neigh_dev **dev);
/* An IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address. */
static inline bool emu_neigh_is_mcast(int family, const uint8_t *addr)
{
	return family == AF_INET ? (addr[0] & 0xf0) == 0xe0 : addr[0] == 0xff;
}
/* "192.0.2.66" / "fe80::1" */
const char *emu_neigh_ntop(int family, const void *addr, char *buf, size_t len);
size_t emu_neigh_alen(int family);
/* The family of sa (AF_INET, AF_INET6) with *addr its address bytes; -EINVAL for NULL,
 * -EAFNOSUPPORT for another family. */
int emu_neigh_sa_addr(const struct sockaddr *sa, const void **addr);
/* Whether a is addr (family's bytes). */
bool emu_neigh_ifaddr_is(const struct emu_ifaddr *a, int family, const void *addr);
/* ff02::1:ffXX:XXXX, the solicited-node multicast address of target (RFC 4291 2.7.1). */
void emu_neigh_solicited_node(const uint8_t *target, uint8_t out[16]);
/* The listeners of emu_neigh_listen / unlisten, on the layer itself (its creation registers
 * roce_gid_mgmt's). 0, -EINVAL (fn NULL), -ENOSPC; 0, -ENOENT. */
int emu_neigh_add_listener(struct emu_neigh *n, emu_neigh_event_fn *fn, void *ctx);
int emu_neigh_del_listener(struct emu_neigh *n, emu_neigh_event_fn *fn, void *ctx);
/* The pending address resolutions (neigh_addr.c makes them): a neighbour became valid, every
 * one looks again now (addr.c netevent_callback); the layer goes, they go without a word. */
void emu_neigh_reqs_kick(struct emu_neigh *n);
void emu_neigh_reqs_free(struct emu_neigh *n);

/* neigh_tbl.c: entries and the NUD state machine */
struct neigh_entry *emu_neigh_entry_find(struct neigh_dev *d, int family, const void *addr);
struct neigh_entry *emu_neigh_entry_get(struct neigh_dev *d, int family, const void *addr);
/* __neigh_event_send(): starts resolution of an entry that is not valid (NONE, FAILED). */
void emu_neigh_event_send(struct neigh_entry *ne);
/* neigh_update(): lladdr learnt from the wire, new state REACHABLE or STALE. */
void emu_neigh_update(struct neigh_entry *ne, const uint8_t *hw, enum emu_nud state);
void emu_neigh_entry_free(struct neigh_entry *ne);
int emu_neigh_dev_flush(struct neigh_dev *d);

/* neigh_wire.c: ARP and ND frames; installs the receivers and n->solicit. */
int emu_neigh_wire_init(struct emu_neigh *n);

/* neigh_path.c: IPoIB path records from the SA */
/* A unicast IPoIB frame to the 20-byte hardware address dst_hw: sent at once when the path to
 * its GID is known, else queued behind an SA PathRecord query (unicast_arp_send). Every
 * unicast IPoIB frame of the layer goes this way: ARP replies and unicast ARP probes, IPv6
 * NAs and unicast NS probes. */
void emu_neigh_path_send(struct neigh_dev *d, const uint8_t dst_hw[20], const uint8_t *payload,
			 size_t len);
/* ipoib_flush_paths(): every path of the netdev goes, queries cancelled, queues dropped. */
void emu_neigh_paths_flush(struct neigh_dev *d);

/* neigh_tx.c: frame to the netdev's port as it is (counted as dropped when the port
 * refuses it). */
void emu_neigh_send_port(struct neigh_dev *d, const uint8_t *frame, size_t len);
/* neigh_tx.c: the carrier of the Ethernet port whose NIC d is (d->nic) follows d->up: a
 * netdev that is down neither sends nor receives, RoCE packets included (the wire's endpoint
 * down). Nothing for other netdevs. */
void emu_neigh_carrier(struct neigh_dev *d);
/* neigh_tx.c, IPoIB: a UD SEND_ONLY of payload (IPoIB header first) to (dlid, dqpn) with
 * service level sl (the path record's for unicast, the MCMemberRecord's for a group: the
 * address handle ipoib builds from either), with a GRH to mgid when mgid is not NULL
 * (multicast, to QPN 0xFFFFFF; unicast goes without a GRH, the path being in the subnet). */
void emu_neigh_ipoib_send(struct neigh_dev *d, uint16_t dlid, uint8_t sl, uint32_t dqpn,
			  const uint8_t *mgid, const uint8_t *payload, size_t paylen);

/* neigh_mcast.c: IPv6 multicast over IPoIB (ipoib_multicast.c) */
const char *emu_neigh_mcast_name(enum neigh_mc_state s);
/* ipv6_ib_mc_map(): the MGID of an IPv6 multicast address on partition pkey, scope from the
 * broadcast group (2: link-local). */
void emu_neigh_ib6_mgid(const uint8_t ip6[16], uint16_t pkey, uint8_t scope, uint8_t mgid[16]);
/* ipoib_mcast_send(): payload (IPoIB header + IPv6 packet to group ip6) to its group; joins
 * send-only first when the netdev is not in the group, the packet waiting for the join. */
void emu_neigh_ib6_mcast_send(struct neigh_dev *d, const uint8_t ip6[16], const uint8_t *payload,
			      size_t paylen);
/* Whether d takes multicast to mgid: a full member, joined. */
bool emu_neigh_ib6_listens(const struct neigh_dev *d, const uint8_t mgid[16]);
/* IPv6 over IPoIB comes into use: every up IPoIB netdev joins its groups. */
void emu_neigh_ib6_start(struct emu_neigh *n);
/* The groups of d follow its addresses and link now (join, leave; all left when down). */
void emu_neigh_ib6_sync(struct neigh_dev *d);
/* Drops d's groups with no message (the layer goes away). */
void emu_neigh_ib6_free(struct neigh_dev *d);

/* neigh_route.c */
int emu_neigh_route_lookup(struct emu_neigh *n, size_t host, const struct sockaddr *src,
			   const struct sockaddr *dst, struct emu_neigh_result *r,
			   uint8_t nexthop[16]);

#endif
