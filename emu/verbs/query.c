/* Device, port, GID and P_Key queries.
 *
 * Return conventions differ per call, and are rdma-core 44's on Linux 6.1:
 *  - ibv_query_device, ibv_query_port, query_device_ex: an errno value (EINVAL for a bad port);
 *  - ibv_query_gid: -1 with errno (the ioctl's EINVAL) for a bad port or index, 0 with an
 *    all-zero GID for an empty slot (the kernel says ENODATA, the library hides it);
 *  - _ibv_query_gid_ex: an errno value, ENODATA for an empty slot;
 *  - _ibv_query_gid_table: the count, or a negative errno value;
 *  - ibv_query_pkey, ibv_get_pkey_index, ibv_query_gid_type: read sysfs, so -1 with errno
 *    (ENOENT past the table). */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/verbs/verbs_priv.h"

#undef ibv_query_port

/* The kernel's struct ib_uverbs_gid_entry is what the ioctl accepts, exactly (the attribute is
 * UVERBS_ATTR_STRUCT with min == max size). */
#define UVERBS_GID_ENTRY_SIZE 32

int emu_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	const struct emu_device *d = ctx_dev(ctx);
	const struct emu_device_caps *c = &d->caps;
	struct ibv_device_attr_ex a;
	struct ibv_device_attr *o = &a.orig_attr;

	/* ibv_cmd_query_device_any() */
	if (in && in->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	snprintf(o->fw_ver, sizeof(o->fw_ver), "%s", d->fw_ver);
	o->node_guid = htobe64(d->node_guid);
	o->sys_image_guid = htobe64(d->sys_image_guid);
	o->max_mr_size = c->max_mr_size;
	o->page_size_cap = c->page_size_cap;
	o->vendor_id = d->vendor_id;
	o->vendor_part_id = d->vendor_part_id;
	o->hw_ver = d->hw_ver;
	o->max_qp = (int)c->max_qp;
	o->max_qp_wr = (int)c->max_qp_wr;
	o->device_cap_flags = c->device_cap_flags;
	o->max_sge = (int)c->max_sge;
	o->max_sge_rd = (int)c->max_sge_rd;
	o->max_cq = (int)c->max_cq;
	o->max_cqe = (int)c->max_cqe;
	o->max_mr = (int)c->max_mr;
	o->max_pd = (int)c->max_pd;
	o->max_qp_rd_atom = (int)c->max_qp_rd_atom;
	o->max_ee_rd_atom = (int)c->max_ee_rd_atom;
	o->max_res_rd_atom = (int)c->max_res_rd_atom;
	o->max_qp_init_rd_atom = (int)c->max_qp_init_rd_atom;
	o->atomic_cap = (enum ibv_atomic_cap)c->atomic_cap;
	/* rxe: RXE_MAX_MW = the MW index range (0x80001..0x100000), measured 524287 */
	o->max_mw = (int)((1u << 20) - ((1u << 19) + 1));
	o->max_mcast_grp = (int)c->max_mcast_grp;
	o->max_mcast_qp_attach = (int)c->max_mcast_qp_attach;
	o->max_total_mcast_qp_attach = (int)c->max_total_mcast_qp_attach;
	o->max_ah = (int)c->max_ah;
	o->max_fmr = (int)c->max_fmr;
	o->max_map_per_fmr = (int)c->max_map_per_fmr;
	o->max_srq = (int)c->max_srq;
	o->max_srq_wr = (int)c->max_srq_wr;
	o->max_srq_sge = (int)c->max_srq_sge;
	o->max_pkeys = (uint16_t)c->max_pkeys;
	o->local_ca_ack_delay = c->local_ca_ack_delay;
	o->phys_port_cnt = (uint8_t)d->nports;
	/* the extended part: rxe (6.1) reports its cap flags and nothing else */
	a.device_cap_flags_ex = c->device_cap_flags;

	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	return to_vctx(context)->ops->query_device_ex(
		context, NULL, container_of(device_attr, struct ibv_device_attr_ex, orig_attr),
		sizeof(*device_attr));
}

int emu_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *a)
{
	const struct emu_port *p = emu_verbs_port(ctx, port_num);
	bool eth;

	/* ib_query_port(): !rdma_is_port_valid(). The real call fails in the write() to the
	 * uverbs fd, which also leaves errno set (VM: query_port 0 -> 22, errno 22). */
	if (!p) {
		errno = EINVAL;
		return EINVAL;
	}
	eth = p->link_layer == IBV_LINK_LAYER_ETHERNET;
	memset(a, 0, sizeof(*a));
	a->state = (enum ibv_port_state)p->state;
	a->max_mtu = (enum ibv_mtu)p->max_mtu;
	a->active_mtu = (enum ibv_mtu)p->active_mtu;
	a->gid_tbl_len = (int)p->gid_tbl_len;
	a->port_cap_flags = 0x00010000; /* IB_PORT_CM_SUP, rxe's RXE_PORT_PORT_CAP_FLAGS */
	a->max_msg_sz = ctx_dev(ctx)->caps.max_msg_sz;
	a->pkey_tbl_len = (uint16_t)p->pkey_tbl_len;
	a->lid = p->lid;
	a->sm_lid = p->sm_lid;
	a->lmc = p->lmc;
	a->max_vl_num = 1; /* rxe: RXE_PORT_MAX_VL_NUM */
	a->sm_sl = p->sm_sl;
	/* an IB port learns the subnet timeout from the SM (OpenSM's default 18); RoCE has none */
	a->subnet_timeout = !eth && p->dev->host->fabric && p->dev->host->fabric->sm.present ? 18 : 0;
	a->active_width = p->active_width;
	a->active_speed = p->active_speed;
	a->phys_state = p->phys_state;
	a->link_layer = p->link_layer;
	return 0;
}

/* rdma-core's __lib_query_port(): a caller built against older headers passes a smaller
 * struct; the provider always fills a whole one. */
int emu_lib_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
		       size_t attr_len)
{
	const struct emu_verbs_ops *ops = to_vctx(ctx)->ops;

	if (attr_len < sizeof(struct ibv_port_attr)) {
		struct ibv_port_attr tmp;
		int rc = ops->query_port(ctx, port, &tmp);

		if (rc)
			return rc;
		memcpy(attr, &tmp, attr_len);
		return 0;
	}
	memset(attr, 0, attr_len);
	return ops->query_port(ctx, port, attr);
}

/* The exported symbol: what binaries call when their header has no inline wrapper, and what
 * the v44 inline wrapper falls back to. Its struct is the pre-port_cap_flags2 layout. */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	return emu_lib_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
				  offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* The kernel's QUERY_GID_ENTRY: 0, EINVAL (bad port or index), ENODATA (empty slot). */
static int gid_entry(struct ibv_context *ctx, uint32_t port_num, uint32_t index,
		     struct ibv_gid_entry *e)
{
	const struct emu_port *p = emu_verbs_port(ctx, port_num);
	const struct emu_gid *g;
	static const uint8_t zero[16];

	if (!p || index >= p->gid_tbl_len)
		return EINVAL;
	if (index >= p->ngids || !memcmp(p->gids[index].raw, zero, 16))
		return ENODATA;
	g = &p->gids[index];
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, g->raw, 16);
	e->gid_index = index;
	e->port_num = port_num;
	e->gid_type = g->type == EMU_GID_ROCE_V2 ? IBV_GID_TYPE_ROCE_V2
		      : g->type == EMU_GID_ROCE_V1 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_IB;
	/* the GID's netdev (RoCE). An IB port's GIDs have none in the kernel's GID cache, even
	 * with IPoIB up (the model ties them to ib0 for address resolution): 0 */
	e->ndev_ifindex = g->netdev >= 0 && p->link_layer == IBV_LINK_LAYER_ETHERNET
				  ? (uint32_t)g->netdev + 2 : 0;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int ret = gid_entry(context, port_num, (uint32_t)index, &e);

	errno = ret; /* the ioctl's errno stays, even where the library hides the error */
	if (ret == ENODATA) {
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (ret)
		return -1;
	*gid = e.gid;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	/* the ioctl's attribute checks: no flag is defined, the entry holds at least the kernel's
	 * struct (a larger one is zero-filled past it: measured) */
	if (flags || entry_size < UVERBS_GID_ENTRY_SIZE)
		ret = EINVAL;
	else
		ret = gid_entry(context, port_num, gid_index, &e);
	if (ret) {
		errno = ret;
		return ret;
	}
	memcpy(entry, &e, UVERBS_GID_ENTRY_SIZE);
	memset((uint8_t *)entry + UVERBS_GID_ENTRY_SIZE, 0, entry_size - UVERBS_GID_ENTRY_SIZE);
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	const struct emu_device *d = ctx_dev(context);
	size_t n = 0;
	int ret = 0;

	/* libibverbs refuses a buffer the 16-bit ioctl length cannot describe; the kernel wants
	 * no flags, a non-zero entry size and room for at least one entry */
	if (entry_size && max_entries > UINT16_MAX / entry_size)
		ret = EINVAL;
	else if (flags || !entry_size || !max_entries)
		ret = EINVAL;
	for (uint32_t port = 1; !ret && port <= d->nports; port++) {
		const struct emu_port *p = &d->ports[port - 1];

		for (uint32_t i = 0; i < p->gid_tbl_len && i < p->ngids; i++) {
			struct ibv_gid_entry e;
			uint8_t *dst;

			if (gid_entry(context, port, i, &e))
				continue;
			if (n == max_entries) {
				ret = EINVAL; /* rdma_query_gid_table(): the table does not fit */
				break;
			}
			/* copy_gid_entries_to_user(): min of both sizes, zero past the kernel's */
			dst = (uint8_t *)entries + n * entry_size;
			memcpy(dst, &e, entry_size < UVERBS_GID_ENTRY_SIZE ? entry_size
									 : UVERBS_GID_ENTRY_SIZE);
			if (entry_size > UVERBS_GID_ENTRY_SIZE)
				memset(dst + UVERBS_GID_ENTRY_SIZE, 0,
				       entry_size - UVERBS_GID_ENTRY_SIZE);
			n++;
		}
	}
	if (ret) {
		errno = ret;
		return -ret;
	}
	return (ssize_t)n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	char path[512], buf[8];
	uint16_t val;

	snprintf(path, sizeof(path), "%s/ports/%d/pkeys/%d", context->device->ibdev_path,
		 port_num, index);
	if (emu_sysfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	if (sscanf(buf, "%hx", &val) != 1)
		return -1;
	*pkey = htobe16(val);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 pkey_i;

	for (int i = 0;; i++) {
		int ret = ibv_query_pkey(context, port_num, i, &pkey_i);

		if (ret < 0)
			return ret;
		if (pkey == pkey_i)
			return i;
	}
}

/* IBVERBS_PRIVATE_34's ibv_query_gid_type (ibv_devinfo uses it): rdma-core 44 asks the GID
 * entry ioctl. Types are enum ibv_gid_type_sysfs: 0 = "IB/RoCE v1", 1 = "RoCE v2"; an empty
 * slot reads as 0, a bad port or index is -1 (EINVAL). */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type)
{
	struct ibv_gid_entry e;
	int ret = gid_entry(context, port_num, index, &e);

	errno = ret;
	if (ret == ENODATA) {
		*type = 0;
		return 0;
	}
	if (ret)
		return -1;
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}
