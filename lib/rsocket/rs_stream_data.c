/* The stream rsocket's data path. Data goes by RDMA WRITE WITH IMM into the peer's receive
 * buffer, at the place the current target SGE names, the immediate saying how many bytes
 * (RS_OP_DATA). The receive buffer is published half at a time: when half of it is free again
 * and credits are due, the receiver writes the half's SGE into the sender's target SGL and
 * says so with RS_OP_SGL, whose data is the sequence number up to which the sender may send
 * (its credits: one per receive work request). A few credits are kept for control messages
 * (ctrl_seqno against ctrl_max_seqno), so that credit updates and the DISCONNECT can always
 * go out. */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include <endian.h>
#include <infiniband/verbs.h>

#include "rs_stream_priv.h"

#define RS_MAX_CTRL_MSG sizeof(struct rs_sge)

int rs_post_recv(struct rs_stream *rs)
{
	struct ibv_recv_wr wr = { .wr_id = RS_WR_RECV }, *bad;
	int ret = ibv_post_recv(rs->cm_id->qp, &wr, &bad);

	return ret ? rs_seterr(ret) : 0;
}

/* One RDMA WRITE, with the immediate msg when imm is set; wr_id carries the message (the
 * completion tells what went). */
static int post_write_wr(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t msg,
			 bool imm, int flags, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	memset(&wr, 0, sizeof wr);
	wr.wr_id = msg;
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = (unsigned)flags;
	if (imm)
		wr.imm_data = htobe32(msg);
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	return ret ? rs_seterr(ret) : 0;
}

/* A message alone: a zero-length write with the immediate. */
int rs_post_msg(struct rs_stream *rs, uint32_t msg)
{
	return post_write_wr(rs, NULL, 0, msg, true, 0, 0, 0);
}

int rs_post_write(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t wr_data,
		  int flags, uint64_t addr, uint32_t rkey)
{
	return post_write_wr(rs, sgl, nsge, wr_data, false, flags, addr, rkey);
}

static int post_write_msg(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t msg,
			  int flags, uint64_t addr, uint32_t rkey)
{
	return post_write_wr(rs, sgl, nsge, msg, true, flags, addr, rkey);
}

uint32_t rs_sbuf_left(const struct rs_stream *rs)
{
	return (uint32_t)((uintptr_t)&rs->sbuf[rs->sbuf_size] - rs->ssgl[0].addr);
}

int rs_ctrl_avail(const struct rs_stream *rs)
{
	return rs->ctrl_seqno != rs->ctrl_max_seqno;
}

/* Control SGEs too large to go inline wait in slots after the send buffer. */
static void *ctrl_buf(struct rs_stream *rs)
{
	return rs->sbuf + rs->sbuf_size +
	       RS_MAX_CTRL_MSG * (rs->ctrl_seqno & (RS_QP_CTRL_SIZE - 1));
}

static void send_credits(struct rs_stream *rs)
{
	struct rs_sge sge, *slot;
	struct ibv_sge ib;
	uint32_t half = rs->rbuf_size >> 1;
	int flags;

	rs->ctrl_seqno++;
	rs->rseq_comp = (uint16_t)(rs->rseq_no + (rs->rq_size >> 1));
	if (rs->rbuf_bytes_avail < (int)half) {
		rs_post_msg(rs, RS_MSG(RS_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size)));
		return;
	}
	sge.addr = (uintptr_t)&rs->rbuf[rs->rbuf_free_offset];
	sge.key = rs->rmr->rkey;
	sge.length = half;
	if (rs->opts & RS_OPT_SWAP_SGL) {
		sge.addr = bswap_64(sge.addr);
		sge.key = bswap_32(sge.key);
		sge.length = bswap_32(sge.length);
	}
	if (rs->sq_inline < sizeof sge) {
		slot = ctrl_buf(rs);
		memcpy(slot, &sge, sizeof sge);
		ib.addr = (uintptr_t)slot;
		ib.lkey = rs->smr->lkey;
		flags = 0;
	} else {
		ib.addr = (uintptr_t)&sge;
		ib.lkey = 0;
		flags = IBV_SEND_INLINE;
	}
	ib.length = sizeof sge;
	post_write_msg(rs, &ib, 1, RS_MSG(RS_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size)),
		       flags, rs->remote_sgl.addr + (uint64_t)rs->remote_sge * sizeof(struct rs_sge),
		       rs->remote_sgl.key);
	rs->rbuf_bytes_avail -= (int)half;
	rs->rbuf_free_offset += (int)half;
	if (rs->rbuf_free_offset >= (int)rs->rbuf_size)
		rs->rbuf_free_offset = 0;
	if (++rs->remote_sge == (int)rs->remote_sgl.length)
		rs->remote_sge = 0;
}

static int give_credits(const struct rs_stream *rs)
{
	return (rs->rbuf_bytes_avail >= (int)(rs->rbuf_size >> 1) ||
		(int16_t)(rs->rseq_no - rs->rseq_comp) >= 0) &&
	       rs_ctrl_avail(rs) && (rs->state & RS_CONNECTED);
}

void rs_update_credits(struct rs_stream *rs)
{
	if (give_credits(rs))
		send_credits(rs);
}

/* Room in the send queue and buffer, a credit, and a target to write into. The target SGL is
 * written by the peer: read it once per look. */
int rs_can_send(struct rs_stream *rs)
{
	return rs->sqe_avail && rs->sbuf_bytes_avail >= RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp && rs->target_sgl[rs->target_sge].length != 0;
}

/* Data into the current target SGE; the SGE is advanced before the post, so that a peer's
 * update of the next one cannot be overwritten. */
int rs_write_data(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t len,
		      int flags, void *ctx)
{
	volatile struct rs_sge *t = &rs->target_sgl[rs->target_sge];
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;

	(void)ctx;
	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= (int)len;
	t->addr += len;
	t->length -= len;
	if (!t->length && ++rs->target_sge == RS_SGL_SIZE)
		rs->target_sge = 0;
	return post_write_msg(rs, sgl, nsge, RS_MSG(RS_OP_DATA, len), flags, addr, rkey);
}

static void src_copy(void *dst, struct rs_src *src, size_t len)
{
	uint8_t *d = dst;

	while (len) {
		size_t n = src->iov->iov_len - src->off;

		if (n > len)
			n = len;
		memcpy(d, (const uint8_t *)src->iov->iov_base + src->off, n);
		d += n;
		len -= n;
		src->off += n;
		if (src->off == src->iov->iov_len) {
			src->iov++;
			src->off = 0;
		}
	}
}

int rs_send_from(struct rs_stream *rs, struct rs_src *src, uint32_t len, rs_post_fn post,
		 void *ctx)
{
	int flags = len <= rs->sq_inline ? IBV_SEND_INLINE : 0;
	uint32_t left = rs_sbuf_left(rs);
	struct ibv_sge sge;
	int ret;

	while (src->iov->iov_len == src->off) {
		src->iov++;
		src->off = 0;
	}
	if (flags && src->iov->iov_len - src->off >= len) {
		sge.addr = (uintptr_t)src->iov->iov_base + src->off;
		sge.length = len;
		sge.lkey = 0;
		src->off += len;
		return post(rs, &sge, 1, len, flags, ctx);
	}
	if (len <= left) {
		src_copy((void *)(uintptr_t)rs->ssgl[0].addr, src, len);
		rs->ssgl[0].length = len;
		ret = post(rs, rs->ssgl, 1, len, flags, ctx);
		if (len < left)
			rs->ssgl[0].addr += len;
		else
			rs->ssgl[0].addr = (uintptr_t)rs->sbuf;
		return ret;
	}
	rs->ssgl[0].length = left;
	src_copy((void *)(uintptr_t)rs->ssgl[0].addr, src, left);
	rs->ssgl[1].length = len - left;
	src_copy(rs->sbuf, src, len - left);
	ret = post(rs, rs->ssgl, 2, len, flags, ctx);
	rs->ssgl[0].addr = (uintptr_t)rs->sbuf + rs->ssgl[1].length;
	return ret;
}

/* Transfers start at 2 KiB and double up to 64 KiB, so that the first bytes go out early. */
uint32_t rs_next_xfer(size_t left, uint32_t *olen)
{
	uint32_t x;

	if (*olen < left) {
		x = *olen;
		if (*olen < RS_MAX_TRANSFER)
			*olen <<= 1;
	} else {
		x = (uint32_t)left;
	}
	return x;
}

/* Waits (or not) for room to send: 0, or -1 with EAGAIN, ECONNRESET when the way out closed,
 * or the failure. */
int rs_wait_send(struct rs_stream *rs, int flags)
{
	if (rs_can_send(rs))
		return 0;
	if (rs_get_comp(rs, rs_nonblocking(rs, flags), rs_conn_can_send))
		return -1;
	if (!(rs->state & RS_WRITABLE))
		return rs_seterr(ECONNRESET);
	return 0;
}

