/* poll and select, as librspreload.so exports them. A poll that holds an rsocket goes to rpoll
 * with every descriptor replaced by what stands behind it; one without goes to libc unchanged
 * (a socket that fell back to TCP is then polled through its /dev/null descriptor, always
 * ready, as with rdma-core). select always goes to rpoll. epoll is not interposed (rdma-core
 * v44's library exports no epoll call). */
/* This file defines libc functions of the same name; the inline wrappers _FORTIFY_SOURCE puts
 * in front of them (a hardened build's flags, a distribution's defaults) cannot be compiled over
 * such definitions. */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <rdma/rsocket.h>
#include <stdlib.h>
#include <sys/select.h>

#include "lib/preload/rsp.h"

/* A buffer per thread, grown to the largest call: rpoll's set and the program's descriptor of
 * each entry. */
struct poll_buf {
	struct pollfd *fds;
	int *user;
	size_t n;
};

static __thread struct poll_buf pbuf;

static struct poll_buf *poll_buf(size_t n)
{
	struct pollfd *fds;
	int *user;

	if (n <= pbuf.n)
		return pbuf.n ? &pbuf : NULL;
	fds = malloc(n * sizeof(*fds));
	user = malloc(n * sizeof(*user));
	if (!fds || !user) {
		free(fds);
		free(user);
		return NULL;
	}
	free(pbuf.fds);
	free(pbuf.user);
	pbuf.fds = fds;
	pbuf.user = user;
	pbuf.n = n;
	return &pbuf;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct poll_buf *b;
	nfds_t i;
	int ret;

	rsp_init();
	for (i = 0; i < nfds; i++) {
		int fd;

		if (rsp_fd_get(fds[i].fd, &fd) == RSP_RSOCKET)
			break;
	}
	if (i == nfds)
		return rsp_real.poll(fds, nfds, timeout);
	b = poll_buf(nfds);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < nfds; i++) {
		b->fds[i].fd = rsp_fd_getd(fds[i].fd);
		b->fds[i].events = fds[i].events;
		b->fds[i].revents = 0;
	}
	ret = rpoll(b->fds, nfds, timeout);
	for (i = 0; i < nfds; i++)
		fds[i].revents = b->fds[i].revents;
	return ret;
}

static int sets_to_pollfds(struct poll_buf *b, int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	int n = 0;

	for (int fd = 0; fd < nfds; fd++) {
		short events = (rd && FD_ISSET(fd, rd)) ? POLLIN : 0;

		if (wr && FD_ISSET(fd, wr))
			events |= POLLOUT;
		if (!events && !(ex && FD_ISSET(fd, ex)))
			continue;
		b->fds[n].fd = rsp_fd_getd(fd);
		b->fds[n].events = events;
		b->fds[n].revents = 0;
		b->user[n++] = fd;
	}
	return n;
}

/* Every readiness counts once in the result, as select counts them. */
static int pollfds_to_sets(const struct poll_buf *b, int n, fd_set *rd, fd_set *wr, fd_set *ex)
{
	int cnt = 0;

	for (int i = 0; i < n; i++) {
		short re = b->fds[i].revents;

		if (rd && (re & POLLIN)) {
			FD_SET(b->user[i], rd);
			cnt++;
		}
		if (wr && (re & POLLOUT)) {
			FD_SET(b->user[i], wr);
			cnt++;
		}
		if (ex && (re & ~(POLLIN | POLLOUT))) {
			FD_SET(b->user[i], ex);
			cnt++;
		}
	}
	return cnt;
}

/* select(0, ...) finds no buffer on a thread's first call and fails with ENOMEM, as with
 * rdma-core v44 (measured, docs/reference/rsockets-preload.md); a negative nfds is too large a
 * buffer there, ENOMEM too. The timeout is not updated. */
int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	   struct timeval *timeout)
{
	struct poll_buf *b;
	int n, ret;

	rsp_init();
	b = nfds > 0 ? poll_buf((size_t)nfds) : (pbuf.n && !nfds ? &pbuf : NULL);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	n = sets_to_pollfds(b, nfds, readfds, writefds, exceptfds);
	ret = rpoll(b->fds, (nfds_t)n,
		    timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1);
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	return ret > 0 ? pollfds_to_sets(b, n, readfds, writefds, exceptfds) : ret;
}
