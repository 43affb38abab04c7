/* rdmaemu-conformance: the case table, the four result states and the helpers case bodies use.
 *
 * The suite is written against the public librdmacm/libibverbs API only (principle 7 of
 * DESIGN.md): it never links the emulator and finds the emulator's control API at run time with
 * dlsym. Every case runs in a forked child (see runner.c), so a case body may crash, hang or
 * leave the library initialised without affecting the next case.
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* fabtests' four states. Excluded: listed in the target's deviation manifest, not run. */
enum conf_state { CONF_PASS, CONF_FAIL, CONF_NOTRUN, CONF_EXCLUDED };

enum conf_target { TARGET_EMU, TARGET_SYSTEM };

/* Preconditions, checked in the child before the case body runs. */
enum {
	PRE_NONE = 0,
	PRE_DEVICE = 1u << 0,       /* >= 1 RDMA device (spec DI `fake` or `no`) */
	PRE_NODEVICE = 1u << 1,     /* a machine without RDMA devices (emu: the "nodev" fabric) */
	PRE_EMU_ONLY = 1u << 2,     /* spec DI `emu`: the real library crashes or cannot be steered */
	PRE_LEVEL60 = 1u << 3,      /* rdma-core >= v60 behaviour (RDMACM_1.4) */
	PRE_LEVEL_BELOW60 = 1u << 4,/* rdma-core < v60 behaviour */
	PRE_NOACM = 1u << 5,        /* ibacm must not be running (results would carry route data) */
	PRE_NODNS_SYSTEM = 1u << 6, /* the stimulus would reach DNS through glibc on a real stack */
	PRE_FAKEDEV = 1u << 7,      /* a visible device without /dev/infiniband/rdma_cm (system:
				     * fakedev.c; no emulated equivalent yet) */
	PRE_CM = 1u << 8,           /* the kernel CM (/dev/infiniband/rdma_cm) and a device (spec
				     * DI `no`); never a fake device */
	PRE_FAKEACM = 1u << 9,      /* the case runs a fake ibacm (fakeacm.h); system target: root,
				     * and no /run/ibacm.port or /run/ibacm.sock */
};

struct conf_case {
	const char *id;         /* "GAI-35", "GAI-39b": AREA-<row>[suffix] */
	const char *area;       /* "GAI" */
	int row;                /* row of the conformance matrix, spec §15 */
	const char *desc;       /* what is checked (the real behaviour) */
	const char *documented; /* what the man page / seeds say where it differs (§16), or NULL */
	unsigned pre;           /* PRE_* */
	const char *notrun;     /* non-NULL: never runnable here, with this reason */
	int timeout;            /* seconds; 0: the run's default */
	void (*fn)(const struct conf_case *c);
	const void *data;       /* the table row of a table-driven case */
};

/* A second setting a set of cases also runs in (variant.c; the runner keeps which copy runs
 * in which variant): on the emulator a fabric to attach
 * (and a second host whose devices the case opens), on the system target the link layer the
 * first device must have. Copies get the id "<ID>@<name>" and the area "<AREA>@<name>". */
struct conf_variant {
	const char *name;        /* "IB", "2N" */
	const char *what;        /* prefix of the copies' descriptions */
	const char *fabric;      /* emu: fabric text to attach (rdmaemu-fabric(5)) */
	const char *node;        /* emu: the node this process is */
	const char *peer_node;   /* emu, two-node: the host whose devices are opened too */
	const char *local;       /* the IPv4 address CM cases use as the local one */
	const char *peer;        /* two-node: the listener's IPv4 address (on peer_node) */
	int link_layer;          /* system: IBV_LINK_LAYER_* port 1 of the first device needs; 0 */
	const char *const *cases;/* id globs of the cases that run in this setting */
};

/* Case tables, one per area (case_*.c). */
struct conf_area {
	const char *name;
	const struct conf_case *cases;
	size_t count;
};
extern const struct conf_area conf_area_sym, conf_area_abi, conf_area_str, conf_area_init,
	conf_area_gai, conf_area_acm, conf_area_port, conf_area_ex, conf_area_cmid,
	conf_area_cmbind, conf_area_cmqp, conf_area_cmroute, conf_area_cmconn, conf_area_seed;
extern const struct conf_area conf_area_fab; /* case_fab.c */
extern const struct conf_area conf_area_rs, conf_area_rs_conn, conf_area_rs_io,
	conf_area_rs_ext; /* case_rs*.c */

/* --- helpers for case bodies (child side, runner.c) ------------------------------------- */

/* The stimulus, shown first on the case line: `("127.0.0.1","7471",NULL)`. */
void conf_stimulus(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Observed result, shown after "->" when the case passes. */
void conf_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Records a failed expectation (the case goes on, so one run shows every difference). */
bool conf_expect(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* End the case now. */
_Noreturn void conf_notrun(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void conf_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A -1 where something else was wanted also shows the errno the call left (read right after
 * got is evaluated, once). */
#define EXPECT_INT(what, got, want)                                                           \
	({                                                                                     \
		long long got_ = (long long)(got);                                             \
		int errno_ = errno;                                                            \
		conf_expect_int((what), got_, (long long)(want), errno_);                      \
	})
bool conf_expect_int(const char *what, long long got, long long want, int err);
#define EXPECT_HEX(what, got, want)                                                           \
	({                                                                                     \
		unsigned long long hgot_ = (unsigned long long)(got);                          \
		int herrno_ = errno;                                                           \
		conf_expect_hex((what), hgot_, (unsigned long long)(want), herrno_);           \
	})
bool conf_expect_hex(const char *what, unsigned long long got, unsigned long long want, int err);
#define EXPECT_ERRNO(what, got, want)                                                         \
	conf_expect((got) == (want), "%s: errno %s, want %s", (what), conf_errno_name(got),      \
		    conf_errno_name(want))
#define EXPECT_NULL(what, p) conf_expect((p) == NULL, "%s: got %p, want NULL", (what), (void *)(p))

/* --- target facts (target.c); valid in the parent and in children ---------------------- */
enum conf_target conf_target(void);
const char *conf_target_name(void);
/* Whether the program runs on an emulated host under `rdmaemu run` (the emulator's libraries
 * loaded, RDMAEMU_DAEMON set): --target system then tests that host. */
bool conf_on_emulated_host(void);
/* --fake-device: on the system target, DEVICE rows run against a fake device (fakedev.c). */
bool conf_fake_device(void);
void conf_set_fake_device(bool on);
/* rdma-core release whose behaviour the loaded librdmacm has: the emulator's
 * rdmaemu_ctl_rdmacm_level(); on a real stack 60 if RDMACM_1.4 exists, else 44. */
int conf_rdmacm_level(void);
/* --fabric FILE (emu: the fabric to attach; NULL: the built-in default), --local ADDR and
 * --peer ADDR (the IPv4 addresses CM cases use; NULL: the fabric's / the device's). */
const char *conf_fabric_path(void);
void conf_set_fabric_path(const char *path);
const char *conf_local_addr(void);
void conf_set_local_addr(const char *addr);
const char *conf_peer_addr(void);
void conf_set_peer_addr(const char *addr);
/* --passive: this process is the peer of a two-node run (system target): the @2N cases run
 * their passive half here, listening on --local, while another host runs their active half
 * with --peer naming this one. */
bool conf_passive(void);
void conf_set_passive(bool on);
/* The variant of the case this child runs (NULL: the plain case). */
const struct conf_variant *conf_variant(void);
/* Path of the librdmacm the process loaded (dladdr on rdma_getaddrinfo). */
const char *conf_librdmacm_path(void);
const char *conf_libibverbs_path(void);
/* dlsym(RTLD_DEFAULT, name) of the emulator's control API; NULL on a real stack. */
void *conf_ctl_sym(const char *name);

/* --- names and formatting (util.c) ----------------------------------------------------- */
const char *conf_errno_name(int e);   /* "ENODEV" (or "errno 123") */
const char *conf_eai_name(int ret);   /* "EAI_SOCKTYPE" (or "ret -99") */
/* sockaddr as text: "127.0.0.1:7471", "[::1]:7471", "ib[fe80::..] pkey 0xffff sid 0x.. mask 0x..";
 * len 0 / NULL: "-". Returns buf. */
char *conf_fmt_sockaddr(char *buf, size_t size, const struct sockaddr *sa, socklen_t len);
/* Builds a sockaddr from "A.B.C.D:port", "[v6]:port" or
 * "ib:[gid] pkey=0x.. sid=0x.. mask=0x.." (flowinfo and scope 0). Returns the length, 0 on a
 * malformed spec. */
socklen_t conf_parse_sockaddr(const char *spec, struct sockaddr_storage *ss);
/* Does a file or socket exist at path? */
bool conf_path_exists(const char *path);
/* Is this program the build tree's (its executable lies under the build directory)? Then the
 * build's libraries and the source tree's fixtures are used, else the installed ones. */
bool conf_in_build_tree(void);

#endif
