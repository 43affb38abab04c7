/* The stream rsocket's send and receive calls: they finish a connect in progress, send the
 * queued mappings first, then move the caller's bytes through the send buffer, or out of the
 * receive buffer's messages. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "rs_stream_priv.h"

static ssize_t stream_send(struct rs_stream *rs, struct rs_src *src, size_t len, int flags)
{
	uint32_t olen = RS_OLAP_START_SIZE, xfer;
	size_t left = len;
	int ret = 0;

	if (rs_finish_connect(rs))
		return -1;
	pthread_mutex_lock(&rs->slock);
	if (rs->iomap_pending) {
		ret = rs_send_iomaps(rs, flags);
		if (ret)
			goto out;
	}
	for (; left; left -= xfer) {
		ret = rs_wait_send(rs, flags);
		if (ret) {
			xfer = 0;
			break;
		}
		xfer = rs_next_xfer(left, &olen);
		if (xfer > (uint32_t)rs->sbuf_bytes_avail)
			xfer = (uint32_t)rs->sbuf_bytes_avail;
		if (xfer > rs->target_sgl[rs->target_sge].length)
			xfer = rs->target_sgl[rs->target_sge].length;
		ret = rs_send_from(rs, src, xfer, rs_write_data, NULL);
		if (ret)
			break;
	}
out:
	pthread_mutex_unlock(&rs->slock);
	return (ret && left == len) ? ret : (ssize_t)(len - left);
}

ssize_t rs_stream_sendto(struct rs_sock *s, const void *buf, size_t len, int flags,
			 const struct sockaddr *dst, socklen_t dstlen)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };
	struct rs_src src = { &iov, 0 };

	if (dst || dstlen)
		return rs_seterr(EISCONN);
	return stream_send(rs_stream_of(s), &src, len, flags);
}

ssize_t rs_stream_sendv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags)
{
	struct rs_src src = { iov, 0 };
	size_t len = 0;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	return stream_send(rs_stream_of(s), &src, len, flags);
}

/* Copies `len` bytes out of the circular receive buffer at *offset. */
static void rbuf_copy(const struct rs_stream *rs, uint8_t *dst, int *offset, uint32_t len)
{
	uint32_t end = rs->rbuf_size - (uint32_t)*offset;

	if (len > end) {
		memcpy(dst, &rs->rbuf[*offset], end);
		dst += end;
		len -= end;
		*offset = 0;
	}
	memcpy(dst, &rs->rbuf[*offset], len);
	*offset += (int)len;
}

static size_t peek(const struct rs_stream *rs, uint8_t *buf, size_t len)
{
	int head = rs->rmsg_head, offset = rs->rbuf_offset;
	size_t left = len;
	uint32_t n;

	while (left && head != rs->rmsg_tail) {
		n = left < rs->rmsg[head].data ? (uint32_t)left : rs->rmsg[head].data;
		if (n == rs->rmsg[head].data && ++head == rs->rq_size + 1)
			head = 0;
		rbuf_copy(rs, buf, &offset, n);
		buf += n;
		left -= n;
	}
	return len - left;
}

/* What has arrived, from the oldest message on; a message read in part stays at the head
 * with what is left of it. */
static size_t take(struct rs_stream *rs, uint8_t *buf, size_t left)
{
	size_t got = 0;
	uint32_t n;

	while (left && rs_have_rdata(rs)) {
		struct rs_msg *m = &rs->rmsg[rs->rmsg_head];

		if (left < m->data) {
			n = (uint32_t)left;
			m->data -= n;
		} else {
			n = m->data;
			rs->rseq_no++;
			if (++rs->rmsg_head == rs->rq_size + 1)
				rs->rmsg_head = 0;
		}
		rbuf_copy(rs, buf + got, &rs->rbuf_offset, n);
		rs->rbuf_bytes_avail += (int)n;
		got += n;
		left -= n;
	}
	return got;
}

/* Data already received stays readable after the peer has gone. */
static ssize_t stream_recv(struct rs_stream *rs, void *buf, size_t len, int flags)
{
	size_t left = len;
	int ret = 0;

	if (rs_finish_connect(rs))
		return -1;
	pthread_mutex_lock(&rs->rlock);
	do {
		if (!rs_have_rdata(rs)) {
			ret = rs_get_comp(rs, rs_nonblocking(rs, flags), rs_conn_have_rdata);
			if (ret)
				break;
		}
		if (flags & MSG_PEEK) {
			left = len - peek(rs, buf, left);
			break;
		}
		left -= take(rs, (uint8_t *)buf + (len - left), left);
	} while (left && (flags & MSG_WAITALL) && (rs->state & RS_READABLE));
	pthread_mutex_unlock(&rs->rlock);
	return (ret && left == len) ? ret : (ssize_t)(len - left);
}

ssize_t rs_stream_recvfrom(struct rs_sock *s, void *buf, size_t len, int flags,
			   struct sockaddr *src, socklen_t *srclen)
{
	ssize_t ret = stream_recv(rs_stream_of(s), buf, len, flags);

	if (ret > 0 && src)
		s->type->getpeername(s, src, srclen);
	return ret;
}

/* Only the first vector is filled, as rdma-core's rrecvv does. */
ssize_t rs_stream_recvv(struct rs_sock *s, const struct iovec *iov, int iovcnt, int flags)
{
	(void)iovcnt;
	return stream_recv(rs_stream_of(s), iov[0].iov_base, iov[0].iov_len, flags);
}
