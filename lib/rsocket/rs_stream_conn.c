/* Connection set-up of the stream rsocket over its sync rdma_cm id: bind, listen, the
 * listener's accept (run by the listen service thread, which hands finished rsockets to
 * raccept through a socketpair), and the active side's state machine, one small function per
 * state, each returning what the connect call returns. rs_conn_data travels as the private
 * data of the request and of the reply. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <endian.h>
#include <infiniband/verbs.h>

#include "lib/cma.h"
#include "rs_stream_priv.h"
#include "util/failcall.h"

static bool host_is_net(void)
{
	return __BYTE_ORDER == __BIG_ENDIAN;
}

/* The 8-bit scaled iomap size of rs_conn_data: n up to 128 as it is, else 0x80 | n >> 8. */
static int value_to_scale(int value, int bits)
{
	return value <= (1 << (bits - 1)) ? value : (1 << (bits - 1)) | (value >> bits);
}

static int scale_to_value(int value, int bits)
{
	return value <= (1 << (bits - 1)) ? value : (value & ~(1 << (bits - 1))) << bits;
}

/* AF_IB connections carry the CMA's IB header before the rsocket's data. */
static size_t conn_data_offset(const struct rs_stream *rs)
{
	return rs->cm_id->route.addr.src_addr.sa_family == AF_IB
		       ? sizeof(struct cma_ib_connect_hdr) : 0;
}

static void format_conn_data(const struct rs_stream *rs, struct rs_conn_data *c)
{
	memset(c, 0, sizeof *c);
	c->version = 1;
	c->flags = RS_CONN_FLAG_IOMAP | (host_is_net() ? RS_CONN_FLAG_NET : 0);
	c->credits = htobe16(rs->rq_size);
	c->target_iomap_size = (uint8_t)value_to_scale(rs->target_iomap_size, 8);
	c->target_sgl.addr = htobe64((uintptr_t)rs->target_sgl);
	c->target_sgl.length = htobe32(RS_SGL_SIZE);
	c->target_sgl.key = htobe32(rs->target_mr->rkey);
	c->data_buf.addr = htobe64((uintptr_t)rs->rbuf);
	c->data_buf.length = htobe32(rs->rbuf_size >> 1);
	c->data_buf.key = htobe32(rs->rmr->rkey);
}

static void save_conn_data(struct rs_stream *rs, const struct rs_conn_data *c)
{
	rs->remote_sgl.addr = be64toh(c->target_sgl.addr);
	rs->remote_sgl.length = be32toh(c->target_sgl.length);
	rs->remote_sgl.key = be32toh(c->target_sgl.key);
	rs->remote_sge = 1;
	if (host_is_net() != !!(c->flags & RS_CONN_FLAG_NET))
		rs->opts = RS_OPT_SWAP_SGL;
	if (c->flags & RS_CONN_FLAG_IOMAP) {
		rs->remote_iomap.addr = rs->remote_sgl.addr +
					sizeof(struct rs_sge) * rs->remote_sgl.length;
		rs->remote_iomap.length = (uint32_t)scale_to_value(c->target_iomap_size, 8);
		rs->remote_iomap.key = rs->remote_sgl.key;
	}
	rs->target_sgl[0].addr = be64toh(c->data_buf.addr);
	rs->target_sgl[0].length = be32toh(c->data_buf.length);
	rs->target_sgl[0].key = be32toh(c->data_buf.key);
	rs->sseq_comp = be16toh(c->credits);
}

int rs_stream_bind(struct rs_sock *s, const struct sockaddr *addr, socklen_t len)
{
	struct rs_stream *rs = rs_stream_of(s);
	int ret;

	(void)len;
	ret = rdma_bind_addr(rs->cm_id, (struct sockaddr *)addr);
	if (!ret)
		rs->state = RS_BOUND;
	return ret;
}

static int set_fd_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int rs_stream_listen(struct rs_sock *s, int backlog)
{
	struct rs_stream *rs = rs_stream_of(s);

	if (rs->state == RS_LISTENING)
		return 0;
	if (rdma_listen(rs->cm_id, backlog))
		return -1;
	if (emu_socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rs->accept_queue)) {
		rs->accept_queue[0] = rs->accept_queue[1] = -1;
		return -1;
	}
	if ((rs->fd_flags & O_NONBLOCK) && set_fd_nonblock(rs->accept_queue[0]))
		return -1;
	/* the listen service takes requests without ever blocking on the channel */
	if (set_fd_nonblock(rs->cm_id->channel->fd))
		return -1;
	if (rs_svc_notify(RS_SVC_LISTEN, rs, RS_SVC_ADD_CM))
		return -1;
	rs->state = RS_LISTENING;
	return 0;
}

/* One connect request on the listener: the new rsocket, its QP and buffers, the reply. Runs
 * in the listen service thread and blocks there until the connection is established. */
void rs_accept_one(struct rs_stream *l)
{
	struct rs_stream *rs;
	struct rdma_conn_param param;
	const struct rs_conn_data *creq;
	struct rs_conn_data cresp;
	struct rdma_cm_id *id;
	int ret;

	if (rdma_get_request(l->cm_id, &id))
		return;
	rs = rs_stream_alloc(l->sock.type, l);
	if (!rs)
		goto reject;
	rs->cm_id = id;
	id->context = rs;
	if (rs_stream_insert(rs))
		goto reject;
	creq = (const struct rs_conn_data *)((const uint8_t *)id->event->param.conn.private_data +
					     conn_data_offset(l));
	if (creq->version != 1)
		goto reject;
	if (rs_create_ep(rs))
		goto reject;
	save_conn_data(rs, creq);
	param = id->event->param.conn;
	format_conn_data(rs, &cresp);
	param.private_data = &cresp;
	param.private_data_len = sizeof cresp;
	ret = rdma_accept(id, &param);
	if (!ret)
		rs->state = RS_CONNECT_RDWR;
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		rs->state = RS_ACCEPTING;
	else
		goto reject;
	if (write(l->accept_queue[1], &rs, sizeof rs) != sizeof rs)
		goto reject;
	return;
reject:
	rdma_reject(id, NULL, 0);
	if (rs) {
		rs->cm_id = id;
		rs_stream_free(rs);
	} else {
		rdma_destroy_id(id);
	}
}

int rs_stream_accept(struct rs_sock *s, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs_stream *rs = rs_stream_of(s), *new_rs;
	ssize_t n;
	int save;

	if (rs->state != RS_LISTENING)
		return rs_seterr(EBADF);
	n = read(rs->accept_queue[0], &new_rs, sizeof new_rs);
	if (n != (ssize_t)sizeof new_rs)
		return (int)n;
	if (addr && addrlen)
		new_rs->sock.type->getpeername(&new_rs->sock, addr, addrlen);
	save = errno;
	rs_svc_notify(RS_SVC_CONNECT, new_rs, RS_SVC_ADD_CM);
	errno = save;
	return new_rs->sock.index;
}

/* ---- the active side's states ------------------------------------------------------- */

static int conn_resolve_route(struct rs_stream *rs);
static int conn_resolving_route(struct rs_stream *rs);
static int conn_start(struct rs_stream *rs);

static bool would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

static int conn_resolve_addr(struct rs_stream *rs)
{
	int to = 1000 << rs->retries++;

	if (!rdma_resolve_addr(rs->cm_id, NULL, &rs->cm_id->route.addr.dst_addr, to))
		return conn_resolve_route(rs);
	if (would_block())
		rs->state = RS_RESOLVING_ADDR;
	return -1;
}

static int conn_resolving_addr(struct rs_stream *rs)
{
	if (cma_complete(rs->cm_id)) {
		if (errno == ETIMEDOUT && rs->retries <= RS_CONN_RETRIES)
			return conn_resolve_addr(rs);
		return -1;
	}
	rs->retries = 0;
	return conn_resolve_route(rs);
}

/* A route given with RDMA_ROUTE is set as the path; otherwise resolved. */
static int conn_resolve_route(struct rs_stream *rs)
{
	int to = 1000 << rs->retries++, ret;

	if (rs->optval) {
		ret = rdma_set_option(rs->cm_id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, rs->optval,
				      rs->optlen);
		free(rs->optval);
		rs->optval = NULL;
		if (!ret) {
			rs->state = RS_RESOLVING_ROUTE;
			return conn_resolving_route(rs);
		}
	} else if (!rdma_resolve_route(rs->cm_id, to)) {
		return conn_start(rs);
	}
	if (would_block())
		rs->state = RS_RESOLVING_ROUTE;
	return -1;
}

static int conn_resolving_route(struct rs_stream *rs)
{
	if (cma_complete(rs->cm_id)) {
		if (errno == ETIMEDOUT && rs->retries <= RS_CONN_RETRIES)
			return conn_resolve_route(rs);
		return -1;
	}
	return conn_start(rs);
}

static int conn_established(struct rs_stream *rs)
{
	const struct rs_conn_data *cresp = rs->cm_id->event->param.conn.private_data;

	if (cresp->version != 1)
		return rs_seterr(ENOTSUP);
	save_conn_data(rs, cresp);
	rs->state = RS_CONNECT_RDWR;
	return 0;
}

static int conn_start(struct rs_stream *rs)
{
	uint8_t data[sizeof(struct cma_ib_connect_hdr) + sizeof(struct rs_conn_data)];
	size_t off = conn_data_offset(rs);
	struct rdma_conn_param param;

	if (rs_create_ep(rs))
		return -1;
	memset(data, 0, sizeof data);
	format_conn_data(rs, (struct rs_conn_data *)(data + off));
	memset(&param, 0, sizeof param);
	param.private_data = data;
	param.private_data_len = (uint8_t)(off + sizeof(struct rs_conn_data));
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	rs->retries = 0;
	if (!rdma_connect(rs->cm_id, &param))
		return conn_established(rs);
	if (would_block())
		rs->state = RS_CONNECTING;
	return -1;
}

static int conn_connecting(struct rs_stream *rs)
{
	if (cma_complete(rs->cm_id))
		return -1;
	return conn_established(rs);
}

static int conn_accepting(struct rs_stream *rs)
{
	if (!(rs->fd_flags & O_NONBLOCK))
		set_fd_nonblock(rs->cm_id->channel->fd);
	if (cma_complete(rs->cm_id))
		return -1;
	rs->state = RS_CONNECT_RDWR;
	return 0;
}

/* One step of the connect, from the call or from the connect service: 0 when connected,
 * -1 with EINPROGRESS while a step waits, -1 with the failure (kept for SO_ERROR). */
int rs_do_connect(struct rs_stream *rs)
{
	int ret;

	pthread_mutex_lock(&rs->slock);
	switch (rs->state) {
	case RS_INIT:
	case RS_BOUND:
		ret = conn_resolve_addr(rs);
		break;
	case RS_RESOLVING_ADDR:
		ret = conn_resolving_addr(rs);
		break;
	case RS_RESOLVING_ROUTE:
		ret = conn_resolving_route(rs);
		break;
	case RS_CONNECTING:
		ret = conn_connecting(rs);
		break;
	case RS_ACCEPTING:
		ret = conn_accepting(rs);
		break;
	case RS_CONNECT_ERROR:
	case RS_DISCONNECTED:
	case RS_ERROR:
		pthread_mutex_unlock(&rs->slock);
		return rs_seterr(ENOTCONN);
	default:
		ret = (rs->state & RS_CONNECTED) ? 0 : rs_seterr(EINVAL);
		pthread_mutex_unlock(&rs->slock);
		return ret;
	}
	if (ret) {
		if (would_block()) {
			errno = EINPROGRESS;
		} else {
			rs->state = RS_CONNECT_ERROR;
			rs->err = errno;
		}
	}
	pthread_mutex_unlock(&rs->slock);
	return ret;
}

/* Failures that arrive as CM events (REJECTED, UNREACHABLE, ADDR_ERROR, ROUTE_ERROR), not
 * from the command itself. */
static bool event_borne(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
	       err == ECONNRESET;
}

int rs_stream_connect(struct rs_sock *s, const struct sockaddr *addr, socklen_t len)
{
	struct rs_stream *rs = rs_stream_of(s);
	bool started;
	int ret, save;

	if (len > sizeof rs->cm_id->route.addr.dst_storage)
		len = sizeof rs->cm_id->route.addr.dst_storage;
	memcpy(&rs->cm_id->route.addr.dst_addr, addr, len);
	started = rs->state == RS_INIT || rs->state == RS_BOUND;
	ret = rs_do_connect(rs);
	if (started && (rs->fd_flags & O_NONBLOCK) &&
	    ((!ret && (rs->state & RS_CONNECTED)) ||
	     (ret == -1 && rs->state == RS_CONNECT_ERROR && event_borne(rs->err)))) {
		/* The kernel runs address and route resolution and the CM exchange after the
		 * call has returned, so a non-blocking rconnect always finds nothing yet and
		 * says EINPROGRESS; the outcome shows at rpoll (POLLOUT, or POLLERR) and
		 * SO_ERROR. The emulator may have run a loopback exchange to its end inside
		 * the call (an instant for its virtual clock, and a listen service thread
		 * that got the CPU first): the outcome is reported as it would have been
		 * seen. */
		errno = EINPROGRESS;
		return -1;
	}
	if (ret == -1 && errno == EINPROGRESS) {
		save = errno;
		/* the connect service finishes it, and the application may drive it too */
		rs_svc_notify(RS_SVC_CONNECT, rs, RS_SVC_ADD_CM);
		errno = save;
	}
	return ret;
}

int rs_finish_connect(struct rs_stream *rs)
{
	if (!(rs->state & RS_OPENING))
		return 0;
	if (rs_do_connect(rs)) {
		if (errno == EINPROGRESS)
			errno = EAGAIN;
		return -1;
	}
	return 0;
}
