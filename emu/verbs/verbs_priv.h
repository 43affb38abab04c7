/* Internals of the emulated libibverbs.so.1 (emu/verbs/).
 *
 * Layout follows rdma-core's provider model: a device object wrapping the public struct
 * ibv_device (rdma-core's verbs_device), a context wrapping struct verbs_context (whose last
 * member is the struct ibv_context handed to the application, so that the header's inline
 * verbs_get_ctx_op() finds the extended ops), and objects embedding both the public struct
 * (ibv_pd, ibv_mr) and the HCA model's object (emu/hca/hca.h). */
#ifndef RDMAEMU_EMU_VERBS_PRIV_H
#define RDMAEMU_EMU_VERBS_PRIV_H

#include <infiniband/verbs.h>

#include "emu/hca/hca.h"

/* rxe's num_comp_vectors is num_possible_cpus() of the host; the reference VM (scripts/rxe-vm,
 * two CPUs) reports 2, so the emulated hosts do too. */
#define EMU_NUM_COMP_VECTORS 2

struct emu_vdevice {
	struct ibv_device dev; /* first: the application's struct ibv_device * points here */
	const struct emu_device *edev;
	int index;             /* the kernel's ib_device index: order of creation, from 0 */
};

struct emu_vctx;

/* The internal op table, in the style of rdma-core's struct verbs_context_ops. Exported verbs
 * dispatch through it; ops of later steps (CQ, QP, SRQ, AH) are added here. */
struct emu_verbs_ops {
	int (*query_device_ex)(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				 unsigned access);
	int (*rereg_mr)(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
};

struct emu_vctx {
	struct emu_hca *hca;
	struct emu_hca_ctx *hctx;
	const struct emu_verbs_ops *ops;
	int async_wfd;             /* write end of context.async_fd (a pipe) */
	pthread_mutex_t handle_lock;
	uint8_t *handles;          /* uverbs object handles in use (lowest free first) */
	size_t nhandles;
	struct verbs_context vctx; /* last: its own last member is the ibv_context */
};

struct emu_vpd {
	struct ibv_pd pd;
	struct emu_pd epd;
};

struct emu_vmr {
	struct ibv_mr mr;
	struct emu_mr emr;
};

static inline struct emu_vctx *to_vctx(struct ibv_context *c)
{
	return container_of(c, struct emu_vctx, vctx.context);
}

static inline const struct emu_device *ctx_dev(struct ibv_context *c)
{
	return ((struct emu_vdevice *)c->device)->edev;
}

/* The port of the context's device, NULL when port_num is not a valid port number. */
static inline const struct emu_port *emu_verbs_port(struct ibv_context *ctx, uint32_t port_num)
{
	const struct emu_device *d = ctx_dev(ctx);

	if (port_num < 1 || port_num > d->nports)
		return NULL;
	return &d->ports[port_num - 1];
}

/* uverbs object handles: each context numbers its objects from 0, lowest free first
 * (emu/verbs/handle.c). */
uint32_t emu_verbs_handle_get(struct emu_vctx *c);
void emu_verbs_handle_put(struct emu_vctx *c, uint32_t handle);

extern const struct emu_verbs_ops emu_rxe_ops;

/* Exported names that <infiniband/verbs.h> does not declare (rdma-core has them in driver.h or
 * keeps them private): historical IBVERBS_1.0/1.1 symbols and IBVERBS_PRIVATE_34's
 * ibv_query_gid_type (type: enum ibv_gid_type_sysfs, 0 = IB/RoCE v1, 1 = RoCE v2). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);

/* Op implementations (one file per group). */
int emu_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int emu_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
/* The verbs_context query_port entry: rdma-core's __lib_query_port (a smaller port_attr_len
 * comes from a binary built against older headers). */
int emu_lib_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
		       size_t attr_len);
struct ibv_pd *emu_alloc_pd(struct ibv_context *ctx);
int emu_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *emu_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			  unsigned access);
int emu_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access);
int emu_dereg_mr(struct ibv_mr *mr);

/* Reads an emulated sysfs file (emu/verbs/sysfs.c) or a real one: ibv_read_sysfs_file()'s
 * contract on a full path. */
int emu_sysfs_read(const char *path, char *buf, size_t size);

/* Event plumbing (emu/verbs/events.c) for the engine: the write end of a completion channel,
 * and queueing an async event (struct ib_uverbs_async_event_desc) on a context. */
int emu_verbs_comp_channel_wfd(struct ibv_comp_channel *channel);
int emu_verbs_post_async_event(struct ibv_context *context, uint32_t type, uint64_t element);

/* Fork protection state (emu/verbs/fork.c), for ibv_reg_mr's dontfork step. */
int emu_fork_dontfork(void *base, size_t size);
int emu_fork_dofork(void *base, size_t size);

#endif
