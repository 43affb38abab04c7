/* rxe's default device limits and the names of the device caps (`cap KEY=VALUE` lines of
 * the fabric format, `rdmaemu fabric show`): the model's defaults, which the loaders and the
 * show command read. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "emu/sim/fabric_priv.h"

/* Debian 12 (kernel 6.1) rxe, as `ibv_devinfo -v` reports it in the reference VM
 * (scripts/rxe-vm, docs/reference/kernel-rxe.md §3); where the VM did not print a value, the
 * one rxe_param.h of that kernel gives (DEFAULT_MAX_VALUE = 1 << 20). */
void emu_rxe_default_caps(struct emu_device_caps *c)
{
	memset(c, 0, sizeof(*c));
	c->max_mr_size = ~0ull;
	c->page_size_cap = 0xfffff000;
	c->max_qp = (1u << 20) - 16;      /* 1048560 measured */
	c->max_qp_wr = 1u << 20;          /* 1048576 measured */
	c->max_sge = 32;                  /* measured */
	c->max_sge_rd = 32;
	c->max_cq = 1u << 20;
	c->max_cqe = (1u << 15) - 1;      /* 32767 measured */
	c->max_mr = (1u << 19) - 1;       /* 524287 measured */
	c->max_pd = 1u << 20;
	c->max_qp_rd_atom = 128;          /* measured */
	c->max_ee_rd_atom = 0;
	c->max_res_rd_atom = 0x3f000;
	c->max_qp_init_rd_atom = 128;
	c->max_srq = (1u << 20) - 0x20001;
	c->max_srq_wr = 1u << 20;
	c->max_srq_sge = 27;              /* measured */
	c->max_ah = (1u << 15) - 1;
	c->max_mcast_grp = 8192;
	c->max_mcast_qp_attach = 56;
	c->max_total_mcast_qp_attach = 0x70000;
	c->max_fmr = 0;
	c->max_map_per_fmr = 0;
	c->max_pkeys = 64;
	c->device_cap_flags = 0x01223c76; /* measured */
	c->atomic_cap = 1;                /* IBV_ATOMIC_HCA, measured */
	c->max_msg_sz = 0x800000;         /* measured */
	c->local_ca_ack_delay = 15;
}

#define CAP(f) { #f, offsetof(struct emu_device_caps, f), sizeof(((struct emu_device_caps *)0)->f) }
const struct emu_cap_field emu_cap_fields[] = {
	CAP(max_mr_size),	  CAP(page_size_cap),	      CAP(max_qp),
	CAP(max_qp_wr),		  CAP(max_sge),		      CAP(max_sge_rd),
	CAP(max_cq),		  CAP(max_cqe),		      CAP(max_mr),
	CAP(max_pd),		  CAP(max_qp_rd_atom),	      CAP(max_ee_rd_atom),
	CAP(max_res_rd_atom),	  CAP(max_qp_init_rd_atom),   CAP(max_srq),
	CAP(max_srq_wr),	  CAP(max_srq_sge),	      CAP(max_ah),
	CAP(max_mcast_grp),	  CAP(max_mcast_qp_attach),   CAP(max_total_mcast_qp_attach),
	CAP(max_fmr),		  CAP(max_map_per_fmr),	      CAP(max_pkeys),
	CAP(device_cap_flags),	  CAP(atomic_cap),	      CAP(max_msg_sz),
	CAP(local_ca_ack_delay),
};
const size_t emu_ncap_fields = sizeof(emu_cap_fields) / sizeof(emu_cap_fields[0]);
