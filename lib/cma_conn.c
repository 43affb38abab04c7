/* The calls that lead to the network (spec §6.6-§6.16, §10, §12): address and route
 * resolution, connect/accept/reject/notify/disconnect/establish, multicast and ECE. The
 * library part (argument checks, parameter marshalling, the QP moves of lib/cma_qp.c,
 * sync-mode completion) is rdma-core's; what the network does is the emulated kernel's
 * (emu/rdma_cm/cma_id.c hook points, docs/cma.md). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cma.h"
#include "util/failcall.h"

static pthread_mutex_t mc_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- address and route ---- */

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	struct ucma_abi_resolve_addr cmd;
	socklen_t dst_len = cma_addrlen(dst_addr);
	socklen_t src_len = cma_addrlen(src_addr);

	if (!dst_len)
		return cma_err(EINVAL);
	if (src_addr && !src_len)
		return cma_err(EINVAL);
	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, RESOLVE_ADDR);
	cmd.id = cma_priv(id)->handle;
	cmd.src_size = (__u16)src_len;
	if (src_len)
		memcpy(&cmd.src_addr, src_addr, src_len);
	memcpy(&cmd.dst_addr, dst_addr, dst_len);
	cmd.dst_size = (__u16)dst_len;
	cmd.timeout_ms = (__u32)timeout_ms;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	memcpy(&id->route.addr.dst_addr, dst_addr, dst_len);
	return cma_complete(id);
}

/* rdma-core's ucma_set_ib_route: before asking the kernel, rdma_resolve_route asks ibacm for
 * a path to the resolved destination (rdma_getaddrinfo with RAI_ROUTEONLY and the id's
 * addresses) and, when it answers with one, hands it to the kernel as RDMA_OPTION_IB_PATH,
 * whose handler raises ROUTE_RESOLVED itself: no SA query from the kernel, and ibacm's
 * timeouts instead of the caller's. 0 when a route was set, -1 otherwise (the caller then
 * falls back to RESOLVE_ROUTE; errno is not the caller's business). */
static int cma_set_ib_route(struct rdma_cm_id *id)
{
	struct rdma_addrinfo hint, *rai = NULL;
	int saved = errno;
	int ret = -1;

	memset(&hint, 0, sizeof hint);
	hint.ai_flags = RAI_ROUTEONLY;
	hint.ai_family = id->route.addr.src_addr.sa_family;
	hint.ai_src_len = cma_addrlen(&id->route.addr.src_addr);
	hint.ai_src_addr = &id->route.addr.src_addr;
	hint.ai_dst_len = cma_addrlen(&id->route.addr.dst_addr);
	hint.ai_dst_addr = &id->route.addr.dst_addr;
	if (rdma_getaddrinfo(NULL, NULL, &hint, &rai))
		goto out;
	if (rai->ai_route_len)
		ret = rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, rai->ai_route,
				      rai->ai_route_len);
	rdma_freeaddrinfo(rai);
out:
	if (ret)
		errno = saved;
	return ret;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct ucma_abi_resolve_route cmd;

	/* rdma-core reads id->verbs->device first and crashes before address resolution (spec
	 * §6.7, §16 item 12); the kernel's answer for that state is EINVAL. */
	if (!id || !id->verbs || !id->channel)
		return cma_err(EINVAL);
	/* rxe and every HCA report IBV_TRANSPORT_IB (RoCE included); only iWARP skips ibacm */
	if (id->verbs->device->transport_type == IBV_TRANSPORT_IB && !cma_set_ib_route(id))
		return cma_complete(id);
	CMA_INIT_CMD(&cmd, sizeof cmd, RESOLVE_ROUTE);
	cmd.id = cma_priv(id)->handle;
	cmd.timeout_ms = (__u32)timeout_ms;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	return cma_complete(id);
}

/* ---- connections ---- */

/* ucma_valid_param: only RDMA_PS_TCP ids are checked. Without a device rdma-core would crash
 * reading its limits; that is EINVAL here. */
static int valid_param(struct cma_id_private *id_priv, const struct rdma_conn_param *param)
{
	if (id_priv->id.ps != RDMA_PS_TCP)
		return 0;
	if (!id_priv->id.qp && !param)
		return cma_err(EINVAL);
	if (!param)
		return 0;
	if (!id_priv->cma_dev)
		return cma_err(EINVAL);
	if (param->responder_resources != RDMA_MAX_RESP_RES &&
	    param->responder_resources > id_priv->cma_dev->max_responder_resources)
		return cma_err(EINVAL);
	if (param->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	    param->initiator_depth > id_priv->cma_dev->max_initiator_depth)
		return cma_err(EINVAL);
	return 0;
}

static void copy_conn_param_to_kern(struct cma_id_private *id_priv,
				    struct ucma_abi_conn_param *dst,
				    const struct rdma_conn_param *src, uint32_t qp_num, uint8_t srq)
{
	dst->qp_num = qp_num;
	dst->srq = srq;
	dst->responder_resources = id_priv->responder_resources;
	dst->initiator_depth = id_priv->initiator_depth;
	dst->valid = 1;
	if (id_priv->connect_len) {
		memcpy(dst->private_data, id_priv->connect, id_priv->connect_len);
		dst->private_data_len = id_priv->connect_len;
	}
	if (src) {
		dst->flow_control = src->flow_control;
		dst->retry_count = src->retry_count;
		dst->rnr_retry_count = src->rnr_retry_count;
		if (src->private_data && src->private_data_len) {
			/* rdma-core overflows the 256-byte buffer here (spec §9); bound it */
			size_t room = RDMA_MAX_PRIVATE_DATA - dst->private_data_len;
			size_t n = src->private_data_len < room ? src->private_data_len : room;

			memcpy(dst->private_data + dst->private_data_len, src->private_data, n);
			dst->private_data_len = (__u8)(dst->private_data_len + src->private_data_len);
		}
	} else {
		dst->retry_count = 7;
		dst->rnr_retry_count = 7;
	}
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	uint32_t qp_num = conn_param ? conn_param->qp_num : 0;
	uint8_t srq = conn_param ? conn_param->srq : 0;
	struct cma_id_private *id_priv;
	struct ucma_abi_connect cmd;

	if (!id)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	if (valid_param(id_priv, conn_param))
		return -1;
	/* rdma-core reads the device maxima here and crashes without a device (§16 item 12) */
	if (!id_priv->cma_dev)
		return cma_err(EINVAL);
	if (conn_param && conn_param->initiator_depth != RDMA_MAX_INIT_DEPTH)
		id_priv->initiator_depth = conn_param->initiator_depth;
	else
		id_priv->initiator_depth = id_priv->cma_dev->max_initiator_depth;
	if (conn_param && conn_param->responder_resources != RDMA_MAX_RESP_RES)
		id_priv->responder_resources = conn_param->responder_resources;
	else
		id_priv->responder_resources = id_priv->cma_dev->max_responder_resources;
	CMA_INIT_CMD(&cmd, sizeof cmd, CONNECT);
	cmd.id = id_priv->handle;
	if (id->qp) {
		qp_num = id->qp->qp_num;
		srq = !!id->qp->srq;
	}
	copy_conn_param_to_kern(id_priv, &cmd.conn_param, conn_param, qp_num, srq);
	cmd.ece.vendor_id = id_priv->local_ece.vendor_id;
	cmd.ece.attr_mod = id_priv->local_ece.options;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	free(id_priv->connect);
	id_priv->connect = NULL;
	id_priv->connect_len = 0;
	return cma_complete(id);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id_private *id_priv;
	struct ucma_abi_accept cmd;
	uint32_t qp_num;
	uint8_t srq;

	/* rdma-core reads conn_param->qp_num first and crashes without QP and param (§6.12) */
	if (!id || (!id->qp && !conn_param))
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	qp_num = id->qp ? id->qp->qp_num : conn_param->qp_num;
	srq = id->qp ? !!id->qp->srq : conn_param->srq;
	if (valid_param(id_priv, conn_param))
		return -1;
	if (!id_priv->cma_dev)
		return cma_err(EINVAL);
	if (!conn_param || conn_param->initiator_depth == RDMA_MAX_INIT_DEPTH) {
		if (id_priv->initiator_depth > id_priv->cma_dev->max_initiator_depth)
			id_priv->initiator_depth = id_priv->cma_dev->max_initiator_depth;
	} else {
		id_priv->initiator_depth = conn_param->initiator_depth;
	}
	if (!conn_param || conn_param->responder_resources == RDMA_MAX_RESP_RES) {
		if (id_priv->responder_resources > id_priv->cma_dev->max_responder_resources)
			id_priv->responder_resources = id_priv->cma_dev->max_responder_resources;
	} else {
		id_priv->responder_resources = conn_param->responder_resources;
	}
	if (!cma_is_ud_qp(id->qp_type)) {
		if (cma_modify_qp_rtr(id, id_priv->responder_resources))
			return -1;
		if (id->qp && cma_modify_qp_rts(id, id_priv->initiator_depth))
			return -1;
	}
	CMA_INIT_CMD(&cmd, sizeof cmd, ACCEPT);
	cmd.id = id_priv->handle;
	cmd.uid = (uintptr_t)id_priv;
	copy_conn_param_to_kern(id_priv, &cmd.conn_param, conn_param, qp_num, srq);
	cmd.ece.vendor_id = id_priv->remote_ece.vendor_id;
	cmd.ece.attr_mod = id_priv->local_ece.options;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd)) {
		int e = errno;

		cma_modify_qp_err(id);
		return cma_err(e);
	}
	if (cma_is_ud_qp(id->qp_type)) {
		/* v52 (9a0fc3afd): a sync UD id acks the held CONNECT_REQUEST; before it the event
		 * stays in id->event until rdma_destroy_id (or rdma_migrate_id) acks it */
		if (cma_rdma_core >= 52 && id_priv->sync && id->event) {
			rdma_ack_cm_event(id->event);
			id->event = NULL;
		}
		return 0;
	}
	return cma_complete(id);
}

static int reject(struct rdma_cm_id *id, const void *private_data, uint8_t len, uint8_t reason)
{
	struct ucma_abi_reject cmd;

	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, REJECT);
	cmd.id = cma_priv(id)->handle;
	if (private_data && len) {
		memcpy(cmd.private_data, private_data, len);
		cmd.private_data_len = len;
	}
	cmd.reason = reason;
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 0);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 35 /* VENDOR_OPTION_NOT_SUPPORTED */);
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct ucma_abi_notify cmd;

	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, NOTIFY);
	cmd.id = cma_priv(id)->handle;
	cmd.event = (__u32)event;
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct ucma_abi_disconnect cmd;
	int ret;

	/* ucma_shutdown: an id never bound to a device cannot be disconnected */
	if (!id || !id->verbs || !id->verbs->device)
		return cma_err(EINVAL);
	switch (id->verbs->device->transport_type) {
	case IBV_TRANSPORT_IB:
		ret = cma_modify_qp_err(id);
		break;
	default:
		ret = cma_err(EINVAL);
		break;
	}
	if (ret)
		return ret;
	CMA_INIT_CMD(&cmd, sizeof cmd, DISCONNECT);
	cmd.id = cma_priv(id)->handle;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	return cma_complete(id);
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct ucma_abi_accept cmd;

	if (!id || id->qp)
		return cma_err(EINVAL);
	/* no QP to move: only the RTU (an ACCEPT on the active side) goes out */
	CMA_INIT_CMD(&cmd, sizeof cmd, ACCEPT);
	cmd.id = cma_priv(id)->handle;
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

/* ---- ECE ---- */

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cma_id_private *id_priv;

	if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	id_priv->local_ece.vendor_id = ece->vendor_id;
	id_priv->local_ece.options = ece->options;
	return 0;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct cma_id_private *id_priv;

	if (!id || id->qp || !ece)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	ece->vendor_id = id_priv->remote_ece.vendor_id;
	ece->options = id_priv->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

/* ---- multicast ---- */

static int join2(struct rdma_cm_id *id, struct sockaddr *addr, socklen_t addrlen,
		 uint16_t join_flags, void *context)
{
	struct ucma_abi_create_id_resp resp;
	struct ucma_abi_join_mcast cmd;
	struct cma_id_private *id_priv = cma_priv(id);
	struct cma_multicast *mc, **pos;

	mc = emu_calloc(1, sizeof *mc);
	if (!mc)
		return cma_err(ENOMEM);
	mc->context = context;
	mc->id_priv = id_priv;
	mc->join_flags = join_flags;
	memcpy(&mc->addr, addr, addrlen);
	pthread_mutex_lock(&mc_lock);
	mc->next = id_priv->mc_list;
	id_priv->mc_list = mc;
	pthread_mutex_unlock(&mc_lock);
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, JOIN_MCAST, &resp, sizeof resp);
	cmd.id = id_priv->handle;
	memcpy(&cmd.addr, addr, addrlen);
	cmd.addr_size = (__u16)addrlen;
	cmd.uid = (uintptr_t)mc;
	cmd.join_flags = join_flags;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd)) {
		int e = errno;

		pthread_mutex_lock(&mc_lock);
		for (pos = &id_priv->mc_list; *pos != mc; pos = &(*pos)->next)
			;
		*pos = mc->next;
		pthread_mutex_unlock(&mc_lock);
		free(mc);
		return cma_err(e);
	}
	mc->handle = resp.id;
	return cma_complete(id);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
			   void *context)
{
	socklen_t len;

	if (!attr)
		return cma_err(EINVAL);
	if (attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED)
		return cma_err(ENOTSUP);
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS))
		return cma_err(EINVAL);
	if (!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return cma_err(EINVAL);
	len = cma_addrlen(attr->addr);
	if (!len || !id)
		return cma_err(EINVAL);
	return join2(id, attr->addr, len, (uint16_t)attr->join_flags, context);
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	socklen_t len = cma_addrlen(addr);

	if (!len || !id)
		return cma_err(EINVAL);
	return join2(id, addr, len, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct ucma_abi_destroy_id_resp resp;
	struct ucma_abi_destroy_id cmd;
	struct cma_id_private *id_priv;
	struct cma_multicast *mc, **pos;
	socklen_t len = cma_addrlen(addr);
	int ret;

	if (!len || !id)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	pthread_mutex_lock(&mc_lock);
	for (pos = &id_priv->mc_list; *pos && memcmp(&(*pos)->addr, addr, len);
	     pos = &(*pos)->next)
		;
	mc = *pos;
	if (mc)
		*pos = mc->next;
	pthread_mutex_unlock(&mc_lock);
	if (!mc)
		return cma_err(EADDRNOTAVAIL);
	if (id->qp && mc->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		ibv_detach_mcast(id->qp, &mc->mgid, mc->mlid);
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, LEAVE_MCAST, &resp, sizeof resp);
	cmd.id = mc->handle;
	ret = cma_write(id->channel->fd, &cmd, sizeof cmd);
	if (!ret)
		cma_wait_acked("rdma_leave_multicast", &mc->events_completed,
			       (int)resp.events_reported);
	free(mc);
	return ret;
}
