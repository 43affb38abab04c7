/* The public rsocket calls (RDMACM_1.0, rsocket(7)): what is common to both socket types is
 * checked here, then the call goes to the type's op (lib/rsocket/rs_sock.h). rpoll and
 * rselect mix rsockets and ordinary fds: they spin on the rsockets' check op for the
 * configured polling_time, then arm them and wait in the kernel on the fds the ops name, as
 * rdma-core's library does.
 *
 * A socket number that is not an rsocket gives EBADF from every call. rdma-core's library
 * agrees for most calls; for rrecv, rsend and the calls built on them, and for riomap,
 * riounmap and riowrite, it reads its index without a check and crashes on a number far from
 * any rsocket: those return EBADF here too (docs/rsockets.md "Differences"). rclose of such a
 * number returns the value EBADF without setting errno, as rdma-core's does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rsocket.h>

#include "rs_sock.h"
#include "util/failcall.h"

#ifndef AF_IB
#define AF_IB 27
#endif

/* Stack room for rpoll's kernel set; larger sets are allocated. */
#define RS_POLL_STACK 32

static int rs_err(int e)
{
	errno = e;
	return -1;
}

static struct rs_sock *rs_get(int socket)
{
	struct rs_sock *s = rs_index_get(socket);

	if (!s)
		errno = EBADF;
	return s;
}

int rsocket(int domain, int type, int protocol)
{
	struct rs_sock *s;

	/* v44 takes the type as it is: SOCK_NONBLOCK or SOCK_CLOEXEC in it is ENOTSUP. */
	if ((domain != AF_INET && domain != AF_INET6 && domain != AF_IB) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM) ||
	    (type == SOCK_STREAM && protocol && protocol != IPPROTO_TCP) ||
	    (type == SOCK_DGRAM && protocol && protocol != IPPROTO_UDP))
		return rs_err(ENOTSUP);
	s = type == SOCK_STREAM ? rs_stream_new(domain) : rs_dgram_new(domain);
	return s ? s->index : -1;
}

int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->bind(s, addr, addrlen) : -1;
}

int rlisten(int socket, int backlog)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->listen(s, backlog) : -1;
}

int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->accept(s, addr, addrlen) : -1;
}

int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->connect(s, addr, addrlen) : -1;
}

int rshutdown(int socket, int how)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->shutdown(s, how) : -1;
}

int rclose(int socket)
{
	struct rs_sock *s = rs_index_get(socket);

	if (!s)
		return EBADF;
	return s->type->close(s);
}

ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->recvfrom(s, buf, len, flags, NULL, NULL) : -1;
}

ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->recvfrom(s, buf, len, flags, src_addr, addrlen) : -1;
}

/* rdma-core passes the message's msg_flags, not the call's flags, on to the receive; kept. */
ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	struct rs_sock *s;

	(void)flags;
	if (msg->msg_control && msg->msg_controllen)
		return rs_err(ENOTSUP);
	s = rs_get(socket);
	return s ? s->type->recvv(s, msg->msg_iov, (int)msg->msg_iovlen, msg->msg_flags) : -1;
}

ssize_t rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->recvv(s, iov, iovcnt, 0) : -1;
}

ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->sendto(s, buf, len, flags, NULL, 0) : -1;
}

ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->sendto(s, buf, len, flags, dest_addr, addrlen) : -1;
}

ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	struct rs_sock *s;

	if (msg->msg_control && msg->msg_controllen)
		return rs_err(ENOTSUP);
	s = rs_get(socket);
	return s ? s->type->sendv(s, msg->msg_iov, (int)msg->msg_iovlen, flags) : -1;
}

ssize_t rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->sendv(s, iov, iovcnt, 0) : -1;
}

int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->getpeername(s, addr, addrlen) : -1;
}

int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->getsockname(s, addr, addrlen) : -1;
}

int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->setsockopt(s, level, optname, optval, optlen) : -1;
}

int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->getsockopt(s, level, optname, optval, optlen) : -1;
}

/* Only F_SETFL reads an argument: the other commands are called without one. */
int rfcntl(int socket, int cmd, ...)
{
	struct rs_sock *s = rs_get(socket);
	long arg = 0;
	va_list ap;

	if (!s)
		return -1;
	if (cmd == F_SETFL) {
		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
	}
	return s->type->fcntl(s, cmd, arg);
}

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->iomap(s, buf, len, prot, flags, offset) : -1;
}

int riounmap(int socket, void *buf, size_t len)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->iounmap(s, buf, len) : -1;
}

size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs_sock *s = rs_get(socket);

	return s ? s->type->iowrite(s, buf, count, offset, flags) : (size_t)-1;
}

/* ---- rpoll ---------------------------------------------------------------------------- */

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* One look at every fd without blocking: the number with revents. */
static int poll_check_all(struct pollfd *fds, nfds_t nfds)
{
	struct rs_sock *s;
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		s = rs_index_get(fds[i].fd);
		if (s) {
			fds[i].revents = s->type->poll_check(s, fds[i].events);
		} else {
			fds[i].revents = 0;
			poll(&fds[i], 1, 0);
		}
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

/* Fills kfds for the kernel wait; 1 when an rsocket became ready while arming. */
static int poll_arm_all(struct pollfd *kfds, struct pollfd *fds, nfds_t nfds)
{
	struct rs_sock *s;
	short r;

	for (nfds_t i = 0; i < nfds; i++) {
		s = rs_index_get(fds[i].fd);
		kfds[i] = fds[i];
		kfds[i].revents = 0;
		if (!s)
			continue;
		r = s->type->poll_arm(s, fds[i].events, &kfds[i]);
		if (r) {
			fds[i].revents = r;
			return 1;
		}
		kfds[i].revents = 0;
	}
	return 0;
}

static int poll_events_all(struct pollfd *kfds, struct pollfd *fds, nfds_t nfds)
{
	struct rs_sock *s;
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		s = rs_index_get(fds[i].fd);
		if (s) {
			if (kfds[i].revents)
				s->type->poll_drain(s, &kfds[i]);
			fds[i].revents = s->type->poll_check(s, fds[i].events);
		} else {
			fds[i].revents = kfds[i].revents;
		}
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

static int poll_kernel(struct pollfd *kfds, struct pollfd *fds, nfds_t nfds, int timeout,
		       uint64_t start)
{
	const struct rs_config *cfg = rs_config();
	int sleep_ms, ret;

	kfds[nfds].fd = rs_poll_wake_fd();
	kfds[nfds].events = POLLIN;
	do {
		ret = poll_arm_all(kfds, fds, nfds);
		if (ret)
			break;
		if (rs_poll_enter())
			continue;
		sleep_ms = (int)cfg->wake_up_interval;
		if (timeout >= 0) {
			int left = timeout - (int)((now_us() - start) / 1000u);

			if (left <= 0) {
				rs_poll_exit();
				return 0;
			}
			if (left < sleep_ms)
				sleep_ms = left;
		}
		kfds[nfds].revents = 0;
		ret = poll(kfds, nfds + 1, sleep_ms);
		if (ret < 0) {
			rs_poll_exit();
			break;
		}
		ret = poll_events_all(kfds, fds, nfds);
		rs_poll_stop();
	} while (!ret);
	return ret;
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd stack[RS_POLL_STACK + 1], *kfds = stack;
	uint64_t start = 0;
	int ret;

	do {
		ret = poll_check_all(fds, nfds);
		if (ret || !timeout)
			return ret;
		if (!start)
			start = now_us();
	} while (now_us() - start <= rs_config()->polling_time);

	if (rs_poll_wake_fd() < 0)
		return rs_err(ENOMEM);
	if (nfds > RS_POLL_STACK) {
		kfds = emu_malloc((nfds + 1) * sizeof *kfds);
		if (!kfds)
			return rs_err(ENOMEM);
	}
	ret = poll_kernel(kfds, fds, nfds, timeout, start);
	if (kfds != stack) {
		int save = errno;

		free(kfds);
		errno = save;
	}
	return ret;
}

/* ---- rselect: rpoll over the sets ---------------------------------------------------- */

static struct pollfd *select_to_poll(int *nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	struct pollfd *fds = emu_calloc(*nfds > 0 ? (size_t)*nfds : 1, sizeof *fds);
	int n = 0;

	if (!fds)
		return NULL;
	for (int fd = 0; fd < *nfds; fd++) {
		bool r = rd && FD_ISSET(fd, rd), w = wr && FD_ISSET(fd, wr);
		bool x = ex && FD_ISSET(fd, ex);

		if (!r && !w && !x)
			continue;
		fds[n].fd = fd;
		fds[n].events = (short)((r ? POLLIN : 0) | (w ? POLLOUT : 0));
		n++;
	}
	*nfds = n;
	return fds;
}

static int poll_to_select(int nfds, const struct pollfd *fds, fd_set *rd, fd_set *wr,
			  fd_set *ex)
{
	int cnt = 0;

	for (int i = 0; i < nfds; i++) {
		if (rd && (fds[i].revents & (POLLIN | POLLHUP))) {
			FD_SET(fds[i].fd, rd);
			cnt++;
		}
		if (wr && (fds[i].revents & POLLOUT)) {
			FD_SET(fds[i].fd, wr);
			cnt++;
		}
		if (ex && (fds[i].revents & ~(POLLIN | POLLOUT))) {
			FD_SET(fds[i].fd, ex);
			cnt++;
		}
	}
	return cnt;
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	struct pollfd *fds;
	int ret, save;

	fds = select_to_poll(&nfds, readfds, writefds, exceptfds);
	if (!fds)
		return rs_err(ENOMEM);
	ret = rpoll(fds, (nfds_t)nfds,
		    timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1);
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	if (ret > 0)
		ret = poll_to_select(nfds, fds, readfds, writefds, exceptfds);
	save = errno;
	free(fds);
	errno = save;
	return ret;
}
