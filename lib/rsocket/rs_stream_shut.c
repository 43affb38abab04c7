/* Shutdown and fcntl of the stream rsocket. Shutting one direction sends SHUTDOWN (the peer
 * stops reading, its sends go on); shutting the last open direction, or both, sends
 * DISCONNECT. Either way the call waits for every send to complete, blocking even on a
 * non-blocking rsocket, then moves the QP to the error state once disconnected, so that
 * flushed receives wake a thread blocked in rpoll. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "lib/cma.h"
#include "rs_stream.h"

/* The control message `how` leaves to send, after taking the directions away; -1: none. */
static int shut_state(struct rs_stream *rs, int how)
{
	switch (how) {
	case SHUT_RDWR:
		rs->state &= ~(RS_READABLE | RS_WRITABLE);
		return RS_CTRL_DISCONNECT;
	case SHUT_WR:
		rs->state &= ~RS_WRITABLE;
		return (rs->state & RS_READABLE) ? RS_CTRL_SHUTDOWN : RS_CTRL_DISCONNECT;
	default:
		rs->state &= ~RS_READABLE;
		return (rs->state & RS_WRITABLE) ? -1 : RS_CTRL_DISCONNECT;
	}
}

static int shut_send(struct rs_stream *rs, int ctrl)
{
	int ret = 0;

	if (!rs_ctrl_avail(rs)) {
		ret = rs_process_cq(rs, 0, rs_conn_can_send_ctrl);
		if (ret)
			return ret;
	}
	if ((rs->state & RS_CONNECTED) && rs_ctrl_avail(rs)) {
		rs->ctrl_seqno++;
		ret = rs_post_msg(rs, RS_MSG(RS_OP_CTRL, ctrl));
	}
	return ret;
}

int rs_stream_shutdown(struct rs_sock *s, int how)
{
	struct rs_stream *rs = rs_stream_of(s);
	int ctrl, ret = 0;

	if (rs->opts & RS_OPT_KEEPALIVE)
		rs_svc_notify(RS_SVC_KEEPALIVE, rs, RS_SVC_REM_KEEPALIVE);
	if (rs->fd_flags & O_NONBLOCK)
		rs_set_nonblocking(rs, 0);
	if (rs->state & RS_CONNECTED) {
		ctrl = shut_state(rs, how);
		if (ctrl < 0)
			goto out;
		ret = shut_send(rs, ctrl);
		if (ret)
			goto out;
	}
	if (rs->state & RS_CONNECTED)
		rs_process_cq(rs, 0, rs_conn_all_sends_done);
out:
	if ((rs->fd_flags & O_NONBLOCK) && (rs->state & RS_CONNECTED))
		rs_set_nonblocking(rs, rs->fd_flags);
	if (rs->state & RS_DISCONNECTED) {
		ibv_req_notify_cq(rs->cm_id->recv_cq, 0);
		cma_modify_qp_err(rs->cm_id);
	}
	return ret;
}

/* F_GETFL gives the flags last set; F_SETFL keeps them all and acts on O_NONBLOCK. */
int rs_stream_fcntl(struct rs_sock *s, int cmd, long arg)
{
	struct rs_stream *rs = rs_stream_of(s);
	int ret = 0;

	switch (cmd) {
	case F_GETFL:
		return rs->fd_flags;
	case F_SETFL:
		if ((rs->fd_flags & O_NONBLOCK) != (arg & O_NONBLOCK))
			ret = rs_set_nonblocking(rs, (int)(arg & O_NONBLOCK));
		if (!ret)
			rs->fd_flags = (int)arg;
		return ret;
	default:
		return rs_seterr(ENOTSUP);
	}
}
