/* The MAD layer: ports, agents, sends with timeouts and retries, dispatch (emu/ib/gsi.h).
 * The kernel's drivers/infiniband/core/mad.c is the model: find_mad_agent (responses by
 * hi_tid, requests by class/version), ib_find_send_mad (TID + class), timeout_sends/retry. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/trace.h"
#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/sim/engine_ext.h"
#include "emu/hca/engine_rx.h"
#include "emu/ib/gsi_priv.h"
#include "emu/hca/pkt.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"

bool emu_gsi_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "mad");
}

void emu_gsi_trace(const char *fmt, ...)
{
	va_list ap;

	if (!emu_gsi_trace_on())
		return;
	va_start(ap, fmt);
	emu_trace_vprint("mad: ", fmt, ap);
	va_end(ap);
}

const char *emu_gsi_send_state_name(enum emu_gsi_send_state s)
{
	static const char *const n[EMU_GSI_SEND_NSTATES] = {
		[EMU_GSI_SEND_ACTIVE] = "ACTIVE",
		[EMU_GSI_SEND_WAIT_RESP] = "WAIT_RESP",
		[EMU_GSI_SEND_DONE] = "DONE",
	};

	return (unsigned)s < EMU_GSI_SEND_NSTATES ? n[s] : "?";
}

bool emu_gsi_class_is_rmpp(uint8_t c)
{
	return c == EMU_MGMT_CLASS_SUBN_ADM || (c >= 0x30 && c <= 0x4f);
}

bool emu_gsi_mad_is_response(const uint8_t *mad)
{
	/* ib_response_mad: the response bit, or TrapRepress (a response without the bit) */
	return (mad[3] & EMU_MAD_METHOD_RESP_BIT) || mad[3] == EMU_MAD_METHOD_TRAP_REPRESS;
}

/* ---------- the instance ---------- */

static void gsi_free(struct emu_engine *e, void *obj);
static const struct emu_engine_ext_type gsi_ext = { "gsi", gsi_free };

struct emu_gsi *emu_gsi_get(struct emu_engine *e)
{
	struct emu_gsi *g = emu_engine_ext_get(e, &gsi_ext);

	if (g)
		return g;
	g = emu_calloc(1, sizeof(*g));
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	g->e = e;
	g->next_hi_tid = 1;
	g->mac = emu_gsi_mac_from_fabric;
	if (emu_engine_ext_set(e, &gsi_ext, g)) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

struct emu_engine *emu_gsi_engine(const struct emu_gsi *g)
{
	return g->e;
}

void emu_gsi_set_mac_resolver(struct emu_gsi *g, emu_gsi_mac_fn *fn)
{
	g->mac = fn ? fn : emu_gsi_mac_from_fabric;
}

static void gsi_free(struct emu_engine *e, void *obj)
{
	struct emu_gsi *g = obj;

	for (size_t i = 0; i < g->nports; i++) {
		struct emu_gsi_port *p = g->ports[i];

		while (!emu_list_empty(&p->agents))
			emu_gsi_agent_unregister(
				emu_list_entry(p->agents.next, struct emu_gsi_agent, link));
		emu_gsi_loopback_flush(p);
		if (p->is_switch)
			emu_topology_set_switch_local_rx(emu_engine_topology(e), p->sw, NULL, NULL);
		else
			emu_engine_port_set_rx_qpn(e, p->host, p->dev, p->num, 1, NULL, NULL);
		free(p);
	}
	free(g->ports);
	free(g);
}

/* ---------- ports ---------- */

static struct emu_gsi_port *port_add(struct emu_gsi *g)
{
	struct emu_gsi_port **n = emu_realloc(g->ports, (g->nports + 1) * sizeof(*n));
	struct emu_gsi_port *p;

	if (!n)
		return NULL;
	g->ports = n;
	p = emu_calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->g = g;
	emu_list_init(&p->agents);
	emu_list_init(&p->loopback);
	g->ports[g->nports++] = p;
	return p;
}

struct emu_gsi_port *emu_gsi_port_get(struct emu_gsi *g, size_t host, size_t dev, unsigned port)
{
	const struct emu_fabric *f = emu_engine_fabric(g->e);
	const struct emu_port *po;
	struct emu_gsi_port *p;
	int rc;

	for (size_t i = 0; i < g->nports; i++) {
		p = g->ports[i];
		if (!p->is_switch && p->host == host && p->dev == dev && p->num == port)
			return p;
	}
	if (host >= f->nhosts || dev >= f->hosts[host].ndevices || !port ||
	    port > f->hosts[host].devices[dev].nports) {
		errno = ENOENT;
		return NULL;
	}
	po = &f->hosts[host].devices[dev].ports[port - 1];
	p = port_add(g);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->host = host;
	p->dev = dev;
	p->num = port;
	p->port = po;
	p->info.link_layer = po->link_layer == 2 ? EMU_LL_ETHERNET : EMU_LL_INFINIBAND;
	p->info.lid = po->lid;
	p->info.lmc = po->lmc;
	p->info.sm_lid = po->sm_lid;
	p->info.sm_sl = po->sm_sl;
	if (po->ngids)
		memcpy(p->info.gid, po->gids[0].raw, 16);
	p->info.pkey = po->npkeys ? po->pkeys[0] : EMU_PKEY_DEFAULT;
	rc = emu_engine_port_set_rx_qpn(g->e, host, dev, port, 1, emu_gsi_port_rx, p);
	if (!rc)
		rc = emu_engine_port_set_rx_qpn_lazy(g->e, host, dev, port, 1, emu_gsi_port_rx_lazy);
	if (rc) {
		g->nports--;
		free(p);
		errno = -rc;
		return NULL;
	}
	return p;
}

struct emu_gsi_port *emu_gsi_switch_port_get(struct emu_gsi *g, size_t sw)
{
	const struct emu_fabric *f = emu_engine_fabric(g->e);
	const struct emu_switch *s;
	struct emu_gsi_port *p;

	for (size_t i = 0; i < g->nports; i++)
		if (g->ports[i]->is_switch && g->ports[i]->sw == sw)
			return g->ports[i];
	if (sw >= f->nswitches) {
		errno = ENOENT;
		return NULL;
	}
	s = &f->switches[sw];
	p = port_add(g);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->is_switch = true;
	p->sw = sw;
	p->info.is_switch = true;
	p->info.link_layer = EMU_LL_INFINIBAND;
	p->info.lid = s->lid;
	p->info.lmc = s->lmc;
	p->info.sm_lid = f->sm.present ? f->sm.sm_lid : 0;
	/* port 0's GID: the subnet prefix and the switch's GUID (its port GUID) */
	for (int b = 0; b < 8; b++) {
		p->info.gid[b] = (uint8_t)(f->sm.subnet_prefix >> (56 - 8 * b));
		p->info.gid[8 + b] = (uint8_t)(s->node_guid >> (56 - 8 * b));
	}
	p->info.pkey = EMU_PKEY_DEFAULT;
	if (emu_topology_set_switch_local_rx(emu_engine_topology(g->e), sw, emu_gsi_port_rx, p)) {
		g->nports--;
		free(p);
		errno = ENOENT;
		return NULL;
	}
	return p;
}

struct emu_gsi_port *emu_gsi_port_by_lid(struct emu_gsi *g, uint16_t lid)
{
	const struct emu_fabric *f = emu_engine_fabric(g->e);

	if (!lid) {
		errno = ENOENT;
		return NULL;
	}
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct emu_switch *sw = &f->switches[s];

		if (sw->lid && lid >= sw->lid && lid < sw->lid + (1u << sw->lmc))
			return emu_gsi_switch_port_get(g, s);
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
			const struct emu_device *dv = &f->hosts[h].devices[d];

			for (size_t p = 0; p < dv->nports; p++) {
				const struct emu_port *po = &dv->ports[p];

				if (po->link_layer != 2 && po->lid && lid >= po->lid &&
				    lid < po->lid + (1u << po->lmc))
					return emu_gsi_port_get(g, h, d, (unsigned)(p + 1));
			}
		}
	errno = ENOENT;
	return NULL;
}

void emu_gsi_port_info(const struct emu_gsi_port *p, struct emu_gsi_port_info *out)
{
	*out = p->info;
}

void emu_gsi_port_counters(const struct emu_gsi_port *p, struct emu_gsi_port_counters *out)
{
	*out = p->cnt;
}

/* ---------- agents ---------- */

struct emu_gsi_agent *emu_gsi_agent_register(struct emu_gsi_port *p, uint8_t mgmt_class,
					     uint8_t class_version, unsigned flags,
					     emu_gsi_recv_fn *recv, void *ctx)
{
	struct emu_gsi_agent *a;
	struct emu_list *it, *tmp;

	/* QP1 carries no SMPs (classes 0x01 and 0x81 belong to QP0) */
	if (!p || !mgmt_class || mgmt_class == 0x01 || mgmt_class == 0x81 ||
	    (flags & ~(EMU_GSI_SERVER | EMU_GSI_RMPP)) || ((flags & EMU_GSI_SERVER) && !recv)) {
		errno = EINVAL;
		return NULL;
	}
	if (flags & EMU_GSI_SERVER)
		emu_list_for_each_safe(it, tmp, &p->agents)
		{
			struct emu_gsi_agent *o = emu_list_entry(it, struct emu_gsi_agent, link);

			if ((o->flags & EMU_GSI_SERVER) && o->mgmt_class == mgmt_class &&
			    o->class_version == class_version) {
				errno = EBUSY;
				return NULL;
			}
		}
	a = emu_calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->p = p;
	a->mgmt_class = mgmt_class;
	a->class_version = class_version;
	a->flags = flags;
	a->recv = recv;
	a->ctx = ctx;
	a->hi_tid = p->g->next_hi_tid++;
	emu_list_init(&a->sends);
	emu_list_init(&a->rmpp_recvs);
	emu_list_add_tail(&p->agents, &a->link);
	emu_gsi_trace("agent %u registered: class 0x%02x v%u%s%s", a->hi_tid, mgmt_class,
		      class_version, flags & EMU_GSI_SERVER ? " server" : "",
		      flags & EMU_GSI_RMPP ? " rmpp" : "");
	return a;
}

void emu_gsi_agent_unregister(struct emu_gsi_agent *a)
{
	if (!a)
		return;
	/* ib_unregister_mad_agent -> cancel_mads: every pending send ends flushed */
	while (!emu_list_empty(&a->sends))
		emu_gsi_send_complete(emu_list_entry(a->sends.next, struct emu_gsi_send, link),
				      -EINTR, NULL);
	emu_gsi_rmpp_agent_free(a);
	emu_list_del(&a->link);
	emu_gsi_trace("agent %u unregistered", a->hi_tid);
	free(a);
}

struct emu_gsi_port *emu_gsi_agent_port(const struct emu_gsi_agent *a)
{
	return a->p;
}

uint64_t emu_gsi_agent_new_tid(struct emu_gsi_agent *a)
{
	return (uint64_t)a->hi_tid << 32 | a->tid_lo++;
}

/* ---------- sends ---------- */

void emu_gsi_send_set_state(struct emu_gsi_send *s, enum emu_gsi_send_state st, const char *why)
{
	if (s->state == st)
		return;
	emu_gsi_trace("send tid 0x%016llx: %s -> %s (%s)", (unsigned long long)s->tid,
		      emu_gsi_send_state_name(s->state), emu_gsi_send_state_name(st), why);
	s->state = st;
}

void emu_gsi_send_complete(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp)
{
	struct emu_clock *clk = emu_engine_clock(s->a->p->g->e);

	emu_timer_cancel(clk, &s->timer);
	emu_list_del(&s->link);
	emu_gsi_send_set_state(s, EMU_GSI_SEND_DONE,
			       status == 0	       ? (resp ? "response" : "sent")
			       : status == -ETIMEDOUT ? "timeout"
			       : status == -EINTR     ? "cancelled"
						      : "error");
	if (s->done)
		s->done(s, status, resp, s->ctx);
	if (s->msg != (uint8_t *)(s + 1))
		free(s->msg);
	emu_kmem_free(s);
}

static void send_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_gsi_send *s = arg;
	int err;

	(void)t;
	if (s->deferred) {
		/* the deferred completion of a send that expects nothing */
		emu_gsi_send_complete(s, s->status, NULL);
		return;
	}
	if (s->rmpp && s->state == EMU_GSI_SEND_ACTIVE) {
		emu_gsi_rmpp_send_timeout(s);
		return;
	}
	/* An RMPP message whose segments were all ACKed is not sent again while its response
	 * is awaited (mad.c retry_send: ib_retry_rmpp reports it processed): it times out. */
	if (!s->retries_left || s->rmpp) {
		emu_gsi_send_complete(s, -ETIMEDOUT, NULL);
		return;
	}
	s->retries_left--;
	emu_gsi_trace("send tid 0x%016llx: no response after %u ms, retry %u of %u",
		      (unsigned long long)s->tid, s->timeout_ms, s->retries - s->retries_left,
		      s->retries);
	err = emu_gsi_xmit(s->a->p, &s->to, s->msg);
	if (err) {
		emu_gsi_send_complete(s, -EIO, NULL);
		return;
	}
	emu_timer_arm_in(clk, &s->timer, (uint64_t)s->timeout_ms * EMU_NSEC_PER_MSEC);
}

struct emu_gsi_send *emu_gsi_send(struct emu_gsi_agent *a, const struct emu_gsi_addr *to,
				  const uint8_t *mad, size_t len, uint32_t timeout_ms,
				  unsigned retries, emu_gsi_done_fn *done, void *ctx, int *err)
{
	struct emu_clock *clk;
	struct emu_gsi_send *s;
	bool rmpp;
	int rc = 0;

	if (!a || !to || !mad) {
		rc = -EINVAL;
		goto fail;
	}
	/* RMPP: an RMPP agent's message of an RMPP class that is longer than a MAD, or that
	 * its builder marked as an active RMPP DATA message (a GetTableResp of any length, as
	 * OpenSM builds it, goes out as RMPP and is ACKed) */
	rmpp = (a->flags & EMU_GSI_RMPP) && emu_gsi_class_is_rmpp(mad[1]) &&
	       len >= emu_gsi_data_offset(mad[1]) &&
	       (len > EMU_MAD_LEN ||
		((mad[26] & EMU_RMPP_FLAG_ACTIVE) && mad[25] == EMU_RMPP_TYPE_DATA));
	if ((!rmpp && len != EMU_MAD_LEN) || len > (1u << 20)) {
		rc = -EINVAL;
		goto fail;
	}
	/* a single MAD rides in the send's own allocation (one malloc a MAD, not two); the
	 * copy below writes the first len bytes of the MAD, so only the send and the tail of a
	 * short RMPP message are cleared (calloc cleared all of it: ~1 k instructions a
	 * connection) */
	s = emu_kmem_alloc(sizeof(*s) + (len > EMU_MAD_LEN ? 0 : EMU_MAD_LEN));
	if (s) {
		memset(s, 0, sizeof(*s));
		if (len < EMU_MAD_LEN)
			memset((uint8_t *)(s + 1) + len, 0, EMU_MAD_LEN - len);
		s->msg = len > EMU_MAD_LEN ? emu_calloc(1, len) : (uint8_t *)(s + 1);
	}
	if (!s || !s->msg) {
		emu_kmem_free(s);
		rc = -ENOMEM;
		goto fail;
	}
	clk = emu_engine_clock(a->p->g->e);
	memcpy(s->msg, mad, len);
	s->a = a;
	s->to = *to;
	if (!s->to.qpn)
		s->to.qpn = 1;
	s->len = len;
	s->tid = emu_be64_get(mad + 8);
	s->mgmt_class = mad[1];
	s->timeout_ms = timeout_ms;
	s->retries = s->retries_left = retries;
	s->done = done;
	s->ctx = ctx;
	s->state = EMU_GSI_SEND_ACTIVE;
	emu_timer_init(&s->timer, send_timer, s);
	emu_list_add_tail(&a->sends, &s->link);
	s->rmpp = rmpp;
	if (emu_gsi_trace_on()) /* its arguments cost lookups: only when traced */
		emu_gsi_trace("send tid 0x%016llx: class 0x%02x %s attr 0x%04x, %zu bytes to "
			      "LID %u QP %u, timeout %u ms, %u retries",
			      (unsigned long long)s->tid, s->mgmt_class, emu_mad_method_name(mad[3]),
			      emu_be16_get(mad + 16), len, to->lid, s->to.qpn, timeout_ms, retries);
	if (s->rmpp) {
		s->nsegs = emu_gsi_rmpp_nsegs(s->mgmt_class, len);
		s->newwin = 1;
		emu_gsi_rmpp_send_start(s);
		return s;
	}
	if (emu_gsi_xmit(a->p, &s->to, s->msg))
		s->status = -EIO;
	s->deferred = s->status || !timeout_ms;
	if (s->deferred)
		emu_timer_arm_in(clk, &s->timer, 0); /* completes after this call returns */
	else
		emu_timer_arm_in(clk, &s->timer, (uint64_t)timeout_ms * EMU_NSEC_PER_MSEC);
	return s;
fail:
	if (err)
		*err = rc;
	return NULL;
}

void emu_gsi_cancel(struct emu_gsi_send *s)
{
	if (s)
		emu_gsi_send_complete(s, -EINTR, NULL);
}

int emu_gsi_respond(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, const uint8_t *mad,
		    size_t len)
{
	struct emu_gsi_addr to = r->from;
	int err = 0;

	/* ib_create_ah_from_wc: back along the path the request came (GRH if it had one) */
	if (!to.qkey)
		to.qkey = EMU_QP1_QKEY;
	return emu_gsi_send(a, &to, mad, len, 0, 3, NULL, NULL, &err) ? 0 : err;
}

struct emu_gsi_send *emu_gsi_find_send(struct emu_gsi_agent *a, const uint8_t *mad)
{
	uint64_t tid = emu_be64_get(mad + 8);
	struct emu_list *it, *tmp;

	emu_list_for_each_safe(it, tmp, &a->sends)
	{
		struct emu_gsi_send *s = emu_list_entry(it, struct emu_gsi_send, link);

		if (s->tid == tid && s->mgmt_class == mad[1] && s->timeout_ms && !s->status)
			return s;
	}
	return NULL;
}

/* ---------- dispatch ---------- */

void emu_gsi_deliver(struct emu_gsi_agent *a, const struct emu_gsi_recv *r)
{
	if (emu_gsi_mad_is_response(r->mad)) {
		struct emu_gsi_send *s = emu_gsi_find_send(a, r->mad);

		if (!s) {
			a->p->cnt.dropped_unmatched++;
			emu_gsi_trace("rx tid 0x%016llx: response matching no send: dropped",
				      (unsigned long long)emu_be64_get(r->mad + 8));
			return;
		}
		emu_gsi_send_complete(s, 0, r);
		return;
	}
	if (a->recv)
		a->recv(a, r, a->ctx);
}
