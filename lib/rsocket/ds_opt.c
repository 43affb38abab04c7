/* Options, fcntl and the calls a datagram rsocket refuses (rdma-core's rsetsockopt,
 * rgetsockopt, rfcntl, rlisten, raccept, riomap, riounmap and riowrite on a SOCK_DGRAM
 * rsocket).
 *
 * rsetsockopt passes every level but SOL_RDMA to the UDP socket first and fails as it fails;
 * then, as for a stream rsocket, it keeps what rgetsockopt answers (rgetsockopt never asks the
 * UDP socket). Where rdma-core's code reads stream-only state on a datagram socket (IP_TOS,
 * SO_KEEPALIVE's keep-alive service, the TCP and RDMA_ROUTE answers), or dereferences a
 * missing CM id (rlisten, riomap), its outcome is undefined; the answers here are those of a
 * datagram socket with no such state, each said below. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <string.h>
#include <infiniband/sa.h>
#include <rdma/rsocket.h>

#include "ds.h"
#include "ds_chan.h"

static int err(int e)
{
	errno = e;
	return -1;
}

static int sol_socket_set(struct ds_sock *ds, int name, const void *val, int *on)
{
	uint32_t v = val ? *(const uint32_t *)val : 0;

	switch (name) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:	/* no keep-alives on a datagram socket: the flag only */
	case SO_OOBINLINE:
		*on = *(const int *)val;
		return 0;
	case SO_RCVBUF:
		if (!ds->qp_list)
			ds->rbuf_size = v << 1;
		return 0;
	case SO_SNDBUF:
		if (!ds->sbuf)
			ds->sbuf_size = v << 1;
		if (ds->sbuf_size < DS_SNDLOWAT)
			ds->sbuf_size = DS_SNDLOWAT << 1;
		return 0;
	case SO_LINGER:
		/* kept inverted, so that the default (no bit) reads as on */
		*on = !((const struct linger *)val)->l_onoff;
		return 0;
	default:
		return 0;
	}
}

static int sol_rdma_set(struct ds_sock *ds, int name, const void *val)
{
	uint32_t v;

	if (ds->state)
		return err(EINVAL);
	if (!val && name != RDMA_ROUTE)
		return err(EFAULT);
	v = val ? *(const uint32_t *)val : 0;
	switch (name) {
	case RDMA_SQSIZE:
		ds->sq_size = (uint16_t)(v < DS_QP_MAX_SIZE ? v : DS_QP_MAX_SIZE);
		return 0;
	case RDMA_RQSIZE:
		ds->rq_size = (uint16_t)(v < DS_QP_MAX_SIZE ? v : DS_QP_MAX_SIZE);
		return 0;
	case RDMA_INLINE:
		ds->sq_inline = (uint16_t)(v < DS_QP_MAX_SIZE ? v : DS_QP_MAX_SIZE);
		return 0;
	case RDMA_IOMAPSIZE:
	case RDMA_ROUTE:	/* accepted; a datagram socket has no use for them */
		return 0;
	default:
		return err(ENOTSUP);
	}
}

int ds_setsockopt(struct rs_sock *s, int level, int name, const void *val, socklen_t len)
{
	struct ds_sock *ds = ds_of(s);
	uint64_t *opts = NULL;
	int on = 0, ret = 0;

	if (level == SOL_RDMA)
		return sol_rdma_set(ds, name, val);
	if (setsockopt(ds->chan->fd, level, name, val, len))
		return -1;
	switch (level) {
	case SOL_SOCKET:
		opts = &ds->so_opts;
		ret = sol_socket_set(ds, name, val, &on);
		break;
	case IPPROTO_IP:
		if (name == IP_TOS)
			ds->ipv4_opts = *(const int *)val;
		break;
	case IPPROTO_IPV6:
		opts = &ds->ipv6_opts;
		if (name == IPV6_V6ONLY)
			on = *(const int *)val;
		break;
	default:
		break;
	}
	if (!ret && opts && name < 64) {
		if (on)
			*opts |= 1ull << name;
		else
			*opts &= ~(1ull << name);
	}
	return ret;
}

static void put_int(void *val, socklen_t *len, int v)
{
	*(int *)val = v;
	*len = sizeof(int);
}

static int sol_socket_get(struct ds_sock *ds, int name, void *val, socklen_t *len)
{
	struct linger *l;

	switch (name) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:
	case SO_OOBINLINE:
		put_int(val, len, !!(ds->so_opts & (1ull << name)));
		return 0;
	case SO_RCVBUF:
		put_int(val, len, (int)ds->rbuf_size);
		return 0;
	case SO_SNDBUF:
		put_int(val, len, (int)ds->sbuf_size);
		return 0;
	case SO_LINGER:
		l = val;
		l->l_onoff = !(ds->so_opts & (1ull << SO_LINGER));
		l->l_linger = 0;
		*len = sizeof *l;
		return 0;
	case SO_ERROR:
		put_int(val, len, ds->err);
		ds->err = 0;
		return 0;
	case SO_BROADCAST:
		return 0;
	default:
		return ENOTSUP;
	}
}

/* The TCP answers of a socket with no connection and no route. */
static int tcp_get(struct ds_sock *ds, int name, void *val, socklen_t *len)
{
	struct tcp_info *info;

	switch (name) {
	case TCP_CONGESTION:
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
		*(int *)val = 1;
		return 0;
	case TCP_KEEPIDLE:
	case TCP_NODELAY:
		put_int(val, len, 0);
		return 0;
	case TCP_MAXSEG:
		put_int(val, len, 2048);
		return 0;
	case TCP_INFO:
		info = val;
		memset(info, 0, sizeof *info);
		info->tcpi_state = TCP_CLOSE;
		info->tcpi_snd_cwnd = ds->sq_size;
		*len = sizeof *info;
		return 0;
	default:
		return ENOTSUP;
	}
}

static int sol_rdma_get(struct ds_sock *ds, int name, void *val, socklen_t *len)
{
	switch (name) {
	case RDMA_SQSIZE:
		put_int(val, len, ds->sq_size);
		return 0;
	case RDMA_RQSIZE:
		put_int(val, len, ds->rq_size);
		return 0;
	case RDMA_INLINE:
		put_int(val, len, ds->sq_inline);
		return 0;
	case RDMA_IOMAPSIZE:
		put_int(val, len, 0);
		return 0;
	case RDMA_ROUTE:	/* no route: no path records */
		if (*len < sizeof(struct ibv_path_data))
			return EINVAL;
		*len = 0;
		return 0;
	default:
		return ENOTSUP;
	}
}

int ds_getsockopt(struct rs_sock *s, int level, int name, void *val, socklen_t *len)
{
	struct ds_sock *ds = ds_of(s);
	int ret;

	switch (level) {
	case SOL_SOCKET:
		ret = sol_socket_get(ds, name, val, len);
		break;
	case IPPROTO_IP:
		ret = ENOTSUP;
		if (name == IP_TOS) {
			put_int(val, len, ds->ipv4_opts);
			ret = 0;
		}
		break;
	case IPPROTO_TCP:
		ret = tcp_get(ds, name, val, len);
		break;
	case IPPROTO_IPV6:
		ret = ENOTSUP;
		if (name == IPV6_V6ONLY) {
			put_int(val, len, !!(ds->ipv6_opts & (1ull << IPV6_V6ONLY)));
			ret = 0;
		}
		break;
	case SOL_RDMA:
		ret = sol_rdma_get(ds, name, val, len);
		break;
	default:
		ret = ENOTSUP;
		break;
	}
	return ret ? err(ret) : 0;
}

int ds_fcntl(struct rs_sock *s, int cmd, long arg)
{
	struct ds_sock *ds = ds_of(s);
	int param = (int)arg;

	switch (cmd) {
	case F_GETFL:
		return ds->fs_flags;
	case F_SETFL:
		if ((ds->fs_flags & O_NONBLOCK) != (param & O_NONBLOCK) &&
		    ds_set_nonblocking(ds, param & O_NONBLOCK))
			return -1;
		ds->fs_flags = param;
		return 0;
	case F_GETFD:
		return ds->fd_flags;
	case F_SETFD:
		ds->fd_flags = param;
		return 0;
	default:
		return err(ENOTSUP);
	}
}

/* rdma-core calls rdma_listen on the stream CM id a datagram socket does not have; this
 * answers as a UDP socket does. */
int ds_listen(struct rs_sock *s, int backlog)
{
	(void)s;
	(void)backlog;
	return err(EOPNOTSUPP);
}

/* A socket that is not listening: EBADF, as rdma-core's raccept. */
int ds_accept(struct rs_sock *s, struct sockaddr *addr, socklen_t *len)
{
	(void)s;
	(void)addr;
	(void)len;
	return err(EBADF);
}

/* riomap needs the stream CM id's PD: EINVAL, its answer for a socket without one. */
off_t ds_iomap(struct rs_sock *s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)s;
	(void)buf;
	(void)len;
	(void)prot;
	(void)flags;
	(void)offset;
	return err(EINVAL);
}

/* Nothing is ever mapped: EINVAL, as rdma-core's riounmap of an unknown mapping. */
int ds_iounmap(struct rs_sock *s, void *buf, size_t len)
{
	(void)s;
	(void)buf;
	(void)len;
	return err(EINVAL);
}

/* No peer iomaps: rdma-core's riowrite finds none and returns 0, errno untouched. */
size_t ds_iowrite(struct rs_sock *s, const void *buf, size_t count, off_t offset, int flags)
{
	(void)s;
	(void)buf;
	(void)count;
	(void)offset;
	(void)flags;
	return 0;
}
