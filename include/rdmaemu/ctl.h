/* rdmaemu control API (librdmaemu.so.0).
 *
 * Programs and the conformance suite use these to steer the emulator: which fabric and node the
 * process is attached to, fault injection, virtual time. The conformance suite never links
 * against them: it finds them at run time with dlsym(RTLD_DEFAULT, ...) so that the same binary
 * runs against a real rdma-core, where they are absent and emulator-only cases report Notrun.
 *
 * Attachment: a process is attached to one node (host) of one fabric. By default the fabric is
 * $RDMAEMU_FABRIC (a fabric file, see rdmaemu-fabric(5)) or the built-in default fabric, and
 * the node is $RDMAEMU_NODE or the fabric's first host. The attachment is fixed the first time
 * any emulated library needs it (e.g. rdma_getaddrinfo); rdmaemu_ctl_attach*() must come first.
 */
#ifndef RDMAEMU_CTL_H
#define RDMAEMU_CTL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "rdmaemu X.Y.Z". */
const char *rdmaemu_ctl_version(void);

/* The personality of the emulated librdmacm.so.1 loaded in this process: the rdma-core
 * generation whose librdmacm it behaves as, 44 (Debian 12's) or 61 (with the v60 calls and
 * strings); docs/rdma-core-generations.md lists the differences. 0 when no emulated librdmacm
 * is loaded. */
int rdmaemu_ctl_rdmacm_level(void);

/* Called by the emulated librdmacm.so.1 when it is loaded, with its personality. */
void rdmaemu_ctl_rdmacm_loaded(int level);

/* Attach this process to node `node` (NULL: the first host) of the fabric in file `path`
 * (NULL: the built-in default). Returns 0, or -1 with errno: EBUSY when the process is already
 * attached (a library call needed it), ENOENT for a missing file or node, EINVAL for a fabric
 * that does not load (the reason is printed on stderr). */
int rdmaemu_ctl_attach(const char *path, const char *node);

/* Same with the fabric given as text (rdmaemu-fabric(5) format). */
int rdmaemu_ctl_attach_text(const char *text, const char *node);

/* Name of the node this process is attached to (attaching now if needed), NULL on error. */
const char *rdmaemu_ctl_node(void);

/* Opens the RDMA devices of another host `node` of the attached fabric in this process too, so
 * one test program can play both ends of a link: ibv_get_device_list() then lists them after
 * the attached host's own, under the names that host gives them (the same name twice is
 * possible: tell them apart by ibv_get_device_guid), with uverbs numbers following on; sysfs
 * shows only the attached host's. Must come before the first ibv_get_device_list(). 0, or -1
 * with errno: ENOENT (no such node), EINVAL (the attached node itself), EBUSY (the device list
 * exists already), ENOSPC (more than 8 hosts), or the attach error. Calling it again for the
 * same node is 0. */
int rdmaemu_ctl_open_host_devices(const char *node);

/* Acting as another host for the connection manager: the rdma_cm event channels (and the
 * private channels of synchronous ids, rdma_create_ep, rdma_migrate_id(id, NULL)) that the
 * calling thread creates after this call belong to host `node`, so their ids bind, listen and
 * connect as that host does; channels created before keep their host. Per thread; NULL (or
 * the attached node's name) goes back to the attached host. `node` must be the attached host
 * or one whose devices rdmaemu_ctl_open_host_devices opened (its ids need their devices). 0,
 * or -1 with errno: ENOENT (no such node), EINVAL (devices not opened), or the attach error. */
int rdmaemu_ctl_cm_host(const char *node);

/* Faults on the connection manager's messages: every MAD of one kind ("REQ", "MRA", "REJ",
 * "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR") that the CM of device
 * `device` (NULL: every device) of host `node` (NULL: the attached one) sends. For each such
 * MAD: drop (the next drop_next, then with probability drop), duplicate (dup_next, dup),
 * delay by delay_ns (delay_next, delay); the probabilities draw from the CM's seeded stream.
 * The sender's retries (the kernel's MAD layer: REQ, REP, DREQ, SIDR_REQ are resent until
 * answered) then decide what the applications see. old (may be NULL) gets the previous rule
 * of the first device. 0, or -1 with errno: EINVAL (unknown message, probability outside
 * [0, 1]), ENOENT (no such node or device), or the attach error. */
struct rdmaemu_cm_fault {
	unsigned drop_next, dup_next, delay_next;
	double drop, dup, delay;
	uint64_t delay_ns;
};
int rdmaemu_ctl_cm_fault(const char *node, const char *device, const char *msg,
			 const struct rdmaemu_cm_fault *set, struct rdmaemu_cm_fault *old);

/* The CM's counters for one message kind on host `node` (NULL: the attached one), summed over
 * its devices: out[0] sent (retries included), out[1] retries, out[2] received, out[3] dropped
 * by the faults. 0, or -1 with errno EINVAL / ENOENT / the attach error. */
int rdmaemu_ctl_cm_counters(const char *node, const char *msg, uint64_t out[4]);

/* getaddrinfo(3) as the attached host sees it (attaching now if needed): the same contract
 * (hints may be NULL; 0 or an EAI_* code; free the result with freeaddrinfo(3)), with these
 * differences, all for determinism and so that no name ever reaches DNS:
 *  - numeric hosts and services are parsed by glibc itself (AI_NUMERICHOST), so every literal
 *    form, port wrap and EAI_* precedence is glibc's;
 *  - a name is looked up in the fabric's name table, then in /etc/hosts ($RDMAEMU_HOSTS_FILE
 *    overrides the path, for tests), and only when the fabric says "resolver system" in the
 *    system resolver;
 *  - AI_ADDRCONFIG and "%ifname" scope ids are judged against the emulated host's netdevs, not
 *    the real machine's (index 1 is "lo", the host's netdevs follow from 2).
 * The emulated librdmacm's rdma_getaddrinfo resolves through it. EAI_SYSTEM with errno: the
 * attach error. */
struct addrinfo;
int rdmaemu_ctl_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			    struct addrinfo **res);

/* Virtual time. In-process hosting runs on a virtual clock (nanoseconds, starting at 0 when
 * the engine is created at the first call that needs it); it moves only when nothing the
 * application could do would come first (docs/engine.md in the source tree). */

/* The current virtual time in *now. Reading it is not an engine call: it neither attaches the
 * calling thread to the engine nor holds back the advance of time. 0, or -1 with errno:
 * EINVAL (now is NULL), or the attach error (ENOENT, EINVAL). */
int rdmaemu_ctl_now_ns(uint64_t *now);

/* Advances virtual time by delta ns, firing the timers due meanwhile in order (and delivering
 * the frames), as if the application had slept that long. 0, or -1 with errno: the attach
 * error, or ELOOP when timers re-arm themselves without delay (a diagnostic is printed). */
int rdmaemu_ctl_advance_ns(uint64_t delta);

/* The fake Subnet Administrator's faults and timing (IB fabrics with an SM; see the `sm` line
 * of rdmaemu-fabric(5) for the same settings in a fixture). Counters act first, then the
 * probabilities (one draw each per request from the SA's own seeded stream, whatever the
 * values), then the forced error. */
struct rdmaemu_sa_policy {
	uint64_t response_delay_ns; /* virtual time between a request and its answer */
	unsigned drop_next;         /* the next N requests get no answer (the asker times out) */
	double drop;                /* then each request is dropped with this probability */
	unsigned busy_next;         /* the next N requests are answered with MAD status BUSY */
	double busy;
	uint16_t error_status;      /* non-zero: answers carry this MAD status and no records
				     * (e.g. 0x0300 ERR_NO_RECORDS) */
	uint16_t error_attr;        /* ... only for this attribute ID (0: every attribute) */
};

/* Reads (old, may be NULL) and then replaces (set, may be NULL) the SA's policy; starts the
 * SA on the attached fabric if it is not running yet. 0, or -1 with errno: ENODEV (the fabric
 * has no SM), EINVAL (a probability outside [0, 1]), or the attach error. */
int rdmaemu_ctl_sa_policy(const struct rdmaemu_sa_policy *set, struct rdmaemu_sa_policy *old);

/* The emulated hosts' interfaces, as `ip` would change them on a real host. `node` names a
 * host of the attached fabric (NULL: the attached node), `netdev` one of its netdevs. The
 * rdma_cm sees the changes (address change events, routes, neighbour resolution). */

/* `ip addr add PREFIX dev NETDEV`, e.g. "192.0.2.70/28" or "2001:db8::1/64". 0, or -1 with
 * errno: ENOENT (no such node or netdev), EINVAL (bad prefix), EEXIST (already there), or the
 * attach error. */
int rdmaemu_ctl_addr_add(const char *node, const char *netdev, const char *prefix);
/* `ip addr del PREFIX dev NETDEV`. Errors as for add; EADDRNOTAVAIL when it is not there. */
int rdmaemu_ctl_addr_del(const char *node, const char *netdev, const char *prefix);
/* `ip link set NETDEV up|down` (up != 0: up). A down netdev has no routes and answers no
 * neighbour solicitation; its neighbour entries are dropped. The RDMA port of an Ethernet
 * netdev follows it as rxe's does: PORT_DOWN with physical state Disabled (3), and no RoCE
 * packet leaves or reaches it (CM MADs included) until it is up again (PORT_ACTIVE, LinkUp).
 * In a process attached to rdmaemud it changes the daemon's host, as `rdmaemu daemon
 * link-set` does, and returns once the change is applied there (and, for the process's own
 * host, in its own view of the port). 0 or -1 with errno ENOENT. */
int rdmaemu_ctl_link_set(const char *node, const char *netdev, int up);
/* `ip neigh flush dev NETDEV` (NULL netdev: every netdev of the node). The number of entries
 * dropped, or -1 with errno ENOENT. In a process attached to rdmaemud it flushes the daemon's
 * tables (the host's processes' kept MACs go stale with them). */
int rdmaemu_ctl_neigh_flush(const char *node, const char *netdev);

/* `rdma link delete DEV`: unregisters RDMA device `dev` of host `node` (NULL: the attached
 * node) as Linux 6.1 does with an rxe device. Every rdma_cm id attached to it (bound to one of
 * its addresses, resolved onto it, listening on it, or a connection through it) gets one
 * RDMA_CM_EVENT_DEVICE_REMOVAL, status 0, in the order the ids took the device; the kernel then
 * destroys their CM state itself (an established connection sends a DREQ, so the peer sees
 * DISCONNECTED), later calls on those ids fail with ENXIO and rdma_destroy_id still returns 0.
 * Wildcard listeners, idle ids and ids on other devices see nothing. The device leaves
 * ibv_get_device_list() (and librdmacm's list at its next resync, e.g. rdma_get_devices);
 * binds to the netdev's addresses then fail with ENODEV (the netdev stays, without RDMA
 * device). Verbs contexts opened before get no async event and keep working (rxe has no
 * disassociate). There is no way back. In-process hosting only. 0, or -1 with errno: ENOENT
 * (no such node, or no such device left on it), EINVAL (dev NULL), EOPNOTSUPP (the process
 * runs under rdmaemud), ENOMEM, or the attach error. */
int rdmaemu_ctl_device_remove(const char *node, const char *dev);

#ifdef __cplusplus
}
#endif
#endif
