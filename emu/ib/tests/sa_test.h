/* Helpers shared by test_sa and sa_gen: SA request MADs and a fabric with its topology. */
#ifndef RDMAEMU_SA_TEST_H
#define RDMAEMU_SA_TEST_H

#include <stdint.h>
#include <string.h>

#include "emu/sim/clock.h"
#include "emu/ib/mad.h"
#include "emu/ib/sa.h"
#include "emu/sim/topology.h"

/* Writes a 256-byte SA request MAD: header, SA header, one record packed from `rec`. */
static inline void sa_req(uint8_t mad[EMU_MAD_LEN], uint8_t method, uint64_t tid,
			  const struct emu_mad_record_desc *d, uint64_t mask, const void *rec)
{
	struct emu_mad_hdr h = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
				 EMU_SA_CLASS_VERSION, method, 0, 0, tid,
				 d ? d->attr_id : EMU_SA_ATTR_PATH_RECORD, 0 };
	struct emu_sa_hdr sh = { 0, d ? d->attr_offset : 0, mask };

	memset(mad, 0, EMU_MAD_LEN);
	emu_mad_hdr_put(mad, &h);
	emu_sa_hdr_put(mad + 36, &sh);
	if (d && rec)
		emu_mad_record_pack(d, rec, mad + EMU_SA_HDR_LEN);
}

static inline void gid_of(uint8_t gid[16], uint64_t guid)
{
	static const uint8_t pfx[8] = { 0xfe, 0x80 };

	memcpy(gid, pfx, 8);
	for (int i = 0; i < 8; i++)
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}

/* The fake SA on a fabric file: loaded, its topology built on a clock of its own. */
struct sa_on_fabric {
	struct emu_fabric *f;
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_sa *sa;
};

static inline int sa_on_fabric_up(struct sa_on_fabric *x, const char *path)
{
	struct emu_error err;

	x->f = emu_fabric_load(path, &err);
	if (!x->f)
		return -1;
	emu_clock_init(&x->clk, 0);
	x->t = emu_topology_build(x->f, &x->clk, NULL, &err);
	x->sa = x->t ? emu_sa_new(x->f, x->t) : NULL;
	return x->sa ? 0 : -1;
}

static inline void sa_on_fabric_down(struct sa_on_fabric *x)
{
	emu_sa_free(x->sa);
	emu_topology_free(x->t);
	emu_clock_fini(&x->clk);
	emu_fabric_free(x->f);
}

#endif
