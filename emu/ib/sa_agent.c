/* The fake SA on the wire (emu/ib/sa_agent.h): the request engine of emu/ib/sa.c behind a GSI
 * server agent, as OpenSM's SA sits behind umad. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/ib/gsi.h"
#include "emu/sim/list.h"
#include "emu/hca/pkt.h"
#include "emu/ib/sa_agent.h"
#include "util/failcall.h"

struct sa_agent {
	struct emu_engine *e;
	struct emu_sa *sa;
	struct emu_gsi_agent *agent;
	struct emu_list delayed;
	struct emu_sa_agent_counters cnt;
};

/* An answer waiting for the policy's response delay. */
struct sa_delayed {
	struct emu_list link;
	struct sa_agent *sa;
	struct emu_timer timer;
	struct emu_gsi_recv from; /* mad/port unused after the request */
	uint8_t *resp;
	size_t len;
};

static void agent_free(struct emu_engine *e, void *obj);
static const struct emu_engine_ext_type sa_agent_ext = { "sa-agent", agent_free };

static void answer(struct sa_agent *s, const struct emu_gsi_recv *r, const uint8_t *resp,
		   size_t len)
{
	int rc = emu_gsi_respond(s->agent, r, resp, len);

	if (rc)
		emu_gsi_trace("sa: answer not sent: %d", rc);
	else
		s->cnt.answered++;
}

static void delayed_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct sa_delayed *d = arg;

	(void)clk, (void)t;
	emu_list_del(&d->link);
	answer(d->sa, &d->from, d->resp, d->len);
	free(d->resp);
	free(d);
}

static void sa_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx)
{
	struct sa_agent *s = ctx;
	uint64_t delay = 0;
	uint8_t *resp = NULL;
	size_t len = 0;
	int rc;

	(void)a;
	s->cnt.requests++;
	emu_sa_set_time(s->sa, emu_engine_now(s->e));
	rc = emu_sa_process(s->sa, r->mad, r->len, &resp, &len, &delay);
	if (rc || !resp) {
		s->cnt.dropped++;
		emu_gsi_trace("sa: tid 0x%016llx %s: no answer (%s)",
			      (unsigned long long)emu_be64_get(r->mad + 8),
			      emu_mad_method_name(r->mad[3]), rc ? "ignored" : "policy: drop");
		return;
	}
	if (!delay) {
		answer(s, r, resp, len);
		free(resp);
		return;
	}
	struct sa_delayed *d = emu_calloc(1, sizeof(*d));

	if (!d) {
		free(resp);
		return;
	}
	d->sa = s;
	d->from = *r;
	d->from.mad = NULL;
	d->resp = resp;
	d->len = len;
	s->cnt.delayed++;
	emu_timer_init(&d->timer, delayed_fire, d);
	emu_list_add_tail(&s->delayed, &d->link);
	emu_timer_arm_in(emu_engine_clock(s->e), &d->timer, delay);
}

static void agent_free(struct emu_engine *e, void *obj)
{
	struct sa_agent *s = obj;

	while (!emu_list_empty(&s->delayed)) {
		struct sa_delayed *d = emu_list_entry(s->delayed.next, struct sa_delayed, link);

		emu_timer_cancel(emu_engine_clock(e), &d->timer);
		emu_list_del(&d->link);
		free(d->resp);
		free(d);
	}
	/* the MAD layer (attached earlier) is still there: leave it cleanly */
	emu_gsi_agent_unregister(s->agent);
	emu_sa_free(s->sa);
	free(s);
}

int emu_sa_agent_start(struct emu_engine *e)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	struct emu_gsi_port *p;
	struct emu_gsi *g;
	struct sa_agent *s;
	int rc;

	if (emu_engine_ext_get(e, &sa_agent_ext))
		return 0;
	if (!f->sm.present || !f->sm.sm_lid)
		return -ENODEV;
	g = emu_gsi_get(e);
	if (!g)
		return -ENOMEM;
	p = emu_gsi_port_by_lid(g, f->sm.sm_lid);
	if (!p)
		return -ENODEV;
	s = emu_calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->e = e;
	emu_list_init(&s->delayed);
	s->sa = emu_sa_new(f, emu_engine_topology(e));
	if (!s->sa) {
		rc = -errno;
		free(s);
		return rc;
	}
	s->agent = emu_gsi_agent_register(p, EMU_MGMT_CLASS_SUBN_ADM, EMU_SA_CLASS_VERSION,
					  EMU_GSI_SERVER | EMU_GSI_RMPP, sa_recv, s);
	if (!s->agent) {
		rc = -errno;
		emu_sa_free(s->sa);
		free(s);
		return rc;
	}
	rc = emu_engine_ext_set(e, &sa_agent_ext, s);
	if (rc) {
		emu_gsi_agent_unregister(s->agent);
		emu_sa_free(s->sa);
		free(s);
		return rc;
	}
	emu_gsi_trace("sa: answering at LID %u", f->sm.sm_lid);
	return 0;
}

struct emu_sa *emu_sa_agent_sa(struct emu_engine *e)
{
	struct sa_agent *s = emu_engine_ext_get(e, &sa_agent_ext);

	return s ? s->sa : NULL;
}

int emu_sa_agent_counters(struct emu_engine *e, struct emu_sa_agent_counters *out)
{
	struct sa_agent *s = emu_engine_ext_get(e, &sa_agent_ext);

	if (!s)
		return -ENODEV;
	*out = s->cnt;
	return 0;
}
