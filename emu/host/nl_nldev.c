/* The RDMA_NL_NLDEV commands about devices, ports, the system and counters, answered with the
 * attributes kernel rxe sends, in its order (docs/reference/rdma-netlink.md). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/host/nl_rdma.h"

/* kernel rxe's device capability flags (ib_device_attr.device_cap_flags, measured): sysfs
 * does not show them, every emulated device is an rxe device. */
#define RXE_DEVICE_CAP_FLAGS 0x01223c76ull

static const char *protocol(const struct nlh_dev *d)
{
	if (d->node_type == 4) /* RDMA_NODE_RNIC */
		return "iw";
	return d->nports && d->ports[0].ib ? "ib" : "roce";
}

static void put_dev_info(struct nlb *b, const struct nlh_dev *d)
{
	nl_put_handle(b, d);
	nlb_u32(b, RDMA_NLDEV_ATTR_PORT_INDEX, d->nports);
	nlb_u64(b, RDMA_NLDEV_ATTR_CAP_FLAGS, RXE_DEVICE_CAP_FLAGS);
	if (d->fw_ver[0])
		nlb_str(b, RDMA_NLDEV_ATTR_FW_VERSION, d->fw_ver);
	nlb_u64(b, RDMA_NLDEV_ATTR_NODE_GUID, d->node_guid);
	nlb_u64(b, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, d->sys_image_guid);
	nlb_u8(b, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, d->node_type);
	nlb_u8(b, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nlb_str(b, RDMA_NLDEV_ATTR_DEV_PROTOCOL, protocol(d));
}

static void put_port_info(struct nlb *b, const struct nlh_dev *d, uint32_t port)
{
	const struct nlh_port *p = &d->ports[port - 1];

	nl_put_handle(b, d);
	nlb_u32(b, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	if (p->ib) {
		nlb_u64(b, RDMA_NLDEV_ATTR_CAP_FLAGS, p->cap_flags);
		nlb_u64(b, RDMA_NLDEV_ATTR_SUBNET_PREFIX, p->subnet_prefix);
		nlb_u32(b, RDMA_NLDEV_ATTR_LID, p->lid);
		nlb_u32(b, RDMA_NLDEV_ATTR_SM_LID, p->sm_lid);
		nlb_u8(b, RDMA_NLDEV_ATTR_LMC, p->lmc);
	}
	nlb_u8(b, RDMA_NLDEV_ATTR_PORT_STATE, p->state);
	nlb_u8(b, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, p->phys_state);
	if (p->netdev[0]) {
		nlb_u32(b, RDMA_NLDEV_ATTR_NDEV_INDEX, p->ifindex);
		nlb_str(b, RDMA_NLDEV_ATTR_NDEV_NAME, p->netdev);
	}
}

/* The device and a valid port of it, both required. */
static const struct nlh_dev *req_port(const struct nl_req *r, uint32_t *port, int *err)
{
	const struct nlh_dev *d = nl_req_dev(r, err);

	if (d && (nl_attr_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, port) || *port < 1 ||
		  *port > d->nports)) {
		*err = -EINVAL;
		d = NULL;
	}
	return d;
}

static int get_doit(const struct nl_req *r)
{
	int err;
	const struct nlh_dev *d = nl_req_dev(r, &err);
	struct nlb b;

	if (!d)
		return err;
	nl_reply_start(&b, r, RDMA_NLDEV_CMD_GET, 0);
	put_dev_info(&b, d);
	nl_reply_send(&b, r);
	return 0;
}

/* One datagram per device, as the kernel's dump of devices arrives. */
static int get_dump(const struct nl_req *r)
{
	struct nlb b;

	for (size_t i = 0; i < r->host->ndev; i++) {
		nl_reply_start(&b, r, RDMA_NLDEV_CMD_GET, NLM_F_MULTI);
		put_dev_info(&b, &r->host->devs[i]);
		nl_reply_send(&b, r);
	}
	return 0;
}

/* Answered with the type of RDMA_NLDEV_CMD_GET, as the kernel does. */
static int port_get_doit(const struct nl_req *r)
{
	int err;
	uint32_t port;
	const struct nlh_dev *d = req_port(r, &port, &err);
	struct nlb b;

	if (!d)
		return err;
	nl_reply_start(&b, r, RDMA_NLDEV_CMD_GET, 0);
	put_port_info(&b, d, port);
	nl_reply_send(&b, r);
	return 0;
}

static int port_get_dump(const struct nl_req *r)
{
	int err;
	const struct nlh_dev *d = nl_req_dev(r, &err);
	struct nlb b;

	if (!d)
		return err;
	for (uint32_t p = 1; p <= d->nports; p++) {
		nl_reply_start(&b, r, RDMA_NLDEV_CMD_PORT_GET, NLM_F_MULTI);
		put_port_info(&b, d, p);
		nl_reply_send(&b, r);
	}
	return 0;
}

/* Network namespaces shared (the default of ib_core's netns_mode), no privileged Q_Key mode,
 * copy-on-fork supported. */
static int sys_get_doit(const struct nl_req *r)
{
	struct nlb b;

	nl_reply_start(&b, r, RDMA_NLDEV_CMD_SYS_GET, 0);
	nlb_u8(&b, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);
	nlb_u8(&b, NL_SYS_ATTR_PRIVILEGED_QKEY_MODE, 0);
	nlb_u8(&b, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
	nl_reply_send(&b, r);
	return 0;
}

/* The port's hw counters: with their values (STAT_GET) or their indexes (STAT_GET_STATUS). */
static int stat_reply(const struct nl_req *r, unsigned op, int values)
{
	int err;
	uint32_t port;
	const struct nlh_dev *d = req_port(r, &port, &err);
	struct nlb b;

	if (!d)
		return err;
	const struct nlh_port *p = &d->ports[port - 1];
	if (!p->has_counters)
		return -EINVAL;
	nl_reply_start(&b, r, op, 0);
	nl_put_handle(&b, d);
	nlb_u32(&b, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	size_t table = nlb_nest_start(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS | NLA_F_NESTED);
	for (size_t i = 0; i < p->ncounters; i++) {
		size_t e = nlb_nest_start(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY | NLA_F_NESTED);
		nlb_str(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, p->counters[i].name);
		if (values)
			nlb_u64(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, p->counters[i].value);
		else
			nlb_u32(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, (uint32_t)i);
		nlb_nest_end(&b, e);
	}
	nlb_nest_end(&b, table);
	nl_reply_send(&b, r);
	return 0;
}

/* The per-QP counters of `rdma statistic qp` are not modelled: asking for their mode is
 * refused, and no counter is bound to any QP. */
static int stat_get_doit(const struct nl_req *r)
{
	if (r->tb[RDMA_NLDEV_ATTR_STAT_RES])
		return -EOPNOTSUPP;
	return stat_reply(r, RDMA_NLDEV_CMD_STAT_GET, 1);
}

static int stat_get_dump(const struct nl_req *r)
{
	int err;
	uint32_t port;

	if (!r->tb[RDMA_NLDEV_ATTR_STAT_RES])
		return -EINVAL;
	return req_port(r, &port, &err) ? 0 : err;
}

static int stat_status_doit(const struct nl_req *r)
{
	return stat_reply(r, RDMA_NLDEV_CMD_STAT_GET_STATUS, 0);
}

/* Which character device serves a device (uverbs, umad): the emulated host's libibverbs
 * finds them without netlink, so only the request's form is checked. */
static int chardev_doit(const struct nl_req *r)
{
	return r->tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE] ? -EOPNOTSUPP : -EINVAL;
}

static const struct nl_op ops[RDMA_NLDEV_NUM_OPS] = {
	[RDMA_NLDEV_CMD_GET] = { get_doit, get_dump, 0 },
	[RDMA_NLDEV_CMD_SET] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_NEWLINK] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_DELLINK] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_PORT_GET] = { port_get_doit, port_get_dump, 0 },
	[RDMA_NLDEV_CMD_SYS_GET] = { sys_get_doit, NULL, 0 },
	[RDMA_NLDEV_CMD_SYS_SET] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_RES_GET] = { nl_res_summary_doit, nl_res_summary_dump, 0 },
	[RDMA_NLDEV_CMD_RES_QP_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_RES_CM_ID_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_RES_CQ_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_RES_MR_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_RES_PD_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_GET_CHARDEV] = { chardev_doit, NULL, 0 },
	[RDMA_NLDEV_CMD_STAT_SET] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_STAT_GET] = { stat_get_doit, stat_get_dump, 0 },
	[RDMA_NLDEV_CMD_STAT_DEL] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_RES_QP_GET_RAW] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_RES_CQ_GET_RAW] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_RES_MR_GET_RAW] = { NULL, NULL, 1 },
	[RDMA_NLDEV_CMD_RES_CTX_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_RES_SRQ_GET] = { nl_res_doit, nl_res_dump, 0 },
	[RDMA_NLDEV_CMD_STAT_GET_STATUS] = { stat_status_doit, NULL, 0 },
};

const struct nl_op *nl_nldev_op(unsigned op)
{
	if (op >= RDMA_NLDEV_NUM_OPS)
		return NULL;
	const struct nl_op *o = &ops[op];
	return o->doit || o->dump || o->admin ? o : NULL;
}
