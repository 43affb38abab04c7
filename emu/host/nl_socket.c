/* librdmaemu-host.so, loaded with LD_PRELOAD into every program of an emulated host: an RDMA
 * netlink socket (AF_NETLINK, NETLINK_RDMA) for a kernel without RDMA. socket() returns one end
 * of a datagram socketpair, so that poll, select and plain recv work on it unchanged; what the
 * program sends is answered at once by nl_rdma_input, whose replies are written into the other
 * end. The calls that carry netlink addresses or options (bind, connect, getsockname,
 * getpeername, setsockopt, getsockopt, send*, write, recvmsg, recvfrom) are wrapped for these
 * sockets; every other socket and call goes straight to libc, but for the guard of a program
 * run without a sandbox (emu/host/net_guard.h), which may refuse connect, sendto and sendmsg
 * towards the fabric's subnets. */
/* This file defines libc functions of the same name; the inline wrappers _FORTIFY_SOURCE puts
 * in front of them (a hardened build's flags, a distribution's defaults) cannot be compiled over
 * such definitions. */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "emu/host/net_guard.h"
#include "emu/host/nl_rdma.h"

#define MAX_SOCKS 256
#define MAX_REQUEST (1u << 20)

struct nlsock {
	int used;
	int fd, peer;    /* the program's end and ours (-1: closed by the program) */
	int type;        /* SOCK_RAW or SOCK_DGRAM, as asked for */
	uint32_t portid; /* 0: not bound yet */
	int cap_ack, ext_ack;
};

static struct nlsock socks[MAX_SOCKS];
static atomic_int nsocks; /* read without the lock: the fast way out for other fds */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define DECLARE_REAL(ret, name, ...)                                          \
	static ret (*real_##name)(__VA_ARGS__);                               \
	static void resolve_##name(void)                                      \
	{                                                                     \
		if (!real_##name)                                             \
			*(void **)&real_##name = dlsym(RTLD_NEXT, #name);     \
	}

DECLARE_REAL(int, socket, int, int, int)
DECLARE_REAL(int, bind, int, const struct sockaddr *, socklen_t)
DECLARE_REAL(int, connect, int, const struct sockaddr *, socklen_t)
DECLARE_REAL(int, getsockname, int, struct sockaddr *, socklen_t *)
DECLARE_REAL(int, getpeername, int, struct sockaddr *, socklen_t *)
DECLARE_REAL(int, setsockopt, int, int, int, const void *, socklen_t)
DECLARE_REAL(int, getsockopt, int, int, int, void *, socklen_t *)
DECLARE_REAL(ssize_t, sendto, int, const void *, size_t, int, const struct sockaddr *, socklen_t)
DECLARE_REAL(ssize_t, sendmsg, int, const struct msghdr *, int)
DECLARE_REAL(ssize_t, send, int, const void *, size_t, int)
DECLARE_REAL(ssize_t, write, int, const void *, size_t)
DECLARE_REAL(ssize_t, recvmsg, int, struct msghdr *, int)
DECLARE_REAL(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *, socklen_t *)
DECLARE_REAL(int, close, int)

#define CALL_REAL(name, ...) (resolve_##name(), real_##name(__VA_ARGS__))

/* The entry for fd, with the lock held; NULL (lock not held) if fd is not ours. */
static struct nlsock *find_locked(int fd)
{
	if (fd < 0 || atomic_load_explicit(&nsocks, memory_order_acquire) == 0)
		return NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_SOCKS; i++)
		if (socks[i].used && socks[i].fd == fd)
			return &socks[i];
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static int fail_unlock(int err)
{
	pthread_mutex_unlock(&lock);
	return fail(err);
}

static int portid_taken(uint32_t portid)
{
	for (int i = 0; i < MAX_SOCKS; i++)
		if (socks[i].used && socks[i].portid == portid)
			return 1;
	return 0;
}

/* The kernel's autobind: the process id for the first socket, then random ids below -4096. */
static uint32_t autobind_portid(void)
{
	static uint64_t rnd;
	uint32_t id = (uint32_t)getpid();

	if (!rnd)
		rnd = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)&rnd;
	while (portid_taken(id)) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		id = (uint32_t)(int32_t)(INT32_MIN + (int64_t)(rnd % (uint64_t)(-4096 - (int64_t)INT32_MIN)));
	}
	return id;
}

int socket(int domain, int type, int protocol)
{
	if (domain != AF_NETLINK || protocol != NETLINK_RDMA)
		return CALL_REAL(socket, domain, type, protocol);
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (base != SOCK_RAW && base != SOCK_DGRAM)
		return fail(ESOCKTNOSUPPORT);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM | (type & (SOCK_NONBLOCK | SOCK_CLOEXEC)), 0, sv))
		return -1;
	/* Our end never blocks the program and never leaks into what it executes. */
	fcntl(sv[1], F_SETFD, FD_CLOEXEC);
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_SOCKS; i++)
		if (!socks[i].used) {
			socks[i] = (struct nlsock){ .used = 1, .fd = sv[0], .peer = sv[1], .type = base };
			atomic_fetch_add(&nsocks, 1);
			pthread_mutex_unlock(&lock);
			return sv[0];
		}
	pthread_mutex_unlock(&lock);
	CALL_REAL(close, sv[0]);
	CALL_REAL(close, sv[1]);
	return fail(EMFILE);
}

int close(int fd)
{
	if (fd >= 0 && atomic_load_explicit(&nsocks, memory_order_acquire) > 0) {
		pthread_mutex_lock(&lock);
		for (int i = 0; i < MAX_SOCKS; i++) {
			if (!socks[i].used)
				continue;
			if (socks[i].fd == fd) {
				if (socks[i].peer >= 0)
					CALL_REAL(close, socks[i].peer);
				socks[i].used = 0;
				atomic_fetch_sub(&nsocks, 1);
			} else if (socks[i].peer == fd) {
				/* The program closes every descriptor it has (a daemon does): ours
				 * too. Its socket then gets no more answers. */
				socks[i].peer = -1;
			}
		}
		pthread_mutex_unlock(&lock);
	}
	return CALL_REAL(close, fd);
}

static void fill_kernel_addr(struct sockaddr_nl *a)
{
	memset(a, 0, sizeof(*a));
	a->nl_family = AF_NETLINK;
}

/* Copies a sockaddr_nl out as the kernel does: truncated to the caller's room, the length
 * always the full one. */
static void copy_addr(struct sockaddr *to, socklen_t *len, const struct sockaddr_nl *a)
{
	if (!to || !len)
		return;
	memcpy(to, a, *len < sizeof(*a) ? *len : sizeof(*a));
	*len = sizeof(*a);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(bind, fd, addr, len);
	struct sockaddr_nl a;
	if (!addr || len < sizeof(a))
		return fail_unlock(EINVAL);
	memcpy(&a, addr, sizeof(a));
	if (a.nl_family != AF_NETLINK)
		return fail_unlock(EINVAL);
	if (s->portid)
		return a.nl_pid && a.nl_pid != s->portid ? fail_unlock(EINVAL)
							 : (pthread_mutex_unlock(&lock), 0);
	if (a.nl_pid && portid_taken(a.nl_pid))
		return fail_unlock(EADDRINUSE);
	s->portid = a.nl_pid ? a.nl_pid : autobind_portid();
	pthread_mutex_unlock(&lock);
	return 0;
}

/* A netlink socket may name the kernel (port 0) as its default destination; nothing else is
 * there to talk to. */
int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return emu_net_guard_refuses(addr, len) ? -1 : CALL_REAL(connect, fd, addr, len);
	struct sockaddr_nl a;
	if (!addr || len < sizeof(sa_family_t))
		return fail_unlock(EINVAL);
	if (addr->sa_family == AF_UNSPEC)
		return pthread_mutex_unlock(&lock), 0;
	if (len < sizeof(a))
		return fail_unlock(EINVAL);
	memcpy(&a, addr, sizeof(a));
	if (a.nl_family != AF_NETLINK)
		return fail_unlock(EINVAL);
	if (a.nl_pid)
		return fail_unlock(ECONNREFUSED);
	if (!s->portid)
		s->portid = autobind_portid();
	pthread_mutex_unlock(&lock);
	return 0;
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(getsockname, fd, addr, len);
	struct sockaddr_nl a;
	fill_kernel_addr(&a);
	a.nl_pid = s->portid;
	pthread_mutex_unlock(&lock);
	copy_addr(addr, len, &a);
	return 0;
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(getpeername, fd, addr, len);
	pthread_mutex_unlock(&lock);
	struct sockaddr_nl a;
	fill_kernel_addr(&a);
	copy_addr(addr, len, &a);
	return 0;
}

static int netlink_option(int opt)
{
	switch (opt) {
	case NETLINK_ADD_MEMBERSHIP: case NETLINK_DROP_MEMBERSHIP: case NETLINK_PKTINFO:
	case NETLINK_BROADCAST_ERROR: case NETLINK_NO_ENOBUFS: case NETLINK_LISTEN_ALL_NSID:
	case NETLINK_CAP_ACK: case NETLINK_EXT_ACK: case NETLINK_GET_STRICT_CHK:
		return 1;
	}
	return 0;
}

/* SOL_NETLINK options are accepted (membership of a group joins nothing: RDMA netlink has no
 * event the emulated host sends); CAP_ACK is what changes the answers. SOL_SOCKET ones act on
 * the socketpair end. */
int setsockopt(int fd, int level, int opt, const void *val, socklen_t len)
{
	struct nlsock *s = level == SOL_SOCKET ? NULL : find_locked(fd);

	if (!s)
		return CALL_REAL(setsockopt, fd, level, opt, val, len);
	if (level != SOL_NETLINK || !netlink_option(opt))
		return fail_unlock(ENOPROTOOPT);
	if (!val || len < sizeof(int))
		return fail_unlock(EINVAL);
	int v;
	memcpy(&v, val, sizeof(v));
	if (opt == NETLINK_CAP_ACK)
		s->cap_ack = !!v;
	if (opt == NETLINK_EXT_ACK)
		s->ext_ack = !!v;
	pthread_mutex_unlock(&lock);
	return 0;
}

static int int_option(void *val, socklen_t *len, int v)
{
	if (!val || !len || *len < sizeof(int))
		return fail(EINVAL);
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

int getsockopt(int fd, int level, int opt, void *val, socklen_t *len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(getsockopt, fd, level, opt, val, len);
	struct nlsock copy = *s;
	pthread_mutex_unlock(&lock);
	if (level == SOL_SOCKET) {
		if (opt == SO_DOMAIN)
			return int_option(val, len, AF_NETLINK);
		if (opt == SO_PROTOCOL)
			return int_option(val, len, NETLINK_RDMA);
		if (opt == SO_TYPE)
			return int_option(val, len, copy.type);
		return CALL_REAL(getsockopt, fd, level, opt, val, len);
	}
	if (level != SOL_NETLINK || !netlink_option(opt))
		return fail(ENOPROTOOPT);
	return int_option(val, len,
			  opt == NETLINK_CAP_ACK ? copy.cap_ack : opt == NETLINK_EXT_ACK ? copy.ext_ack : 0);
}

static void emit(void *ctx, const unsigned char *buf, size_t len)
{
	int peer = *(const int *)ctx;

	if (peer >= 0)
		CALL_REAL(send, peer, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* A datagram from the program, with the lock held (released here): the kernel's answers are
 * queued on the socket before the call returns, as they are on Linux. */
static ssize_t nl_send(struct nlsock *s, const struct iovec *iov, size_t iovlen,
		       const void *to, socklen_t tolen)
{
	struct sockaddr_nl dst;

	if (to) {
		if (tolen < sizeof(dst))
			return fail_unlock(EINVAL);
		memcpy(&dst, to, sizeof(dst));
		if (dst.nl_family != AF_NETLINK)
			return fail_unlock(EINVAL);
		if (dst.nl_groups)
			return fail_unlock(EPERM);
		if (dst.nl_pid)
			return fail_unlock(ECONNREFUSED);
	}
	size_t total = 0;
	for (size_t i = 0; i < iovlen; i++)
		total += iov[i].iov_len;
	if (total > MAX_REQUEST)
		return fail_unlock(EMSGSIZE);
	unsigned char *buf = malloc(total ? total : 1);
	if (!buf)
		return fail_unlock(ENOBUFS);
	for (size_t i = 0, off = 0; i < iovlen; off += iov[i].iov_len, i++)
		memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
	if (!s->portid)
		s->portid = autobind_portid();
	int peer = s->peer;
	struct nl_peer p = { .portid = s->portid, .cap_ack = s->cap_ack,
			     .sink = { .emit = emit, .ctx = &peer } };
	nl_rdma_input(buf, total, &p);
	pthread_mutex_unlock(&lock);
	free(buf);
	return (ssize_t)total;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return emu_net_guard_refuses(to, tolen) ? -1
							: CALL_REAL(sendto, fd, buf, len, flags, to, tolen);
	struct iovec iov = { (void *)buf, len };
	return nl_send(s, &iov, 1, to, tolen);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(send, fd, buf, len, flags);
	struct iovec iov = { (void *)buf, len };
	return nl_send(s, &iov, 1, NULL, 0);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(write, fd, buf, len);
	struct iovec iov = { (void *)buf, len };
	return nl_send(s, &iov, 1, NULL, 0);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return msg && emu_net_guard_refuses(msg->msg_name, msg->msg_namelen)
			       ? -1
			       : CALL_REAL(sendmsg, fd, msg, flags);
	return nl_send(s, msg->msg_iov, msg->msg_iovlen, msg->msg_name, msg->msg_namelen);
}

/* Replies come from the kernel: port 0, no group. */
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(recvmsg, fd, msg, flags);
	pthread_mutex_unlock(&lock);
	void *name = msg->msg_name;
	socklen_t namelen = msg->msg_namelen;
	msg->msg_name = NULL;
	msg->msg_namelen = 0;
	ssize_t n = CALL_REAL(recvmsg, fd, msg, flags);
	msg->msg_name = name;
	if (n >= 0 && name) {
		struct sockaddr_nl a;
		fill_kernel_addr(&a);
		copy_addr(name, &namelen, &a);
		msg->msg_namelen = namelen;
	}
	return n;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		 socklen_t *fromlen)
{
	struct nlsock *s = find_locked(fd);

	if (!s)
		return CALL_REAL(recvfrom, fd, buf, len, flags, from, fromlen);
	pthread_mutex_unlock(&lock);
	ssize_t n = CALL_REAL(recvfrom, fd, buf, len, flags, NULL, NULL);
	if (n >= 0 && from && fromlen) {
		struct sockaddr_nl a;
		fill_kernel_addr(&a);
		copy_addr(from, fromlen, &a);
	}
	return n;
}

/* recvfrom of programs built with _FORTIFY_SOURCE. */
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen)
{
	if (len > buflen)
		abort();
	return recvfrom(fd, buf, len, flags, from, fromlen);
}
