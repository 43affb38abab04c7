/* The built-in default fabric and rxe's default device limits.
 *
 * The default fabric is the host of fixtures/rxe-ref.fabric, the single-VM real-stack
 * reference: `rdmaemu run -- rping -s -a 192.0.2.1` works with no fabric file, and gives the
 * same results as kernel rxe in scripts/rxe-vm. It is kept as text (identical to the shipped
 * fixtures/default.fabric; test_fabric_fixtures checks that both load to the same model) so
 * that the defaults and derivations are exactly those of the loader. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "emu/sim/fabric_priv.h"

/* Debian 12 (kernel 6.1) rxe, as `ibv_devinfo -v` reports it in scripts/rxe-vm (see
 * docs/reference/kernel-rxe.md §3); where the VM did not print a value, the one rxe_param.h of
 * that kernel gives (DEFAULT_MAX_VALUE = 1 << 20). */
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

/* Keep in step with fixtures/default.fabric (a unit test compares them). */
static const char builtin_text[] =
	"# The built-in default fabric of rdmaemu: the host of fixtures/rxe-ref.fabric.\n"
	"seed 1\n"
	"resolver files\n"
	"\n"
	"host rxe-ref\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:01:01 mtu=1500 rdma=rxe0/1 arp=off\n"
	"    addr 192.0.2.1/28\n"
	"  device rxe1 link=eth\n"
	"  netdev s0 mac=02:00:00:00:01:02 mtu=1500 rdma=rxe1/1\n"
	"    addr 192.0.2.17/28\n"
	"\n"
	"link rxe-ref/rxe0/1 none\n"
	"link rxe-ref/rxe1/1 none\n";

const char *emu_fabric_builtin_text(void)
{
	return builtin_text;
}

struct emu_fabric *emu_fabric_builtin(void)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(builtin_text, "(built-in default)", ".", &err);

	if (f)
		snprintf(f->source, sizeof(f->source), "(built-in default)");
	return f;
}
