/* The datagram rsocket object and rs_dgram_type (lib/rsocket/ds.h): creation, the endpoint
 * made on the first bind, connect or sendto, the data calls, rpoll's three steps and close.
 * Options, fcntl and the calls a datagram socket refuses: ds_opt.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ds.h"
#include "ds_addr.h"
#include "ds_udp.h"
#include "util/failcall.h"

/* ucma_max_qpsize(NULL): the smallest max_qp_wr of the devices. */
static uint32_t max_qpsize(void)
{
	struct ibv_device_attr attr;
	struct ibv_context **devs;
	uint32_t max = 0;
	int n = 0;

	devs = rdma_get_devices(&n);
	for (int i = 0; devs && i < n; i++)
		if (!ibv_query_device(devs[i], &attr) &&
		    (!max || (uint32_t)attr.max_qp_wr < max))
			max = (uint32_t)attr.max_qp_wr;
	if (devs)
		rdma_free_devices(devs);
	return max;
}

/* rdma-core's ds_set_qp_size: each queue entry owns a DS_SNDLOWAT slot, so the buffer sizes
 * bound the queue sizes and the reverse. */
static void set_qp_size(struct ds_sock *ds)
{
	uint32_t max = max_qpsize();

	if (max > DS_QP_MAX_SIZE)
		max = DS_QP_MAX_SIZE;
	if (ds->sq_size > max)
		ds->sq_size = (uint16_t)max;
	if (ds->rq_size > max)
		ds->rq_size = (uint16_t)max;
	if (ds->rq_size > ds->rbuf_size / DS_SNDLOWAT)
		ds->rq_size = (uint16_t)(ds->rbuf_size / DS_SNDLOWAT);
	else
		ds->rbuf_size = ds->rq_size * DS_SNDLOWAT;
	if (ds->sq_size > ds->sbuf_size / DS_SNDLOWAT)
		ds->sq_size = (uint16_t)(ds->sbuf_size / DS_SNDLOWAT);
	else
		ds->sbuf_size = ds->sq_size * DS_SNDLOWAT;
}

int ds_init_ep(struct ds_sock *ds)
{
	/* a call after one that failed (its service thread could not be had) sizes and
	 * allocates again: what the failed one allocated is freed first, not lost (rdma-core's
	 * ds_init_ep overwrites it) */
	free(ds->sbuf);
	free(ds->dmsg);
	set_qp_size(ds);
	ds->sbuf = emu_calloc(ds->sq_size ? ds->sq_size : 1, DS_SNDLOWAT);
	ds->dmsg = emu_calloc((size_t)ds->rq_size + 1, sizeof *ds->dmsg);
	if (!ds->sbuf || !ds->dmsg) {
		errno = ENOMEM;
		return -1;
	}
	ds->sqe_avail = ds->sq_size;
	ds->rqe_avail = ds->rq_size;
	ds->smsg_free = NULL;
	for (int i = ds->sq_size - 1; i >= 0; i--) {
		void **slot = (void **)(ds->sbuf + (size_t)i * DS_SNDLOWAT);

		*slot = ds->smsg_free;
		ds->smsg_free = slot;
	}
	if (ds_svc_add(ds))
		return -1;
	ds->state = DS_READABLE | DS_WRITABLE;
	return 0;
}

static void ds_free(struct ds_sock *ds)
{
	ds_svc_remove(ds);
	if (ds->chan) {
		rs_index_remove(ds->rs.index);
		ds->chan->ops->close(ds->chan);
	}
	ds_free_qps(ds);
	free(ds->dmsg);
	if (ds->epfd >= 0)
		close(ds->epfd);
	free(ds->sbuf);
	pthread_mutex_destroy(&ds->slock);
	pthread_mutex_destroy(&ds->rlock);
	pthread_mutex_destroy(&ds->cq_lock);
	pthread_mutex_destroy(&ds->cq_wait_lock);
	pthread_mutex_destroy(&ds->map_lock);
	free(ds);
}

struct rs_sock *rs_dgram_new(int domain)
{
	const struct rs_config *cfg = rs_config();
	struct ds_sock *ds = emu_calloc(1, sizeof *ds);
	int fd, e;

	if (!ds) {
		errno = ENOMEM;
		return NULL;
	}
	ds->rs.type = &rs_dgram_type;
	ds->rs.index = -1;
	ds->domain = domain;
	ds->epfd = -1;
	ds->sbuf_size = cfg->wmem_default;
	ds->rbuf_size = cfg->mem_default;
	ds->sq_inline = cfg->inline_default;
	ds->sq_size = cfg->sqsize_default;
	ds->rq_size = cfg->rqsize_default;
	pthread_mutex_init(&ds->slock, NULL);
	pthread_mutex_init(&ds->rlock, NULL);
	pthread_mutex_init(&ds->cq_lock, NULL);
	pthread_mutex_init(&ds->cq_wait_lock, NULL);
	pthread_mutex_init(&ds->map_lock, NULL);
	fd = ds_udp_open(domain, &ds->chan);
	if (fd < 0)
		goto err;
	ds->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ds->epfd < 0 || rs_index_insert(fd, &ds->rs) < 0)
		goto err;
	return &ds->rs;
err:
	e = errno;
	if (ds->chan && ds->rs.index < 0) {
		ds->chan->ops->close(ds->chan);
		ds->chan = NULL;
	}
	ds_free(ds);
	errno = e;
	return NULL;
}

static int ds_bind(struct rs_sock *s, const struct sockaddr *addr, socklen_t len)
{
	struct ds_sock *ds = ds_of(s);

	if (!ds->state && ds_init_ep(ds))
		return -1;
	return ds->chan->ops->bind(ds->chan, addr, len);
}

/* The UDP socket is connected, and the peer becomes the destination of rsend/rwrite. */
static int ds_connect(struct rs_sock *s, const struct sockaddr *addr, socklen_t len)
{
	struct ds_sock *ds = ds_of(s);
	int ret;

	if (!ds->state && ds_init_ep(ds))
		return -1;
	pthread_mutex_lock(&ds->slock);
	ret = ds->chan->ops->connect(ds->chan, addr, len);
	if (!ret)
		ret = ds_get_dest(ds, addr, len, &ds->conn_dest);
	pthread_mutex_unlock(&ds->slock);
	return ret;
}

static ssize_t ds_recvfrom(struct rs_sock *s, void *buf, size_t len, int flags,
			   struct sockaddr *src, socklen_t *srclen)
{
	struct ds_sock *ds = ds_of(s);
	ssize_t ret;

	pthread_mutex_lock(&ds->rlock);
	ret = ds_recv(ds, buf, len, flags, src, srclen);
	pthread_mutex_unlock(&ds->rlock);
	return ret;
}

/* rdma-core's rrecvv fills the first iovec only. */
static ssize_t ds_recvv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags)
{
	if (iovcnt < 1) {
		errno = EINVAL;
		return -1;
	}
	return ds_recvfrom(s, iov[0].iov_base, iov[0].iov_len, flags, NULL, NULL);
}

/* The connected forms (dst NULL) send to connect's peer; rdma-core dereferences the missing
 * destination of a socket never connected, this answers EDESTADDRREQ as a UDP socket. */
static ssize_t send_iov(struct ds_sock *ds, const struct iovec *iov, int iovcnt, int flags,
			const struct sockaddr *dst, socklen_t dstlen)
{
	ssize_t ret;

	if (dst && !ds->state && ds_init_ep(ds))
		return -1;
	pthread_mutex_lock(&ds->slock);
	if (dst && (!ds->conn_dest || ds_compare_addr(dst, &ds->conn_dest->addr)) &&
	    ds_get_dest(ds, dst, dstlen, &ds->conn_dest)) {
		ret = -1;
	} else if (!ds->conn_dest) {
		errno = EDESTADDRREQ;
		ret = -1;
	} else {
		ret = ds_send(ds, iov, iovcnt, flags);
	}
	pthread_mutex_unlock(&ds->slock);
	return ret;
}

static ssize_t ds_sendto(struct rs_sock *s, const void *buf, size_t len, int flags,
			 const struct sockaddr *dst, socklen_t dstlen)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return send_iov(ds_of(s), &iov, 1, flags, dst, dstlen);
}

/* rsendv/rsendmsg/rwritev: one datagram of the iovecs' bytes to connect's peer (rdma-core
 * runs the stream code on a datagram socket there, which has no defined outcome). */
static ssize_t ds_sendv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags)
{
	if (iovcnt < 0 || iovcnt > 8) {
		errno = EINVAL;
		return -1;
	}
	return send_iov(ds_of(s), iov, iovcnt, flags, NULL, 0);
}

/* rshutdown does nothing to a datagram rsocket (it acts on connected stream states only). */
static int ds_shutdown(struct rs_sock *s, int how)
{
	(void)s;
	(void)how;
	return 0;
}

/* rdma-core's ds_shutdown, then the object's end: leaves the service thread, waits for the
 * sends in flight (blocking even on a non-blocking socket). A socket that never made its
 * endpoint has nothing in flight (rdma-core would wait on an empty epoll set for ever). */
static int ds_close(struct rs_sock *s)
{
	struct ds_sock *ds = ds_of(s);

	ds_svc_remove(ds);
	if (ds->fs_flags & O_NONBLOCK)
		ds_set_nonblocking(ds, 0);
	if (ds->state) {
		ds->state = 0;
		ds_process_cqs(ds, 0, ds_all_sends_done);
	}
	ds_free(ds);
	return 0;
}

static int ds_getpeername(struct rs_sock *s, struct sockaddr *addr, socklen_t *len)
{
	struct ds_sock *ds = ds_of(s);

	return ds->chan->ops->getpeername(ds->chan, addr, len);
}

static int ds_getsockname(struct rs_sock *s, struct sockaddr *addr, socklen_t *len)
{
	struct ds_sock *ds = ds_of(s);

	return ds->chan->ops->getsockname(ds->chan, addr, len);
}

static int poll_all(struct ds_sock *ds)
{
	(void)ds;
	return 1;
}

static int is_cq_armed(struct ds_sock *ds)
{
	return ds->cq_armed;
}

/* rdma-core's rs_poll_rs for a datagram socket. */
static short poll_rs(struct ds_sock *ds, short events, int nonblock,
		     int (*test)(struct ds_sock *))
{
	short revents = 0;

	ds_process_cqs(ds, nonblock, test);
	if ((events & POLLIN) && ds_have_rdata(ds))
		revents |= POLLIN;
	if ((events & POLLOUT) && ds_can_send(ds))
		revents |= POLLOUT;
	return revents;
}

static short ds_poll_check(struct rs_sock *s, short events)
{
	return poll_rs(ds_of(s), events, 1, poll_all);
}

static short ds_poll_arm(struct rs_sock *s, short events, struct pollfd *kfd)
{
	struct ds_sock *ds = ds_of(s);
	short revents = poll_rs(ds, events, 0, is_cq_armed);

	if (revents)
		return revents;
	kfd->fd = ds->epfd;
	kfd->events = POLLIN;
	kfd->revents = 0;
	return 0;
}

static void ds_poll_drain(struct rs_sock *s, const struct pollfd *kfd)
{
	struct ds_sock *ds = ds_of(s);

	if (!kfd->revents)
		return;
	pthread_mutex_lock(&ds->cq_wait_lock);
	ds_get_cq_event(ds);
	pthread_mutex_unlock(&ds->cq_wait_lock);
}

const struct rs_type rs_dgram_type = {
	.sotype = SOCK_DGRAM,
	.name = "datagram",
	.bind = ds_bind,
	.listen = ds_listen,
	.accept = ds_accept,
	.connect = ds_connect,
	.recvfrom = ds_recvfrom,
	.recvv = ds_recvv,
	.sendto = ds_sendto,
	.sendv = ds_sendv,
	.shutdown = ds_shutdown,
	.close = ds_close,
	.getpeername = ds_getpeername,
	.getsockname = ds_getsockname,
	.setsockopt = ds_setsockopt,
	.getsockopt = ds_getsockopt,
	.fcntl = ds_fcntl,
	.iomap = ds_iomap,
	.iounmap = ds_iounmap,
	.iowrite = ds_iowrite,
	.poll_check = ds_poll_check,
	.poll_arm = ds_poll_arm,
	.poll_drain = ds_poll_drain,
};
