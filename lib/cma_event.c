/* Events (spec §7): rdma_get_cm_event with the library's post-processing per event type,
 * rdma_write_cm_event, and the synchronous-mode calls built on them: ucma_complete (§6.1) and
 * rdma_get_request. Channels are lib/ucma.c's, records and acks lib/cma_ack.c's. */
#include "config.h"

#include <stdlib.h>

#include "lib/cma.h"
#include "util/failnth.h"

/* ---- post-processing (cma.c: ucma_process_*) ---- */

static void copy_conn_event(struct cma_event *evt, const struct ucma_abi_conn_param *src)
{
	struct rdma_conn_param *dst = &evt->event.param.conn;

	dst->private_data_len = src->private_data_len;
	if (src->private_data_len) {
		dst->private_data = evt->private_data;
		memcpy(evt->private_data, src->private_data, src->private_data_len);
	}
	dst->responder_resources = src->responder_resources;
	dst->initiator_depth = src->initiator_depth;
	dst->flow_control = src->flow_control;
	dst->retry_count = src->retry_count;
	dst->rnr_retry_count = src->rnr_retry_count;
	dst->srq = src->srq;
	dst->qp_num = src->qp_num;
}

static void copy_ud_event(struct cma_event *evt, const struct ucma_abi_ud_param *src)
{
	struct rdma_ud_param *dst = &evt->event.param.ud;
	const struct ib_uverbs_ah_attr *k = (const struct ib_uverbs_ah_attr *)&src->ah_attr;

	dst->private_data_len = src->private_data_len;
	if (src->private_data_len) {
		dst->private_data = evt->private_data;
		memcpy(evt->private_data, src->private_data, src->private_data_len);
	}
	/* ibv_copy_ah_attr_from_kern */
	memcpy(dst->ah_attr.grh.dgid.raw, k->grh.dgid, 16);
	dst->ah_attr.grh.flow_label = k->grh.flow_label;
	dst->ah_attr.grh.sgid_index = k->grh.sgid_index;
	dst->ah_attr.grh.hop_limit = k->grh.hop_limit;
	dst->ah_attr.grh.traffic_class = k->grh.traffic_class;
	dst->ah_attr.dlid = k->dlid;
	dst->ah_attr.sl = k->sl;
	dst->ah_attr.src_path_bits = k->src_path_bits;
	dst->ah_attr.static_rate = k->static_rate;
	dst->ah_attr.is_global = k->is_global;
	dst->ah_attr.port_num = k->port_num;
	dst->qp_num = src->qp_num;
	dst->qkey = src->qkey;
}

/* ADDR_RESOLVED: learn address, GID and device; a failure turns the event into ADDR_ERROR
 * with status -1, and so does a resolution that left the id without a device (v56 and later:
 * ERR(ENODEV) instead of a NULL dereference, whose status is -1 as well). */
static void process_addr_resolved(struct cma_event *evt)
{
	struct rdma_cm_id *id = &evt->id_priv->id;

	if (cma_query_addr(id) || cma_query_gid(id) || !id->verbs) {
		evt->event.event = RDMA_CM_EVENT_ADDR_ERROR;
		evt->event.status = -1;
	}
}

static void process_route_resolved(struct cma_event *evt)
{
	struct rdma_cm_id *id = &evt->id_priv->id;

	if (id->verbs && id->verbs->device->transport_type != IBV_TRANSPORT_IB)
		return;
	if (cma_query_path(id)) {
		evt->event.event = RDMA_CM_EVENT_ROUTE_ERROR;
		evt->event.status = -1;
	}
}

/* A request whose new id cannot be set up is destroyed, and rdma_get_cm_event goes on to the
 * next event (rdma-core's ucma_process_conn_req, then "goto retry"): the listener never sees
 * it, the peer gets the REJ of the destroyed id. */
#define LOST_REQ "a connection request (rdma_get_cm_event destroys the id it cannot set up)"

static int process_conn_req(struct cma_event *evt, uint32_t handle,
			    const struct ucma_abi_ece *ece)
{
	struct cma_id_private *listen = evt->id_priv;
	struct cma_id_private *id_priv;
	int ret;

	id_priv = cma_alloc_id(listen->id.channel, listen->id.context, listen->id.ps,
			       listen->id.qp_type);
	if (!id_priv) {
		emu_fail_lost(LOST_REQ);
		cma_destroy_kern_id(listen->id.channel->fd, handle);
		/* the request is the listener's event, dropped here: it counts as acked, or
		 * the listener's rdma_destroy_id would wait for it forever (ucma_complete_event) */
		cma_ack_swallowed(listen);
		return cma_err(ENOMEM);
	}
	evt->event.listen_id = &listen->id;
	evt->event.id = &id_priv->id;
	id_priv->handle = handle;
	id_priv->remote_ece.vendor_id = ece->vendor_id;
	id_priv->remote_ece.options = ece->attr_mod;
	id_priv->initiator_depth = evt->event.param.conn.initiator_depth;
	id_priv->responder_resources = evt->event.param.conn.responder_resources;
	if (listen->sync) {
		ret = rdma_migrate_id(&id_priv->id, NULL);
		if (ret)
			goto err;
	}
	ret = cma_query_addr(&id_priv->id);
	if (!ret)
		ret = cma_query_gid(&id_priv->id);
	if (!ret)
		ret = cma_query_path(&id_priv->id);
	if (ret)
		goto err;
	return 0;
err:
	emu_fail_lost(LOST_REQ);
	rdma_destroy_id(&id_priv->id);
	cma_ack_swallowed(listen);
	return ret;
}

/* CONNECT_RESPONSE on an id with a QP: RTR, RTS, RTU (spec §6.9). */
static int process_conn_resp(struct cma_id_private *id_priv)
{
	struct ucma_abi_accept cmd;
	int ret;

	ret = cma_modify_qp_rtr(&id_priv->id, RDMA_MAX_RESP_RES);
	if (ret)
		goto err;
	ret = cma_modify_qp_rts(&id_priv->id, RDMA_MAX_INIT_DEPTH);
	if (ret)
		goto err;
	CMA_INIT_CMD(&cmd, sizeof cmd, ACCEPT);
	cmd.id = id_priv->handle;
	ret = cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd);
	if (ret)
		goto err;
	return 0;
err:
	cma_modify_qp_err(&id_priv->id);
	return ret;
}

static int process_join(struct cma_event *evt)
{
	struct cma_multicast *mc = evt->mc;
	struct rdma_cm_id *id = &evt->id_priv->id;

	memcpy(mc->mgid.raw, evt->event.param.ud.ah_attr.grh.dgid.raw, 16);
	mc->mlid = evt->event.param.ud.ah_attr.dlid;
	if (!id->qp || mc->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return 0;
	return ibv_attach_mcast(id->qp, &mc->mgid, mc->mlid) ? -1 : 0;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct ucma_abi_get_event cmd;
	struct cma_event_resp resp;
	struct cma_event *evt;
	int ret;

	if (cma_init())
		return -1;
	if (!event)
		return cma_err(EINVAL);
	evt = cma_event_alloc();
	if (!evt)
		return cma_err(ENOMEM);
retry:
	memset(evt, 0, sizeof *evt);
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, GET_EVENT, &resp, sizeof resp);
	memset(&resp, 0, sizeof resp);
	ret = cma_write(channel->fd, &cmd, sizeof cmd);
	if (ret) {
		cma_event_free(evt);
		return -1;
	}
	evt->event.event = resp.event;
	/* Every event carries the library's cookie (an id or a membership); one without is
	 * dropped, as rdma-core drops it. */
	if (!resp.uid)
		goto retry;
	evt->id_priv = (struct cma_id_private *)(uintptr_t)resp.uid;
	evt->event.id = &evt->id_priv->id;
	evt->event.status = (int)resp.status;

	switch (resp.event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		process_addr_resolved(evt);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		process_route_resolved(evt);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (cma_is_ud_qp(evt->id_priv->id.qp_type))
			copy_ud_event(evt, &resp.param.ud);
		else
			copy_conn_event(evt, &resp.param.conn);
		if (process_conn_req(evt, resp.id, &resp.ece))
			goto retry;
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		copy_conn_event(evt, &resp.param.conn);
		evt->id_priv->remote_ece.vendor_id = resp.ece.vendor_id;
		evt->id_priv->remote_ece.options = resp.ece.attr_mod;
		if (!evt->id_priv->id.qp)
			break;
		evt->event.status = process_conn_resp(evt->id_priv);
		if (!evt->event.status)
			evt->event.event = RDMA_CM_EVENT_ESTABLISHED;
		else {
			evt->event.event = RDMA_CM_EVENT_CONNECT_ERROR;
			evt->id_priv->connect_error = 1;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (cma_is_ud_qp(evt->id_priv->id.qp_type))
			copy_ud_event(evt, &resp.param.ud);
		else
			copy_conn_event(evt, &resp.param.conn);
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (evt->id_priv->connect_error)
			goto ack_retry;
		copy_conn_event(evt, &resp.param.conn);
		cma_modify_qp_err(evt->event.id);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (evt->id_priv->connect_error)
			goto ack_retry;
		copy_conn_event(evt, &resp.param.conn);
		break;
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		evt->mc = (struct cma_multicast *)(uintptr_t)resp.uid;
		evt->id_priv = evt->mc->id_priv;
		evt->event.id = &evt->id_priv->id;
		copy_ud_event(evt, &resp.param.ud);
		evt->event.param.ud.private_data = evt->mc->context;
		evt->event.param.ud.private_data_len = 0;
		if (process_join(evt)) {
			evt->event.event = RDMA_CM_EVENT_MULTICAST_ERROR;
			evt->event.status = -1;
		}
		break;
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		evt->mc = (struct cma_multicast *)(uintptr_t)resp.uid;
		evt->id_priv = evt->mc->id_priv;
		evt->event.id = &evt->id_priv->id;
		evt->event.param.ud.private_data = evt->mc->context;
		break;
	case RDMAEMU_CM_EVENT_INTERNAL: {
		uint64_t arg = resp.param.arg32[0] | ((uint64_t)resp.param.arg32[1] << 32);

		/* only the DNS completion marker of rdma_resolve_addrinfo is known; anything else
		 * fails with EBADE (and, unlike rdma-core, does not leak the buffer) */
		if (arg != RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED) {
			cma_event_free(evt);
			return cma_err(EBADE);
		}
		evt->event.event = RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED;
		break;
	}
	case RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED:
		/* RAI_SA: the kernel found ServiceRecords; fetch them now (ucma_query_ib_service).
		 * Failing that, the event becomes ADDRINFO_ERROR with the positive errno. */
		if (cma_query_ib_service(evt->id_priv, &evt->id_priv->resolved_ai)) {
			evt->event.event = RDMAEMU_CM_EVENT_ADDRINFO_ERROR;
			evt->event.status = errno;
			evt->id_priv->resolving_ai = false;
		}
		break;
	case RDMAEMU_CM_EVENT_ADDRINFO_ERROR:
		evt->id_priv->resolving_ai = false;
		break;
	case RDMAEMU_CM_EVENT_USER:
		memcpy((char *)&evt->event.param, resp.param.arg32, sizeof(uint64_t));
		break;
	default:
		if (cma_is_ud_qp(evt->id_priv->id.qp_type))
			copy_ud_event(evt, &resp.param.ud);
		else
			copy_conn_event(evt, &resp.param.conn);
		break;
	}
	*event = &evt->event;
	return 0;

ack_retry:
	/* swallowed after a CONNECT_ERROR: it still counts as acked for destroy */
	cma_ack_swallowed(evt->id_priv);
	goto retry;
}

int rdma_write_cm_event(struct rdma_cm_id *id, enum rdma_cm_event_type event, int status,
			uint64_t arg)
{
	struct emu_ucma_write_cm_event cmd;

	if (!id || (int)event != RDMAEMU_CM_EVENT_USER)
		return cma_err(EINVAL);
	memset(&cmd, 0, sizeof cmd);
	cmd.cmd = EMU_UCMA_CMD_WRITE_CM_EVENT;
	cmd.in = sizeof cmd - sizeof(struct ucma_abi_cmd_hdr);
	cmd.id = cma_priv(id)->handle;
	cmd.event = (uint32_t)event;
	cmd.status = (uint32_t)status;
	cmd.arg = arg;
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}

/* ucma_complete: sync ids block for the next event and map its status (spec §6.1). */
int cma_complete(struct rdma_cm_id *id)
{
	struct cma_id_private *id_priv = cma_priv(id);
	int ret;

	if (!id_priv->sync)
		return 0;
	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	ret = rdma_get_cm_event(id->channel, &id->event);
	if (ret)
		return ret;
	if (id->event->event == RDMA_CM_EVENT_REJECTED)
		return cma_err(ECONNREFUSED);
	if (id->event->status < 0)
		return cma_err(-id->event->status);
	if (id->event->status > 0)
		return cma_err(id->event->status);
	return 0;
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id_private *id_priv;
	struct rdma_cm_event *event;
	int ret;

	if (!listen || !id)
		return cma_err(EINVAL);
	id_priv = cma_priv(listen);
	if (!id_priv->sync)
		return cma_err(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	ret = rdma_get_cm_event(listen->channel, &event);
	if (ret)
		return ret;
	if (event->event == RDMA_CM_EVENT_REJECTED) {
		ret = cma_err(ECONNREFUSED);
		goto err;
	}
	if (event->status) {
		ret = cma_err(-event->status);
		goto err;
	}
	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = cma_err(EINVAL);
		goto err;
	}
	if (id_priv->qp_init_attr) {
		struct ibv_qp_init_attr attr = *id_priv->qp_init_attr;

		ret = rdma_create_qp(event->id, listen->pd, &attr);
		if (ret)
			goto err;
	}
	*id = event->id;
	(*id)->event = event;
	return 0;
err:
	listen->event = event;
	return ret;
}
