/* rdma_cm files served by rdmaemud (emu/ucma_link.h): the client end.
 *
 * A file is a connection of its own, so its requests and answers never mix with the frames
 * of the process's link socket or with another file's; a mutex per file keeps one request in
 * flight on it (the kernel serialises a file's commands on its ids' locks anyway). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

#include "emu/daemon/proto.h"
#include "emu/daemon/ucma_proto.h"
#include "emu/link.h"
#include "emu/trace.h"
#include "emu/ucma.h"
#include "emu/ucma_link.h"

/* A file lives while the application's fd is open or a command is running on it: as in the
 * kernel, where a blocked read() holds the struct file, close() from another thread does not
 * end a GET_EVENT in progress (that reader goes on waiting for an event) and ucma_close runs
 * when the last user lets go. */
struct lfile {
	struct lfile *next;
	int fd;   /* the application's: the daemon's eventfd */
	int evfd; /* our own duplicate of it, valid after the application closes fd */
	int sock; /* this file's connection */
	int dfd;  /* the daemon's number for it */
	unsigned refs; /* the files list's (until close) + one per command running on it */
	pthread_mutex_t lock;
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfile *files;

/* The file of fd with a reference taken (put() it), or NULL. */
static struct lfile *get(int fd)
{
	struct lfile *f;

	pthread_mutex_lock(&files_lock);
	for (f = files; f && f->fd != fd; f = f->next)
		;
	if (f)
		f->refs++;
	pthread_mutex_unlock(&files_lock);
	return f;
}

static bool is_file(int fd)
{
	struct lfile *f;

	pthread_mutex_lock(&files_lock);
	for (f = files; f && f->fd != fd; f = f->next)
		;
	pthread_mutex_unlock(&files_lock);
	return f != NULL;
}

static void release(struct lfile *f);

static void put(struct lfile *f)
{
	unsigned left;

	pthread_mutex_lock(&files_lock);
	left = --f->refs;
	pthread_mutex_unlock(&files_lock);
	if (!left)
		release(f);
}

static int send_iov(int sock, uint16_t type, struct iovec *iov, int n)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, 0, 0 };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
	ssize_t r;

	iov[0] = (struct iovec){ &h, sizeof(h) };
	do
		r = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* Receives the answer of type `type`: its arg, body into buf (up to len), an fd passed with
 * it into *fd (when fd is not NULL). -errno of the socket, -EPROTO for a malformed answer. */
static int recv_answer(int sock, uint16_t type, int32_t *arg, void *buf, size_t len,
		       size_t *got, int *fd, uint32_t *pad)
{
	struct emu_dmsg h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { buf, len } };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = c.b,
			    .msg_controllen = sizeof(c.b) };
	struct cmsghdr *cm;
	ssize_t n;

	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET; /* the daemon went away */
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int passed;

			memcpy(&passed, CMSG_DATA(cm), sizeof(passed));
			if (fd && *fd < 0)
				*fd = passed;
			else
				close(passed);
		}
	if ((size_t)n < sizeof(h) || h.magic != EMU_DPROTO_MAGIC || h.type != type ||
	    (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -EPROTO;
	*arg = (int32_t)h.arg;
	if (pad)
		*pad = h.pad;
	if (got)
		*got = (size_t)n - sizeof(h);
	return 0;
}

/* ---- RDMAEMU_TRACE=ucmalink: the round trips this process made, by command, printed at
 * exit (docs/daemon.md, "Connection setup across processes"): what a connection costs in
 * round trips to the daemon, for the measurements, without strace. QUERY is split by its
 * option (addr, path, gid, IB service), and the EAGAIN answers of GET_EVENT are counted
 * apart. */

enum { RT_QUERY_OPT = EMU_UCMA_NCMDS, RT_EAGAIN = RT_QUERY_OPT + 4, RT_N };

static const char *const rt_names[RT_N] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = "CREATE_ID",
	[RDMA_USER_CM_CMD_DESTROY_ID] = "DESTROY_ID",
	[RDMA_USER_CM_CMD_BIND_IP] = "BIND_IP",
	[RDMA_USER_CM_CMD_RESOLVE_IP] = "RESOLVE_IP",
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = "RESOLVE_ROUTE",
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = "QUERY_ROUTE",
	[RDMA_USER_CM_CMD_CONNECT] = "CONNECT",
	[RDMA_USER_CM_CMD_LISTEN] = "LISTEN",
	[RDMA_USER_CM_CMD_ACCEPT] = "ACCEPT",
	[RDMA_USER_CM_CMD_REJECT] = "REJECT",
	[RDMA_USER_CM_CMD_DISCONNECT] = "DISCONNECT",
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = "INIT_QP_ATTR",
	[RDMA_USER_CM_CMD_GET_EVENT] = "GET_EVENT",
	[RDMA_USER_CM_CMD_GET_OPTION] = "GET_OPTION",
	[RDMA_USER_CM_CMD_SET_OPTION] = "SET_OPTION",
	[RDMA_USER_CM_CMD_NOTIFY] = "NOTIFY",
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = "JOIN_IP_MCAST",
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = "LEAVE_MCAST",
	[RDMA_USER_CM_CMD_MIGRATE_ID] = "MIGRATE_ID",
	[RDMA_USER_CM_CMD_QUERY] = "QUERY",
	[RDMA_USER_CM_CMD_BIND] = "BIND",
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = "RESOLVE_ADDR",
	[RDMA_USER_CM_CMD_JOIN_MCAST] = "JOIN_MCAST",
	[EMU_UCMA_CMD_RESOLVE_IB_SERVICE] = "RESOLVE_IB_SERVICE",
	[EMU_UCMA_CMD_WRITE_CM_EVENT] = "WRITE_CM_EVENT",
	[RT_QUERY_OPT + RDMA_USER_CM_QUERY_ADDR] = "QUERY(addr)",
	[RT_QUERY_OPT + RDMA_USER_CM_QUERY_PATH] = "QUERY(path)",
	[RT_QUERY_OPT + RDMA_USER_CM_QUERY_GID] = "QUERY(gid)",
	[RT_QUERY_OPT + EMU_UCMA_QUERY_IB_SERVICE] = "QUERY(ib_service)",
	[RT_EAGAIN] = "GET_EVENT(EAGAIN)",
};
static unsigned long rt_count[RT_N];

static bool rt_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "ucmalink");
}

static void rt_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rt_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_trace_vprint("ucmalink: ", fmt, ap);
	va_end(ap);
}

static void rt_print(void)
{
	char line[2048];
	size_t n = 0;
	unsigned long total = 0;

	for (int i = 0; i < RT_N; i++) {
		unsigned long c = __atomic_load_n(&rt_count[i], __ATOMIC_RELAXED);
		int k;

		if (!c || !rt_names[i])
			continue;
		/* QUERY is counted once under its name and once under its option */
		if (i < RT_QUERY_OPT)
			total += c;
		k = snprintf(line + n, sizeof(line) - n, " %s %lu", rt_names[i], c);
		if (k < 0 || (size_t)k >= sizeof(line) - n)
			break;
		n += (size_t)k;
	}
	line[n] = 0;
	rt_trace("pid %d round trips %lu:%s", (int)getpid(), total, line);
}

static void rt_register(void)
{
	atexit(rt_print);
}

static void rt_count_one(const uint8_t *body, uint32_t cmd, uint32_t in, int32_t ret)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t opt;

	if (!rt_trace_on() || cmd >= EMU_UCMA_NCMDS)
		return;
	pthread_once(&once, rt_register);
	__atomic_fetch_add(&rt_count[cmd], 1, __ATOMIC_RELAXED);
	if (cmd == RDMA_USER_CM_CMD_QUERY &&
	    offsetof(struct rdma_ucm_query, option) + sizeof(opt) <= in) {
		memcpy(&opt, body + offsetof(struct rdma_ucm_query, option), sizeof(opt));
		if (opt <= EMU_UCMA_QUERY_IB_SERVICE)
			__atomic_fetch_add(&rt_count[RT_QUERY_OPT + opt], 1, __ATOMIC_RELAXED);
	}
	if (cmd == RDMA_USER_CM_CMD_GET_EVENT && ret == -EAGAIN)
		__atomic_fetch_add(&rt_count[RT_EAGAIN], 1, __ATOMIC_RELAXED);
}

int emu_ucma_link_open(const struct emu_host *h)
{
	const char *path = getenv("RDMAEMU_DAEMON"), *fabric = getenv("RDMAEMU_FABRIC");
	struct emu_dmsg_hello hello;
	struct emu_ducma_opened ans;
	struct iovec iov[2];
	struct lfile *f;
	int32_t arg = 0;
	size_t got = 0;
	int sock, err, fd = -1;

	memset(&hello, 0, sizeof(hello));
	snprintf(hello.node, sizeof(hello.node), "%s", h->name);
	if (fabric && *fabric && !realpath(fabric, hello.fabric))
		return -errno;
	hello.pid = (int32_t)getpid();
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	sock = path ? emu_link_connect(path) : -1;
	if (sock < 0) {
		err = path ? -errno : -ENODEV;
		free(f);
		return err;
	}
	iov[1] = (struct iovec){ &hello, sizeof(hello) };
	err = send_iov(sock, EMU_DMSG_UCMA_OPEN, iov, 2);
	if (!err)
		err = recv_answer(sock, EMU_DMSG_UCMA_OPEN, &arg, &ans, sizeof(ans), &got, &fd, NULL);
	if (!err && arg)
		err = -arg;
	else if (!err && (got < sizeof(ans) || fd < 0))
		err = -EPROTO;
	if (err) {
		if (fd >= 0)
			close(fd);
		close(sock);
		free(f);
		return err;
	}
	f->evfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->evfd < 0) {
		err = -errno;
		close(fd);
		close(sock);
		free(f);
		return err;
	}
	f->fd = fd;
	f->sock = sock;
	f->dfd = ans.dfd;
	f->refs = 1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_lock(&files_lock);
	f->next = files;
	files = f;
	pthread_mutex_unlock(&files_lock);
	return fd;
}

bool emu_ucma_link_is_file(int fd)
{
	return is_file(fd);
}

/* ucma_close: the daemon destroys the file's ids before this returns, so the DREQs of its
 * connections are on their way when the application goes on. */
static void release(struct lfile *f)
{
	struct iovec iov[1];
	int32_t arg;

	pthread_mutex_lock(&f->lock);
	if (!send_iov(f->sock, EMU_DMSG_UCMA_CLOSE, iov, 1))
		(void)recv_answer(f->sock, EMU_DMSG_UCMA_CLOSE, &arg, NULL, 0, NULL, NULL, NULL);
	pthread_mutex_unlock(&f->lock);
	close(f->sock);
	close(f->evfd);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int emu_ucma_link_close(int fd)
{
	struct lfile *f, **pp;
	int ret;

	pthread_mutex_lock(&files_lock);
	for (pp = &files; *pp && (*pp)->fd != fd; pp = &(*pp)->next)
		;
	f = *pp;
	if (f)
		*pp = f->next;
	pthread_mutex_unlock(&files_lock);
	ret = close(fd) ? -errno : 0;
	if (f)
		put(f); /* the list's reference: the file goes now, or with its last command */
	return ret;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One round trip: the command (in bytes of cmd), the response buffer's contents and the
 * option's value go, the return value and the response buffer come back. */
static int round_trip(struct lfile *f, const uint8_t *cmd, uint32_t in, uint8_t *resp,
		      uint32_t out, const void *opt, uint32_t optlen, int32_t *ret)
{
	struct emu_ducma_write w = { in, out, optlen };
	struct iovec iov[5];
	size_t got = 0;
	uint32_t devrm_gen = 0;
	int err;

	iov[1] = (struct iovec){ &w, sizeof(w) };
	iov[2] = (struct iovec){ (void *)cmd, in };
	iov[3] = (struct iovec){ resp, out };
	iov[4] = (struct iovec){ (void *)opt, optlen };
	pthread_mutex_lock(&f->lock);
	err = send_iov(f->sock, EMU_DMSG_UCMA_WRITE, iov, 5);
	if (!err)
		err = recv_answer(f->sock, EMU_DMSG_UCMA_WRITE, ret, resp, out, &got, NULL,
				  &devrm_gen);
	pthread_mutex_unlock(&f->lock);
	/* a DEVICE_REMOVAL in this answer is seen only once the device lists dropped it */
	if (!err && devrm_gen)
		emu_link_devrm_sync(devrm_gen);
	if (!err && got != out)
		err = -EPROTO;
	return err;
}

/* A GET_EVENT's sleep: when the file's fd is blocking, waits until the file has an event (or
 * the daemon's end of the socket is gone: the round trip that follows then reports it) and
 * says true; false at once for an O_NONBLOCK fd. The kernel's reader sleeps on the file's
 * wait queue; here the eventfd the daemon signals is that queue. Our own duplicate of it,
 * since another thread may close the application's meanwhile; the file status flags
 * (O_NONBLOCK) are the shared open file's. */
static bool wait_blocking(struct lfile *f)
{
	/* the socket with no events asked: only its hang-up (POLLHUP) wakes us, never another
	 * thread's answer */
	struct pollfd p[2] = { { .fd = f->evfd, .events = POLLIN }, { .fd = f->sock, .events = 0 } };
	int fl = fcntl(f->evfd, F_GETFL);

	if (fl < 0 || (fl & O_NONBLOCK))
		return false;
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	return true;
}

ssize_t emu_ucma_link_write(int fd, const void *buf, size_t len)
{
	uint8_t cmd[sizeof(struct rdma_ucm_cmd_hdr) + EMU_DUCMA_MAX_IN];
	uint8_t resp[EMU_DUCMA_MAX_OUT];
	struct rdma_ucm_cmd_hdr hdr;
	struct emu_ducma_ptrs ptrs;
	const uint8_t *body = (const uint8_t *)buf + sizeof(hdr);
	const void *opt = NULL;
	uint64_t resp_addr = 0;
	uint32_t in, out, optlen = 0;
	struct lfile *f;
	bool wait_first;
	int32_t ret;
	int err;

	/* the checks of emu_ucma_write, in its order */
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.cmd >= EMU_UCMA_NCMDS || hdr.in + sizeof(hdr) > len)
		return -EINVAL;
	f = get(fd);
	if (!f)
		return -EINVAL;
	/* the kernel reads at most its own struct of the command: the rest never matters */
	in = hdr.in < EMU_DUCMA_MAX_IN ? hdr.in : EMU_DUCMA_MAX_IN;
	out = hdr.out < EMU_DUCMA_MAX_OUT ? hdr.out : EMU_DUCMA_MAX_OUT;
	memcpy(cmd, buf, sizeof(hdr) + in);
	((struct rdma_ucm_cmd_hdr *)cmd)->in = (uint16_t)in;
	((struct rdma_ucm_cmd_hdr *)cmd)->out = (uint16_t)out;
	ptrs = emu_ducma_ptrs_of(hdr.cmd);
	if (ptrs.resp >= 0 && (uint32_t)ptrs.resp + 8 <= in)
		resp_addr = get_u64(body + ptrs.resp);
	if (resp_addr)
		memcpy(resp, (const void *)(uintptr_t)resp_addr, out);
	else
		memset(resp, 0, out);
	if (ptrs.opt >= 0 && (uint32_t)ptrs.opt_len + 4 <= in) {
		memcpy(&optlen, body + ptrs.opt_len, sizeof(optlen));
		opt = (const void *)(uintptr_t)get_u64(body + ptrs.opt);
		if (optlen > (1u << 22))
			optlen = 0; /* the daemon answers EINVAL from the length in the command */
		else if (optlen > EMU_DUCMA_MAX_OPT)
			return -ENOMEM; /* a limit of the emulation (docs/daemon.md) */
		if (!opt)
			optlen = 0; /* the daemon answers EFAULT */
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_MIGRATE_ID &&
	    offsetof(struct rdma_ucm_migrate_id, fd) + 4 <= in) {
		/* the file named by the application's fd, as the daemon numbers it: -1 for a
		 * closed fd (ENOENT), -2 for an fd that is no rdma_cm file (EINVAL) */
		uint8_t *p = cmd + sizeof(hdr) + offsetof(struct rdma_ucm_migrate_id, fd);
		int32_t src, dfd;
		struct lfile *s;

		memcpy(&src, p, sizeof(src));
		s = get(src);
		dfd = s ? s->dfd : fcntl(src, F_GETFD) < 0 ? -1 : -2;
		if (s)
			put(s);
		memcpy(p, &dfd, sizeof(dfd));
	}
	/* A blocking GET_EVENT that can only wait or return an event (the ENOSPC check is the
	 * only earlier failure: EMU_UCMA_GET_EVENT_MIN_OUT) sleeps on the eventfd before it
	 * asks, where it would sleep after the daemon's EAGAIN for an empty file anyway: one
	 * round trip less per wait, and the same outcome, since the daemon's GET_EVENT on a
	 * file with an event queued returns it whenever it is asked. */
	wait_first = hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT && out >= EMU_UCMA_GET_EVENT_MIN_OUT;
	for (;;) {
		if (wait_first && !wait_blocking(f))
			wait_first = false; /* O_NONBLOCK: ask at once, EAGAIN goes to the caller */
		err = round_trip(f, cmd, (uint32_t)sizeof(hdr) + in, resp, out, opt, optlen, &ret);
		if (err) {
			put(f);
			return err;
		}
		rt_count_one(cmd + sizeof(hdr), hdr.cmd, in, ret);
		/* blocking fd and no event (another thread may have taken it): sleep until the
		 * daemon signals one, then ask again */
		if (ret == -EAGAIN && hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT &&
		    (wait_first || wait_blocking(f)))
			continue;
		break;
	}
	put(f);
	if (ret < 0)
		return ret;
	if (resp_addr)
		memcpy((void *)(uintptr_t)resp_addr, resp, out);
	return (ssize_t)len;
}
