/* The UDP side channel's seam (ds_chan.h): the choice of backend and the kernel backend,
 * which is the UDP socket used as rdma-core uses it (only ever inside a sandbox). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds_chan.h"

static const struct ds_chan_ops *backend;
static pthread_once_t backend_once = PTHREAD_ONCE_INIT;

/* `rdmaemu run` sets RDMAEMU_SANDBOX (possibly empty) inside a host's sandbox only. */
static void choose(void)
{
	backend = getenv("RDMAEMU_SANDBOX") ? &ds_chan_kernel_ops : &ds_chan_local_ops;
}

const struct ds_chan_ops *ds_chan_backend(void)
{
	pthread_once(&backend_once, choose);
	return backend;
}

int ds_chan_open(int domain, struct ds_chan **out)
{
	struct ds_chan *c = calloc(1, sizeof *c);

	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	c->ops = ds_chan_backend();
	c->domain = domain;
	c->fd = socket(domain, SOCK_DGRAM, 0);
	if (c->fd < 0 || c->ops->open(c)) {
		int e = errno;

		if (c->fd >= 0)
			close(c->fd);
		free(c);
		errno = e;
		return -1;
	}
	*out = c;
	return c->fd;
}

void ds_chan_copy_addr(const union ds_addr *a, struct sockaddr *addr, socklen_t *len)
{
	socklen_t full = ds_addrlen(&a->sa);

	memcpy(addr, a, *len < full ? *len : full);
	*len = full;
}

int ds_chan_src_addr(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
		     union ds_addr *src, socklen_t *srclen)
{
	socklen_t len = sizeof *src;
	uint16_t port;

	memset(src, 0, sizeof *src);
	if (c->ops->getsockname(c, &src->sa, &len))
		return -1;
	*srclen = len;
	if (!ds_any_addr(src))
		return 0;
	port = src->sin.sin_port;	/* the same place in sockaddr_in6 */
	if (c->ops->route_src(c, dst, dstlen, src, srclen))
		return -1;
	src->sin.sin_port = port;
	return 0;
}

/* ---- kernel backend ------------------------------------------------------------------- */

static int k_open(struct ds_chan *c)
{
	(void)c;
	return 0;
}

static int k_bind(struct ds_chan *c, const struct sockaddr *addr, socklen_t len)
{
	return bind(c->fd, addr, len);
}

static int k_connect(struct ds_chan *c, const struct sockaddr *addr, socklen_t len)
{
	return connect(c->fd, addr, len);
}

static int k_getsockname(struct ds_chan *c, struct sockaddr *addr, socklen_t *len)
{
	return getsockname(c->fd, addr, len);
}

static int k_getpeername(struct ds_chan *c, struct sockaddr *addr, socklen_t *len)
{
	return getpeername(c->fd, addr, len);
}

static ssize_t k_sendmsg(struct ds_chan *c, const struct iovec *iov, int iovcnt, int flags,
			 const struct sockaddr *dst, socklen_t dstlen)
{
	struct msghdr msg = {
		.msg_name = (void *)dst,
		.msg_namelen = dstlen,
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = (size_t)iovcnt,
	};

	return sendmsg(c->fd, &msg, flags);
}

static ssize_t k_recvfrom(struct ds_chan *c, void *buf, size_t len, struct sockaddr *src,
			  socklen_t *srclen)
{
	return recvfrom(c->fd, buf, len, MSG_DONTWAIT, src, srclen);
}

/* rdma-core asks the kernel's routing: a connected UDP socket's own address. */
static int k_route_src(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
		       union ds_addr *src, socklen_t *srclen)
{
	int sock = socket(dst->sa_family, SOCK_DGRAM, 0), ret;

	(void)c;
	if (sock < 0)
		return -1;
	ret = connect(sock, dst, dstlen);
	if (!ret) {
		*srclen = sizeof *src;
		ret = getsockname(sock, &src->sa, srclen);
	}
	close(sock);
	return ret;
}

static void k_close(struct ds_chan *c)
{
	close(c->fd);
	free(c);
}

const struct ds_chan_ops ds_chan_kernel_ops = {
	.name = "kernel",
	.open = k_open,
	.bind = k_bind,
	.connect = k_connect,
	.getsockname = k_getsockname,
	.getpeername = k_getpeername,
	.sendmsg = k_sendmsg,
	.recvfrom = k_recvfrom,
	.route_src = k_route_src,
	.close = k_close,
};
