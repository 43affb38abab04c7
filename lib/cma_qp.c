/* QP and SRQ helpers (spec §11.1, §11.2): rdma_create_qp(_ex), rdma_destroy_qp,
 * rdma_create_srq(_ex), rdma_destroy_srq. The library makes the CQs and completion channels the
 * application did not give, and moves the new QP to the state the CM wants: UD to RTS at once,
 * connected QPs to INIT (the rest happens on connect/accept). */
#include "config.h"

#include <stdlib.h>

#include <rdma/rdma_verbs.h>

#include "lib/cma.h"

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->qp_type == IBV_QPT_XRC_RECV && id->srq)
		return;
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	id->send_cq = id->recv_cq = NULL;
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

static int create_cqs(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id, id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id, id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
	}
	return 0;
err:
	destroy_cqs(id);
	return -1;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	return ret ? cma_err(ret) : 0;
}

/* ucma_init_ud_qp: INIT with the CM's pkey/port/qkey, then RTR and RTS (sq_psn 0), so a UD QP
 * can send right after creation. */
static int init_ud_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask;

	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(id, &attr, &mask) || modify(qp, &attr, mask))
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (modify(qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return modify(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* ucma_init_conn_qp: INIT only. */
static int init_conn_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr attr;
	int mask;

	attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(id, &attr, &mask))
		return -1;
	return modify(qp, &attr, mask);
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;

	if (!id || !attr)
		return cma_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
		attr->pd = id->pd;
	}
	if (id->qp)
		return cma_err(EINVAL);
	/* no PD (an id without device): rdma-core crashes in verbs (spec §11.1) */
	if (!attr->pd || !id->verbs)
		return cma_err(EINVAL);
	if (id->verbs != attr->pd->context)
		return cma_err(EINVAL);
	if ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
	    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq))
		return cma_err(EINVAL);
	if (id->qp_type == IBV_QPT_XRC_RECV && !attr->xrcd)
		return cma_err(EOPNOTSUPP); /* the emulated verbs have no XRC domains yet */
	if (create_cqs(id, attr->send_cq || id->send_cq ? 0 : attr->cap.max_send_wr,
		       attr->recv_cq || id->recv_cq ? 0 : attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = id->recv_cq;
	if (id->srq && !attr->srq)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		goto err1;
	/* ECE: rxe has none (ibv_query_ece EOPNOTSUPP), which rdma-core ignores */
	if (cma_is_ud_qp(id->qp_type) ? init_ud_qp(id, qp) : init_conn_qp(id, qp))
		goto err2;
	id->pd = qp->pd;
	id->qp = qp;
	return 0;
err2:
	{
		int e = errno;

		ibv_destroy_qp(qp);
		errno = e;
	}
err1:
	{
		int e = errno;

		destroy_cqs(id);
		errno = e;
	}
	return -1;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex attr_ex;
	int ret;

	if (!id || !qp_init_attr)
		return cma_err(EINVAL);
	memset(&attr_ex, 0, sizeof attr_ex);
	memcpy(&attr_ex, qp_init_attr, sizeof *qp_init_attr);
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd ? pd : id->pd;
	ret = rdma_create_qp_ex(id, &attr_ex);
	memcpy(qp_init_attr, &attr_ex, sizeof *qp_init_attr);
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	/* rdma-core has no NULL check (spec §16 item 12) */
	if (!id || !id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (!id || !attr)
		return cma_err(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return cma_err(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (!attr->pd || !id->verbs)
		return cma_err(EINVAL);
	if (attr->srq_type == IBV_SRQT_XRC)
		return cma_err(EOPNOTSUPP); /* no XRC domains in the emulated verbs yet */
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq) {
		int e = errno;

		destroy_cqs(id);
		return cma_err(e);
	}
	if (!id->pd)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex attr_ex;
	int ret;

	if (!id || !attr)
		return cma_err(EINVAL);
	memset(&attr_ex, 0, sizeof attr_ex);
	attr_ex.attr = attr->attr;
	attr_ex.srq_context = attr->srq_context;
	attr_ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	attr_ex.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	attr_ex.pd = pd;
	ret = rdma_create_srq_ex(id, &attr_ex);
	attr->attr = attr_ex.attr;
	return ret;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id || !id->srq)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	destroy_cqs(id);
}
