/* The endpoint calls (spec §6.19) and the v60 addrinfo resolution on an id (spec §5):
 * rdma_create_ep / rdma_destroy_ep, rdma_resolve_addrinfo (its results: lib/id_addrinfo.c). */
#include "config.h"

#include <stdlib.h>

#include <rdma/rdma_verbs.h>

#include "lib/cma.h"
#include "lib/gai.h"
#include "util/failcall.h"

static int passive_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		      struct ibv_qp_init_attr *qp_init_attr)
{
	struct cma_id_private *id_priv = cma_priv(id);

	if (rdma_bind_addr(id, res->ai_src_addr))
		return -1;
	if (pd)
		id->pd = pd;
	if (qp_init_attr) {
		id_priv->qp_init_attr = emu_malloc(sizeof *qp_init_attr);
		if (!id_priv->qp_init_attr)
			return cma_err(ENOMEM);
		*id_priv->qp_init_attr = *qp_init_attr;
		id_priv->qp_init_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct cma_id_private *id_priv;
	struct rdma_cm_id *cm_id;
	struct ucma_abi_create_id_resp resp;
	struct ucma_abi_create_id cmd;
	int ret;

	if (!id || !res)
		return cma_err(EINVAL);
	/* rdma_create_id2 with the addrinfo's own QP type: a sync id */
	if (cma_init())
		return -1;
	id_priv = cma_alloc_id(NULL, NULL, (enum rdma_port_space)res->ai_port_space,
			       (enum ibv_qp_type)res->ai_qp_type);
	if (!id_priv)
		return cma_err(ENOMEM);
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, CREATE_ID, &resp, sizeof resp);
	cmd.uid = (uintptr_t)id_priv;
	cmd.ps = (__u16)res->ai_port_space;
	cmd.qp_type = (__u8)res->ai_qp_type;
	if (cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd)) {
		int e = errno;

		cma_free_id(id_priv);
		return cma_err(e);
	}
	id_priv->handle = resp.id;
	cm_id = &id_priv->id;

	if (res->ai_flags & RAI_PASSIVE) {
		ret = passive_ep(cm_id, res, pd, qp_init_attr);
		if (ret)
			goto err;
		goto out;
	}
	ret = rdma_resolve_addr(cm_id, res->ai_src_addr, res->ai_dst_addr, 2000);
	if (ret)
		goto err;
	if (res->ai_route_len) {
		ret = rdma_set_option(cm_id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, res->ai_route,
				      res->ai_route_len);
		if (!ret)
			ret = cma_complete(cm_id);
	} else {
		ret = rdma_resolve_route(cm_id, 2000);
	}
	if (ret)
		goto err;
	if (qp_init_attr) {
		qp_init_attr->qp_type = res->ai_qp_type;
		ret = rdma_create_qp(cm_id, pd, qp_init_attr);
		if (ret)
			goto err;
	}
	if (res->ai_connect_len) {
		id_priv->connect = emu_malloc(res->ai_connect_len);
		if (!id_priv->connect) {
			ret = cma_err(ENOMEM);
			goto err;
		}
		memcpy(id_priv->connect, res->ai_connect, res->ai_connect_len);
		id_priv->connect_len = (uint8_t)res->ai_connect_len;
	}
out:
	*id = cm_id;
	return 0;
err: {
	int e = errno;

	rdma_destroy_ep(cm_id);
	errno = e;
	return ret;
}
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	struct cma_id_private *id_priv;

	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	id_priv = cma_priv(id);
	free(id_priv->qp_init_attr);
	id_priv->qp_init_attr = NULL;
	rdma_destroy_id(id);
}

/* ---- rdma_resolve_addrinfo / rdma_query_addrinfo (v60) ---- */

static int resolve_ai_dns(struct cma_id_private *id_priv, const char *node, const char *service,
			  const struct rdma_addrinfo *hints)
{
	struct emu_ucma_write_cm_event cmd;
	int ret;

	ret = rdma_getaddrinfo(node, service, hints, &id_priv->resolved_ai);
	if (ret)
		return ret;
	/* the completion travels as an INTERNAL event through the kernel, so that it arrives
	 * on the id's channel in order with everything else */
	memset(&cmd, 0, sizeof cmd);
	cmd.cmd = EMU_UCMA_CMD_WRITE_CM_EVENT;
	cmd.in = sizeof cmd - sizeof(struct ucma_abi_cmd_hdr);
	cmd.id = id_priv->handle;
	cmd.event = RDMAEMU_CM_EVENT_INTERNAL;
	cmd.arg = RDMAEMU_CM_EVENT_ADDRINFO_RESOLVED;
	if (cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd)) {
		rdma_freeaddrinfo(id_priv->resolved_ai);
		id_priv->resolved_ai = NULL;
		return -1;
	}
	return 0;
}

int rdma_resolve_addrinfo(struct rdma_cm_id *id, const char *node, const char *service,
			  const struct rdma_addrinfo *hints)
{
	struct cma_id_private *id_priv;
	int ret;

	if (!id)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	if (id_priv->resolving_ai)
		return cma_err(EBUSY);
	id_priv->resolving_ai = true;
	if (hints && (hints->ai_flags & RAI_SA) &&
	    ((hints->ai_flags & RAI_DNS) || node)) {
		ret = -ENOTSUP;
		goto fail;
	}
	if (hints && (hints->ai_flags & RAI_SA)) {
		/* resolve_ai_sa: RESOLVE_IB_SERVICE on the bound id; its failures (no service,
		 * the kernel's refusal) leave -1, and the quirk makes errno that -1 */
		if (!service || cma_resolve_ib_service(id_priv, service)) {
			ret = -1;
			goto fail;
		}
		return cma_complete(id);
	}
	ret = resolve_ai_dns(id_priv, node, service, hints);
	if (ret)
		goto fail;
	return cma_complete(id);
fail:
	id_priv->resolving_ai = false;
	/* rdma-core: ERR(ret) with the inner return value (spec §5.1 step 4, §16 item 10) */
	errno = ret == -ENOTSUP ? ENOTSUP : ret;
	return -1;
}
