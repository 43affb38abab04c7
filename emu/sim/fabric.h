/* The fabric model: what an emulated fabric is made of, as loaded from a fabric file
 * (emu/sim/fabric_load.c), an ibnetdiscover topology (emu/sim/fabric_ibnd.c), an ibacm_hosts.data
 * address map (emu/sim/fabric_hostsdata.c) or the built-in default (emu/sim/fabric_builtin.c).
 *
 * The model is plain data: arrays with counts, owned by the struct emu_fabric that holds them
 * and freed with emu_fabric_free(). Nothing here runs; the engine (clock, wire, host engines)
 * is built from it. Field values use the verbs encodings (enum ibv_port_state, enum ibv_mtu,
 * IBV_LINK_LAYER_*) so that ibv_query_port() can hand them out unchanged.
 */
#ifndef RDMAEMU_EMU_FABRIC_H
#define RDMAEMU_EMU_FABRIC_H

/* `process-qpns`: its bounds (powers of two; a host's 24-bit QP numbers hold (2^24 - 16) / N
 * slices of N; the default, 16384, is emu/link/proto.h's EMU_DPROTO_QPN_SLICE) */
#define EMU_FABRIC_PROCESS_QPNS_MIN 1024u
#define EMU_FABRIC_PROCESS_QPNS_MAX (1u << 23)

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#define EMU_NAME_MAX 64

struct emu_fabric;
struct emu_host;
struct emu_device;

enum emu_gid_type {
	EMU_GID_IB = 0,      /* InfiniBand GID (subnet prefix + port GUID) */
	EMU_GID_ROCE_V1 = 1, /* RoCE v1 (IBoE) */
	EMU_GID_ROCE_V2 = 2, /* RoCE v2 (UDP/IP encapsulation) */
};

struct emu_gid {
	uint8_t raw[16];
	enum emu_gid_type type;
	int netdev; /* index into host->netdevs this GID was derived from, -1 if none */
};

/* Device limits that ibv_query_device() reports. Defaults are rxe's (see fabric_caps.c). */
struct emu_device_caps {
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t max_qp, max_qp_wr, max_sge, max_sge_rd, max_cq, max_cqe, max_mr, max_pd;
	uint32_t max_qp_rd_atom, max_ee_rd_atom, max_res_rd_atom, max_qp_init_rd_atom;
	uint32_t max_srq, max_srq_wr, max_srq_sge, max_ah, max_mcast_grp, max_mcast_qp_attach;
	uint32_t max_total_mcast_qp_attach, max_fmr, max_map_per_fmr, max_pkeys;
	uint32_t device_cap_flags;
	uint32_t atomic_cap;    /* enum ibv_atomic_cap */
	uint32_t max_msg_sz;
	uint8_t local_ca_ack_delay;
};

struct emu_port {
	uint8_t num;          /* 1-based, as verbs numbers ports */
	uint8_t link_layer;   /* IBV_LINK_LAYER_INFINIBAND (1) or IBV_LINK_LAYER_ETHERNET (2) */
	uint8_t state;        /* enum ibv_port_state: 1 DOWN .. 4 ACTIVE */
	uint8_t phys_state;   /* 5 LinkUp, 3 Disabled, 2 Polling */
	uint8_t max_mtu;      /* enum ibv_mtu: 1=256 .. 5=4096 */
	uint8_t active_mtu;   /* enum ibv_mtu */
	uint8_t active_width; /* IB encoding: 1=1x 2=4x 4=8x 8=12x */
	uint8_t active_speed; /* IB encoding: 1=SDR 2=DDR 4=QDR 8=FDR10 16=FDR 32=EDR */
	uint16_t lid, sm_lid; /* 0 on Ethernet ports */
	uint8_t lmc, sm_sl;
	uint32_t gid_tbl_len, pkey_tbl_len;
	uint64_t port_guid;   /* IB: port GUID (for a CA port, the GID's interface id) */
	struct emu_gid *gids; /* populated entries, index = GID index */
	size_t ngids;
	uint16_t *pkeys;
	size_t npkeys;
	int link;             /* index into fabric->links, -1 when unconnected */
	struct emu_device *dev;
};

struct emu_device {
	char name[EMU_NAME_MAX];       /* e.g. "rxe0", "mlx5_0" */
	char node_desc[EMU_NAME_MAX];  /* IB NodeDescription, e.g. "hostA mlx5_0" */
	uint64_t node_guid, sys_image_guid;
	uint32_t vendor_id, vendor_part_id, hw_ver;
	char fw_ver[EMU_NAME_MAX];
	int transport;                 /* IBV_TRANSPORT_IB (0) */
	int node_type;                 /* IBV_NODE_CA (1) */
	struct emu_device_caps caps;
	struct emu_port *ports;
	size_t nports;
	struct emu_host *host;
	/* Unregistered by rdmaemu_ctl_device_remove (`rdma link delete`): gone from new device
	 * lists and from the rdma_cm, while contexts opened before keep working (rxe has no
	 * disassociate). Written with the engine lock held. */
	bool removed;
};

struct emu_ifaddr {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint8_t prefixlen;
};

struct emu_netdev {
	char name[EMU_NAME_MAX];  /* e.g. "d0", "ib0" */
	uint8_t hwaddr[20];       /* 6 bytes (Ethernet) or 20 bytes (IPoIB: QPN + GID) */
	uint8_t hwaddr_len;
	uint32_t mtu;
	int device;               /* index into host->devices of the RDMA device behind it, -1 = none */
	uint8_t port;             /* that device's port number, 0 = none */
	bool up;
	/* IPv6 enabled (net.ipv6.conf.X.disable_ipv6 = 0): an up netdev then has its fe80::/64
	 * link-local address, derived as Linux does, among addrs. */
	bool ipv6;
	/* IFF_NOARP (a dummy netdev): no neighbour resolution, every neighbour "resolves" at
	 * once with no frame sent (fabric file: arp=off). */
	bool noarp;
	struct emu_ifaddr *addrs;
	size_t naddrs;
};

/* A route of a host: destination prefix reached through a netdev, optionally via a gateway.
 * A host without a route to a destination answers ENETUNREACH, as the kernel does. */
struct emu_route {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} dst, gateway;
	uint8_t prefixlen;
	bool has_gateway;
	int netdev;
};

struct emu_host {
	char name[EMU_NAME_MAX];
	char **aliases; /* further names this host answers to */
	size_t naliases;
	struct emu_device *devices;
	size_t ndevices;
	struct emu_netdev *netdevs;
	size_t nnetdevs;
	struct emu_route *routes; /* explicit routes; connected subnets are implied by netdev addrs */
	size_t nroutes;
	bool acm; /* an ibacm service runs on this host (affects rdma_getaddrinfo, spec §4.5) */
	/* ABI version of the host kernel's rdma_cm interface (the real one reports 4); the
	 * library refuses versions outside [3, 4] with EPERM (spec §3.1, row 34). */
	unsigned cm_abi;
	/* What runs the host: the emulator's model (the default), or a kernel soft-RoCE VM whose
	 * NIC is a port of rdmaemud's wire (docs/mixed-fabric.md); its model then only describes
	 * what the VM has (MAC, addresses, device) and nothing of the emulator acts for it. */
	enum emu_host_kind { EMU_HOST_EMULATED, EMU_HOST_RXE_VM } kind;
	/* the daemon that runs the host when the fabric spans several (`daemon=`): 1 + its
	 * index in fabric->daemons; 0: no daemon named */
	unsigned daemon;
	struct emu_fabric *fabric;
};

/* An IB switch from an ibnetdiscover topology. Hosts are CAs; switches only forward. */
struct emu_switch {
	char name[EMU_NAME_MAX]; /* how fabric files name it: a `switch` line's name, or the
				  * node id of a topology file (e.g. "S-0002c90200000001") */
	char node_desc[EMU_NAME_MAX];
	uint64_t node_guid;
	uint64_t sys_image_guid;       /* a topology's sysimgguid=, else the node GUID */
	uint32_t vendor_id, device_id; /* a topology's vendid= and devid= (NodeInfo), else 0 */
	uint16_t lid;
	uint8_t lmc;
	size_t nports; /* port 0 is the management port; 1..nports are external */
	int *port_link; /* [nports + 1]: index into fabric->links, -1 when unconnected */
};

/* Per-link (or fabric-wide default) fault and timing settings, applied by the wire. */
/* drop-match=: the frames one end of a link sends whose byte at `off` equals `val` under
 * `mask` are counted, and the nth of them is dropped: a loss at a chosen place, the same in
 * every run (a PSN sequence error, a retransmission after a timeout). */
#define EMU_FAULT_MATCH_MAX 4
struct emu_fault_match {
	uint8_t side; /* 0: frames the link's first endpoint sends, 1: its second's */
	uint8_t val, mask;
	uint16_t off;
	uint32_t nth; /* 1: the first matching frame */
};

struct emu_faults {
	uint64_t delay_ns;   /* one-way latency added to every packet */
	uint64_t jitter_ns;  /* extra uniformly random delay in [0, jitter_ns] */
	double loss;         /* probability a packet is dropped, 0..1 */
	double duplicate;    /* probability a packet is delivered twice */
	double reorder;      /* probability a packet is held back behind the next one */
	double corrupt;      /* probability a packet arrives with one bit flipped (its receiver's
			      * ICRC check drops it; the capture has it as sent) */
	bool down;           /* link is down: nothing passes */
	unsigned nmatch;     /* drop-match rules */
	struct emu_fault_match match[EMU_FAULT_MATCH_MAX];
};

enum emu_endpoint_kind { EMU_EP_HOST_PORT = 1, EMU_EP_SWITCH_PORT = 2 };

struct emu_endpoint {
	enum emu_endpoint_kind kind;
	int node;     /* host index (fabric->hosts) or switch index (fabric->switches) */
	int device;   /* host device index; unused for switches */
	uint8_t port; /* port number */
};

struct emu_link {
	struct emu_endpoint a, b;
	struct emu_faults faults;
	uint8_t width, speed; /* as in emu_port */
};

/* One entry of the fabric-wide name table (fabric file "name" lines and ibacm_hosts.data):
 * a host name and one of its addresses. Several entries may share a name. */
struct emu_name {
	char name[256];
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
};

/* Subnet manager / subnet administrator settings (used by the fake SA). */
struct emu_sm {
	bool present;       /* an SM/SA runs on this fabric */
	uint16_t sm_lid;
	uint64_t subnet_prefix; /* host byte order; default 0xfe80000000000000 */
	uint8_t sl, packet_lifetime, rate, mtu; /* path-record policy defaults (IBTA encodings);
						 * rate/mtu 0 = the path's own (min over its links
						 * and ports), as OpenSM computes them */
	uint64_t response_delay_ns;
	/* SA faults (`sm` line: drop-next=, drop=, busy-next=, busy=, error=, error-attr=), the
	 * initial policy of the fake SA (emu/ib/sa.h struct emu_sa_policy) */
	unsigned drop_next, busy_next;
	double drop, busy;
	uint16_t error_status, error_attr;
};

/* An rdmaemud instance of a fabric that spans several (`daemon` lines, docs/multi-daemon.md):
 * its name and the UDP address where it takes the frames of its hosts' links. */
struct emu_fabric_daemon {
	char name[EMU_NAME_MAX];
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint16_t port; /* host byte order */
};

struct emu_fabric {
	char source[256];         /* file the fabric came from, or "(built-in default)" */
	uint32_t process_qpns;    /* QP numbers each process of a daemon-shared host gets
				   * (`process-qpns`; 0: the default) */
	uint64_t seed;            /* PRNG seed: same seed + same fixture => same events and pcap bytes */
	struct emu_host *hosts;
	size_t nhosts;
	struct emu_switch *switches;
	size_t nswitches;
	struct emu_link *links;
	size_t nlinks;
	struct emu_name *names;   /* the fabric's host table, consulted before /etc/hosts */
	size_t nnames;
	bool system_resolver;     /* "resolver system": names may go to the system resolver (DNS) */
	struct emu_faults default_faults;
	struct emu_sm sm;
	struct emu_fabric_daemon *daemons; /* none: one daemon runs every host */
	size_t ndaemons;
	/* a fabric mapped from an image (emu_fabric_set_image_dir): the mapping, which holds
	 * this struct and all it points to; NULL for a fabric parsed here */
	void *image;
	size_t image_len;
};

/* Load errors name the file, the line and what was expected. */
struct emu_error {
	char file[256];
	unsigned line;
	char msg[512];
};

/* Loads a fabric file (the project's text format; it may include ibnetdiscover topologies and
 * ibacm_hosts.data maps). Returns NULL on error with *err filled and errno set (ENOENT for a
 * missing file, EINVAL for a syntax or consistency error); nothing half-loaded is returned. */
struct emu_fabric *emu_fabric_load(const char *path, struct emu_error *err);
/* Same, from text in memory; "name" is used in error messages, includes resolve against dir. */
struct emu_fabric *emu_fabric_load_text(const char *text, const char *name, const char *dir,
					struct emu_error *err);
/* The built-in default fabric (zero-config): see fabric_builtin.c and README. Never NULL unless
 * out of memory. */
struct emu_fabric *emu_fabric_builtin(void);
void emu_fabric_free(struct emu_fabric *f);

/* Fabric images (emu/sim/fabric_image.c): with a directory set, a fabric file of at least
 * min_nodes hosts and switches is parsed once and written there as an image; later loads of
 * the same, unchanged file (in any process of this user) map that image instead of parsing it,
 * sharing its pages. NULL: no images (the default). Set before loading, by the program
 * (rdmaemud, a sandbox's keeper, a process attached to rdmaemud). */
void emu_fabric_set_image_dir(const char *dir, size_t min_nodes);
/* The size from which the programs above use images (and the loader gives a parse's freed
 * pages back): 1,024 nodes, where the model reaches a megabyte. */
#define EMU_FABRIC_LARGE 1024u
/* Sets the image directory to the directory of the daemon socket `sock` (the daemon's runtime
 * directory, where rdmaemud writes the image of its fabric), for fabrics of EMU_FABRIC_LARGE
 * nodes or more. NULL or empty: no images. */
void emu_fabric_set_image_dir_of(const char *sock);
/* Whether f was mapped from an image. */
bool emu_fabric_is_image(const struct emu_fabric *f);

/* Prints the parsed fabric for `rdmaemu fabric show`: devices, ports, GIDs, LIDs, addresses. */
void emu_fabric_show(const struct emu_fabric *f, FILE *out);

/* The fabric's identity for daemons that must run the same one: a 64-bit FNV-1a hash of its
 * `rdmaemu fabric show` text without the first line (the file's path, which differs from
 * machine to machine). */
uint64_t emu_fabric_id(const struct emu_fabric *f);
/* Daemon `name` of the fabric, or NULL. */
const struct emu_fabric_daemon *emu_fabric_find_daemon(const struct emu_fabric *f,
							const char *name);

/* Lookups. */
struct emu_host *emu_fabric_find_host(const struct emu_fabric *f, const char *name);
/* Fills up to max addresses of `name` (fabric name table first; host names and aliases of the
 * fabric's hosts resolve to their netdev addresses) whose family matches (AF_UNSPEC = any), in
 * table order. Returns the number found (may exceed max), 0 if the name is unknown. */
size_t emu_fabric_lookup_name(const struct emu_fabric *f, const char *name, int family,
			      struct emu_name *out, size_t max);
/* Whether `h` has an address of `family` on a netdev that is up, as glibc's AI_ADDRCONFIG
 * judges it: every address but exactly 127.0.0.1 and ::1 counts, link-local included. */
bool emu_host_has_family(const struct emu_host *h, int family);
/* Index of h's netdev whose connected subnet (or explicit route) reaches addr, -1 if none. */
int emu_host_route(const struct emu_host *h, int family, const void *addr);

/* Parsing helpers shared by the loaders. */
int emu_parse_gid(const char *s, uint8_t raw[16]);
const char *emu_link_layer_str(uint8_t link_layer);
const char *emu_port_state_str(uint8_t state);
int emu_mtu_bytes(uint8_t ibv_mtu);

#endif
