/* The kernel backend of the UDP side channel (ds_chan.h): the rsocket's UDP socket used as
 * rdma-core uses it. Chosen only inside an `rdmaemu run` sandbox, whose network namespace
 * holds the fabric's addresses on its taps. */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "ds_chan.h"
#include "util/failcall.h"

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
	int sock = emu_socket(dst->sa_family, SOCK_DGRAM, 0), ret;

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
