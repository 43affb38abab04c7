/* The stream rsocket's endpoint and completions: the QP, its one CQ and completion channel,
 * the buffers, the processing of completions (receives carry the peer's messages, sends give
 * back queue entries, buffer space and control slots), the waits for a condition (spin for
 * polling_time, then block on the completion channel), and the three poll ops. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <endian.h>
#include <infiniband/verbs.h>

#include "lib/cma.h"
#include "rs_stream_priv.h"
#include "util/failcall.h"

#define RS_MAX_CTRL_MSG sizeof(struct rs_sge)

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void set_qp_size(struct rs_stream *rs)
{
	struct cma_device *dev = cma_priv(rs->cm_id)->cma_dev;
	uint32_t max = dev ? dev->max_qpsize : 0;

	if (max > RS_QP_MAX_SIZE)
		max = RS_QP_MAX_SIZE;
	if (rs->sq_size > max)
		rs->sq_size = (uint16_t)max;
	else if (rs->sq_size < RS_QP_MIN_SIZE)
		rs->sq_size = RS_QP_MIN_SIZE;
	if (rs->rq_size > max)
		rs->rq_size = (uint16_t)max;
	else if (rs->rq_size < RS_QP_MIN_SIZE)
		rs->rq_size = RS_QP_MIN_SIZE;
}

static int init_bufs(struct rs_stream *rs)
{
	struct ibv_pd *pd = rs->cm_id->pd;
	uint32_t sbuf_total = rs->sbuf_size;
	size_t len;

	rs->rmsg = emu_calloc((size_t)rs->rq_size + 1, sizeof *rs->rmsg);
	if (!rs->rmsg)
		return rs_seterr(ENOMEM);
	if (rs->sq_inline < RS_MAX_CTRL_MSG)
		sbuf_total += RS_MAX_CTRL_MSG * RS_QP_CTRL_SIZE;
	rs->sbuf = rs_forksafe_alloc(sbuf_total);
	if (!rs->sbuf)
		return rs_seterr(ENOMEM);
	rs->smr = ibv_reg_mr(pd, rs->sbuf, sbuf_total, IBV_ACCESS_LOCAL_WRITE);
	if (!rs->smr)
		return -1;
	len = sizeof(struct rs_sge) * RS_SGL_SIZE +
	      sizeof(struct rs_iomap) * (size_t)rs->target_iomap_size;
	rs->target_buffer_list = rs_forksafe_alloc(len);
	if (!rs->target_buffer_list)
		return rs_seterr(ENOMEM);
	rs->target_mr = ibv_reg_mr(pd, rs->target_buffer_list, len,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!rs->target_mr)
		return -1;
	rs->target_sgl = rs->target_buffer_list;
	if (rs->target_iomap_size)
		rs->target_iomap = (struct rs_iomap *)(rs->target_sgl + RS_SGL_SIZE);
	rs->rbuf = rs_forksafe_alloc(rs->rbuf_size);
	if (!rs->rbuf)
		return rs_seterr(ENOMEM);
	rs->rmr = ibv_reg_mr(pd, rs->rbuf, rs->rbuf_size,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!rs->rmr)
		return -1;
	rs->ssgl[0].addr = rs->ssgl[1].addr = (uintptr_t)rs->sbuf;
	rs->ssgl[0].lkey = rs->ssgl[1].lkey = rs->smr->lkey;
	rs->sbuf_bytes_avail = (int)rs->sbuf_size;
	/* the first half is the connection's data_buf; the second is published later */
	rs->rbuf_free_offset = (int)(rs->rbuf_size >> 1);
	rs->rbuf_bytes_avail = (int)(rs->rbuf_size >> 1);
	rs->sqe_avail = rs->sq_size - (int)rs->ctrl_max_seqno;
	rs->rseq_comp = rs->rq_size >> 1;
	return 0;
}

static int create_cq(struct rs_stream *rs)
{
	struct rdma_cm_id *id = rs->cm_id;

	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (!id->recv_cq_channel)
		return -1;
	id->recv_cq = ibv_create_cq(id->verbs, rs->sq_size + rs->rq_size, id,
				    id->recv_cq_channel, 0);
	if (!id->recv_cq)
		return -1;
	if (rs->fd_flags & O_NONBLOCK) {
		int fl = fcntl(id->recv_cq_channel->fd, F_GETFL);

		if (fl < 0 || fcntl(id->recv_cq_channel->fd, F_SETFL, fl | O_NONBLOCK))
			return -1;
	}
	ibv_req_notify_cq(id->recv_cq, 0);
	id->send_cq_channel = id->recv_cq_channel;
	id->send_cq = id->recv_cq;
	return 0;
}

int rs_create_ep(struct rs_stream *rs)
{
	struct ibv_qp_init_attr attr = { 0 };

	set_qp_size(rs);
	if (create_cq(rs))
		return -1;
	attr.qp_context = rs;
	attr.send_cq = rs->cm_id->send_cq;
	attr.recv_cq = rs->cm_id->recv_cq;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	attr.cap.max_send_wr = rs->sq_size;
	attr.cap.max_recv_wr = rs->rq_size;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(rs->cm_id, NULL, &attr))
		return -1;
	rs->sq_inline = (uint16_t)attr.cap.max_inline_data;
	if (init_bufs(rs))
		return -1;
	for (int i = 0; i < rs->rq_size; i++)
		if (rs_post_recv(rs))
			return -1;
	return 0;
}

static void recv_msg(struct rs_stream *rs, uint32_t msg)
{
	switch (RS_MSG_OP(msg)) {
	case RS_OP_SGL:
		rs->sseq_comp = (uint16_t)RS_MSG_DATA(msg);
		break;
	case RS_OP_IOMAP_SGL:
		break;	/* the entry is in place; riowrite looks it up */
	case RS_OP_CTRL:
		if (RS_MSG_DATA(msg) == RS_CTRL_DISCONNECT) {
			rs->state = RS_DISCONNECTED;
		} else if (RS_MSG_DATA(msg) == RS_CTRL_SHUTDOWN) {
			if (rs->state & RS_WRITABLE)
				rs->state &= ~RS_READABLE;
			else
				rs->state = RS_DISCONNECTED;
		}
		break;
	case RS_OP_WRITE:
		break;
	default:
		rs->rmsg[rs->rmsg_tail].op = RS_MSG_OP(msg);
		rs->rmsg[rs->rmsg_tail].data = RS_MSG_DATA(msg);
		if (++rs->rmsg_tail == rs->rq_size + 1)
			rs->rmsg_tail = 0;
		break;
	}
}

static void send_done(struct rs_stream *rs, const struct ibv_wc *wc)
{
	uint32_t msg = (uint32_t)wc->wr_id;

	switch (RS_MSG_OP(msg)) {
	case RS_OP_SGL:
		rs->ctrl_max_seqno++;
		break;
	case RS_OP_CTRL:
		rs->ctrl_max_seqno++;
		if (RS_MSG_DATA(msg) == RS_CTRL_DISCONNECT)
			rs->state = RS_DISCONNECTED;
		break;
	case RS_OP_IOMAP_SGL:
		rs->sqe_avail++;
		rs->sbuf_bytes_avail += sizeof(struct rs_iomap);
		break;
	default:
		rs->sqe_avail++;
		rs->sbuf_bytes_avail += (int)RS_MSG_DATA(msg);
		break;
	}
	if (wc->status != IBV_WC_SUCCESS && (rs->state & RS_CONNECTED)) {
		rs->state = RS_ERROR;
		rs->err = EIO;
	}
}

/* Everything completed so far; the receives consumed are posted again. A DISCONNECT from the
 * peer stops at once: what follows it is flushed work. */
static int poll_cq(struct rs_stream *rs)
{
	struct ibv_wc wc;
	int ret, rcnt = 0;

	if (!rs->cm_id->recv_cq)
		return 0;
	while ((ret = ibv_poll_cq(rs->cm_id->recv_cq, 1, &wc)) > 0) {
		if (wc.wr_id & RS_WR_RECV) {
			if (wc.status != IBV_WC_SUCCESS)
				continue;
			rcnt++;
			recv_msg(rs, be32toh(wc.imm_data));
			if (rs->state == RS_DISCONNECTED)
				return 0;
		} else {
			send_done(rs, &wc);
		}
	}
	if (rs->state & RS_CONNECTED) {
		while (!ret && rcnt--)
			ret = rs_post_recv(rs);
		if (ret) {
			rs->state = RS_ERROR;
			rs->err = errno;
		}
	}
	return ret;
}

int rs_get_cq_event(struct rs_stream *rs)
{
	struct ibv_cq *cq;
	void *ctx;
	int ret;

	if (!rs->cq_armed)
		return 0;
	ret = ibv_get_cq_event(rs->cm_id->recv_cq_channel, &cq, &ctx);
	if (!ret) {
		if (++rs->unack_cqe >= rs->sq_size + rs->rq_size) {
			ibv_ack_cq_events(rs->cm_id->recv_cq, (unsigned)rs->unack_cqe);
			rs->unack_cqe = 0;
		}
		rs->cq_armed = 0;
	} else if (!(errno == EAGAIN || errno == EINTR)) {
		rs->state = RS_ERROR;
	}
	return ret;
}

/* Sends and receives both poll the CQ: cq_lock guards the polling, cq_wait_lock the one
 * thread blocked on the channel, so that a receive can progress while a send waits for
 * credits the peer gives only when it reads. */
int rs_process_cq(struct rs_stream *rs, int nonblock, int (*test)(struct rs_stream *rs))
{
	int ret;

	pthread_mutex_lock(&rs->cq_lock);
	do {
		rs_update_credits(rs);
		ret = poll_cq(rs);
		if (test(rs)) {
			ret = 0;
			break;
		} else if (ret) {
			break;
		} else if (nonblock) {
			ret = rs_seterr(EWOULDBLOCK);
		} else if (!rs->cq_armed) {
			ibv_req_notify_cq(rs->cm_id->recv_cq, 0);
			rs->cq_armed = 1;
		} else {
			rs_update_credits(rs);
			pthread_mutex_lock(&rs->cq_wait_lock);
			pthread_mutex_unlock(&rs->cq_lock);
			ret = rs_get_cq_event(rs);
			pthread_mutex_unlock(&rs->cq_wait_lock);
			pthread_mutex_lock(&rs->cq_lock);
		}
	} while (!ret);
	rs_update_credits(rs);
	pthread_mutex_unlock(&rs->cq_lock);
	return ret;
}

int rs_get_comp(struct rs_stream *rs, int nonblock, int (*test)(struct rs_stream *rs))
{
	uint32_t polling = rs_config()->polling_time;
	uint64_t start = 0;
	int ret;

	do {
		ret = rs_process_cq(rs, 1, test);
		if (!ret || nonblock || errno != EWOULDBLOCK)
			return ret;
		if (!start)
			start = now_us();
	} while (now_us() - start <= polling);
	return rs_process_cq(rs, 0, test);
}

int rs_have_rdata(struct rs_stream *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

int rs_conn_have_rdata(struct rs_stream *rs)
{
	return rs_have_rdata(rs) || !(rs->state & RS_READABLE);
}

int rs_conn_can_send(struct rs_stream *rs)
{
	return rs_can_send(rs) || !(rs->state & RS_WRITABLE);
}

int rs_conn_can_send_ctrl(struct rs_stream *rs)
{
	return rs_ctrl_avail(rs) || !(rs->state & RS_CONNECTED);
}

int rs_conn_all_sends_done(struct rs_stream *rs)
{
	return ((int)rs->ctrl_max_seqno - (int)rs->ctrl_seqno) + rs->sqe_avail == rs->sq_size ||
	       !(rs->state & RS_CONNECTED);
}

