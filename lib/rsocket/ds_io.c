/* Datagrams in and out of a datagram rsocket (rdma-core's dsend, ds_sendv_udp, ds_recvfrom
 * and the completion handling under them).
 *
 * Sends and receives use slots of DS_SNDLOWAT bytes: sq_size send slots in sbuf, rq_size
 * receive slots per QP. A datagram on a UD QP is a ds_header then the user's bytes, so one
 * carries at most DS_SNDLOWAT - the header's length of user data (2040 bytes over IPv4,
 * 2024 over IPv6). Until the peer's QPN is known, a datagram goes on the UDP socket behind a
 * ds_udp_header; the receiver's service thread reads at most DS_SNDLOWAT bytes of it, so the
 * first datagrams carry at most DS_SNDLOWAT - the UDP header's length intact (2032 over
 * IPv4), the rest being cut off as rdma-core's service thread does. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <time.h>

#include "ds.h"
#include "ds_addr.h"
#include "ds_chan.h"

#define WR_RECV (1ull << 63)

int ds_can_send(struct ds_sock *ds)
{
	return ds->sqe_avail;
}

int ds_have_rdata(struct ds_sock *ds)
{
	return ds->rmsg_head != ds->rmsg_tail;
}

int ds_all_sends_done(struct ds_sock *ds)
{
	return ds->sqe_avail == ds->sq_size;
}

static int valid_recv(const struct ds_qp *qp, const struct ibv_wc *wc)
{
	const struct ds_header *hdr = (const void *)(qp->rbuf + (uint32_t)wc->wr_id);

	return wc->byte_len >= DS_GRH_LEN + DS_IPV4_HDR_LEN &&
	       ((hdr->version == 4 && hdr->length == DS_IPV4_HDR_LEN) ||
		(hdr->version == 6 && hdr->length == DS_IPV6_HDR_LEN));
}

static void take_wc(struct ds_sock *ds, struct ds_qp *qp, const struct ibv_wc *wc)
{
	uint32_t data = (uint32_t)wc->wr_id;
	struct ds_rmsg *rmsg;
	void **slot;

	if (!(wc->wr_id & WR_RECV)) {
		slot = (void **)(ds->sbuf + data);
		*slot = ds->smsg_free;
		ds->smsg_free = slot;
		ds->sqe_avail++;
		return;
	}
	/* A receive with no room left in the ring, or not an rsocket datagram, is dropped. */
	if (!ds->rqe_avail || wc->status != IBV_WC_SUCCESS || !valid_recv(qp, wc)) {
		ds_post_recv(ds, qp, data);
		return;
	}
	ds->rqe_avail--;
	rmsg = &ds->dmsg[ds->rmsg_tail];
	rmsg->qp = qp;
	rmsg->offset = data;
	rmsg->length = wc->byte_len - DS_GRH_LEN;
	if (++ds->rmsg_tail == ds->rq_size + 1)
		ds->rmsg_tail = 0;
}

/* All CQs, round robin from where the last call stopped; stops while the receive ring is full
 * and a send slot is free, so that completions stay queued rather than dropped. */
static void poll_cqs(struct ds_sock *ds)
{
	struct ds_qp *qp = ds->qp_list;
	struct ibv_wc wc;
	int cnt;

	if (!qp)
		return;
	do {
		cnt = 0;
		do {
			if (ibv_poll_cq(qp->cm_id->recv_cq, 1, &wc) <= 0) {
				qp = qp->next;
				continue;
			}
			take_wc(ds, qp, &wc);
			qp = qp->next;
			if (!ds->rqe_avail && ds->sqe_avail) {
				ds->qp_list = qp;
				return;
			}
			cnt++;
		} while (qp != ds->qp_list);
	} while (cnt);
}

static void req_notify_cqs(struct ds_sock *ds)
{
	struct ds_qp *qp = ds->qp_list;

	if (!qp)
		return;
	do {
		if (!qp->cq_armed) {
			ibv_req_notify_cq(qp->cm_id->recv_cq, 0);
			qp->cq_armed = 1;
		}
		qp = qp->next;
	} while (qp != ds->qp_list);
}

int ds_get_cq_event(struct ds_sock *ds)
{
	struct epoll_event ev;
	struct ibv_cq *cq;
	struct ds_qp *qp;
	void *ctx;
	int ret;

	if (!ds->cq_armed)
		return 0;
	ret = epoll_wait(ds->epfd, &ev, 1, -1);
	if (ret <= 0)
		return ret;
	qp = ev.data.ptr;
	ret = ibv_get_cq_event(qp->cm_id->recv_cq_channel, &cq, &ctx);
	if (!ret) {
		ibv_ack_cq_events(qp->cm_id->recv_cq, 1);
		qp->cq_armed = 0;
		ds->cq_armed = 0;
	}
	return ret;
}

int ds_process_cqs(struct ds_sock *ds, int nonblock, int (*test)(struct ds_sock *))
{
	int ret = 0;

	pthread_mutex_lock(&ds->cq_lock);
	do {
		poll_cqs(ds);
		if (test(ds)) {
			ret = 0;
			break;
		} else if (nonblock) {
			errno = EWOULDBLOCK;
			ret = -1;
		} else if (!ds->cq_armed) {
			req_notify_cqs(ds);
			ds->cq_armed = 1;
		} else {
			pthread_mutex_lock(&ds->cq_wait_lock);
			pthread_mutex_unlock(&ds->cq_lock);
			ret = ds_get_cq_event(ds);
			pthread_mutex_unlock(&ds->cq_wait_lock);
			pthread_mutex_lock(&ds->cq_lock);
		}
	} while (!ret);
	pthread_mutex_unlock(&ds->cq_lock);
	return ret;
}

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* Polls without blocking for polling_time microseconds, then blocks (rdma-core's
 * ds_get_comp). */
int ds_get_comp(struct ds_sock *ds, int nonblock, int (*test)(struct ds_sock *))
{
	uint64_t start = 0;
	int ret;

	do {
		ret = ds_process_cqs(ds, 1, test);
		if (!ret || nonblock || errno != EWOULDBLOCK)
			return ret;
		if (!start)
			start = now_us();
	} while (now_us() - start <= rs_config()->polling_time);
	return ds_process_cqs(ds, 0, test);
}

static size_t iov_len(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

int ds_send_slot(struct ds_sock *ds, struct ds_dest *dest, const struct ds_header *hdr,
		 const struct iovec *iov, int iovcnt, int nonblock)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint8_t *msg, *p;
	int ret;

	if (!ds_can_send(ds) && ds_get_comp(ds, nonblock, ds_can_send))
		return -1;
	/* the free list is also refilled by completions, under cq_lock */
	pthread_mutex_lock(&ds->cq_lock);
	msg = ds->smsg_free;
	ds->smsg_free = *(void **)msg;
	ds->sqe_avail--;
	pthread_mutex_unlock(&ds->cq_lock);

	memcpy(msg, hdr, hdr->length);
	p = msg + hdr->length;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p, iov[i].iov_base, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	sge.addr = (uintptr_t)msg;
	sge.length = (uint32_t)(p - msg);
	sge.lkey = dest->qp->smr->lkey;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = (uint64_t)(msg - ds->sbuf);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = sge.length <= ds->sq_inline ? IBV_SEND_INLINE : 0;
	wr.wr.ud.ah = dest->ah;
	wr.wr.ud.remote_qpn = dest->qpn;
	wr.wr.ud.remote_qkey = RDMA_UDP_QKEY;
	ret = ibv_post_send(dest->qp->cm_id->qp, &wr, &bad);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

ssize_t ds_send_udp(struct ds_sock *ds, struct ds_dest *dest, const struct iovec *iov,
		    int iovcnt, int flags, uint8_t op)
{
	const struct ds_header *qh = &dest->qp->hdr;
	struct ds_udp_header hdr;
	struct iovec miov[9];
	ssize_t ret;

	if (iovcnt > 8) {
		errno = ENOTSUP;
		return -1;
	}
	memset(&hdr, 0, sizeof hdr);
	hdr.tag = htonl(DS_UDP_TAG);
	hdr.version = qh->version;
	hdr.op = op;
	hdr.qpn = htonl(dest->qp->cm_id->qp->qp_num & 0xFFFFFF);
	if (qh->version == 4) {
		hdr.length = DS_UDP_IPV4_HDR_LEN;
		hdr.addr.ipv4 = qh->addr.ipv4;
	} else {
		hdr.length = DS_UDP_IPV6_HDR_LEN;
		memcpy(hdr.addr.ipv6, qh->addr.ipv6.addr, 16);
	}
	miov[0].iov_base = &hdr;
	miov[0].iov_len = hdr.length;
	if (iovcnt)
		memcpy(&miov[1], iov, sizeof *iov * (size_t)iovcnt);
	ret = ds->chan->ops->sendmsg(ds->chan, miov, iovcnt + 1, flags, &dest->addr.sa,
				     ds_addrlen(&dest->addr.sa));
	return ret > 0 ? ret - hdr.length : ret;
}

/* To conn_dest (the caller holds slock): over UDP until the peer's QPN is known. */
ssize_t ds_send(struct ds_sock *ds, const struct iovec *iov, int iovcnt, int flags)
{
	struct ds_dest *dest = ds->conn_dest;
	size_t len = iov_len(iov, iovcnt);

	if (!dest->ah)
		return ds_send_udp(ds, dest, iov, iovcnt, flags, DS_OP_DATA);
	/* rdma-core copies past the slot here; a datagram must fit one slot */
	if (len + dest->qp->hdr.length > DS_SNDLOWAT) {
		errno = EMSGSIZE;
		return -1;
	}
	if (ds_send_slot(ds, dest, &dest->qp->hdr, iov, iovcnt,
			 (ds->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT)))
		return -1;
	return (ssize_t)len;
}

/* rdma-core's ds_set_src: *len shrinks to the address's size, never grows. */
static void set_src(struct sockaddr *addr, socklen_t *len, const struct ds_header *hdr)
{
	union ds_addr sa;

	memset(&sa, 0, sizeof sa);
	if (hdr->version == 4) {
		if (*len > sizeof sa.sin)
			*len = sizeof sa.sin;
		sa.sin.sin_family = AF_INET;
		sa.sin.sin_port = hdr->port;
		sa.sin.sin_addr.s_addr = hdr->addr.ipv4;
	} else {
		if (*len > sizeof sa.sin6)
			*len = sizeof sa.sin6;
		sa.sin6.sin6_family = AF_INET6;
		sa.sin6.sin6_port = hdr->port;
		sa.sin6.sin6_flowinfo = hdr->addr.ipv6.flowinfo;
		memcpy(&sa.sin6.sin6_addr, hdr->addr.ipv6.addr, 16);
	}
	memcpy(addr, &sa, *len);
}

/* The caller holds rlock. A datagram longer than len is cut to len, the rest discarded. */
ssize_t ds_recv(struct ds_sock *ds, void *buf, size_t len, int flags, struct sockaddr *src,
		socklen_t *srclen)
{
	const struct ds_header *hdr;
	struct ds_rmsg *rmsg;

	if (!(ds->state & DS_READABLE)) {
		errno = EINVAL;
		return -1;
	}
	if (!ds_have_rdata(ds) &&
	    ds_get_comp(ds, (ds->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT),
			ds_have_rdata))
		return -1;
	rmsg = &ds->dmsg[ds->rmsg_head];
	hdr = (const void *)(rmsg->qp->rbuf + rmsg->offset);
	if (len > rmsg->length - hdr->length)
		len = rmsg->length - hdr->length;
	memcpy(buf, (const uint8_t *)hdr + hdr->length, len);
	if (src && srclen)
		set_src(src, srclen, hdr);
	if (!(flags & MSG_PEEK)) {
		ds_post_recv(ds, rmsg->qp, rmsg->offset);
		pthread_mutex_lock(&ds->cq_lock);
		if (++ds->rmsg_head == ds->rq_size + 1)
			ds->rmsg_head = 0;
		ds->rqe_avail++;
		pthread_mutex_unlock(&ds->cq_lock);
	}
	return (ssize_t)len;
}
