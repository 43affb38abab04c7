/* The emulated kernel rdma_cm as the network modules see it: the CM id, its state machine, and
 * the hook points they fill (modelled on Linux 6.1's drivers/infiniband/core/cma.c;
 * docs/cma.md describes the whole), and the ids' life and the commands' entry points that
 * ucma.c calls. emu/rdma_cm/ucma_event.h adds the files' event queues, emu/rdma_cm/ucma.h
 * ucma's files and commands; none of the cma*.c files includes the latter (ucma.c is above
 * them all).
 *
 * This header includes no <rdma/rdma_user_cm.h>, so that code built against librdmacm's
 * <rdma/rdma_cma.h> (whose enums clash with it) can include it too; modules that read the
 * ucma structures passed to their ops include <rdma/rdma_user_cm.h> themselves.
 *
 * Everything here runs with the engine lock held (emu/sim/engine.h): commands take it in
 * emu_ucma_write, and the network modules' callbacks (timers, received MADs) already hold it.
 *
 * What needs the network is not here: address resolution (ARP/ND), route resolution (SA path
 * records), the IB CM protocol and multicast joins plug in through the ops tables below. Until
 * a module installs its table the corresponding commands fail with ENOSYS after the kernel's own
 * argument and state checks, and say so on stderr once.
 */
#ifndef RDMAEMU_EMU_CMA_H
#define RDMAEMU_EMU_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include "emu/sim/fabric.h"
#include "emu/sim/list.h"
#include "emu/sim/trace.h"
#include "emu/rdma_cm/ucma_api.h"

/* The kernel's enum rdma_cm_state, in its order. */
enum emu_cma_state {
	EMU_CMA_IDLE,
	EMU_CMA_ADDR_QUERY,
	EMU_CMA_ADDR_RESOLVED,
	EMU_CMA_ROUTE_QUERY,
	EMU_CMA_ROUTE_RESOLVED,
	EMU_CMA_CONNECT,
	EMU_CMA_DISCONNECT,
	EMU_CMA_ADDR_BOUND,
	EMU_CMA_LISTEN,
	EMU_CMA_DEVICE_REMOVAL,
	EMU_CMA_DESTROYING,
	EMU_CMA_ADDRINFO_QUERY,    /* RESOLVE_IB_SERVICE (kernels with the 2025 patches) */
	EMU_CMA_ADDRINFO_RESOLVED,
	EMU_CMA_NSTATES
};

const char *emu_cma_state_name(enum emu_cma_state s);

/* Port spaces (enum rdma_ucm_port_space) and the defaults of the sysctls the kernel reads. */
#define EMU_CMA_PS_IPOIB 0x0002
#define EMU_CMA_PS_IB 0x013F
#define EMU_CMA_PS_TCP 0x0106
#define EMU_CMA_PS_UDP 0x0111
#define EMU_CMA_PORT_LOW 32768  /* net.ipv4.ip_local_port_range */
#define EMU_CMA_PORT_HIGH 60999
#define EMU_CMA_MAX_BACKLOG 1024 /* net.rdma_ucm.max_backlog */
#define EMU_CMA_PROT_SOCK 1024  /* ports below need CAP_NET_BIND_SERVICE */

/* RDMA_MAX_PRIVATE_DATA and the kernel's private-data buffer size of an event. */
#define EMU_CMA_QKEY 0x01234567u /* RDMA_UDP_QKEY */

struct emu_ucma_file;
struct emu_cma_bind;
struct emu_cma_mc;
struct rdma_ucm_conn_param;
struct rdma_ucm_ece;
struct rdma_ucm_event_resp;

/* Slots of per-id state owned by the network modules (id->net[]). */
enum emu_cma_net_slot { EMU_CMA_NET_ADDR, EMU_CMA_NET_ROUTE, EMU_CMA_NET_CM, EMU_CMA_NET_MCAST,
			EMU_CMA_NET_SVC, EMU_CMA_NET_NSLOTS };

/* struct sockaddr_ib, spelled out (the kernel header's is not in the UAPI set). */
struct emu_sockaddr_ib {
	uint16_t sib_family;
	uint16_t sib_pkey;
	uint32_t sib_flowinfo;
	uint8_t sib_addr[16];
	uint64_t sib_sid;
	uint64_t sib_sid_mask;
	uint64_t sib_scope_id;
};

/* An id's address: room for the largest family an rdma_cm id takes (AF_IB, 48 bytes), not a
 * whole sockaddr_storage (128; the kernel's rdma_addr has those). The first member keeps
 * sockaddr_storage's name for the family. Copy into one with emu_cma_addr_size bytes. */
struct emu_cma_sockaddr {
	union {
		sa_family_t ss_family;
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct emu_sockaddr_ib ib;
	};
};

/* Sets *to from an address of any family: its emu_cma_addr_size bytes, zeros after (none of
 * an unknown family). */
void emu_cma_addr_copy(struct emu_cma_sockaddr *to, const struct sockaddr *from);

/* A kernel CM id (struct rdma_id_private + struct ucma_context). 352 bytes on x86-64, the
 * 384 emu_kmem size class (bench/cm_bench keeps 2 a connection and walks them once a step,
 * so every line counts at 10,000 connections): members are ordered to leave only a few
 * bytes of holes; mind them when adding one (cma_id.c asserts the size). */
struct emu_cma_id {
	uint64_t uid;                /* the library's cookie, returned in events */
	struct emu_ucma_file *file;
	const struct emu_host *host;
	enum emu_cma_state state;
	uint16_t ps;
	uint8_t qp_type;             /* enum ib_qp_type: 2 RC, 4 UD, ... */
	/* ucma's close_work ran after DEVICE_REMOVAL: the kernel state is gone, commands fail
	 * with ENXIO, only DESTROY_ID still works. In the first line with file and dev: every
	 * ucma command's lookup reads them (get_ctx), and with N = 10,000 ids that line is a
	 * cache miss of its own per command (docs/cma.md "Where N = 10,000 goes"). */
	bool closed;
	/* Device association (cma_acquire_dev): indices into host->devices / netdevs. */
	int dev, netdev;
	struct emu_cma_sockaddr src, dst;
	/* Position on the device's id list (cma_attach_to_dev appends): device removal walks
	 * the ids in this order. */
	uint64_t attach_seq;
	uint8_t port;
	int gid_index;
	uint16_t pkey;
	int bound_dev_if;            /* IPv6 link-local scope (cma_check_linklocal) */
	/* Options (rdma_set_option). */
	bool reuseaddr, afonly, afonly_set, tos_set, timeout_set;
	uint8_t tos, timeout;
	/* Port binding (cma_get_port) and listening. */
	struct emu_cma_bind *bind;
	struct emu_list bind_node;
	int backlog;                 /* remaining CONNECT_REQUEST slots of a listener */
	uint32_t handle;             /* the ucma id (ctx->id), unique across files */
	struct emu_cma_id *listen;   /* for ids created by a CONNECT_REQUEST: the listener */
	/* Address resolution's result (the kernel's rdma_dev_addr): the destination's GID (IB:
	 * bytes 4-19 of its IPoIB hardware address; RoCE reports the IPs as GIDs instead), its
	 * hardware address and the route's hop limit (ip4_dst_hoplimit: 64). */
	uint8_t dgid[16];
	uint8_t dst_hw[20], dst_hw_len;
	uint8_t hop_limit;
	bool has_cm;                 /* an IB CM id exists (connect/REQ): reject/notify/... allowed */
	/* Route: path records (ib_path_rec_data: 72 bytes each, flags + 64-byte record), in
	 * emu_kmem for paths_cap of them (emu_cma_paths_set); the six the kernel allows were
	 * 432 bytes inline, which put the id in a 1 KiB size class. */
	struct ib_path_rec_data *paths;
	uint8_t npaths, paths_cap;
	uint32_t events_reported;
	uint32_t seq_num;            /* rq_psn for RTR (the kernel's id_priv->seq_num) */
	unsigned nservice_recs;      /* of service_recs below */
	struct emu_list file_node;   /* in file->ids */
	struct emu_list mcs;         /* struct emu_cma_mc */
	/* RESOLVE_IB_SERVICE's answer (route.service_recs): ServiceRecords in their 176-byte wire
	 * form, which is also ib_user_service_rec's layout. */
	uint8_t (*service_recs)[176];
	void *net[EMU_CMA_NET_NSLOTS];
};

/* A multicast membership (struct ucma_multicast). */
struct emu_cma_mc {
	uint32_t handle;
	uint64_t uid;
	struct emu_cma_id *id;
	struct sockaddr_storage addr;
	uint8_t join_flags;
	uint32_t events_reported;
	struct emu_list node;
	void *net;
};

/* ---- hook points for the network modules ---------------------------------------------- *
 * Each op runs with the engine lock held after the kernel's argument and state checks, with
 * the id already in the "query" state (ADDR_QUERY, ROUTE_QUERY, CONNECT, ...). Return 0 when
 * the operation was started (its outcome is an event queued later with emu_cma_event), or a
 * negative errno to fail the command synchronously (the core then restores the previous state,
 * as the kernel does). */

/* emu/net/neigh*: ARP/ND and routing. Outcome: emu_cma_addr_resolved(). */
struct emu_cma_addr_ops {
	int (*resolve_addr)(struct emu_cma_id *id, uint32_t timeout_ms);
	void (*cancel)(struct emu_cma_id *id); /* id destroyed while resolving */
};

/* emu/ib/sa_client*: path records (IB) or the locally synthesised RoCE path. Outcome:
 * emu_cma_route_resolved(). Multicast joins (SA MCMemberRecord on IB, local on RoCE): outcome
 * emu_cma_event(..., MULTICAST_JOIN/ERROR, mc). */
struct emu_cma_route_ops {
	int (*resolve_route)(struct emu_cma_id *id, uint32_t timeout_ms);
	/* whether resolve_route would surely return 0 now (no side effect) */
	bool (*sure)(const struct emu_cma_id *id);
	int (*join)(struct emu_cma_id *id, struct emu_cma_mc *mc);
	void (*leave)(struct emu_cma_id *id, struct emu_cma_mc *mc);
	void (*cancel)(struct emu_cma_id *id);
};

/* emu/ib/cm_agent*: the IB CM protocol (REQ/REP/RTU/REJ/DREQ/DREP/MRA, SIDR). Listeners are found
 * with emu_cma_find_listener; a matching REQ creates the passive id with emu_cma_conn_id_new and
 * queues CONNECT_REQUEST on it. */
struct emu_cma_cm_ops {
	int (*connect)(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		       const struct rdma_ucm_ece *ece);
	int (*accept)(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		      const struct rdma_ucm_ece *ece);
	int (*reject)(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason);
	int (*disconnect)(struct emu_cma_id *id);
	int (*notify)(struct emu_cma_id *id, uint32_t event);
	/* RTR/RTS attributes from the connection (ib_cm_init_qp_attr). */
	int (*init_qp_attr)(struct emu_cma_id *id, struct ib_uverbs_qp_attr *attr);
	/* The id is being destroyed: REJ a pending request, DREQ an established connection;
	 * a listener lets go of its ib_cm listens. Called for ids with has_cm or module state
	 * in net[EMU_CMA_NET_CM]. */
	void (*destroy)(struct emu_cma_id *id);
	/* rdma_listen moved the id to LISTEN (cma_ib_listen): listen for its service ID. A
	 * negative errno fails the call (the id goes back to ADDR_BOUND). */
	int (*listen)(struct emu_cma_id *id);
	/* Device `dev` of a wildcard listener's host is unregistered: let go of the listen
	 * there (the kernel destroys the per-device child listen id silently). May be NULL. */
	void (*drop_dev)(struct emu_cma_id *id, size_t dev);
	/* Whether CONNECT, ACCEPT or DISCONNECT (the ucma command) on the id, in the state its
	 * caller checked, surely returns 0 now, and for which commands (*sub, the verdict's
	 * encoding: docs/daemon.md "Posted commands"). No side effect. May be NULL. */
	bool (*sure)(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub);
};

void emu_cma_set_addr_ops(const struct emu_cma_addr_ops *ops);
void emu_cma_set_route_ops(const struct emu_cma_route_ops *ops);
/* Whether host h's port spaces are far from full: fewer binds than half the ephemeral range,
 * so that an ephemeral bind cannot fail with EADDRNOTAVAIL for a long while (rdmaemud's
 * RESOLVE_ADDR verdicts, docs/daemon.md "Posted commands"). */
bool emu_cma_ports_plentiful(const struct emu_host *h);
void emu_cma_set_cm_ops(const struct emu_cma_cm_ops *ops);

/* ---- what the modules call back ------------------------------------------------------- */

/* Moves id from `from` to `to` if it is in `from` (cma_comp_exch); one trace line. */
bool emu_cma_comp_exch(struct emu_cma_id *id, enum emu_cma_state from, enum emu_cma_state to);
/* Unconditional transition (trace line included). */
void emu_cma_set_state(struct emu_cma_id *id, enum emu_cma_state to);

/* Queues an event for the id (mc: for MULTICAST_*; NULL otherwise) on its file and signals the
 * file's fd. param may be NULL (zeroed). -ENOMEM. */
int emu_cma_event(struct emu_cma_id *id, struct emu_cma_mc *mc, uint32_t event, int32_t status,
		  const struct rdma_ucm_event_resp *param);

/* Address resolution finished: status 0 (dev/netdev/port set via emu_cma_acquire_dev, dst
 * stored) -> ADDR_RESOLVED, else back to ADDR_BOUND and ADDR_ERROR with status. */
void emu_cma_addr_resolved(struct emu_cma_id *id, int status);
#define EMU_CMA_MAX_PATHS 6 /* ucma_copy_ib_route: primary, alternate, and OPA's */
/* Room for n (<= EMU_CMA_MAX_PATHS) path records in id->paths, for emu_cma_paths_set to
 * fill: 0 (the id keeps no paths if the room had to grow) or -ENOMEM (nothing changed). */
int emu_cma_paths_reserve(struct emu_cma_id *id, unsigned n);
/* The id's route becomes paths[0..n) (n capped at EMU_CMA_MAX_PATHS): 0 or -ENOMEM. */
int emu_cma_paths_set(struct emu_cma_id *id, const struct ib_path_rec_data *paths, unsigned n);

/* Route resolution finished: paths copied into the id, ROUTE_RESOLVED / ROUTE_ERROR. */
void emu_cma_route_resolved(struct emu_cma_id *id, const struct ib_path_rec_data *paths,
			    unsigned npaths, int status);

/* Records that the id just got its device (cma_attach_to_dev): every place that sets
 * id->dev calls it, so that device removal reaches the ids in attach order. */
void emu_cma_attach_dev(struct emu_cma_id *id);

/* Associates the id with the RDMA device behind netdev nd of its host (cma_acquire_dev):
 * 0, or -ENODEV when the netdev has none or its port has no GID for the id's source address.
 * The address module sets id->src's address (not its port) to the routed source first. */
int emu_cma_acquire_dev(struct emu_cma_id *id, int nd);
/* The same for an id whose source is an AF_IB address: the InfiniBand port that has its GID
 * (its P_Key from the address). 0 or -ENODEV. */
int emu_cma_bind_ib_dev(struct emu_cma_id *id);

/* The listener of host h for (ps, port) that accepts a request to local address `dst`:
 * a specific-address listener first, then a wildcard one. NULL if none. */
struct emu_cma_id *emu_cma_find_listener(const struct emu_host *h, uint16_t ps, uint16_t port,
					 const struct sockaddr *dst);
/* cma_find_listener for a request that arrived on port pnum of device dev of host h:
 * an IP request (dst: the CMA header's destination) goes to the listener bound to that
 * address, else to a wildcard that takes its family, else to an AF_IB listener on that device
 * (cma_match_private_data lets an AF_IB listener take any request); an AF_IB request (dst
 * NULL: no CMA header) only to an AF_IB listener on that device and, if bound, that port
 * (cma_match_net_dev). NULL if none. */
struct emu_cma_id *emu_cma_find_req_listener(const struct emu_host *h, int dev, uint8_t pnum,
					     uint16_t ps, uint16_t port,
					     const struct sockaddr *dst);
/* A new id for an incoming request on `listen` (state CONNECT, same file, ps and qp_type);
 * NULL when the backlog is exhausted (the caller drops the request, as the kernel does) or on
 * ENOMEM. */
struct emu_cma_id *emu_cma_conn_id_new(struct emu_cma_id *listen);

/* Trace (RDMAEMU_TRACE contains "cma"): "cma 5: IDLE -> ADDR_BOUND". */
bool emu_cma_trace_on(void);
void emu_cma_trace_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ~26 trace points a connection in bench/cm_bench: nothing paid with tracing off */
#define emu_cma_trace(...) EMU_TRACE_IF(emu_cma_trace_on(), emu_cma_trace_print, __VA_ARGS__)

/* Address helpers (cma_any_addr, rdma_addr_size, cma_port). */
bool emu_cma_any_addr(const struct sockaddr *sa);
bool emu_cma_loopback_addr(const struct sockaddr *sa);
size_t emu_cma_addr_size(const struct sockaddr *sa);
uint16_t emu_cma_port(const struct sockaddr *sa); /* host byte order */
void emu_cma_set_port(struct sockaddr *sa, uint16_t port);
/* The interface index the library sees for netdev i ("lo" is 1). */
static inline int emu_cma_ifindex(size_t netdev)
{
	return (int)netdev + 2;
}

/* RESOLVE_IB_SERVICE (emu/rdma_cm/cma_svc.c, rdma_resolve_ib_service of the 2025 kernel patches):
 * flags EMU_CMA_IB_SERVICE_FLAG_ID / _NAME select service_id / name (64 bytes). 0 (the
 * outcome is ADDRINFO_RESOLVED or ADDRINFO_ERROR later), -EINVAL (no device, not ADDR_BOUND),
 * -EOPNOTSUPP (not an IB port), or the SA client's start error. */
#define EMU_CMA_IB_SERVICE_FLAG_ID 1u
#define EMU_CMA_IB_SERVICE_FLAG_NAME 2u
int emu_cma_resolve_ib_service(struct emu_cma_id *id, uint64_t service_id, const uint8_t name[64],
			       uint32_t flags);
/* The id goes away: cancel its ServiceRecord query, free its records. */
void emu_cma_svc_destroy(struct emu_cma_id *id);

/* ---- the id's life and the commands' entry points (ucma.c's) -------------------------- */

struct emu_cma_id *emu_cma_id_new(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				  uint8_t qp_type);
/* Destroys the id (kernel rdma_destroy_id + ucma_destroy_private_ctx): cancels network work,
 * drops its queued events and the ids of unread CONNECT_REQUESTs, releases its port. */
void emu_cma_id_destroy(struct emu_cma_id *id);
struct emu_cma_id *emu_cma_id_lookup(uint32_t handle);
/* A handle taken ahead for a posted CREATE_ID of rdmaemud (the lowest free, as any), or
 * UINT32_MAX; emu_cma_id_new_at creates the id there, emu_cma_id_unreserve gives it back.
 * Lookups see no id at a reserved handle. */
uint32_t emu_cma_id_reserve(void);
void emu_cma_id_unreserve(uint32_t handle);
/* emu_cma_id_new at reserved handle (UINT32_MAX: the lowest free); NULL when handle is not
 * reserved or memory runs out. */
struct emu_cma_id *emu_cma_id_new_at(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				     uint8_t qp_type, uint32_t handle);
/* Handles are below this bound (for walks over every id). */
uint32_t emu_cma_id_limit(void);
/* What rdma_destroy_id does to the kernel state (_destroy_id): cancels address, route and
 * service resolution, destroys the IB CM id (REJ, DREQ, ... as its state demands), leaves the
 * multicast groups (the memberships stay allocated) and releases the port. The ucma context,
 * its queued events and memberships stay: emu_cma_id_destroy frees them. */
void emu_cma_id_teardown(struct emu_cma_id *id);
/* RDMA device `dev` of host h is being unregistered (emu/rdma_cm/cma_devrm.c, cma_remove_one): one
 * DEVICE_REMOVAL per attached id, in attach order, then ucma's close_work on each. 0 or
 * -ENOMEM (nothing done). */
int emu_cma_device_remove(const struct emu_host *h, size_t dev);

int emu_cma_bind(struct emu_cma_id *id, const struct sockaddr *addr);
int emu_cma_listen(struct emu_cma_id *id, int backlog);
/* The CM module's listen (emu_cma_cm_ops.listen), 0 without one. */
int emu_cma_cm_listen(struct emu_cma_id *id);
/* The CM module's drop_dev (emu_cma_cm_ops.drop_dev), nothing without one. */
void emu_cma_cm_drop_dev(struct emu_cma_id *id, size_t dev);
/* The CM module's destroy, for an id with a CM side (has_cm, or its state in
 * net[EMU_CMA_NET_CM]); nothing without one. */
void emu_cma_cm_destroy(struct emu_cma_id *id);
/* The address module's resolve_addr (-ENOSYS without one, said once on stderr). */
int emu_cma_addr_ops_resolve(struct emu_cma_id *id, uint32_t timeout_ms);
/* The address and route modules' cancel (a resolution the id's destruction stops). */
void emu_cma_resolve_cancel(struct emu_cma_id *id);
int emu_cma_resolve_addr(struct emu_cma_id *id, const struct sockaddr *src,
			 const struct sockaddr *dst, uint32_t timeout_ms);
int emu_cma_resolve_route(struct emu_cma_id *id, uint32_t timeout_ms);
/* Whether RESOLVE_ROUTE on id (its file's command, with a timeout) would return 0 now: the
 * verdict rdmaemud sends with ADDR_RESOLVED so that its client may post the command. */
bool emu_cma_resolve_route_sure(const struct emu_cma_id *id);
/* Whether CONNECT, ACCEPT or DISCONNECT on id would return 0 now, and for which commands
 * (*sub: emu_cma_cm_ops.sure). */
bool emu_cma_cm_sure(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub);
int emu_cma_set_option(struct emu_cma_id *id, uint32_t level, uint32_t optname,
		       const void *optval, uint32_t optlen);
int emu_cma_init_qp_attr(struct emu_cma_id *id, struct ib_uverbs_qp_attr *attr);
int emu_cma_connect(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		    const struct rdma_ucm_ece *ece);
int emu_cma_accept(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		   const struct rdma_ucm_ece *ece);
int emu_cma_reject(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason);
int emu_cma_disconnect(struct emu_cma_id *id);
int emu_cma_notify(struct emu_cma_id *id, uint32_t event);
int emu_cma_join(struct emu_cma_id *id, struct emu_cma_mc *mc);
void emu_cma_leave(struct emu_cma_id *id, struct emu_cma_mc *mc);
void emu_cma_release_port(struct emu_cma_id *id);

/* Drops every per-host port space (tests; with emu_process_reset). */
void emu_cma_reset(void);

#endif
