/* The stream rsocket's three poll ops: what holds now (a connect in progress takes its next
 * step), arming the CQ and naming the fd to wait on, consuming the completion event. */
#include "config.h"

#include <errno.h>
#include <poll.h>

#include "rs_stream_priv.h"

static int poll_all(struct rs_stream *rs)
{
	(void)rs;
	return 1;
}

static int is_cq_armed(struct rs_stream *rs)
{
	return rs->cq_armed;
}

/* The revents of one rsocket; with nonblock 0 and is_cq_armed the CQ is armed on the way. */
static short poll_rs(struct rs_stream *rs, short events, int nonblock,
		     int (*test)(struct rs_stream *rs))
{
	struct pollfd fd;
	short revents;

	for (;;) {
		if ((rs->state & RS_CONNECTED) || rs->state == RS_DISCONNECTED ||
		    (rs->state & RS_ERROR)) {
			rs_process_cq(rs, nonblock, test);
			revents = 0;
			if ((events & POLLIN) && rs_conn_have_rdata(rs))
				revents |= POLLIN;
			if ((events & POLLOUT) && rs_can_send(rs))
				revents |= POLLOUT;
			if (!(rs->state & RS_CONNECTED))
				revents |= rs->state == RS_DISCONNECTED ? POLLHUP : POLLERR;
			return revents;
		}
		if (rs->state == RS_LISTENING) {
			fd.fd = rs->accept_queue[0];
			fd.events = events;
			fd.revents = 0;
			poll(&fd, 1, 0);
			return fd.revents;
		}
		if (!(rs->state & RS_OPENING))
			break;
		if (rs_do_connect(rs) && errno == EINPROGRESS) {
			errno = 0;
			break;
		}
	}
	if (rs->state == RS_CONNECT_ERROR)
		return (short)((events & (POLLIN | POLLOUT)) | POLLERR);
	return 0;
}

short rs_stream_poll_check(struct rs_sock *s, short events)
{
	return poll_rs(rs_stream_of(s), events, 1, poll_all);
}

/* A listener waits on its accept queue (rdma-core waits on its CM channel there, which the
 * listen service drains, and wakes only every wake_up_interval). */
short rs_stream_poll_arm(struct rs_sock *s, short events, struct pollfd *kfd)
{
	struct rs_stream *rs = rs_stream_of(s);
	short r = poll_rs(rs, events, 0, is_cq_armed);

	if (r)
		return r;
	if (rs->state == RS_LISTENING)
		kfd->fd = rs->accept_queue[0];
	else if (rs->state >= RS_CONNECTED && rs->cm_id->recv_cq_channel)
		kfd->fd = rs->cm_id->recv_cq_channel->fd;
	else
		kfd->fd = rs->cm_id->channel->fd;
	kfd->events = POLLIN;
	return 0;
}

void rs_stream_poll_drain(struct rs_sock *s, const struct pollfd *kfd)
{
	struct rs_stream *rs = rs_stream_of(s);

	(void)kfd;
	pthread_mutex_lock(&rs->cq_wait_lock);
	rs_get_cq_event(rs);
	pthread_mutex_unlock(&rs->cq_wait_lock);
}
