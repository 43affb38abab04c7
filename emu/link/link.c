/* The client end of the rdmaemud protocol (emu/link/link.h, docs/daemon.md).
 *
 * One socket per process. Sends happen under the engine lock, one sendmsg per frame with the
 * header and the frame as two iovecs (no copy in user space); a receive thread reads each
 * message into a buffer it hands to the engine (emu_engine_post_frame), which delivers it in
 * place: a frame is copied into and out of the kernel's socket buffer, nothing else. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/sim/engine_tasks.h"
#include "emu/link/proto.h"
#include "emu/sim/engine.h"
#include "emu/hca/hca.h"
#include "emu/link/link.h"
#include "emu/link/link_shm.h"
#include "emu/sim/trace.h"
#include "rdmaemu/ctl.h"
#include "rdmaemu/ctl.h"
#include "util/failcall.h"

#define LINK_NEIGH_KEPT 64 /* MACs kept (one per slot of a hash of the addresses) */

static struct {
	int fd;
	bool active;
	size_t host;
	uint32_t qpn_min, qpn_max;
	char qp_note[400]; /* emu_hca_set_qp_range_note's line */
	/* the engine, once it exists: the receive thread runs from the attach on (it answers
	 * the daemon's SHM_PEER even in a process that never creates an engine, which a new
	 * process of the host waits for), and drops frames until then (no HCA exists yet) */
	pthread_mutex_t m;
	struct emu_engine *e;
	pthread_t rx;
	bool rx_started;
	/* device removals of the daemon applied to this process's fabric (lk.m) */
	struct emu_fabric *f;
	uint32_t devrm_gen;
	pthread_cond_t devrm_cv;
	/* the daemon's link changes (LINK_SET) of our host applied to the fabric copy (lk.m) */
	uint32_t link_gen;
	pthread_cond_t link_cv;
	/* MACs answered by NEIGH_RESOLVE, kept while the host's neighbour generation stays
	 * (neigh_gen: the newest the daemon told, by NEIGH_GEN or in an answer; lk.m) */
	uint32_t neigh_gen;
	struct neigh_kept {
		uint32_t gen; /* 0: empty */
		struct sockaddr_storage src, dst;
		uint8_t mac[6];
	} neigh_kept[LINK_NEIGH_KEPT];
	/* virtual time (the daemon runs --virtual-time): this process's engine follows the
	 * daemon's clock; vt_now is the daemon's last instant heard before the engine exists */
	bool vt;
	uint64_t vt_now;
	int rx_busy; /* atomic: the receive thread holds a message it has not queued yet */
	/* threads waiting for an answer the daemon gives at once (emu_link_vt_hold), and the
	 * engine they hold still once it exists (hold_m, taken before the engine's lock) */
	pthread_mutex_t hold_m;
	unsigned holds;
	struct emu_engine *hold_e;
	/* the receive thread's look at threads before the engine exists */
	struct emu_tasks tasks, children;
} lk = { .hold_m = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .m = PTHREAD_MUTEX_INITIALIZER, .devrm_cv = PTHREAD_COND_INITIALIZER,
	  .link_cv = PTHREAD_COND_INITIALIZER };

static void rx_start(void);

/* Messages this process has sent to the daemon, on every connection (virtual time: the
 * daemon takes a VT_IDLE answer as current only when it has received as many). Atomic. */
static uint64_t sent_count;

uint64_t emu_link_count_sent(int delta)
{
	return __atomic_add_fetch(&sent_count, (uint64_t)(int64_t)delta, __ATOMIC_SEQ_CST);
}

/* a child of fork starts its own count (the daemon counts by process) */
static void sent_count_child(void)
{
	sent_count = 0;
}

__attribute__((constructor)) static void sent_count_init(void)
{
	pthread_atfork(NULL, NULL, sent_count_child);
}

bool emu_link_virtual_time(void)
{
	return lk.active && lk.vt;
}

/* RDMAEMU_TRACE=neighlink: each NEIGH_RESOLVE, asked or answered from what the process kept */
static void neigh_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void neigh_trace(const char *fmt, ...)
{
	static int on = -1;
	va_list ap;

	if (!emu_trace_enabled(&on, "neighlink"))
		return;
	va_start(ap, fmt);
	emu_trace_vprint("neighlink: ", fmt, ap);
	va_end(ap);
}

/* NEIGH_GEN: a newer neighbour generation of our host (lk.m held) */
static void neigh_gen_seen(uint32_t gen)
{
	if (gen > lk.neigh_gen)
		lk.neigh_gen = gen;
}

int emu_link_runtime_dir(char *buf, size_t len, bool create)
{
	const char *env = getenv("RDMAEMU_RUNTIME_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/rdmaemu", xdg);
	else
		n = snprintf(buf, len, "/tmp/rdmaemu-%u", (unsigned)getuid());
	if (n < 0 || (size_t)n >= len)
		return ENAMETOOLONG;
	if (create && mkdir(buf, 0700) && errno != EEXIST) {
		int e = errno;

		fprintf(stderr, "rdmaemu: cannot create %s: %s\n", buf, strerror(e));
		return e;
	}
	/* lstat: a symlink planted in /tmp by someone else is refused, not followed */
	if (lstat(buf, &st)) {
		int e = errno;

		if (create || e != ENOENT)
			fprintf(stderr, "rdmaemu: %s: %s\n", buf, strerror(e));
		return e;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		fprintf(stderr, "rdmaemu: runtime directory %s is not a directory of yours with "
				"mode 0700: refused\n", buf);
		return EPERM;
	}
	return 0;
}

int emu_link_socket_path(char *buf, size_t len, bool create)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int err = emu_link_runtime_dir(dir, sizeof(dir), create);
	int n;

	if (err)
		return err;
	n = snprintf(buf, len, "%s/rdmaemud.sock", dir);
	return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

ssize_t emu_link_sendmsg_fds(int sock, const struct iovec *iov, int n, const int *fds,
			     int nfds, int flags)
{
	union {
		char b[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n };

	if (nfds < 0 || nfds > 2) {
		errno = EINVAL;
		return -1;
	}
	if (nfds) {
		struct cmsghdr *cm;

		memset(&c, 0, sizeof(c));
		m.msg_control = c.b;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	return sendmsg(sock, &m, flags);
}

/* The daemon's socket is the user's alone: a socket (not a symlink to one), owned by the
 * user, mode 0600. Anything else may be someone else's daemon, to whom the process would hand
 * its frames and memory: refused with EPERM and a message. A missing socket is ENOENT. */
static bool socket_is_ours(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return false;
	if (S_ISSOCK(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077))
		return true;
	fprintf(stderr, "rdmaemu: %s is not a socket of yours with mode 0600: refused\n", path);
	errno = EPERM;
	return false;
}

/* The process that listens there runs as this user (SO_PEERCRED: the kernel's word). */
static bool daemon_is_ours(int fd, const char *path)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl))
		return false;
	if (cr.uid == geteuid())
		return true;
	fprintf(stderr, "rdmaemu: the daemon on %s runs as uid %u, not as uid %u: refused\n", path,
		(unsigned)cr.uid, (unsigned)geteuid());
	errno = EPERM;
	return false;
}

int emu_link_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (!socket_is_ours(path))
		return -1;
	fd = emu_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || !daemon_is_ours(fd, path)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int send_msg(int fd, uint16_t type, uint32_t arg, const void *body, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, 0 };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = body && len ? 2 : 1 };
	bool counted = type != EMU_DMSG_VT_IDLE;
	ssize_t n;

	/* counted before it can arrive: the daemon never sees more than the count; a frame
	 * carries the count in pad (its place among the process's command records) */
	if (counted)
		h.pad = (uint32_t)emu_link_count_sent(1);
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0 && counted)
		emu_link_count_sent(-1);
	return n < 0 ? -errno : 0;
}

/* A device the daemon removed leaves this process's device lists (ibv_get_device_list and
 * librdmacm's resync read the flag); its objects and open contexts stay, as on rxe. */
static void devrm_apply_locked(uint32_t host, uint32_t dev)
{
	if (lk.f && host < lk.f->nhosts && dev < lk.f->hosts[host].ndevices)
		__atomic_store_n(&lk.f->hosts[host].devices[dev].removed, true, __ATOMIC_RELEASE);
}

/* rxe's port follows its netdev (rxe_port_up / rxe_port_down): the RoCE port whose NIC is
 * netdev nd of our host (its first netdev) reads ACTIVE and LinkUp, or DOWN and Disabled, in
 * this process's copy of the fabric (ibv_query_port, the sysfs files), as the daemon's
 * engine set it in its own (emu/net/roce_gid.c). The wire is the daemon's: nothing else here
 * depends on it. lk.m held. */
static void link_apply_locked(uint32_t nd, bool up)
{
	struct emu_host *h;
	struct emu_netdev *n;
	struct emu_port *p;

	if (!lk.f || lk.host >= lk.f->nhosts || nd >= lk.f->hosts[lk.host].nnetdevs)
		return;
	h = &lk.f->hosts[lk.host];
	n = &h->netdevs[nd];
	if (n->device < 0 || (size_t)n->device >= h->ndevices || n->port < 1 ||
	    n->port > h->devices[n->device].nports)
		return;
	for (uint32_t j = 0; j < nd; j++)
		if (h->netdevs[j].device == n->device && h->netdevs[j].port == n->port)
			return;
	p = &h->devices[n->device].ports[n->port - 1];
	if (p->link_layer != EMU_LL_ETHERNET)
		return;
	__atomic_store_n(&p->state, up ? 4 : 1, __ATOMIC_RELEASE);
	__atomic_store_n(&p->phys_state, up ? 5 : 3, __ATOMIC_RELEASE);
}

/* WELCOME's link state: the netdevs of our host the daemon has taken down or up since it
 * loaded the fabric (lk.m held). */
static void link_welcome_locked(const struct emu_dmsg_welcome *w)
{
	const struct emu_host *h = lk.f && lk.host < lk.f->nhosts ? &lk.f->hosts[lk.host] : NULL;

	for (uint32_t i = 0; h && i < h->nnetdevs && i < 64; i++) {
		bool down = w->netdevs_down >> i & 1;

		if (down == h->netdevs[i].up)
			link_apply_locked(i, !down);
	}
	lk.link_gen = w->link_gen;
}

/* RDMAEMU_TIME=virtual under a daemon (rdmaemu run --virtual-time): the daemon must run its
 * fabric in virtual time; otherwise in real time. */
static bool want_virtual_time(void)
{
	const char *t = getenv("RDMAEMU_TIME");

	return t && !strcmp(t, "virtual");
}

int emu_link_attach(struct emu_fabric *f, const struct emu_host *h, const char *fabric_path)
{
	const char *path = getenv("RDMAEMU_DAEMON");
	struct emu_dmsg_hello hello;
	struct {
		struct emu_dmsg h;
		struct emu_dmsg_welcome w;
	} ans;
	ssize_t n = 0;
	int fd, err;

	memset(&hello, 0, sizeof(hello));
	snprintf(hello.node, sizeof(hello.node), "%s", h->name);
	if (fabric_path && *fabric_path && !realpath(fabric_path, hello.fabric)) {
		err = errno;
		fprintf(stderr, "rdmaemu: %s: %s\n", fabric_path, strerror(err));
		return err;
	}
	hello.pid = (int32_t)getpid();
	hello.flags = want_virtual_time() ? EMU_DPROTO_VIRTUAL_TIME : 0;
	hello.sent = __atomic_load_n(&sent_count, __ATOMIC_SEQ_CST) + 1;
	fd = emu_link_connect(path);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, "rdmaemu: cannot reach rdmaemud at %s: %s\n", path, strerror(err));
		return err;
	}
	err = -send_msg(fd, EMU_DMSG_HELLO, 0, &hello, sizeof(hello));
	if (!err) {
		do
			n = recv(fd, &ans, sizeof(ans), 0);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			err = errno;
		else if ((size_t)n < sizeof(ans.h) || ans.h.magic != EMU_DPROTO_MAGIC ||
			 ans.h.type != EMU_DMSG_WELCOME)
			err = EPROTO;
		else if (ans.h.arg)
			err = (int)ans.h.arg;
		else if ((size_t)n < sizeof(ans))
			err = EPROTO;
	}
	if (err == EPROTOTYPE && (size_t)n >= sizeof(ans)) {
		fprintf(stderr, "rdmaemu: rdmaemud at %s runs its fabric in %s time; this process "
				"asks for %s time (rdmaemu run%s): refused\n", path,
			ans.w.flags & EMU_DPROTO_VIRTUAL_TIME ? "virtual" : "real",
			hello.flags & EMU_DPROTO_VIRTUAL_TIME ? "virtual" : "real",
			hello.flags & EMU_DPROTO_VIRTUAL_TIME ? " --virtual-time" : "");
		close(fd);
		return err;
	}
	if (err == EUSERS)
		fprintf(stderr, "rdmaemu: host '%s' has all its process slots in use (each process "
				"takes a slice of the host's 24-bit QP numbers, the fabric's "
				"process-qpns, %u by default; rdmaemud's log says how many): a smaller "
				"process-qpns gives a host more processes, or run more processes on "
				"other hosts of the fabric\n", hello.node, EMU_DPROTO_QPN_SLICE);
	if (err == EREMOTE)
		fprintf(stderr, "rdmaemu: host '%s' of fabric '%s' runs under another of the fabric's "
				"daemons (its daemon=), not the rdmaemud at %s\n", hello.node,
			hello.fabric, path);
	if (err) {
		fprintf(stderr, "rdmaemu: rdmaemud at %s refused host '%s' of fabric '%s': %s\n",
			path, hello.node, hello.fabric[0] ? hello.fabric : "(built-in)",
			strerror(err));
		close(fd);
		return err;
	}
	lk.fd = fd;
	pthread_mutex_lock(&lk.m);
	lk.f = f;
	for (uint32_t i = 0; i < ans.w.devrm_gen && i < EMU_DPROTO_MAX_REMOVED; i++)
		devrm_apply_locked(ans.w.removed[i].host, ans.w.removed[i].dev);
	lk.devrm_gen = ans.w.devrm_gen;
	lk.host = ans.w.host;
	link_welcome_locked(&ans.w);
	pthread_mutex_unlock(&lk.m);
	lk.qpn_min = ans.w.qpn_min;
	lk.qpn_max = ans.w.qpn_max;
	lk.vt = ans.w.flags & EMU_DPROTO_VIRTUAL_TIME;
	lk.vt_now = ans.w.now;
	lk.active = true;
	/* the daemon runs the wire and writes the captures */
	emu_engine_set_wire_remote(true);
	/* before any HCA exists: its QP pool takes this slice */
	emu_hca_set_qp_range(lk.qpn_min, lk.qpn_max);
	snprintf(lk.qp_note, sizeof(lk.qp_note),
		 "rdmaemu: this process has used all %u QP numbers rdmaemud gave it on host '%s' "
		 "(its slice of the host's 24-bit QP numbers, the fabric's process-qpns): "
		 "ibv_create_qp fails with EINVAL; a larger process-qpns gives each process more "
		 "(rdmaemu-fabric(5)), or create the QPs in more processes\n",
		 lk.qpn_max - lk.qpn_min + 1, hello.node);
	emu_hca_set_qp_range_note(lk.qp_note);
	if (ans.w.qpn_first)
		emu_hca_set_qp_first(ans.w.qpn_first);
	/* the rings to the other processes of this host; without them the daemon carries it all.
	 * Not in virtual time: every frame goes through the daemon, which sees what is in flight */
	err = lk.vt ? 0 : emu_link_shm_start(fd);
	if (err)
		fprintf(stderr, "rdmaemu: no shared-memory rings (%s): loopback frames to other "
				"processes go through rdmaemud\n", strerror(err));
	rx_start();
	return 0;
}

bool emu_link_active(void)
{
	return lk.active;
}

bool emu_link_qpn_elsewhere(uint32_t qpn)
{
	return lk.active && (qpn < lk.qpn_min || qpn > lk.qpn_max);
}

/* Port sends of the engine (emu_engine_tx_fn). The other hosts of the fabric live in other
 * processes (or nowhere): what this process's copy of them would send is dropped. */
static int link_tx(void *ctx, int ep, size_t host, size_t dev, unsigned port, const void *frame,
		   size_t len)
{
	(void)ctx;
	(void)dev;
	(void)port;
	if (host != lk.host)
		return 0;
	if (len > EMU_WIRE_MAX_FRAME)
		return -EMSGSIZE;
	return send_msg(lk.fd, EMU_DMSG_FRAME, (uint32_t)ep, frame, len) ? -ENOTCONN : 0;
}

int emu_link_send_loopback(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   uint32_t dqpn, const void *frame, size_t len)
{
	int ep = emu_topology_port_endpoint(emu_engine_topology(e), host, dev, port);
	int err;

	if (ep < 0)
		return ep;
	if (len > EMU_WIRE_MAX_FRAME)
		return -EMSGSIZE;
	/* straight into the ring of the process owning dqpn, when the daemon paired us */
	err = emu_link_shm_send(ep, dqpn, frame, len);
	if (err != -ENOENT)
		return err;
	return send_msg(lk.fd, EMU_DMSG_LOOPBACK, (uint32_t)ep, frame, len) ? -ENOTCONN : 0;
}

void *emu_link_loopback_reserve(struct emu_engine *e, size_t host, size_t dev, unsigned port,
				uint32_t dqpn, size_t len, struct emu_link_shm_resv *rv)
{
	int ep = emu_topology_port_endpoint(emu_engine_topology(e), host, dev, port);

	return ep < 0 ? NULL : emu_link_shm_reserve(ep, dqpn, len, rv);
}

void emu_link_loopback_commit(const struct emu_link_shm_resv *rv, size_t len)
{
	emu_link_shm_commit(rv, len);
}

int emu_link_loopback_desc(struct emu_engine *e, size_t host, size_t dev, unsigned port,
			   uint32_t dqpn, const void *desc, size_t len)
{
	int ep = emu_topology_port_endpoint(emu_engine_topology(e), host, dev, port);

	return ep < 0 ? -ENOENT : emu_link_shm_send_desc(ep, dqpn, desc, len);
}

void emu_link_loopback_burst(bool begin)
{
	if (begin)
		emu_link_shm_burst_begin();
	else
		emu_link_shm_burst_end();
}

/* The descriptors a message carried (SCM_RIGHTS): up to max into fds; the count. */
static int rx_fds(struct msghdr *m, int *fds, int max)
{
	int n = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n < max)
				fds[n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

/* Before the engine exists, the process is idle for the daemon's query when no thread waits
 * for one of its answers and every thread of the program is asleep in the kernel, as the
 * engine rules for threads it has not met and child processes (engine_tasks.h): one at work (the program between
 * attaching and its first wait, loading, reading the host's files) would see time move
 * under it. The engine, when it appears meanwhile, takes the query over. Receive thread. */
static struct emu_engine *engineless_idle(void)
{
	for (;;) {
		struct timespec now;
		struct emu_engine *e;
		unsigned holds;
		uint64_t ns;

		pthread_mutex_lock(&lk.m);
		e = lk.e;
		pthread_mutex_unlock(&lk.m);
		if (e)
			return e;
		pthread_mutex_lock(&lk.hold_m);
		holds = lk.holds;
		pthread_mutex_unlock(&lk.hold_m);
		clock_gettime(CLOCK_MONOTONIC, &now);
		ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		if (!holds && !emu_tasks_unmet_busy(&lk.tasks, NULL, 0, ns) &&
		    !emu_tasks_children_busy(&lk.children, ns))
			return NULL;
		usleep(200);
	}
}

/* The engine's idle hook (emu_engine_idle_fn): the answer to the daemon's query. */
static void vt_idle(void *ctx, uint64_t token, uint64_t next)
{
	struct emu_dmsg_vt v = { next, __atomic_load_n(&sent_count, __ATOMIC_SEQ_CST) };

	(void)ctx;
	send_msg(lk.fd, EMU_DMSG_VT_IDLE, (uint32_t)token, &v, sizeof(v));
}

/* A virtual-time message of the daemon (the receive thread): into the engine's inbox, in order
 * with the frames; before the engine exists the process is idle and has no deadline, and
 * the engine starts at the daemon's last instant. true when it was one. */
static bool vt_msg(const struct emu_dmsg *h, const uint8_t *body, size_t n, int flags)
{
	struct emu_dmsg_vt v = { 0, 0 };
	struct emu_engine *e;

	if (n < sizeof(*h) || h->magic != EMU_DPROTO_MAGIC || (flags & MSG_TRUNC) ||
	    (h->type != EMU_DMSG_VT_QUERY && h->type != EMU_DMSG_VT_ADVANCE))
		return false;
	if (n - sizeof(*h) >= sizeof(v))
		memcpy(&v, body, sizeof(v));
	pthread_mutex_lock(&lk.m);
	e = lk.e;
	if (!e && h->type == EMU_DMSG_VT_ADVANCE && v.t > lk.vt_now)
		lk.vt_now = v.t;
	pthread_mutex_unlock(&lk.m);
	if (!e && h->type == EMU_DMSG_VT_QUERY) {
		e = engineless_idle();
		if (!e)
			vt_idle(NULL, h->arg, UINT64_MAX);
	}
	if (!e)
		return true;
	if (h->type == EMU_DMSG_VT_QUERY)
		emu_engine_queue_query(e, h->arg);
	else
		emu_engine_queue_advance(e, v.t);
	/* the engine's lock may be busy: whoever holds it delivers on the way out, and a
	 * waiter's sleep lets the next try through */
	while (!emu_engine_try_deliver(e))
		usleep(100);
	return true;
}

void emu_link_vt_sync(void)
{
	struct emu_engine *e = lk.e;

	if (!lk.active || !lk.vt || !e)
		return;
	for (;;) {
		struct pollfd pf = { .fd = lk.fd, .events = POLLIN };

		if (!__atomic_load_n(&lk.rx_busy, __ATOMIC_SEQ_CST) && poll(&pf, 1, 0) == 0 &&
		    !__atomic_load_n(&lk.rx_busy, __ATOMIC_SEQ_CST))
			break;
		/* runnable, not asleep: the process is not idle while this thread waits */
		sched_yield();
	}
	emu_engine_follow_sync(e);
}

void emu_link_vt_hold(bool on)
{
	struct emu_engine *e;

	if (!lk.active || !lk.vt)
		return;
	pthread_mutex_lock(&lk.hold_m);
	lk.holds += on ? 1u : -1u;
	e = lk.hold_e;
	if (e) {
		emu_engine_lock(e);
		if (on)
			emu_engine_hold(e);
		else
			emu_engine_release(e);
		emu_engine_unlock(e);
	}
	pthread_mutex_unlock(&lk.hold_m);
}

void emu_link_vt_block(bool begin, const char *what)
{
	struct emu_engine *e = lk.e;

	if (!lk.active || !lk.vt || !e)
		return;
	if (!begin) {
		emu_engine_appwait_woken(e);
		emu_engine_lock(e); /* ends the wait */
		emu_engine_unlock(e);
		return;
	}
	emu_engine_lock(e);
	emu_engine_appwait_begin(e, what, EMU_ENGINE_FOREVER, -1, NULL);
	emu_engine_unlock(e);
}

static void *rx_main(void *arg)
{
	struct emu_engine *stuck = NULL; /* an engine whose inbox this thread left frames in */

	(void)arg;
	for (;;) {
		struct emu_engine *e;
		struct emu_dmsg h;
		uint8_t *buf = emu_malloc(EMU_WIRE_MAX_FRAME);
		struct iovec iov[2] = { { &h, sizeof(h) }, { buf, EMU_WIRE_MAX_FRAME } };
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(4 * sizeof(int))];
		} cm;
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cm.b,
				    .msg_controllen = sizeof(cm.b) };
		int fds[4], nfds;
		ssize_t n;

		if (!buf) {
			sleep(1);
			continue;
		}
		/* Frames left in the engine's inbox (its lock was busy): tried again every
		 * millisecond, but the socket is read meanwhile. Blocking on the engine lock
		 * instead let a holder sending to the daemon (a go-back-N burst) starve this
		 * thread, the daemon drop the acknowledgements it had for us, and the requester
		 * resend forever (ib_send_bw over the daemon path, docs/engine.md). */
		while (stuck) {
			struct pollfd pf = { .fd = lk.fd, .events = POLLIN };

			if (emu_engine_try_deliver(stuck))
				stuck = NULL;
			else if (poll(&pf, 1, 1) != 0)
				break;
		}
		if (lk.vt) {
			/* emu_link_vt_sync: a message is in the socket or in this thread's hands
			 * until it is in the engine's inbox */
			struct pollfd pf = { .fd = lk.fd, .events = POLLIN };

			while (poll(&pf, 1, -1) < 0 && errno == EINTR)
				;
			__atomic_store_n(&lk.rx_busy, 1, __ATOMIC_SEQ_CST);
		}
		do
			n = recvmsg(lk.fd, &m, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
		if (n > 0 && vt_msg(&h, buf, (size_t)n, m.msg_flags)) {
			free(buf);
			__atomic_store_n(&lk.rx_busy, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		if (n <= 0) {
			free(buf);
			fprintf(stderr, "rdmaemu: rdmaemud closed the connection%s%s: this process "
					"is cut off the fabric\n", n < 0 ? ": " : "",
				n < 0 ? strerror(errno) : "");
			return NULL;
		}
		nfds = rx_fds(&m, fds, 4);
		pthread_mutex_lock(&lk.m);
		e = lk.e;
		if ((size_t)n >= sizeof(h) && h.magic == EMU_DPROTO_MAGIC &&
		    h.type >= EMU_DMSG_SHM_HELLO && h.type <= EMU_DMSG_SHM_READY &&
		    !(m.msg_flags & MSG_TRUNC)) {
			/* no engine yet: handled under lk.m, which its creation waits for */
			if (!e)
				emu_link_shm_msg(NULL, &h, buf, (size_t)n - sizeof(h), fds, nfds);
			pthread_mutex_unlock(&lk.m);
			if (e)
				emu_link_shm_msg(e, &h, buf, (size_t)n - sizeof(h), fds, nfds);
			free(buf);
			__atomic_store_n(&lk.rx_busy, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		if ((size_t)n >= sizeof(h) && h.magic == EMU_DPROTO_MAGIC &&
		    h.type == EMU_DMSG_NEIGH_GEN && h.arg == lk.host)
			neigh_gen_seen(h.pad);
		if ((size_t)n >= sizeof(h) && h.magic == EMU_DPROTO_MAGIC &&
		    h.type == EMU_DMSG_DEVICE_GONE) {
			devrm_apply_locked(h.arg >> 16, h.arg & 0xffff);
			if (h.pad > lk.devrm_gen)
				lk.devrm_gen = h.pad;
			pthread_cond_broadcast(&lk.devrm_cv);
		}
		if ((size_t)n >= sizeof(h) && h.magic == EMU_DPROTO_MAGIC &&
		    h.type == EMU_DMSG_LINK_STATE) {
			link_apply_locked(h.arg >> 1, h.arg & 1);
			if (h.pad > lk.link_gen)
				lk.link_gen = h.pad;
			pthread_cond_broadcast(&lk.link_cv);
		}
		pthread_mutex_unlock(&lk.m);
		while (nfds > 0)
			close(fds[--nfds]);
		if ((size_t)n < sizeof(h) || h.magic != EMU_DPROTO_MAGIC ||
		    h.type != EMU_DMSG_FRAME || (m.msg_flags & MSG_TRUNC) || !e) {
			free(buf);
			__atomic_store_n(&lk.rx_busy, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		emu_engine_queue_frame(e, (int)h.arg, buf, (size_t)n - sizeof(h));
		stuck = emu_engine_try_deliver(e) ? NULL : e;
		__atomic_store_n(&lk.rx_busy, 0, __ATOMIC_SEQ_CST);
	}
}

static void rx_start(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (emu_tasks_create_ours(&lk.rx, "rx", rx_main, NULL) == 0)
		lk.rx_started = true;
	else
		fprintf(stderr, "rdmaemu: cannot start the receive thread: no frame will arrive\n");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void emu_link_engine_created(struct emu_engine *e)
{
	if (!lk.active)
		return;
	pthread_mutex_lock(&lk.m);
	if (lk.vt) {
		/* a process joining later starts at the fabric's now */
		emu_engine_set_follow_outside(emu_link_vt_sync);
		emu_engine_follow_advance(e, lk.vt_now);
		emu_engine_set_follower(e, link_tx, NULL, vt_idle, NULL);
		/* the answers waited for already hold the new engine too */
		pthread_mutex_lock(&lk.hold_m);
		for (unsigned i = 0; i < lk.holds; i++)
			emu_engine_hold(e);
		lk.hold_e = e;
		pthread_mutex_unlock(&lk.hold_m);
	} else {
		emu_engine_set_realtime(e, link_tx, NULL);
	}
	lk.e = e;
	emu_link_shm_engine_created(e);
	pthread_mutex_unlock(&lk.m);
}

void emu_link_devrm_sync(uint32_t gen)
{
	struct timespec until;

	if (!lk.active)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2; /* the DEVICE_GONE messages are already in our socket: never long */
	pthread_mutex_lock(&lk.m);
	while (lk.devrm_gen < gen && lk.rx_started &&
	       pthread_cond_timedwait(&lk.devrm_cv, &lk.m, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lk.m);
}

/* One request on a control connection of its own and its answer (same type): the answer's
 * header into *ans, up to len body bytes into body. The body's length, or -ENOTCONN (no daemon,
 * or it hung up or answered something else). */
static ssize_t ctl_request(const char *sock, uint16_t type, const void *req, size_t req_len,
			   struct emu_dmsg *ans, void *body, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, 0, 0 };
	struct iovec out[2] = { { &h, sizeof(h) }, { (void *)req, req_len } };
	struct iovec in[2] = { { ans, sizeof(*ans) }, { body, len } };
	struct msghdr m = { .msg_iov = out, .msg_iovlen = 2 };
	ssize_t n;
	int fd;

	if (!sock)
		sock = getenv("RDMAEMU_DAEMON");
	if (!sock || !*sock || (fd = emu_link_connect(sock)) < 0)
		return -ENOTCONN;
	emu_link_count_sent(1);
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		emu_link_count_sent(-1);
	m = (struct msghdr){ .msg_iov = in, .msg_iovlen = len ? 2 : 1 };
	/* the answer may take virtual time (a neighbour resolution): a wait of its own */
	emu_link_vt_block(true, "a request to rdmaemud");
	if (n >= 0)
		do
			n = recvmsg(fd, &m, 0);
		while (n < 0 && errno == EINTR);
	emu_link_vt_block(false, NULL);
	close(fd);
	emu_link_vt_sync();
	if (n < (ssize_t)sizeof(*ans) || ans->magic != EMU_DPROTO_MAGIC || ans->type != type)
		return -ENOTCONN;
	return n - (ssize_t)sizeof(*ans);
}

/* The host a control request names: node, or this process's own for NULL ("": none). */
static const char *ctl_node(const char *node)
{
	if (node)
		return node;
	return lk.active && lk.f && lk.host < lk.f->nhosts ? lk.f->hosts[lk.host].name : "";
}

int emu_link_device_remove(const char *sock, const char *node, const char *dev)
{
	struct emu_dmsg_devrm body;
	struct emu_dmsg ans;
	ssize_t n;

	node = ctl_node(node);
	if (strlen(node) >= sizeof(body.node) || strlen(dev) >= sizeof(body.dev))
		return -ENOENT; /* no name that long exists */
	memset(&body, 0, sizeof(body));
	strcpy(body.node, node);
	strcpy(body.dev, dev);
	n = ctl_request(sock, EMU_DMSG_DEVICE_REMOVE, &body, sizeof(body), &ans, NULL, 0);
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	/* returns once this process's lists have dropped it, as `rdma link delete` returns once
	 * the device is unregistered */
	emu_link_devrm_sync(ans.pad);
	return 0;
}

int emu_link_cm_fault(const char *node, const char *device, const char *msg,
		      const struct rdmaemu_cm_fault *set, struct rdmaemu_cm_fault *old)
{
	struct emu_dmsg_cm_fault q;
	struct emu_dmsg_cm_rule r;
	struct emu_dmsg ans;
	ssize_t n;

	if (strlen(node) >= sizeof(q.node) || (device && strlen(device) >= sizeof(q.device)) ||
	    strlen(msg) >= sizeof(q.msg))
		return -ENOENT;
	memset(&q, 0, sizeof(q));
	strcpy(q.node, node);
	if (device)
		strcpy(q.device, device);
	strcpy(q.msg, msg);
	if (set) {
		q.set = 1;
		q.rule = (struct emu_dmsg_cm_rule){ set->drop_next, set->dup_next, set->delay_next,
						    0, set->drop, set->dup, set->delay,
						    set->delay_ns };
	}
	n = ctl_request(NULL, EMU_DMSG_CM_FAULT, &q, sizeof(q), &ans, &r, sizeof(r));
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	if (n < (ssize_t)sizeof(r))
		return -EPROTO;
	if (old)
		*old = (struct rdmaemu_cm_fault){ r.drop_next, r.dup_next, r.delay_next, r.drop,
						  r.dup, r.delay, r.delay_ns };
	return 0;
}

int emu_link_pma(uint16_t dlid, uint8_t mad[256])
{
	struct emu_dmsg_pma q = { .dlid = dlid };
	struct emu_dmsg ans;
	ssize_t n;

	memcpy(q.mad, mad, sizeof(q.mad));
	n = ctl_request(NULL, EMU_DMSG_PMA, &q, sizeof(q), &ans, mad, 256);
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	return n == 256 ? 0 : -EPROTO;
}

static size_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* The slot of (src, dst) in lk.neigh_kept: FNV-1a over both addresses. */
static struct neigh_kept *neigh_slot(const struct sockaddr *src, const struct sockaddr *dst)
{
	uint32_t h = 2166136261u;
	const uint8_t *p[2] = { (const void *)src, (const void *)dst };
	size_t len[2] = { sa_len(src), sa_len(dst) };

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < len[k]; i++)
			h = (h ^ p[k][i]) * 16777619u;
	return &lk.neigh_kept[h % LINK_NEIGH_KEPT];
}

static bool neigh_kept_is(const struct neigh_kept *k, const struct sockaddr *src,
			  const struct sockaddr *dst)
{
	return k->gen && !memcmp(&k->src, src, sa_len(src)) && !memcmp(&k->dst, dst, sa_len(dst));
}

/* rxe reads a valid neighbour entry without asking anybody (ib_resolve_eth_dmac ->
 * rdma_addr_find_l2_eth_by_grh -> dst_fetch_ha), and without side effects: a MAC the
 * daemon answered is the answer again while our host's neighbour generation stays
 * (emu_neigh_gen), so only the first AH or RTR towards an address pays the round trip.
 * A change reaches us as NEIGH_GEN on the link socket a moment after the daemon made it;
 * a resolution in that moment gets the MAC the kernel would have given just before. */
int emu_link_neigh_flush(const char *sock, const char *node, const char *netdev)
{
	struct emu_dmsg_neigh_flush body;
	struct emu_dmsg ans;
	uint32_t now[2]; /* the host, its generation after the flush */
	ssize_t n;

	node = ctl_node(node);
	if (!netdev)
		netdev = "";
	if (strlen(node) >= sizeof(body.node) || strlen(netdev) >= sizeof(body.netdev))
		return -ENOENT; /* no name that long exists */
	memset(&body, 0, sizeof(body));
	strcpy(body.node, node);
	strcpy(body.netdev, netdev);
	n = ctl_request(sock, EMU_DMSG_NEIGH_FLUSH, &body, sizeof(body), &ans, now, sizeof(now));
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	if (n < (ssize_t)sizeof(now))
		return -EPROTO;
	/* our own host's: the MACs kept are stale from now on, not only once NEIGH_GEN arrives */
	if (lk.active && now[0] == lk.host) {
		pthread_mutex_lock(&lk.m);
		neigh_gen_seen(now[1]);
		pthread_mutex_unlock(&lk.m);
	}
	return (int)ans.pad;
}

int emu_link_link_set(const char *sock, const char *node, const char *netdev, bool up)
{
	struct emu_dmsg_link_set body;
	struct emu_dmsg ans;
	struct timespec until;
	ssize_t n;

	node = ctl_node(node);
	if (!netdev || strlen(node) >= sizeof(body.node) || strlen(netdev) >= sizeof(body.netdev))
		return -ENOENT; /* no name that long exists */
	memset(&body, 0, sizeof(body));
	strcpy(body.node, node);
	strcpy(body.netdev, netdev);
	body.up = up;
	n = ctl_request(sock, EMU_DMSG_LINK_SET, &body, sizeof(body), &ans, NULL, 0);
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	/* a change of our own host: its LINK_STATE is already in our socket; returns once the
	 * port reads its new state here too, as `ip link set` returns after rxe's notifier */
	if (!ans.pad || !lk.active || strcmp(node, ctl_node(NULL)))
		return 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&lk.m);
	while (lk.link_gen < ans.pad && lk.rx_started &&
	       pthread_cond_timedwait(&lk.link_cv, &lk.m, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&lk.m);
	return 0;
}

int emu_link_neigh_resolve(size_t host, const struct sockaddr *src, const struct sockaddr *dst,
			   unsigned timeout_ms, uint8_t mac[6])
{
	struct emu_dmsg_neigh body;
	struct emu_dmsg ans;
	struct neigh_kept *k;
	uint8_t hw[6];
	ssize_t n;
	bool mine = host == lk.host && sa_len(src) <= sizeof(body.src) &&
		    sa_len(dst) <= sizeof(body.dst);

	if (mine) {
		uint32_t gen;
		bool hit;

		pthread_mutex_lock(&lk.m);
		k = neigh_slot(src, dst);
		gen = lk.neigh_gen;
		hit = neigh_kept_is(k, src, dst) && k->gen == gen;
		if (hit)
			memcpy(mac, k->mac, 6);
		pthread_mutex_unlock(&lk.m);
		if (hit) {
			neigh_trace("kept %02x:%02x:%02x:%02x:%02x:%02x (generation %u)", mac[0],
				    mac[1], mac[2], mac[3], mac[4], mac[5], gen);
			return 0;
		}
	}
	memset(&body, 0, sizeof(body));
	body.host = (uint32_t)host;
	body.timeout_ms = timeout_ms;
	memcpy(body.src, src, sa_len(src));
	memcpy(body.dst, dst, sa_len(dst));
	n = ctl_request(NULL, EMU_DMSG_NEIGH_RESOLVE, &body, sizeof(body), &ans, hw, sizeof(hw));
	if (n < 0)
		return (int)n;
	if (ans.arg)
		return -(int)ans.arg;
	if (n < (ssize_t)sizeof(hw))
		return -EPROTO;
	memcpy(mac, hw, 6);
	neigh_trace("asked: %02x:%02x:%02x:%02x:%02x:%02x (generation %u)", hw[0], hw[1], hw[2],
		    hw[3], hw[4], hw[5], ans.pad);
	if (mine && ans.pad) {
		pthread_mutex_lock(&lk.m);
		neigh_gen_seen(ans.pad);
		k = neigh_slot(src, dst);
		k->gen = ans.pad;
		memset(&k->src, 0, sizeof(k->src));
		memset(&k->dst, 0, sizeof(k->dst));
		memcpy(&k->src, src, sa_len(src));
		memcpy(&k->dst, dst, sa_len(dst));
		memcpy(k->mac, hw, 6);
		pthread_mutex_unlock(&lk.m);
	}
	return 0;
}

void emu_link_reset(void)
{
	if (!lk.active)
		return;
	shutdown(lk.fd, SHUT_RDWR);
	if (lk.rx_started)
		pthread_join(lk.rx, NULL);
	emu_link_shm_reset();
	close(lk.fd);
	lk.fd = -1;
	lk.e = NULL;
	pthread_mutex_lock(&lk.hold_m);
	lk.hold_e = NULL;
	lk.holds = 0;
	pthread_mutex_unlock(&lk.hold_m);
	lk.f = NULL;
	lk.devrm_gen = 0;
	lk.link_gen = 0;
	lk.neigh_gen = 0;
	memset(lk.neigh_kept, 0, sizeof(lk.neigh_kept));
	lk.active = false;
	lk.vt = false;
	lk.vt_now = 0;
	emu_engine_set_wire_remote(false);
	lk.rx_started = false;
	emu_hca_set_qp_range(16, 1u << 20);
	emu_hca_set_qp_range_note(NULL);
}
