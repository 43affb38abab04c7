/* The network modules' hook points of the kernel CM (emu/rdma_cm/cma.h): their ops tables and
 * the entry points that check arguments and states as cma.c does, then hand over to the module
 * owning the protocol (address resolution, routes and multicast, the IB CM). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"
#include "emu/net/neigh.h"

/* ---- the network modules' tables ---- */

/* Each module installs its table when the library loads, as a kernel module registers with
 * the core (the IB CM module is emu/rdma_cm/cma_conn.c); tests may plug in others. */
static const struct emu_cma_addr_ops *addr_ops;
static const struct emu_cma_route_ops *route_ops;
static const struct emu_cma_cm_ops *cm_ops;

void emu_cma_set_addr_ops(const struct emu_cma_addr_ops *ops) { addr_ops = ops; }
void emu_cma_set_route_ops(const struct emu_cma_route_ops *ops) { route_ops = ops; }
void emu_cma_set_cm_ops(const struct emu_cma_cm_ops *ops) { cm_ops = ops; }

/* A network step whose module is not there yet: say so once, fail with ENOSYS. */
static int not_yet(const char *what, const char *module)
{
	static unsigned said;
	unsigned bit = 0;

	for (const char *p = module; *p; p++)
		bit = bit * 31 + (unsigned char)*p;
	bit = 1u << (bit % 31);
	if (!(said & bit)) {
		said |= bit;
		fprintf(stderr, "rdmaemu: %s needs the %s module, which this build does not have "
			"yet (ENOSYS)\n", what, module);
	}
	return -ENOSYS;
}

int emu_cma_addr_ops_resolve(struct emu_cma_id *id, uint32_t timeout_ms)
{
	return addr_ops && addr_ops->resolve_addr ?
		addr_ops->resolve_addr(id, timeout_ms) :
		not_yet("rdma_resolve_addr", "neighbour (emu/net/neigh)");
}

void emu_cma_resolve_cancel(struct emu_cma_id *id)
{
	if (addr_ops && addr_ops->cancel)
		addr_ops->cancel(id);
	if (route_ops && route_ops->cancel)
		route_ops->cancel(id);
}

void emu_cma_cm_destroy(struct emu_cma_id *id)
{
	if (cm_ops && cm_ops->destroy && (id->has_cm || id->net[EMU_CMA_NET_CM]))
		cm_ops->destroy(id);
}

/* ---- address and route resolution ---- */

int emu_cma_resolve_route(struct emu_cma_id *id, uint32_t timeout_ms)
{
	int ret;

	if (!emu_cma_comp_exch(id, EMU_CMA_ADDR_RESOLVED, EMU_CMA_ROUTE_QUERY))
		return -EINVAL;
	ret = route_ops && route_ops->resolve_route ?
		route_ops->resolve_route(id, timeout_ms) :
		not_yet("rdma_resolve_route", "SA client (emu/ib/sa_client)");
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ADDR_RESOLVED);
	return ret;
}

bool emu_cma_cm_sure(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub)
{
	/* get_ctx_dev, then the state checks of emu_cma_connect / accept / disconnect */
	if (id->closed || id->dev < 0 || !cm_ops || !cm_ops->sure)
		return false;
	if ((cmd == RDMA_USER_CM_CMD_CONNECT && id->state != EMU_CMA_ROUTE_RESOLVED) ||
	    (cmd == RDMA_USER_CM_CMD_ACCEPT && id->state != EMU_CMA_CONNECT) ||
	    (cmd == RDMA_USER_CM_CMD_DISCONNECT && !id->has_cm))
		return false;
	return cm_ops->sure(id, cmd, sub);
}

bool emu_cma_resolve_route_sure(const struct emu_cma_id *id)
{
	return id->state == EMU_CMA_ADDR_RESOLVED && !id->closed && id->dev >= 0 && route_ops &&
	       route_ops->sure && route_ops->sure(id);
}

/* ---- QP attributes (rdma_init_qp_attr for IB and RoCE ports) ---- */

/* cma_set_default_qkey (Linux 6.1 with the 2023 "join multicast to UD QP type only" fix, as
 * the reference VM runs): RDMA_PS_UDP and RDMA_PS_IB take RDMA_UDP_QKEY; RDMA_PS_IPOIB reads
 * the Q_Key of the port's IPoIB broadcast group from the multicast module
 * (ib_sa_get_mcmember_rec): -ENODEV when the device has no InfiniBand port (the module keeps
 * no data for it: measured on rxe, init_qp_attr and rdma_create_qp -1/ENODEV), -EADDRNOTAVAIL
 * when no IPoIB interface of the port is up (nobody joined the group), else the group's Q_Key
 * (OpenSM's IPoIB groups, as the emulated SA creates them). Other port spaces: 0. */
static int default_qkey(const struct emu_cma_id *id, uint32_t *qkey)
{
	const struct emu_host *h = id->host;
	const struct emu_device *d = &h->devices[id->dev];
	bool ib = false;

	*qkey = 0;
	if (id->ps == EMU_CMA_PS_UDP || id->ps == EMU_CMA_PS_IB) {
		*qkey = EMU_CMA_QKEY;
		return 0;
	}
	if (id->ps != EMU_CMA_PS_IPOIB)
		return 0;
	for (size_t i = 0; i < d->nports; i++)
		ib |= d->ports[i].link_layer == 1 /* IBV_LINK_LAYER_INFINIBAND */;
	if (!ib)
		return -ENODEV;
	for (size_t i = 0; i < h->nnetdevs; i++) {
		const struct emu_netdev *n = &h->netdevs[i];

		if (n->device == id->dev && n->port == id->port && n->hwaddr_len == 20 && n->up) {
			*qkey = EMU_IPOIB_QKEY;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

int emu_cma_init_qp_attr(struct emu_cma_id *id, struct ib_uverbs_qp_attr *attr)
{
	const struct emu_port *p;
	int ret;

	if (id->dev < 0)
		return -EINVAL;
	if (attr->qp_state > 6 /* IB_QPS_ERR */)
		return -EINVAL;
	p = &id->host->devices[id->dev].ports[id->port - 1];
	if (!id->has_cm || id->qp_type == 4 /* UD */) {
		/* cma_ib_init_qp_attr: the INIT attributes, whatever state was asked */
		/* RoCE ports look up the default P_Key 0xffff (cma_ib_init_qp_attr) */
		uint16_t pkey = p->link_layer == 1 ? id->pkey : 0xffff;

		attr->pkey_index = 0;
		for (size_t i = 0; i < p->npkeys; i++) {
			if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff)) {
				attr->pkey_index = (uint16_t)i;
				break;
			}
		}
		attr->port_num = id->port;
		attr->qp_attr_mask = 1 << 0 /* STATE */ | 1 << 4 /* PKEY_INDEX */ | 1 << 5 /* PORT */;
		if (id->qp_type == 4) {
			ret = default_qkey(id, &attr->qkey);
			if (ret)
				return ret;
			attr->qp_attr_mask |= 1 << 6 /* QKEY */;
		} else {
			attr->qp_access_flags = 0;
			attr->qp_attr_mask |= 1 << 3 /* ACCESS_FLAGS */;
		}
		ret = 0;
	} else {
		ret = cm_ops && cm_ops->init_qp_attr ? cm_ops->init_qp_attr(id, attr) :
			not_yet("rdma_init_qp_attr (RTR/RTS)", "IB CM (emu/ib/cm_agent)");
	}
	if (!ret && attr->qp_state == 2 /* IB_QPS_RTR */)
		attr->rq_psn = id->seq_num;
	if (!ret && id->timeout_set && (attr->qp_attr_mask & (1 << 9) /* TIMEOUT */))
		attr->timeout = id->timeout;
	return ret;
}

/* ---- connections ---- */

int emu_cma_connect(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		    const struct rdma_ucm_ece *ece)
{
	int ret;

	if (!emu_cma_comp_exch(id, EMU_CMA_ROUTE_RESOLVED, EMU_CMA_CONNECT))
		return -EINVAL;
	ret = cm_ops && cm_ops->connect ? cm_ops->connect(id, p, ece) :
		not_yet("rdma_connect", "IB CM (emu/ib/cm_agent)");
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_CONNECT, EMU_CMA_ROUTE_RESOLVED);
	else
		id->has_cm = true;
	return ret;
}

int emu_cma_accept(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		   const struct rdma_ucm_ece *ece)
{
	if (id->state != EMU_CMA_CONNECT)
		return -EINVAL;
	return cm_ops && cm_ops->accept ? cm_ops->accept(id, p, ece) :
		not_yet("rdma_accept", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_reject(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->reject ? cm_ops->reject(id, pdata, len, reason) :
		not_yet("rdma_reject", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_disconnect(struct emu_cma_id *id)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->disconnect ? cm_ops->disconnect(id) :
		not_yet("rdma_disconnect", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_notify(struct emu_cma_id *id, uint32_t event)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->notify ? cm_ops->notify(id, event) :
		not_yet("rdma_notify", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_cm_listen(struct emu_cma_id *id)
{
	return cm_ops && cm_ops->listen ? cm_ops->listen(id) : 0;
}

void emu_cma_cm_drop_dev(struct emu_cma_id *id, size_t dev)
{
	if (cm_ops && cm_ops->drop_dev)
		cm_ops->drop_dev(id, dev);
}

/* ---- multicast ---- */

int emu_cma_join(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	if (id->dev < 0)
		return -EINVAL;
	if (id->state != EMU_CMA_ADDR_BOUND && id->state != EMU_CMA_ADDR_RESOLVED)
		return -EINVAL;
	/* UD ids only (6.1 stable, "RDMA/cma: Refactor the inbound/outbound path records"
	 * series; measured: a join on an RDMA_PS_TCP id is EINVAL, devrm_probe2) */
	if (id->qp_type != 4 /* IB_QPT_UD */)
		return -EINVAL;
	return route_ops && route_ops->join ? route_ops->join(id, mc) :
		not_yet("rdma_join_multicast", "SA client (emu/ib/sa_client)");
}

void emu_cma_leave(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	if (route_ops && route_ops->leave)
		route_ops->leave(id, mc);
}
