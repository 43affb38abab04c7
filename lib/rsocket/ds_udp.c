/* A datagram rsocket's UDP socket (ds_udp.h): the backend of the side channel's seam
 * (ds_chan.h) chosen once for the process, and what the rsocket asks of it. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds_addr.h"
#include "ds_udp.h"
#include "util/failcall.h"

static const struct ds_chan_ops *backend;
static pthread_once_t backend_once = PTHREAD_ONCE_INIT;

/* `rdmaemu run` sets RDMAEMU_SANDBOX (possibly empty) inside a host's sandbox only. */
static void choose(void)
{
	backend = getenv("RDMAEMU_SANDBOX") ? &ds_chan_kernel_ops : &ds_chan_local_ops;
}

const struct ds_chan_ops *ds_udp_backend(void)
{
	pthread_once(&backend_once, choose);
	return backend;
}

int ds_udp_open(int domain, struct ds_chan **out)
{
	struct ds_chan *c = emu_calloc(1, sizeof *c);

	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	c->ops = ds_udp_backend();
	c->domain = domain;
	c->fd = emu_socket(domain, SOCK_DGRAM, 0);
	c->rfd = c->fd;
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

int ds_udp_src_addr(struct ds_chan *c, const struct sockaddr *dst, socklen_t dstlen,
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
