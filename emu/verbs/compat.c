/* Historical exports of libibverbs.so.1 that providers and old binaries still bind to,
 * as rdma-core 44 has them:
 *  - ibv_copy_*_from_kern / _to_kern (libibverbs/marshall.c, IBVERBS_1.0/1.1): field-by-field
 *    conversions between the kernel ABI structures and the verbs ones;
 *  - ibv_get_sysfs_path (sysfs.c, IBVERBS_1.0): $SYSFS_PATH without trailing slashes when the
 *    process is not set-uid, else /sys, computed once;
 *  - ibv_register_driver@IBVERBS_1.1 (compat-1_0.c): a stub kept for old usnic providers, not
 *    the default version of the name, so nothing new links to it. */
#include "config.h"
#include "util/failcall.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, 16);
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

/* Every field the kernel structure has; qp_state and sq_sig_all are not among them, and
 * marshall.c leaves them (and qp_state) as they were. */
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = (unsigned)src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

/* The path record fields in the same order both ways (the kernel's are in network order
 * where the SA's are, and are copied unchanged, as marshall.c does). */
#define PATH_REC_FIELDS(X)                                                                       \
	X(dlid) X(slid) X(raw_traffic) X(flow_label) X(hop_limit) X(traffic_class) X(reversible) \
	X(numb_path) X(pkey) X(sl) X(mtu_selector) X(mtu) X(rate_selector) X(rate)              \
	X(packet_life_time) X(preference) X(packet_life_time_selector)
#define COPY_FIELD(f) dst->f = src->f;

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, 16);
	memcpy(dst->sgid.raw, src->sgid, 16);
	PATH_REC_FIELDS(COPY_FIELD)
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, 16);
	memcpy(dst->sgid, src->sgid.raw, 16);
	PATH_REC_FIELDS(COPY_FIELD)
}

const char *ibv_get_sysfs_path(void)
{
	static const char *path;
	const char *env = NULL;

	if (path)
		return path;
	if (getuid() == geteuid())
		env = getenv("SYSFS_PATH");
	if (env) {
		char *dup = emu_strndup(env, IBV_SYSFS_PATH_MAX);
		size_t len;

		if (!dup)
			return NULL;
		len = strlen(dup);
		while (len > 0 && dup[len - 1] == '/')
			dup[--len] = '\0';
		path = dup;
	} else {
		path = "/sys";
	}
	return path;
}

/* ibv_register_driver@IBVERBS_1.1 only (no default version). GCC's symver attribute survives
 * link-time optimisation, which drops a top-level .symver asm (the library is built with LTO:
 * configure.ac); other compilers get the asm. */
#if defined(__has_attribute)
#if __has_attribute(symver)
#define EMU_SYMVER_ATTR 1
#endif
#endif
#ifdef EMU_SYMVER_ATTR
__attribute__((symver("ibv_register_driver@IBVERBS_1.1")))
#else
__asm__(".symver emu_ibv_register_driver_1_1, ibv_register_driver@IBVERBS_1.1");
#endif
void emu_ibv_register_driver_1_1(const char *name, void *init_func);
void emu_ibv_register_driver_1_1(const char *name, void *init_func)
{
	(void)name, (void)init_func;
}
