/* Verbs that reach a provider op rxe does not have (rdma-core 44, providers/rxe/rxe.c's
 * rxe_ctx_ops): libibverbs answers them from libibverbs/dummy_ops.c, and the emulator gives
 * the same answers, including which of them set errno and which only return the code.
 *
 *   import_pd / import_mr / import_dm   NULL, errno EOPNOTSUPP
 *   unimport_pd / _mr / _dm             nothing
 *   reg_dmabuf_mr                       NULL, errno EOPNOTSUPP
 *   set_ece / query_ece                 EOPNOTSUPP returned, errno untouched (ibv_set_ece
 *                                       itself sets errno when vendor_id is 0)
 *
 * ibv_import_device() never reaches the provider on rxe: its verbs_device_ops has no
 * import_context, so a command fd of one of the devices is EOPNOTSUPP. Which device a fd
 * belongs to is decided by the character device number, as device.c compares st_rdev with
 * the device's uverbs cdev; the emulated contexts' cmd_fd is /dev/null (emu/verbs/context.c),
 * so that is every emulated device's cdev here.
 *
 * ibv_qp_to_qp_ex() is verbs.c's: the QP's ibv_qp_ex when the provider marked the QP
 * VERBS_QP_EX, which rxe does for every QP made by its create_qp_ex (not by create_qp). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "emu/verbs/objects.h"

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context, (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	if (!ece->vendor_id) {
		errno = EOPNOTSUPP;
		return errno;
	}
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct emu_vqp *q = to_vqp(qp);

	return q->qp_ex ? &q->qpx : NULL;
}

/* The emulated devices' uverbs character device: that of /dev/null (see above). */
static bool is_device_cdev(dev_t rdev)
{
	struct stat st;

	return !stat("/dev/null", &st) && S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_device **list;
	struct stat st;
	bool found;

	if (fstat(cmd_fd, &st) || !S_ISCHR(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	list = ibv_get_device_list(NULL);
	if (!list) {
		errno = ENODEV;
		return NULL;
	}
	found = list[0] && is_device_cdev(st.st_rdev);
	ibv_free_device_list(list);
	errno = found ? EOPNOTSUPP : ENODEV;
	return NULL;
}
