/* Resource tracking (`rdma resource`): the objects the kernel itself holds on an idle host.
 * ib_core's MAD layer opens, for every port of a device, a PD, a CQ and the GSI QP (QP1; QP0
 * too on InfiniBand). Objects of programs are not known to the emulated host's netlink: they
 * live in the processes that made them (docs/reference/rdma-netlink.md, "Known differences"). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/host/nl_rdma.h"

#define IB_QPT_SMI 0
#define IB_QPT_GSI 1
#define IB_QPS_RTS 3
#define IB_POLL_WORKQUEUE 2
#define MAD_CQE 1023 /* the MAD layer's CQ: 1023 entries on rxe (measured) */

/* One kind of object: its command, its table and entry attributes, its id attribute. */
struct res_kind {
	unsigned op;
	uint16_t table, entry, id;
};

static const struct res_kind kinds[] = {
	{ RDMA_NLDEV_CMD_RES_QP_GET, RDMA_NLDEV_ATTR_RES_QP, RDMA_NLDEV_ATTR_RES_QP_ENTRY,
	  RDMA_NLDEV_ATTR_RES_LQPN },
	{ RDMA_NLDEV_CMD_RES_CM_ID_GET, RDMA_NLDEV_ATTR_RES_CM_ID, RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY,
	  RDMA_NLDEV_ATTR_RES_CM_IDN },
	{ RDMA_NLDEV_CMD_RES_CQ_GET, RDMA_NLDEV_ATTR_RES_CQ, RDMA_NLDEV_ATTR_RES_CQ_ENTRY,
	  RDMA_NLDEV_ATTR_RES_CQN },
	{ RDMA_NLDEV_CMD_RES_MR_GET, RDMA_NLDEV_ATTR_RES_MR, RDMA_NLDEV_ATTR_RES_MR_ENTRY,
	  RDMA_NLDEV_ATTR_RES_MRN },
	{ RDMA_NLDEV_CMD_RES_PD_GET, RDMA_NLDEV_ATTR_RES_PD, RDMA_NLDEV_ATTR_RES_PD_ENTRY,
	  RDMA_NLDEV_ATTR_RES_PDN },
	{ RDMA_NLDEV_CMD_RES_CTX_GET, RDMA_NLDEV_ATTR_RES_CTX, RDMA_NLDEV_ATTR_RES_CTX_ENTRY,
	  RDMA_NLDEV_ATTR_RES_CTXN },
	{ RDMA_NLDEV_CMD_RES_SRQ_GET, RDMA_NLDEV_ATTR_RES_SRQ, RDMA_NLDEV_ATTR_RES_SRQ_ENTRY,
	  RDMA_NLDEV_ATTR_RES_SRQN },
};

static const struct res_kind *kind_of(const struct nl_req *r)
{
	unsigned op = RDMA_NL_GET_OP(r->nlh->nlmsg_type);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].op == op)
			return &kinds[i];
	return NULL;
}

static unsigned qps_per_port(const struct nlh_port *p)
{
	return p->ib ? 2 : 1;
}

/* The PD's local_dma_lkey: the lkey of the DMA MR rxe makes for it, its pool index (1, the
 * device's first MR) above a key byte rxe draws at random; here the key byte is the low byte
 * of the node GUID, so that it is stable. */
static uint32_t pd_lkey(const struct nlh_dev *d)
{
	return 1u << 8 | (uint32_t)(d->node_guid & 0xff);
}

static void put_qp(struct nlb *b, uint32_t port, uint32_t qpn)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
	nlb_str(b, RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core");
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_SQ_PSN, 0);
	nlb_u8(b, RDMA_NLDEV_ATTR_RES_TYPE, qpn == 0 ? IB_QPT_SMI : IB_QPT_GSI);
	nlb_u8(b, RDMA_NLDEV_ATTR_RES_STATE, IB_QPS_RTS);
}

/* The send and receive queues of each special QP both count as users of the port's CQ. */
static void put_cq(struct nlb *b, const struct nlh_port *p, uint32_t cqn)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_CQE, MAD_CQE);
	nlb_u64(b, RDMA_NLDEV_ATTR_RES_USECNT, 2ull * qps_per_port(p));
	nlb_u8(b, RDMA_NLDEV_ATTR_RES_POLL_CTX, IB_POLL_WORKQUEUE);
	nlb_u8(b, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_CQN, cqn);
	nlb_str(b, RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core");
}

static void put_pd(struct nlb *b, const struct nlh_dev *d, const struct nlh_port *p, uint32_t pdn)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_LOCAL_DMA_LKEY, pd_lkey(d));
	nlb_u64(b, RDMA_NLDEV_ATTR_RES_USECNT, qps_per_port(p));
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PDN, pdn);
	nlb_str(b, RDMA_NLDEV_ATTR_RES_KERN_NAME, "ib_core");
}

static void put_summary(struct nlb *b, const struct nlh_dev *d)
{
	static const char *const names[] = { "pd", "cq", "qp", "cm_id", "mr", "ctx", "srq" };
	uint64_t qps = 0;

	for (unsigned p = 0; p < d->nports; p++)
		qps += qps_per_port(&d->ports[p]);
	const uint64_t counts[] = { d->nports, d->nports, qps, 0, 0, 0, 0 };
	nl_put_handle(b, d);
	size_t table = nlb_nest_start(b, RDMA_NLDEV_ATTR_RES_SUMMARY);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t e = nlb_nest_start(b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
		nlb_str(b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, names[i]);
		nlb_u64(b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, counts[i]);
		nlb_nest_end(b, e);
	}
	nlb_nest_end(b, table);
}

int nl_res_summary_doit(const struct nl_req *r)
{
	int err;
	const struct nlh_dev *d = nl_req_dev(r, &err);
	struct nlb b;

	if (!d)
		return err;
	nl_reply_start(&b, r, RDMA_NLDEV_CMD_RES_GET, 0);
	put_summary(&b, d);
	nl_reply_send(&b, r);
	return 0;
}

int nl_res_summary_dump(const struct nl_req *r)
{
	struct nlb b;

	for (size_t i = 0; i < r->host->ndev; i++) {
		nl_reply_start(&b, r, RDMA_NLDEV_CMD_RES_GET, NLM_F_MULTI);
		put_summary(&b, &r->host->devs[i]);
		nl_reply_send(&b, r);
	}
	return 0;
}

/* Puts the entries of one kind on the device (those on `port` only, if not 0); returns how
 * many. */
static int put_entries(struct nlb *b, const struct res_kind *k, const struct nlh_dev *d,
		       uint32_t port)
{
	int n = 0;

	for (uint32_t p = 1; p <= d->nports; p++) {
		const struct nlh_port *pp = &d->ports[p - 1];
		for (uint32_t q = pp->ib ? 0 : 1; k->op == RDMA_NLDEV_CMD_RES_QP_GET && q <= 1; q++) {
			if (port && port != p)
				continue;
			size_t e = nlb_nest_start(b, k->entry);
			put_qp(b, p, q);
			nlb_nest_end(b, e);
			n++;
		}
		if (k->op == RDMA_NLDEV_CMD_RES_CQ_GET || k->op == RDMA_NLDEV_CMD_RES_PD_GET) {
			size_t e = nlb_nest_start(b, k->entry);
			if (k->op == RDMA_NLDEV_CMD_RES_CQ_GET)
				put_cq(b, pp, p - 1);
			else
				put_pd(b, d, pp, p - 1);
			nlb_nest_end(b, e);
			n++;
		}
	}
	return n;
}

/* The device, and the port if one is named, must exist. */
static const struct nlh_dev *res_target(const struct nl_req *r, uint32_t *port, int *err)
{
	const struct nlh_dev *d = nl_req_dev(r, err);

	*port = 0;
	if (d && !nl_attr_u32(r, RDMA_NLDEV_ATTR_PORT_INDEX, port) &&
	    (*port < 1 || *port > d->nports)) {
		*err = -EINVAL;
		return NULL;
	}
	return d;
}

int nl_res_dump(const struct nl_req *r)
{
	const struct res_kind *k = kind_of(r);
	uint32_t port;
	int err;
	const struct nlh_dev *d = res_target(r, &port, &err);
	struct nlb b;

	if (!d || !k)
		return d ? -EINVAL : err;
	nl_reply_start(&b, r, k->op, NLM_F_MULTI);
	nl_put_handle(&b, d);
	size_t table = nlb_nest_start(&b, k->table);
	int n = put_entries(&b, k, d, port);
	nlb_nest_end(&b, table);
	if (n)
		nl_reply_send(&b, r);
	else
		nlb_free(&b);
	return 0;
}

/* One object by its id. The kernel answers EINVAL for its own GSI QP (measured) and ENOENT
 * for an id it does not hold; a CQ or PD comes with its attributes beside the handle. */
int nl_res_doit(const struct nl_req *r)
{
	const struct res_kind *k = kind_of(r);
	uint32_t port, id;
	int err;
	const struct nlh_dev *d = res_target(r, &port, &err);
	struct nlb b;

	if (!k || nl_attr_u32(r, k->id, &id))
		return -EINVAL;
	if (!d)
		return err;
	if (k->op == RDMA_NLDEV_CMD_RES_QP_GET) {
		for (uint32_t p = 0; p < d->nports; p++)
			if (id == 1 || (id == 0 && d->ports[p].ib))
				return -EINVAL;
		return -ENOENT;
	}
	if ((k->op != RDMA_NLDEV_CMD_RES_CQ_GET && k->op != RDMA_NLDEV_CMD_RES_PD_GET) ||
	    id >= d->nports)
		return -ENOENT;
	nl_reply_start(&b, r, k->op, 0);
	nl_put_handle(&b, d);
	if (k->op == RDMA_NLDEV_CMD_RES_CQ_GET)
		put_cq(&b, &d->ports[id], id);
	else
		put_pd(&b, d, &d->ports[id], id);
	nl_reply_send(&b, r);
	return 0;
}
