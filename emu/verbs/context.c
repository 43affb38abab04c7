/* Opening and closing a device: the emulated verbs_open_device() + rxe_alloc_context().
 *
 * The context is a struct verbs_context (abi_compat = __VERBS_ABI_IS_EXTENDED, sz set) so that
 * the inline wrappers of <infiniband/verbs.h> (ibv_query_device_ex, ibv_query_port, ...) find
 * their extended ops. Extended ops the emulator does not have yet stay NULL: the inline
 * wrappers then answer EOPNOTSUPP/ENOSYS themselves, as with a provider that lacks them. The
 * fast-path ops of struct ibv_context_ops (post_send, poll_cq, ...) are called without a NULL
 * check; they are the data path's (emu/verbs/datapath.h).
 *
 * cmd_fd and async_fd are real file descriptors: cmd_fd is /dev/null (a character device, as
 * /dev/infiniband/uverbsN is), async_fd the read end of a pipe that carries
 * struct ib_uverbs_async_event_desc records, pollable like the kernel's event file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/verbs/mw.h"
#include "emu/verbs/datapath.h"
#include "util/failcall.h"

#undef ibv_query_port

const struct emu_verbs_ops emu_rxe_ops = {
	.query_device_ex = emu_query_device_ex,
	.query_port = emu_query_port,
	.alloc_pd = emu_alloc_pd,
	.dealloc_pd = emu_dealloc_pd,
	.reg_mr = emu_reg_mr,
	.rereg_mr = emu_rereg_mr,
	.dereg_mr = emu_dereg_mr,
};

static void free_vctx(struct emu_vctx *c)
{
	struct ibv_context *ctx = &c->vctx.context;

	if (c->hctx)
		emu_hca_ctx_close(c->hctx);
	emu_hca_put(c->hca);
	if (ctx->cmd_fd >= 0)
		close(ctx->cmd_fd);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	if (c->async_wfd >= 0)
		close(c->async_wfd);
	pthread_mutex_destroy(&ctx->mutex);
	pthread_mutex_destroy(&c->handle_lock);
	free(c->handles);
	free(c);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct emu_vdevice *d = (struct emu_vdevice *)device;
	struct emu_vctx *c = emu_calloc(1, sizeof(*c));
	struct ibv_context *ctx;
	int p[2], err;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	ctx = &c->vctx.context;
	ctx->cmd_fd = ctx->async_fd = c->async_wfd = -1;
	pthread_mutex_init(&ctx->mutex, NULL);
	pthread_mutex_init(&c->handle_lock, NULL);
	c->ops = &emu_rxe_ops;
	c->hca = emu_hca_get(d->edev);
	if (!c->hca)
		goto fail_errno;
	err = emu_hca_ctx_open(c->hca, &c->hctx);
	if (err) {
		errno = err;
		goto fail_errno;
	}
	ctx->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (ctx->cmd_fd < 0 || pipe2(p, O_CLOEXEC) < 0)
		goto fail_errno;
	ctx->async_fd = p[0];
	c->async_wfd = p[1];

	ctx->device = device;
	ctx->num_comp_vectors = EMU_NUM_COMP_VECTORS;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_device_ex = emu_query_device_ex;
	c->vctx.query_port = emu_lib_query_port;
	c->vctx.create_cq_ex = emu_create_cq_ex;
	c->vctx.create_qp_ex = emu_create_qp_ex;
	/* what rdma-core's set_lib_ops() puts there for binaries of the 1.0 era */
	ctx->ops._compat_query_port = ibv_query_port;
	/* CQs work on their ring (emu/verbs/cq.c), filled by the data path (emu/verbs/datapath.h),
	 * which posts run. */
	ctx->ops.poll_cq = emu_poll_cq;
	ctx->ops.req_notify_cq = emu_req_notify_cq;
	ctx->ops.post_send = emu_dp_post_send;
	ctx->ops.post_recv = emu_dp_post_recv;
	ctx->ops.post_srq_recv = emu_dp_post_srq_recv;
	/* memory windows: rxe's alloc_mw / dealloc_mw / bind_mw (emu/verbs/mw.c) */
	ctx->ops.alloc_mw = emu_alloc_mw;
	ctx->ops.dealloc_mw = emu_dealloc_mw;
	ctx->ops.bind_mw = emu_bind_mw;
	return ctx;

fail_errno:
	err = errno;
	free_vctx(c);
	errno = err;
	return NULL;
}

/* The kernel's cleanup of a closed uverbs file destroys every object left; the emulator frees
 * their user-space halves with them (obj.destroy), so nothing leaks. */
int ibv_close_device(struct ibv_context *context)
{
	struct emu_engine *e = emu_dp_engine();

	/* the QPs' timers live on the engine's clock: lock order engine, then HCA */
	if (e)
		emu_engine_lock(e);
	free_vctx(to_vctx(context));
	if (e)
		emu_engine_unlock(e);
	return 0;
}
