/* The socket calls of libc, as librspreload.so exports them: creation, naming, connections,
 * options and descriptors. Each finds what stands behind the program's descriptor in the fd
 * table and calls rsockets or libc with it (lib/preload/rsp.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rsocket.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/preload/rsp.h"

/* rsocket() may itself open sockets (a datagram rsocket's UDP socket): those are libc's. */
static __thread int in_rsocket;

static bool fork_tcp(int domain, int type, int protocol)
{
	return rsp_opts.fork_support && (domain == AF_INET || domain == AF_INET6) &&
	       type == SOCK_STREAM && (!protocol || protocol == IPPROTO_TCP);
}

int socket(int domain, int type, int protocol)
{
	int index, fd;

	rsp_init();
	if (in_rsocket || !rsp_config_takes(domain, type, protocol))
		return rsp_real.api.socket(domain, type, protocol);
	index = rsp_fd_open();
	if (index < 0)
		return -1;
	if (fork_tcp(domain, type, protocol)) {
		fd = rsp_real.api.socket(domain, type, protocol);
		if (fd < 0) {
			rsp_fd_drop(index);
			return -1;
		}
		rsp_fd_store(index, fd, RSP_NORMAL, RSP_FORK);
		return index;
	}
	in_rsocket = 1;
	fd = rsocket(domain, type, protocol);
	in_rsocket = 0;
	if (fd >= 0) {
		rsp_fd_store(index, fd, RSP_RSOCKET, RSP_READY);
		rsp_set_rsocket_options(fd);
		return index;
	}
	/* refused by rsockets (another family or type, flags in type, no device): libc's */
	rsp_fd_drop(index);
	return rsp_real.api.socket(domain, type, protocol);
}

int bind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET ? rbind(fd, addr, addrlen)
						      : rsp_real.bind(fd, addr, addrlen);
}

int listen(int socket, int backlog)
{
	int fd, ret;

	rsp_init();
	if (rsp_fd_get(socket, &fd) == RSP_RSOCKET)
		return rlisten(fd, backlog);
	ret = rsp_real.listen(fd, backlog);
	if (!ret && rsp_fd_state(socket) == RSP_FORK)
		rsp_fd_store(socket, fd, RSP_NORMAL, RSP_FORK_LISTEN);
	return ret;
}

/* An accepted connection gets a descriptor of its own in the table. */
static int accept_into_table(int fd, bool rs, struct sockaddr *addr, socklen_t *addrlen)
{
	int index = rsp_fd_open(), ret;

	if (index < 0)
		return -1;
	ret = rs ? raccept(fd, addr, addrlen) : rsp_real.accept(fd, addr, addrlen);
	if (ret < 0) {
		int err = errno;

		rsp_fd_drop(index);
		errno = err;
		return -1;
	}
	rsp_fd_store(index, ret, rs ? RSP_RSOCKET : RSP_NORMAL, rs ? RSP_READY : RSP_FORK_PASSIVE);
	return index;
}

int accept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	int fd;

	rsp_init();
	if (rsp_fd_get(socket, &fd) == RSP_RSOCKET)
		return accept_into_table(fd, true, addr, addrlen);
	if (rsp_fd_state(socket) == RSP_FORK_LISTEN)
		return accept_into_table(fd, false, addr, addrlen);
	return rsp_real.accept(fd, addr, addrlen);
}

/* A connect that rsockets cannot make (no RDMA device towards the address, no rsocket
 * listening there) is made over TCP with a real socket in the rsocket's place; only an
 * rsocket's nonblocking connect in progress stays with rsockets. */
int connect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	int fd, real_fd, ret;

	rsp_init();
	if (rsp_fd_get(socket, &fd) == RSP_RSOCKET) {
		ret = rconnect(fd, addr, addrlen);
		if (!ret || errno == EINPROGRESS)
			return ret;
		real_fd = rsp_transpose(socket, RSP_NORMAL);
		if (real_fd < 0)
			return -1;
		rclose(fd);
		fd = real_fd;
	} else if (rsp_fd_state(socket) == RSP_FORK) {
		rsp_fd_store(socket, fd, RSP_NORMAL, RSP_FORK_ACTIVE);
	}
	if (rsp_fd_lookup(socket) && rsp_guard_refuses(addr, addrlen))
		return -1;
	return rsp_real.connect(fd, addr, addrlen);
}

int shutdown(int socket, int how)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET ? rshutdown(fd, how)
						      : rsp_real.shutdown(fd, how);
}

/* A dup2 copy holds a reference on the descriptor it copies (dupfd): closing the copy drops
 * that reference as well as its own, and what stands behind is closed when the last
 * reference of the entry being closed goes, as rdma-core's library counts them. */
int close(int socket)
{
	struct rsp_fd *e;
	int ret;

	rsp_init();
	e = rsp_fd_lookup(socket);
	if (!e)
		return rsp_real.api.close(socket);
	if (e->dupfd != -1) {
		ret = close(e->dupfd);
		if (ret)
			return ret;
	}
	if (atomic_fetch_sub(&e->refcnt, 1) != 1)
		return 0;
	rsp_fd_clear(socket);
	rsp_real.api.close(socket);
	ret = e->kind == RSP_RSOCKET ? rclose(e->fd) : rsp_real.api.close(e->fd);
	free(e);
	return ret;
}

int getpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET ? rgetpeername(fd, addr, addrlen)
						      : rsp_real.getpeername(fd, addr, addrlen);
}

int getsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET ? rgetsockname(fd, addr, addrlen)
						      : rsp_real.api.getsockname(fd, addr, addrlen);
}

int setsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET
		       ? rsetsockopt(fd, level, optname, optval, optlen)
		       : rsp_real.api.setsockopt(fd, level, optname, optval, optlen);
}

int getsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	int fd;

	rsp_init();
	return rsp_fd_get(socket, &fd) == RSP_RSOCKET
		       ? rgetsockopt(fd, level, optname, optval, optlen)
		       : rsp_real.api.getsockopt(fd, level, optname, optval, optlen);
}

/* rsockets answer F_GETFL and F_SETFL and refuse the rest (ENOTSUP): F_SETFD on an rsocket
 * fails as with rdma-core. The argument is read as the command's type. */
int fcntl(int socket, int cmd, ...)
{
	const struct rsp_api *api;
	va_list ap;
	long lval;
	void *pval;
	int fd, ret;

	rsp_init();
	api = rsp_fd_get(socket, &fd) == RSP_RSOCKET ? &rsp_rs : &rsp_real.api;
	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFD: case F_GETFL: case F_GETOWN: case F_GETSIG: case F_GETLEASE:
		ret = api->fcntl(fd, cmd);
		break;
	case F_DUPFD: case F_SETFD: case F_SETFL: case F_SETOWN: case F_SETSIG:
	case F_SETLEASE: case F_NOTIFY:
		lval = va_arg(ap, long);
		ret = api->fcntl(fd, cmd, lval);
		break;
	default:
		pval = va_arg(ap, void *);
		ret = api->fcntl(fd, cmd, pval);
		break;
	}
	va_end(ap);
	return ret;
}

/* The copy shares what stands behind oldfd; a newfd that other copies reference cannot be
 * replaced (EBUSY). Not safe against other threads' calls on the same descriptors, as with
 * rdma-core. */
int dup2(int oldfd, int newfd)
{
	struct rsp_fd *olde, *newe;
	int ret;

	rsp_init();
	olde = rsp_fd_lookup(oldfd);
	if (olde)
		rsp_fork_resolve(oldfd);
	newe = rsp_fd_lookup(newfd);
	if (newe) {
		if (atomic_load(&newe->refcnt) > 1) {
			errno = EBUSY;
			return -1;
		}
		close(newfd);
	}
	ret = rsp_real.dup2(oldfd, newfd);
	if (!olde || ret != newfd)
		return ret;
	newe = calloc(1, sizeof(*newe));
	if (!newe) {
		close(newfd);
		errno = ENOMEM;
		return -1;
	}
	newe->fd = olde->fd;
	newe->kind = olde->kind;
	newe->state = RSP_READY;
	if (olde->dupfd != -1) {
		newe->dupfd = olde->dupfd;
		olde = rsp_fd_lookup(olde->dupfd);
	} else {
		newe->dupfd = oldfd;
	}
	atomic_store(&newe->refcnt, 1);
	rsp_fd_insert(newfd, newe);
	atomic_fetch_add(&olde->refcnt, 1);
	return newfd;
}
