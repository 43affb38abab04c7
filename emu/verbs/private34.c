/* rdma-core's provider-private interface (IBVERBS_PRIVATE_34), exported so that provider
 * libraries an application links directly can be loaded beside the emulated libibverbs.
 *
 * Why: perftest (and programs using mlx5dv / efadv direct verbs) link libmlx5.so.1,
 * libefa.so.1, ... themselves. Those libraries import these names from libibverbs.so.1 and,
 * from an ELF constructor, register their driver (verbs_register_driver_34). Without the
 * names the dynamic loader refuses the program ("undefined symbol: ibv_cmd_destroy_cq,
 * version IBVERBS_PRIVATE_34"). The emulator loads no provider: registration is accepted and
 * ignored, so no provider ever gets a context and none of the command helpers below can be
 * reached through the emulated devices. Each answers EOPNOTSUPP all the same, should a
 * provider call one on its own. Prototypes are deliberately generic: the names only have to
 * resolve. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>

#define EMU_PRIVATE_STUB(name)                                                                     \
	int name(void);                                                                            \
	int name(void)                                                                             \
	{                                                                                          \
		return EOPNOTSUPP;                                                                 \
	}

/* rdma-core's verbs_allow_disassociate_destroy: a flag providers read. */
extern bool verbs_allow_disassociate_destroy;
bool verbs_allow_disassociate_destroy;

/* A provider's constructor registers its driver here: accepted, ignored. */
void verbs_register_driver_34(const void *ops);
void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

EMU_PRIVATE_STUB(__ioctl_final_num_attrs)
EMU_PRIVATE_STUB(__verbs_log)
EMU_PRIVATE_STUB(_verbs_init_and_alloc_context)
EMU_PRIVATE_STUB(execute_ioctl)
EMU_PRIVATE_STUB(ibv_cmd_advise_mr)
EMU_PRIVATE_STUB(ibv_cmd_alloc_dm)
EMU_PRIVATE_STUB(ibv_cmd_alloc_mw)
EMU_PRIVATE_STUB(ibv_cmd_alloc_pd)
EMU_PRIVATE_STUB(ibv_cmd_attach_mcast)
EMU_PRIVATE_STUB(ibv_cmd_close_xrcd)
EMU_PRIVATE_STUB(ibv_cmd_create_ah)
EMU_PRIVATE_STUB(ibv_cmd_create_counters)
EMU_PRIVATE_STUB(ibv_cmd_create_cq)
EMU_PRIVATE_STUB(ibv_cmd_create_cq_ex)
EMU_PRIVATE_STUB(ibv_cmd_create_flow)
EMU_PRIVATE_STUB(ibv_cmd_create_flow_action_esp)
EMU_PRIVATE_STUB(ibv_cmd_create_qp)
EMU_PRIVATE_STUB(ibv_cmd_create_qp_ex)
EMU_PRIVATE_STUB(ibv_cmd_create_qp_ex2)
EMU_PRIVATE_STUB(ibv_cmd_create_rwq_ind_table)
EMU_PRIVATE_STUB(ibv_cmd_create_srq)
EMU_PRIVATE_STUB(ibv_cmd_create_srq_ex)
EMU_PRIVATE_STUB(ibv_cmd_create_wq)
EMU_PRIVATE_STUB(ibv_cmd_dealloc_mw)
EMU_PRIVATE_STUB(ibv_cmd_dealloc_pd)
EMU_PRIVATE_STUB(ibv_cmd_dereg_mr)
EMU_PRIVATE_STUB(ibv_cmd_destroy_ah)
EMU_PRIVATE_STUB(ibv_cmd_destroy_counters)
EMU_PRIVATE_STUB(ibv_cmd_destroy_cq)
EMU_PRIVATE_STUB(ibv_cmd_destroy_flow)
EMU_PRIVATE_STUB(ibv_cmd_destroy_flow_action)
EMU_PRIVATE_STUB(ibv_cmd_destroy_qp)
EMU_PRIVATE_STUB(ibv_cmd_destroy_rwq_ind_table)
EMU_PRIVATE_STUB(ibv_cmd_destroy_srq)
EMU_PRIVATE_STUB(ibv_cmd_destroy_wq)
EMU_PRIVATE_STUB(ibv_cmd_detach_mcast)
EMU_PRIVATE_STUB(ibv_cmd_free_dm)
EMU_PRIVATE_STUB(ibv_cmd_get_context)
EMU_PRIVATE_STUB(ibv_cmd_modify_cq)
EMU_PRIVATE_STUB(ibv_cmd_modify_flow_action_esp)
EMU_PRIVATE_STUB(ibv_cmd_modify_qp)
EMU_PRIVATE_STUB(ibv_cmd_modify_qp_ex)
EMU_PRIVATE_STUB(ibv_cmd_modify_srq)
EMU_PRIVATE_STUB(ibv_cmd_modify_wq)
EMU_PRIVATE_STUB(ibv_cmd_open_qp)
EMU_PRIVATE_STUB(ibv_cmd_open_xrcd)
EMU_PRIVATE_STUB(ibv_cmd_poll_cq)
EMU_PRIVATE_STUB(ibv_cmd_post_recv)
EMU_PRIVATE_STUB(ibv_cmd_post_send)
EMU_PRIVATE_STUB(ibv_cmd_post_srq_recv)
EMU_PRIVATE_STUB(ibv_cmd_query_context)
EMU_PRIVATE_STUB(ibv_cmd_query_device_any)
EMU_PRIVATE_STUB(ibv_cmd_query_mr)
EMU_PRIVATE_STUB(ibv_cmd_query_port)
EMU_PRIVATE_STUB(ibv_cmd_query_qp)
EMU_PRIVATE_STUB(ibv_cmd_query_srq)
EMU_PRIVATE_STUB(ibv_cmd_read_counters)
EMU_PRIVATE_STUB(ibv_cmd_reg_dm_mr)
EMU_PRIVATE_STUB(ibv_cmd_reg_dmabuf_mr)
EMU_PRIVATE_STUB(ibv_cmd_reg_mr)
EMU_PRIVATE_STUB(ibv_cmd_req_notify_cq)
EMU_PRIVATE_STUB(ibv_cmd_rereg_mr)
EMU_PRIVATE_STUB(ibv_cmd_resize_cq)
EMU_PRIVATE_STUB(ibv_read_ibdev_sysfs_file)
EMU_PRIVATE_STUB(verbs_init_cq)
EMU_PRIVATE_STUB(verbs_open_device)
EMU_PRIVATE_STUB(verbs_set_ops)
EMU_PRIVATE_STUB(verbs_uninit_context)
