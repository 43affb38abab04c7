/* What answers a MAD sent on an emulated umad port: the SMA of the node the SMP reaches
 * (emu/ib/sma.h) on QP0, the fake SA (emu/ib/sa.h) on QP1 for the SA class, the PMA of the node
 * owning the destination LID (emu/ib/pma.h) on QP1 for PerfMgt, with the port counters of
 * this process's engine, where its traffic runs (none yet: every counter reads 0). The switches'
 * forwarding tables and the SA are built once per attachment from the process's fabric, on a
 * clock of their own: nothing here moves the engine's virtual time. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/mad.h"
#include "emu/ib/pma.h"
#include "emu/ib/sa.h"
#include "emu/ib/sma.h"
#include "emu/sim/clock.h"
#include "emu/link/link.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "emu/sim/topology.h"
#include "emu/umad/umad_priv.h"
#include "util/failcall.h"

static struct emu_clock clk;
static struct emu_topology *topo;
static struct emu_sa *sa;
static const struct emu_fabric *built_for;

static void forget(void)
{
	emu_sa_free(sa);
	sa = NULL;
	emu_topology_free(topo);
	topo = NULL;
	if (built_for)
		emu_clock_fini(&clk);
	built_for = NULL;
}

static struct emu_process_reset_hook reset_hook = { .order = 6, .reset = forget };

/* Under umad_lock. */
static void build(const struct emu_fabric *f)
{
	static bool hooked;

	if (built_for == f)
		return;
	if (!hooked) {
		emu_process_on_reset(&reset_hook);
		hooked = true;
	}
	forget();
	emu_clock_init(&clk, 0);
	built_for = f;
	topo = emu_topology_build(f, &clk, NULL, NULL);
	sa = emu_sa_new(f, topo);
}

static int sa_answer(const struct emu_fabric *f, const ib_user_mad_t *req, size_t len,
		     uint8_t **resp, size_t *resp_len, uint16_t *slid)
{
	if (!sa || be16toh(req->addr.lid) != f->sm.sm_lid || be32toh(req->addr.qpn) != 1)
		return -ETIMEDOUT;
	emu_sa_set_time(sa, emu_clock_now(&clk));
	if (emu_sa_handle(sa, req->data, len, resp, resp_len))
		return -ETIMEDOUT;
	*slid = f->sm.sm_lid;
	return 0;
}

/* A PerfMgt MAD, LID-routed from an active port to the node owning the LID. */
static int pma_answer(const struct emu_fabric *f, const struct umad_file *uf,
		      const ib_user_mad_t *req, size_t len, uint8_t **resp, size_t *resp_len,
		      uint16_t *slid)
{
	const struct emu_port *src = &f->hosts[uf->host].devices[uf->dev].ports[uf->port - 1];
	uint16_t dlid = be16toh(req->addr.lid);
	struct emu_engine *e = emu_engine_current();
	struct emu_sma_node n;
	int r;

	if (be32toh(req->addr.qpn) != 1 || len < EMU_MAD_LEN || src->state != 4 ||
	    emu_sma_find_lid(f, dlid, &n))
		return -ETIMEDOUT;
	*resp = emu_malloc(EMU_MAD_LEN);
	if (!*resp)
		return -ETIMEDOUT;
	memcpy(*resp, req->data, EMU_MAD_LEN);
	if (emu_link_active()) {
		/* under rdmaemud the traffic crosses the daemon's wire: its counters answer */
		r = emu_link_pma(dlid, *resp);
	} else if (e && emu_engine_fabric(e) == f) {
		emu_engine_lock(e);
		r = emu_pma_process(f, emu_engine_topology(e), &n, *resp);
		emu_engine_unlock(e);
	} else {
		r = emu_pma_process(f, NULL, &n, *resp);
	}
	if (r) {
		free(*resp);
		*resp = NULL;
		return -ETIMEDOUT;
	}
	*resp_len = EMU_MAD_LEN;
	*slid = dlid;
	return 0;
}

int umad_fabric_answer(const struct umad_file *uf, const ib_user_mad_t *req, size_t len,
		       uint8_t **resp, size_t *resp_len, uint16_t *slid)
{
	const struct emu_fabric *f = emu_process_fabric();
	uint8_t cls = req->data[1];
	uint16_t dlid = be16toh(req->addr.lid);
	int r;

	if (!f)
		return -ETIMEDOUT;
	build(f);
	if (cls == EMU_MGMT_CLASS_SUBN_LID || cls == EMU_MGMT_CLASS_SUBN_DR) {
		if (be32toh(req->addr.qpn) != 0 || len < EMU_MAD_LEN)
			return -ETIMEDOUT;
		*resp = emu_malloc(EMU_MAD_LEN);
		if (!*resp)
			return -ETIMEDOUT;
		memcpy(*resp, req->data, EMU_MAD_LEN);
		r = emu_sma_process(f, topo, uf->host, uf->dev, uf->port, dlid, *resp);
		if (r) {
			free(*resp);
			*resp = NULL;
			return -ETIMEDOUT;
		}
		*resp_len = EMU_MAD_LEN;
		/* a directed-route answer comes from the permissive LID */
		*slid = cls == EMU_MGMT_CLASS_SUBN_DR ? 0xffff : dlid;
		return 0;
	}
	if (cls == EMU_MGMT_CLASS_SUBN_ADM)
		return sa_answer(f, req, len, resp, resp_len, slid);
	if (cls == EMU_MGMT_CLASS_PERF)
		return pma_answer(f, uf, req, len, resp, resp_len, slid);
	return -ETIMEDOUT;
}
