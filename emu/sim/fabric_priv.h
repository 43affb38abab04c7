/* Internals shared by the fabric loaders (text format, ibnetdiscover topology, ibacm_hosts.data)
 * and the finishing pass that checks the model and derives GIDs, GUIDs, LIDs and port states.
 *
 * Loading runs in two phases. The parsers append to the model in file order and record what they
 * cannot settle yet (references by name, which may point forward) in side tables that mirror the
 * model (struct emu_loader). emu_loader_finish() then resolves, checks and derives, so the order
 * of directives in a file does not matter except where the manual says so. */
#ifndef RDMAEMU_EMU_FABRIC_PRIV_H
#define RDMAEMU_EMU_FABRIC_PRIV_H

#include "emu/sim/array.h"
#include "emu/sim/fabric.h"

#define EMU_INCLUDE_DEPTH_MAX 16
/* The largest file the loaders read (a fabric, topology or address file): a name such as
 * /dev/zero would otherwise be read until memory runs out. */
#define EMU_LOADER_FILE_MAX (16u << 20)

/* A file the loader read: its canonical path and what stat said of it when it was read. */
struct emu_loader_file {
	char path[4096];
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

/* Where a directive came from; file points into the loader's interned file names. */
struct emu_src {
	const char *file;
	unsigned line;
};

/* Bits of struct emu_port_meta.set: port fields the file set explicitly (not derived). */
enum {
	EMU_PSET_LINK_LAYER = 1u << 0,
	EMU_PSET_STATE = 1u << 1,
	EMU_PSET_MAX_MTU = 1u << 2,
	EMU_PSET_ACTIVE_MTU = 1u << 3,
	EMU_PSET_LID = 1u << 4,
	EMU_PSET_SM_LID = 1u << 5,
	EMU_PSET_WIDTH = 1u << 6,
	EMU_PSET_SPEED = 1u << 7,
	EMU_PSET_GUID = 1u << 8,
	EMU_PSET_GIDS = 1u << 9,
	EMU_PSET_PKEYS = 1u << 10,
	EMU_PSET_GID_TBL_LEN = 1u << 11,
	EMU_PSET_PKEY_TBL_LEN = 1u << 12,
	EMU_PSET_LMC = 1u << 13,
};

/* Bits of struct emu_faults settings on a link line. */
enum {
	EMU_FSET_DELAY = 1u << 0,
	EMU_FSET_JITTER = 1u << 1,
	EMU_FSET_LOSS = 1u << 2,
	EMU_FSET_DUPLICATE = 1u << 3,
	EMU_FSET_REORDER = 1u << 4,
	EMU_FSET_DOWN = 1u << 5,
	EMU_FSET_WIDTH = 1u << 6,
	EMU_FSET_SPEED = 1u << 7,
	EMU_FSET_MATCH = 1u << 8,
	EMU_FSET_CORRUPT = 1u << 9,
};

struct emu_port_meta {
	unsigned set;
	struct emu_src src;
	bool in_topology; /* the port appears in a topology file: its LIDs came from there */
	struct emu_gid *explicit_gids; /* gid= values of a RoCE port, kept after the derived ones */
	size_t nexplicit_gids;
};

struct emu_dev_meta {
	bool declared;    /* a `device` line named it (else it came from a topology only) */
	bool from_topology;
	bool guid_set, sysguid_set;
	struct emu_src src;
	struct emu_port_meta *ports; /* parallel to device->ports */
};

struct emu_netdev_meta {
	char rdma_dev[EMU_NAME_MAX]; /* device named by rdma=, "" = none */
	unsigned rdma_port;
	bool hwaddr_set, mtu_set;
	struct emu_src src;
};

struct emu_host_meta {
	bool declared; /* a `host` line named it (else a topology CA created it) */
	struct emu_src src;
	char daemon[EMU_NAME_MAX]; /* daemon= as written, "" = none; resolved when finishing */
	struct emu_dev_meta *devs;       /* parallel to host->devices */
	struct emu_netdev_meta *netdevs; /* parallel to host->netdevs */
};

struct emu_switch_meta {
	bool declared;
	char name[EMU_NAME_MAX]; /* name used in link endpoints (= node_desc for text switches) */
	bool lid_set;
	struct emu_src src;
};

/* A route whose netdev is named (or implied by its gateway); resolved in the finishing pass. */
struct emu_pending_route {
	int host;
	char dev[EMU_NAME_MAX];
	struct emu_route route;
	struct emu_src src;
};

/* One end of a `link` line, as written: host/device/port, switch/port or none. */
struct emu_pending_ep {
	char part[3][EMU_NAME_MAX];
	int nparts; /* 3 host port, 2 switch port, 0 none */
};

struct emu_pending_link {
	struct emu_pending_ep a, b;
	struct emu_faults faults;
	uint8_t width, speed;
	unsigned set; /* EMU_FSET_* */
	struct emu_src src;
};

/* An ibacm_hosts.data line: an address or host name and the GID it maps to. */
struct emu_pending_hostsdata {
	char name[256];  /* the address or name as written */
	int family;      /* AF_INET, AF_INET6, or AF_UNSPEC for a host name */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint8_t gid[16];
	struct emu_src src;
};

struct emu_loader {
	struct emu_fabric *f;
	struct emu_error *err;

	/* side tables mirroring f->hosts / f->switches */
	struct emu_host_meta *hosts;
	struct emu_switch_meta *switches;
	struct emu_src *link_src; /* parallel to f->links */
	unsigned *link_set;       /* EMU_FSET_* applied explicitly to f->links[i] */

	struct emu_pending_route *routes;
	size_t nroutes;
	struct emu_pending_link *links;
	size_t nlinks;
	struct emu_pending_hostsdata *hostsdata;
	size_t nhostsdata;

	bool seed_set, resolver_set, sm_set, sm_lid_set;
	struct emu_src sm_src;

	/* interned file names (struct emu_src.file points here) */
	char **files;
	size_t nfiles;
	/* every file read, in order (the first is the fabric file), as a fabric image records
	 * them (fabric_image.c) */
	struct emu_loader_file *read;
	size_t nread;
	/* canonical paths of the files being read, for include cycles */
	char *stack[EMU_INCLUDE_DEPTH_MAX];
	int depth;

	/* context: the last host/device/port/netdev line (-1: none) */
	int cur_host, cur_dev, cur_port, cur_netdev;
	struct emu_src cur;   /* position being parsed */
	const char *cur_base; /* path relative file names resolve against (interned) */

	/* host names hashed (open addressing, host index + 1, 0 empty), so that a topology of
	 * thousands of CAs does not search the host list once per CA */
	int *host_idx;
	size_t host_idx_cap;
};

/* --- model helpers (fabric_model.c) --- */
int emu_loader_add_host(struct emu_loader *L, const char *name, bool declared);
int emu_loader_add_device(struct emu_loader *L, int host, const char *name, uint8_t link_layer);
int emu_loader_add_ports(struct emu_loader *L, int host, int dev, size_t nports);
int emu_loader_add_switch(struct emu_loader *L, const char *name, size_t nports);
int emu_loader_add_link(struct emu_loader *L, struct emu_endpoint a, struct emu_endpoint b);
const char *emu_loader_intern(struct emu_loader *L, const char *file);
void emu_loader_free(struct emu_loader *L); /* side tables only, not L->f */
int emu_loader_find_host(const struct emu_loader *L, const char *name);
int emu_loader_find_device(const struct emu_loader *L, int host, const char *name);
int emu_loader_find_switch(const struct emu_loader *L, const char *name);

/* Fills L->err at src (or at the current position when src is NULL), sets errno, returns -1. */
int emu_loader_error(struct emu_loader *L, const struct emu_src *src, int errnum,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Reads a whole file; NULL with errno (and L->err filled at `from`) on failure. Pushes the
 * file on the include stack (ELOOP on a cycle); emu_loader_pop() undoes that. */
char *emu_loader_read(struct emu_loader *L, const char *path, const struct emu_src *from,
		      char **canon);
void emu_loader_pop(struct emu_loader *L);
/* Path of `name` relative to the directory of `base` (a file) unless name is absolute. */
char *emu_path_join_dir(const char *base_file, const char *name);

/* --- fabric images (fabric_image.c) --- */
/* Records the file being read from fd (canonical path canon): 0, or -1 out of memory. */
int emu_loader_record_file(struct emu_loader *L, const char *canon, int fd);
/* The image of the fabric file `path` in the image directory, mapped, if there is a valid one
 * for it; else NULL. */
struct emu_fabric *emu_fabric_image_load(const char *path);
/* Writes f's image when an image directory is set and f is large enough. */
void emu_fabric_image_save(const struct emu_fabric *f, const struct emu_loader *L);

/* --- daemons (fabric_daemon.c) --- */
/* The `daemon NAME udp=ADDR:PORT` directive. */
int emu_load_daemon(struct emu_loader *L, int nw, char **w);
/* A host line's daemon=NAME. */
int emu_loader_host_daemon(struct emu_loader *L, int host, const char *name);
/* Resolves the hosts' daemon= names and checks the daemons (finishing pass). */
int emu_loader_finish_daemons(struct emu_loader *L);
/* `daemon` lines of `rdmaemu fabric show`. */
void emu_fabric_show_daemons(const struct emu_fabric *f, FILE *out);

/* --- the file readers --- */
/* Reads a file of the text format into L (include processing happens here). */
int emu_load_file(struct emu_loader *L, const char *path);
/* Reads an ibnetdiscover / ibsim topology file. */
int emu_ibnd_load(struct emu_loader *L, const char *path);
/* Reads an ibacm_hosts.data file into L->hostsdata. */
int emu_hostsdata_load(struct emu_loader *L, const char *path);
/* Resolves names, checks consistency, derives GUIDs, GIDs, LIDs, MTUs, states. */
int emu_loader_finish(struct emu_loader *L);

/* --- lexical helpers (fabric_util.c) --- */
/* Splits line in place into whitespace-separated words; "..." groups, '#' outside quotes ends
 * the line. Returns the word count, or -1 for an unterminated quote. */
int emu_split_words(char *line, char **words, int max);
int emu_parse_u64(const char *s, uint64_t *v);       /* decimal or 0x hex */
int emu_parse_u32_max(const char *s, uint32_t max, uint32_t *v);
int emu_parse_duration(const char *s, uint64_t *ns);  /* 10us, 1.5ms, 2s, 0 */
int emu_parse_probability(const char *s, double *p);  /* 0.01 or 1% */
int emu_parse_hwaddr(const char *s, uint8_t *out, size_t max, uint8_t *len);
int emu_parse_guid(const char *s, uint64_t *guid);    /* 0x0002c903000a0001 or 0002:c903:000a:0001 */
int emu_parse_prefix(const char *s, struct emu_ifaddr *a, bool want_prefix); /* a.b.c.d/n */
int emu_parse_width(const char *s, uint8_t *width);   /* 1x 2x 4x 8x 12x */
int emu_parse_speed(const char *s, uint8_t *speed);   /* SDR DDR QDR FDR10 FDR EDR HDR NDR */
int emu_parse_mtu(const char *s, uint8_t *ibv_mtu);   /* 256 .. 4096 bytes */

const char *emu_width_str(uint8_t width);
const char *emu_speed_str(uint8_t speed);
const char *emu_phys_state_str(uint8_t phys);
/* Largest IB MTU (enum ibv_mtu) that fits in `bytes` of payload, 0 when below 256. */
uint8_t emu_mtu_from_bytes(unsigned bytes);
/* The MAC's modified EUI-64 (U/L bit flipped, ff:fe in the middle), as rxe makes node GUIDs. */
uint64_t emu_eui64_from_mac(const uint8_t mac[6]);
void emu_gid_set(uint8_t raw[16], uint64_t prefix, uint64_t iid);
bool emu_addr_in_prefix(int family, const void *addr, const void *net, unsigned plen);
void emu_guid_str(uint64_t guid, char buf[20]); /* 0002:c903:000a:0001 */

/* The text of the built-in default fabric (= fixtures/default.fabric). */
const char *emu_fabric_builtin_text(void);

/* rxe's device limits as Debian 12's kernel 6.1 reports them (fabric_caps.c). */
void emu_rxe_default_caps(struct emu_device_caps *caps);
/* Names of the caps for `cap KEY=VALUE` lines and `fabric show`. */
struct emu_cap_field {
	const char *name;
	size_t offset;
	size_t size;
};
extern const struct emu_cap_field emu_cap_fields[];
extern const size_t emu_ncap_fields;

#endif
