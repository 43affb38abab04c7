/* The stream rsocket's object: its creation (a sync rdma_cm id, whose event channel's fd is
 * the socket number), the ops table, the state names, close and the address calls. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rs_stream.h"

int rs_seterr(int e)
{
	errno = e;
	return -1;
}

static const struct {
	int state;
	const char *name;
} state_names[] = {
	{ RS_INIT, "INIT" },
	{ RS_BOUND, "BOUND" },
	{ RS_LISTENING, "LISTENING" },
	{ RS_OPENING, "OPENING" },
	{ RS_RESOLVING_ADDR, "RESOLVING_ADDR" },
	{ RS_RESOLVING_ROUTE, "RESOLVING_ROUTE" },
	{ RS_CONNECTING, "CONNECTING" },
	{ RS_ACCEPTING, "ACCEPTING" },
	{ RS_CONNECTED, "CONNECTED" },
	{ RS_CONNECTED | RS_READABLE, "CONNECTED_RD" },
	{ RS_CONNECTED | RS_WRITABLE, "CONNECTED_WR" },
	{ RS_CONNECT_RDWR, "CONNECTED_RDWR" },
	{ RS_CONNECT_ERROR, "CONNECT_ERROR" },
	{ RS_DISCONNECTED, "DISCONNECTED" },
	{ RS_ERROR, "ERROR" },
};

const char *rs_state_name(int state)
{
	for (size_t i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
		if (state_names[i].state == state)
			return state_names[i].name;
	return "?";
}

/* Registered memory in whole pages, so that a forked child (ibv_fork_init, RDMAV_FORK_SAFE)
 * loses no unregistered data sharing a page with it. */
void *rs_forksafe_alloc(size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (page <= 0)
		page = 4096;
	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	if (posix_memalign(&p, (size_t)page, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

/* A new object with the defaults, or the listener's sizes for an accepted one. */
struct rs_stream *rs_stream_alloc(const struct rs_stream *from)
{
	const struct rs_config *cfg = rs_config();
	struct rs_stream *rs = calloc(1, sizeof *rs);

	if (!rs)
		return NULL;
	rs->sock.type = &rs_stream_type;
	rs->sock.index = -1;
	rs->accept_queue[0] = rs->accept_queue[1] = -1;
	if (from) {
		rs->sbuf_size = from->sbuf_size;
		rs->rbuf_size = from->rbuf_size;
		rs->sq_inline = from->sq_inline;
		rs->sq_size = from->sq_size;
		rs->rq_size = from->rq_size;
		rs->ctrl_max_seqno = from->ctrl_max_seqno;
		rs->target_iomap_size = from->target_iomap_size;
		rs->domain = from->domain;
	} else {
		rs->sbuf_size = cfg->wmem_default;
		rs->rbuf_size = cfg->mem_default;
		rs->sq_inline = cfg->inline_default;
		rs->sq_size = cfg->sqsize_default;
		rs->rq_size = cfg->rqsize_default;
		rs->ctrl_max_seqno = RS_QP_CTRL_SIZE;
		/* the scaled form of the file's value, as the wire carries it */
		rs->target_iomap_size = cfg->iomap_size <= 128 ? cfg->iomap_size
							       : (cfg->iomap_size & 0x7f) << 8;
	}
	pthread_mutex_init(&rs->slock, NULL);
	pthread_mutex_init(&rs->rlock, NULL);
	pthread_mutex_init(&rs->cq_lock, NULL);
	pthread_mutex_init(&rs->cq_wait_lock, NULL);
	pthread_mutex_init(&rs->map_lock, NULL);
	return rs;
}

int rs_stream_insert(struct rs_stream *rs)
{
	return rs_index_insert(rs->cm_id->channel->fd, &rs->sock) < 0 ? -1 : 0;
}

void rs_stream_free(struct rs_stream *rs)
{
	free(rs->rmsg);
	if (rs->sbuf) {
		if (rs->smr)
			ibv_dereg_mr(rs->smr);
		free(rs->sbuf);
	}
	if (rs->rbuf) {
		if (rs->rmr)
			ibv_dereg_mr(rs->rmr);
		free(rs->rbuf);
	}
	if (rs->target_buffer_list) {
		if (rs->target_mr)
			ibv_dereg_mr(rs->target_mr);
		free(rs->target_buffer_list);
	}
	if (rs->sock.index >= 0)
		rs_index_remove(rs->sock.index);
	if (rs->cm_id) {
		rs_free_iomappings(rs);
		if (rs->cm_id->qp) {
			ibv_ack_cq_events(rs->cm_id->recv_cq, (unsigned)rs->unack_cqe);
			rdma_destroy_qp(rs->cm_id);	/* and its CQ and channel */
		} else if (rs->cm_id->recv_cq) {
			ibv_destroy_cq(rs->cm_id->recv_cq);
			rs->cm_id->recv_cq = rs->cm_id->send_cq = NULL;
		}
		if (rs->cm_id->recv_cq_channel) {
			ibv_destroy_comp_channel(rs->cm_id->recv_cq_channel);
			rs->cm_id->recv_cq_channel = rs->cm_id->send_cq_channel = NULL;
		}
		rdma_destroy_id(rs->cm_id);
	}
	if (rs->accept_queue[0] >= 0) {
		close(rs->accept_queue[0]);
		close(rs->accept_queue[1]);
	}
	free(rs->remote_iomappings);
	free(rs->optval);
	pthread_mutex_destroy(&rs->map_lock);
	pthread_mutex_destroy(&rs->cq_wait_lock);
	pthread_mutex_destroy(&rs->cq_lock);
	pthread_mutex_destroy(&rs->rlock);
	pthread_mutex_destroy(&rs->slock);
	free(rs);
}

struct rs_sock *rs_stream_new(int domain)
{
	struct rs_stream *rs = rs_stream_alloc(NULL);

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

/* The fds whose O_NONBLOCK follows the rsocket's: the completion channel, the accept queue
 * of a listener, the CM channel until connected. */
int rs_set_nonblocking(struct rs_stream *rs, int arg)
{
	int ret = 0;

	if (rs->cm_id->recv_cq_channel)
		ret = fcntl(rs->cm_id->recv_cq_channel->fd, F_SETFL, arg);
	if (rs->state == RS_LISTENING)
		ret = fcntl(rs->accept_queue[0], F_SETFL, arg);
	else if (!ret && rs->state < RS_CONNECTED)
		ret = fcntl(rs->cm_id->channel->fd, F_SETFL, arg);
	return ret;
}

int rs_nonblocking(const struct rs_stream *rs, int flags)
{
	return (rs->fd_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
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
