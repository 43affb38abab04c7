/* QP and SRQ helpers (spec §11.1, §11.2): rdma_create_qp(_ex), rdma_destroy_qp,
 * rdma_create_srq(_ex), rdma_destroy_srq. The library makes the CQs and completion channels the
 * application did not give, and moves the new QP to the state the CM wants: UD to RTS at once,
 * connected QPs to INIT (the rest happens on connect/accept, with the transitions below:
 * rdma_init_qp_attr and the RTR/RTS/ERR moves built on it). */
#include "config.h"

#include <stdlib.h>

#include <rdma/rdma_verbs.h>

#include "lib/cma.h"

/* ---- QP attributes and transitions ---- */

/* libibverbs' marshalling of the kernel's QP attributes (exported at IBVERBS_1.0, declared in
 * rdma-core's infiniband/marshall.h, which Debian does not ship): librdmacm's
 * rdma_init_qp_attr hands the INIT_QP_ATTR answer to it, so this one does too. */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct ib_uverbs_qp_attr resp;
	struct ucma_abi_init_qp_attr cmd;

	if (!id || !qp_attr || !qp_attr_mask || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, INIT_QP_ATTR, &resp, sizeof resp);
	cmd.id = cma_priv(id)->handle;
	cmd.qp_state = qp_attr->qp_state;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	ibv_copy_qp_attr_from_kern(qp_attr, &resp);
	*qp_attr_mask = (int)resp.qp_attr_mask;
	return 0;
}

static int seterrno(int ret)
{
	return ret ? cma_err(ret) : 0;
}

int cma_modify_qp_rtr(struct rdma_cm_id *id, uint8_t resp_res)
{
	struct ibv_qp_attr qp_attr;
	struct ibv_port_attr port;
	int mask, ret;

	if (!id->qp)
		return 0;
	qp_attr.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(id, &qp_attr, &mask))
		return -1;
	ret = ibv_modify_qp(id->qp, &qp_attr, mask);
	if (ret)
		return cma_err(ret);
	qp_attr.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(id, &qp_attr, &mask))
		return -1;
	/* the kernel reports RoCE-only attribute bits (21-24) on IB ports too */
	if (!ibv_query_port(id->verbs, id->port_num, &port) &&
	    port.link_layer == IBV_LINK_LAYER_INFINIBAND)
		mask &= (int)(0xffffffffu ^ 0xe00000u);
	if (resp_res != RDMA_MAX_RESP_RES)
		qp_attr.max_dest_rd_atomic = resp_res;
	return seterrno(ibv_modify_qp(id->qp, &qp_attr, mask));
}

int cma_modify_qp_rts(struct rdma_cm_id *id, uint8_t init_depth)
{
	struct ibv_qp_attr qp_attr;
	int mask;

	qp_attr.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(id, &qp_attr, &mask))
		return -1;
	if (init_depth != RDMA_MAX_INIT_DEPTH)
		qp_attr.max_rd_atomic = init_depth;
	return seterrno(ibv_modify_qp(id->qp, &qp_attr, mask));
}

int cma_modify_qp_err(struct rdma_cm_id *id)
{
	struct ibv_qp_attr qp_attr;

	if (!id->qp)
		return 0;
	qp_attr.qp_state = IBV_QPS_ERR;
	return seterrno(ibv_modify_qp(id->qp, &qp_attr, IBV_QP_STATE));
}

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
