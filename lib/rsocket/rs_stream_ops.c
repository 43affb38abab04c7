/* The stream rsocket's ops table and what sits on top of every other stream file: creation,
 * close, the address calls. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rs_stream_priv.h"

struct rs_sock *rs_stream_new(int domain)
{
	struct rs_stream *rs = rs_stream_alloc(&rs_stream_type, NULL);

	if (!rs) {
		errno = ENOMEM;
		return NULL;
	}
	rs->domain = domain;
	if (rdma_create_id(NULL, &rs->cm_id, rs, RDMA_PS_TCP))
		goto err;
	rs->cm_id->route.addr.src_addr.sa_family = (sa_family_t)domain;
	if (rs_stream_insert(rs))
		goto err;
	return &rs->sock;
err:
	{
		int save = errno;

		rs_stream_free(rs);
		errno = save;
	}
	return NULL;
}

static int rs_stream_close(struct rs_sock *s)
{
	struct rs_stream *rs = rs_stream_of(s);

	if (rs->state & RS_CONNECTED)
		rs_stream_shutdown(s, SHUT_RDWR);
	if (rs->opts & RS_OPT_KEEPALIVE)
		rs_svc_notify(RS_SVC_KEEPALIVE, rs, RS_SVC_REM_KEEPALIVE);
	if ((rs->opts & RS_OPT_CM_SVC) && rs->state == RS_LISTENING)
		rs_svc_notify(RS_SVC_LISTEN, rs, RS_SVC_REM_CM);
	if (rs->opts & RS_OPT_CM_SVC)
		rs_svc_notify(RS_SVC_CONNECT, rs, RS_SVC_REM_CM);
	rs_stream_free(rs);
	return 0;
}

static void copy_addr(struct sockaddr *dst, const struct sockaddr *src, socklen_t *len)
{
	socklen_t size = src->sa_family == AF_INET ? sizeof(struct sockaddr_in)
						   : sizeof(struct sockaddr_in6);

	/* a length of 0 asks for the size only (the address may be NULL then) */
	if (*len)
		memcpy(dst, src, *len < size ? *len : size);
	*len = size;
}

static int rs_stream_getpeername(struct rs_sock *s, struct sockaddr *addr, socklen_t *len)
{
	copy_addr(addr, rdma_get_peer_addr(rs_stream_of(s)->cm_id), len);
	return 0;
}

static int rs_stream_getsockname(struct rs_sock *s, struct sockaddr *addr, socklen_t *len)
{
	copy_addr(addr, rdma_get_local_addr(rs_stream_of(s)->cm_id), len);
	return 0;
}

const struct rs_type rs_stream_type = {
	.sotype = SOCK_STREAM,
	.name = "stream",
	.bind = rs_stream_bind,
	.listen = rs_stream_listen,
	.accept = rs_stream_accept,
	.connect = rs_stream_connect,
	.recvfrom = rs_stream_recvfrom,
	.recvv = rs_stream_recvv,
	.sendto = rs_stream_sendto,
	.sendv = rs_stream_sendv,
	.shutdown = rs_stream_shutdown,
	.close = rs_stream_close,
	.getpeername = rs_stream_getpeername,
	.getsockname = rs_stream_getsockname,
	.setsockopt = rs_stream_setsockopt,
	.getsockopt = rs_stream_getsockopt,
	.fcntl = rs_stream_fcntl,
	.iomap = rs_stream_iomap,
	.iounmap = rs_stream_iounmap,
	.iowrite = rs_stream_iowrite,
	.poll_check = rs_stream_poll_check,
	.poll_arm = rs_stream_poll_arm,
	.poll_drain = rs_stream_poll_drain,
};
