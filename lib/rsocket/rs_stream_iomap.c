/* riomap, riounmap, riowrite: direct placement into the peer's registered buffers. A buffer
 * mapped with PROT_WRITE takes a free slot of the peer-visible iomap and is queued; the next
 * send writes its entry (offset, address, length, rkey) into the peer's target iomap with
 * RS_OP_IOMAP_SGL. riowrite looks its offset up in the iomap the peer wrote to us and RDMA
 * WRITEs (no immediate) there: nothing tells the peer's application, which learns of the data
 * by its own messages. */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/verbs.h>

#include "rs_stream_priv.h"
#include "util/failcall.h"

static struct rs_iomap_mr *free_slot(struct rs_stream *rs)
{
	if (!rs->remote_iomappings) {
		rs->remote_iomappings = emu_calloc(rs->remote_iomap.length ? rs->remote_iomap.length
								       : 1,
					       sizeof *rs->remote_iomappings);
		if (!rs->remote_iomappings)
			return NULL;
		for (uint32_t i = 0; i < rs->remote_iomap.length; i++)
			rs->remote_iomappings[i].index = (int)i;
	}
	for (uint32_t i = 0; i < rs->remote_iomap.length; i++)
		if (!rs->remote_iomappings[i].mr)
			return &rs->remote_iomappings[i];
	return NULL;
}

/* An offset of -1 maps at the buffer's address; overlaps are not checked (rdma-core's). */
off_t rs_stream_iomap(struct rs_sock *s, void *buf, size_t len, int prot, int flags,
		      off_t offset)
{
	struct rs_stream *rs = rs_stream_of(s);
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct rs_iomap_mr *m;

	(void)flags;
	if (!rs->cm_id->pd || (prot & ~(PROT_WRITE | PROT_NONE)))
		return rs_seterr(EINVAL);
	pthread_mutex_lock(&rs->map_lock);
	if (prot & PROT_WRITE) {
		m = free_slot(rs);
		access |= IBV_ACCESS_REMOTE_WRITE;
	} else {
		m = emu_calloc(1, sizeof *m);
		if (m)
			m->index = -1;
	}
	if (!m) {
		offset = rs_seterr(ENOMEM);
		goto out;
	}
	m->mr = ibv_reg_mr(rs->cm_id->pd, buf, len, access);
	if (!m->mr) {
		if (m->index < 0)
			free(m);
		offset = -1;
		goto out;
	}
	if (offset == -1)
		offset = (off_t)(uintptr_t)buf;
	m->offset = (uint64_t)offset;
	m->refcnt = 1;
	if (m->index >= 0) {
		rs_iomap_append(&rs->iomap_queue, m);
		rs->iomap_pending = 1;
	} else {
		rs_iomap_append(&rs->iomap_list, m);
	}
out:
	pthread_mutex_unlock(&rs->map_lock);
	return offset;
}

struct iomap_ctx {
	struct rs_iomap_mr *m;
	const struct rs_iomap *iom;
	uint64_t offset;
};

static int write_iomap(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t len,
		       int flags, void *arg)
{
	struct iomap_ctx *c = arg;
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	rs->sseq_no++;
	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= (int)len;
	wr.wr_id = RS_MSG(RS_OP_IOMAP_SGL, c->m->index);
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = (unsigned)flags;
	wr.imm_data = htobe32(RS_MSG(RS_OP_IOMAP_SGL, c->m->index));
	wr.wr.rdma.remote_addr = rs->remote_iomap.addr +
				 (uint64_t)c->m->index * sizeof(struct rs_iomap);
	wr.wr.rdma.rkey = rs->remote_iomap.key;
	ret = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	return ret ? rs_seterr(ret) : 0;
}

/* The queued mappings' entries to the peer, before any data that may rely on them. */
int rs_send_iomaps(struct rs_stream *rs, int flags)
{
	struct iomap_ctx c = { 0 };
	struct rs_iomap iom;
	struct iovec iov = { &iom, sizeof iom };
	struct rs_src src;
	int ret = 0;

	pthread_mutex_lock(&rs->map_lock);
	while (rs->iomap_queue) {
		ret = rs_wait_send(rs, flags);
		if (ret)
			break;
		c.m = rs->iomap_queue;
		iom.offset = c.m->offset;
		iom.sge.addr = (uintptr_t)c.m->mr->addr;
		iom.sge.length = (uint32_t)c.m->mr->length;
		iom.sge.key = c.m->mr->rkey;
		if (rs->opts & RS_OPT_SWAP_SGL) {
			iom.offset = bswap_64(iom.offset);
			iom.sge.addr = bswap_64(iom.sge.addr);
			iom.sge.length = bswap_32(iom.sge.length);
			iom.sge.key = bswap_32(iom.sge.key);
		}
		src.iov = &iov;
		src.off = 0;
		ret = rs_send_from(rs, &src, sizeof iom, write_iomap, &c);
		rs->iomap_queue = c.m->next;
		rs_iomap_append(&rs->iomap_list, c.m);
		if (ret)
			break;
	}
	rs->iomap_pending = rs->iomap_queue != NULL;
	pthread_mutex_unlock(&rs->map_lock);
	return ret;
}

static const struct rs_iomap *find_target(const struct rs_stream *rs, uint64_t offset)
{
	for (int i = 0; i < rs->target_iomap_size; i++) {
		const struct rs_iomap *t = &rs->target_iomap[i];

		if (offset >= t->offset && offset < t->offset + t->sge.length)
			return t;
	}
	return NULL;
}

static int write_direct(struct rs_stream *rs, struct ibv_sge *sgl, int nsge, uint32_t len,
			int flags, void *arg)
{
	struct iomap_ctx *c = arg;

	rs->sqe_avail--;
	rs->sbuf_bytes_avail -= (int)len;
	return rs_post_write(rs, sgl, nsge, RS_MSG(RS_OP_WRITE, len), flags,
			     c->iom->sge.addr + c->offset - c->iom->offset, c->iom->sge.key);
}

size_t rs_stream_iowrite(struct rs_sock *s, const void *buf, size_t count, off_t offset,
			 int flags)
{
	struct rs_stream *rs = rs_stream_of(s);
	struct iovec iov = { (void *)(uintptr_t)buf, count };
	struct rs_src src = { &iov, 0 };
	struct iomap_ctx c = { 0 };
	uint32_t olen = RS_OLAP_START_SIZE, xfer;
	size_t left = count;
	int ret = 0;

	pthread_mutex_lock(&rs->slock);
	if (rs->iomap_pending) {
		ret = rs_send_iomaps(rs, flags);
		if (ret)
			goto out;
	}
	c.offset = (uint64_t)offset;
	for (; left; left -= xfer, c.offset += xfer) {
		if (!c.iom || c.offset > c.iom->offset + c.iom->sge.length) {
			c.iom = find_target(rs, c.offset);
			if (!c.iom)
				break;
		}
		ret = rs_wait_send(rs, flags);
		if (ret)
			break;
		xfer = rs_next_xfer(left, &olen);
		if (xfer > (uint32_t)rs->sbuf_bytes_avail)
			xfer = (uint32_t)rs->sbuf_bytes_avail;
		if (xfer > c.iom->offset + c.iom->sge.length - c.offset)
			xfer = (uint32_t)(c.iom->offset + c.iom->sge.length - c.offset);
		ret = rs_send_from(rs, &src, xfer, write_direct, &c);
		if (ret)
			break;
	}
out:
	pthread_mutex_unlock(&rs->slock);
	return (ret && left == count) ? (size_t)ret : count - left;
}
