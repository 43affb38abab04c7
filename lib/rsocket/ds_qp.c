/* A datagram rsocket's UD QPs, one per local source address, and its destination map
 * (rdma-core's ds_create_qp, ds_get_qp, ds_get_dest), in rdma-core's order of verbs calls, so
 * that a device refusing one of them fails the same call with the same errno.
 *
 * Each QP carries an AH to its own port (its dest): dlid = the port's LID, no GRH, as
 * rdma-core creates it. A RoCE port refuses such an AH (EINVAL from the kernel's
 * rdma_check_ah_attr, docs/reference/rsockets-rxe.md), and rdma-core's clean-up then removes
 * a completion channel from the epoll set it was never added to: ENOENT is what rconnect and
 * rsendto report on kernel rxe, and what they report here. */
#include "config.h"

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <fcntl.h>
#include <rdma/rdma_verbs.h>

#include "ds.h"
#include "ds_addr.h"
#include "ds_udp.h"
#include "util/failcall.h"

/* Each receive: the GRH into the slot after the buffer, the datagram into slot `offset`. */
int ds_post_recv(struct ds_sock *ds, struct ds_qp *qp, uint32_t offset)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[2];
	int ret;

	sge[0].addr = (uintptr_t)(qp->rbuf + ds->rbuf_size);
	sge[0].length = DS_GRH_LEN;
	sge[0].lkey = qp->rmr->lkey;
	sge[1].addr = (uintptr_t)(qp->rbuf + offset);
	sge[1].length = DS_SNDLOWAT;
	sge[1].lkey = qp->rmr->lkey;
	wr.wr_id = (1ull << 63) | offset;
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = 2;
	ret = ibv_post_recv(qp->cm_id->qp, &wr, &bad);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

static void qp_insert(struct ds_sock *ds, struct ds_qp *qp)
{
	if (!ds->qp_list) {
		qp->next = qp->prev = qp;
	} else {
		qp->next = ds->qp_list;
		qp->prev = ds->qp_list->prev;
		qp->prev->next = qp;
		ds->qp_list->prev = qp;
	}
	ds->qp_list = qp;
}

static void qp_remove(struct ds_sock *ds, struct ds_qp *qp)
{
	if (qp->next == qp) {
		ds->qp_list = NULL;
		return;
	}
	qp->prev->next = qp->next;
	qp->next->prev = qp->prev;
	if (ds->qp_list == qp)
		ds->qp_list = qp->next;
}

/* Keeps the errno of the failure that led here, unless a step of the clean-up fails as
 * rdma-core's does (the epoll removal of a channel never added: ENOENT). */
static void free_qp(struct ds_qp *qp)
{
	struct ds_sock *ds = qp->ds;
	int e = errno;

	if (qp->dest.ah)
		ibv_destroy_ah(qp->dest.ah);
	if (qp->smr)
		rdma_dereg_mr(qp->smr);
	if (qp->rmr)
		rdma_dereg_mr(qp->rmr);
	free(qp->rbuf);
	if (qp->cm_id) {
		if (qp->cm_id->qp) {
			tdelete(&qp->dest.addr, &ds->dest_map, ds_compare_addr);
			if (epoll_ctl(ds->epfd, EPOLL_CTL_DEL, qp->cm_id->recv_cq_channel->fd,
				      NULL))
				e = errno;
			rdma_destroy_qp(qp->cm_id);
		} else {
			if (qp->cm_id->recv_cq)
				ibv_destroy_cq(qp->cm_id->recv_cq);
			if (qp->cm_id->recv_cq_channel)
				ibv_destroy_comp_channel(qp->cm_id->recv_cq_channel);
		}
		rdma_destroy_id(qp->cm_id);
	}
	free(qp);
	errno = e;
}

static int init_bufs(struct ds_qp *qp)
{
	struct ds_sock *ds = qp->ds;

	qp->rbuf = emu_calloc(1, ds->rbuf_size + DS_GRH_LEN);
	if (!qp->rbuf) {
		errno = ENOMEM;
		return -1;
	}
	qp->smr = rdma_reg_msgs(qp->cm_id, ds->sbuf, ds->sbuf_size);
	if (!qp->smr)
		return -1;
	qp->rmr = rdma_reg_msgs(qp->cm_id, qp->rbuf, ds->rbuf_size + DS_GRH_LEN);
	return qp->rmr ? 0 : -1;
}

/* One completion channel and CQ for sends and receives, armed at once: the first completion
 * must wake an rpoll on the epoll fd. */
static int create_cq(struct ds_sock *ds, struct rdma_cm_id *id)
{
	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (!id->recv_cq_channel)
		return -1;
	id->recv_cq = ibv_create_cq(id->verbs, ds->sq_size + ds->rq_size, id,
				    id->recv_cq_channel, 0);
	if (!id->recv_cq)
		return -1;
	if ((ds->fs_flags & O_NONBLOCK) &&
	    fcntl(id->recv_cq_channel->fd, F_SETFL,
		  fcntl(id->recv_cq_channel->fd, F_GETFL) | O_NONBLOCK))
		return -1;
	ibv_req_notify_cq(id->recv_cq, 0);
	id->send_cq_channel = id->recv_cq_channel;
	id->send_cq = id->recv_cq;
	return 0;
}

static int add_self_dest(struct ds_qp *qp, const union ds_addr *addr)
{
	struct ibv_port_attr port;
	struct ibv_ah_attr attr;
	int ret;

	memcpy(&qp->dest.addr, addr, ds_addrlen(&addr->sa));
	qp->dest.qp = qp;
	qp->dest.qpn = qp->cm_id->qp->qp_num;
	ret = ibv_query_port(qp->cm_id->verbs, qp->cm_id->port_num, &port);
	if (ret) {
		errno = ret;
		return -1;
	}
	memset(&attr, 0, sizeof attr);
	attr.dlid = port.lid;
	attr.port_num = qp->cm_id->port_num;
	qp->dest.ah = ibv_create_ah(qp->cm_id->pd, &attr);
	if (!qp->dest.ah) {
		errno = ENOMEM;
		return -1;
	}
	tsearch(&qp->dest.addr, &qp->ds->dest_map, ds_compare_addr);
	return 0;
}

static int create_qp_verbs(struct ds_sock *ds, struct ds_qp *qp)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof qa);
	qa.qp_context = qp;
	qa.send_cq = qp->cm_id->send_cq;
	qa.recv_cq = qp->cm_id->recv_cq;
	qa.qp_type = IBV_QPT_UD;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = ds->sq_size;
	qa.cap.max_recv_wr = ds->rq_size;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 2;
	qa.cap.max_inline_data = ds->sq_inline;
	if (rdma_create_qp(qp->cm_id, NULL, &qa))
		return -1;
	ds->sq_inline = (uint16_t)qa.cap.max_inline_data;
	return 0;
}

static int create_qp(struct ds_sock *ds, const union ds_addr *src, struct ds_qp **out)
{
	struct epoll_event ev;
	struct ds_qp *qp;
	int i;

	qp = emu_calloc(1, sizeof *qp);
	if (!qp) {
		errno = ENOMEM;
		return -1;
	}
	qp->ds = ds;
	if (rdma_create_id(NULL, &qp->cm_id, qp, RDMA_PS_UDP))
		goto err;
	ds_format_hdr(&qp->hdr, src);
	if (rdma_bind_addr(qp->cm_id, (struct sockaddr *)&src->sa) || init_bufs(qp) ||
	    create_cq(ds, qp->cm_id) || create_qp_verbs(ds, qp) || add_self_dest(qp, src))
		goto err;
	ev.events = EPOLLIN;
	ev.data.ptr = qp;
	if (epoll_ctl(ds->epfd, EPOLL_CTL_ADD, qp->cm_id->recv_cq_channel->fd, &ev))
		goto err;
	for (i = 0; i < ds->rq_size; i++)
		if (ds_post_recv(ds, qp, (uint32_t)i * DS_SNDLOWAT))
			goto err;
	qp_insert(ds, qp);
	*out = qp;
	return 0;
err:
	free_qp(qp);
	return -1;
}

static int get_qp(struct ds_sock *ds, const union ds_addr *src, struct ds_qp **out)
{
	struct ds_qp *qp = ds->qp_list;

	if (qp)
		do {
			if (!ds_compare_addr(rdma_get_local_addr(qp->cm_id), src)) {
				*out = qp;
				return 0;
			}
			qp = qp->next;
		} while (qp != ds->qp_list);
	return create_qp(ds, src, out);
}

int ds_get_dest(struct ds_sock *ds, const struct sockaddr *addr, socklen_t len,
		struct ds_dest **dest)
{
	struct ds_dest **found, *d;
	union ds_addr src;
	socklen_t srclen;
	struct ds_qp *qp;
	int ret = 0;

	pthread_mutex_lock(&ds->map_lock);
	found = tfind(addr, &ds->dest_map, ds_compare_addr);
	if (found)
		goto out;
	ret = ds_udp_src_addr(ds->chan, addr, len, &src, &srclen);
	if (!ret)
		ret = get_qp(ds, &src, &qp);
	if (ret)
		goto unlock;
	found = tfind(addr, &ds->dest_map, ds_compare_addr);
	if (!found) {
		d = emu_calloc(1, sizeof *d);
		if (!d) {
			errno = ENOMEM;
			ret = -1;
			goto unlock;
		}
		memcpy(&d->addr, addr, len < sizeof d->addr ? len : sizeof d->addr);
		d->qp = qp;
		found = tsearch(&d->addr, &ds->dest_map, ds_compare_addr);
	}
out:
	*dest = *found;
unlock:
	pthread_mutex_unlock(&ds->map_lock);
	return ret;
}

/* The map holds the QPs' own dests too (freed with their QPs). */
static void free_dest(void *node)
{
	struct ds_dest *d = node;

	if (d->qp && &d->qp->dest == d)
		return;
	if (d->ah)
		ibv_destroy_ah(d->ah);
	free(d);
}

void ds_free_qps(struct ds_sock *ds)
{
	struct ds_qp *qp;

	tdestroy(ds->dest_map, free_dest);
	ds->dest_map = NULL;
	while ((qp = ds->qp_list)) {
		qp_remove(ds, qp);
		free_qp(qp);
	}
}

static int set_fl(int fd, int nonblock)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* The epoll fd and the QPs' completion channels follow O_NONBLOCK (rs_set_nonblocking). */
int ds_set_nonblocking(struct ds_sock *ds, int nonblock)
{
	struct ds_qp *qp = ds->qp_list;
	int ret = set_fl(ds->epfd, nonblock);

	if (!ret && qp)
		do {
			ret = set_fl(qp->cm_id->recv_cq_channel->fd, nonblock);
			qp = qp->next;
		} while (qp != ds->qp_list && !ret);
	return ret;
}
