/* The SA client (emu/ib/sa_client.h): one GSI client agent per asking port, queries as sends
 * waiting for their response, answers unpacked by the record tables. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/ib/gsi.h"
#include "emu/hca/pkt.h"
#include "emu/ib/sa_agent.h"
#include "emu/ib/sa_client.h"
#include "util/failcall.h"

struct client_port {
	struct emu_gsi_port *gp;
	struct emu_gsi_agent *agent;
};

struct sa_client {
	struct client_port *ports;
	size_t nports;
};

struct emu_sa_query {
	struct emu_gsi_send *send;
	const struct emu_mad_record_desc *desc;
	emu_sa_query_cb *cb;
	void *ctx;
};

static void client_free(struct emu_engine *e, void *obj)
{
	struct sa_client *c = obj;

	(void)e;
	for (size_t i = 0; i < c->nports; i++)
		emu_gsi_agent_unregister(c->ports[i].agent);
	free(c->ports);
	free(c);
}

static const struct emu_engine_ext_type client_ext = { "sa-client", client_free };

static struct emu_gsi_agent *client_agent(struct emu_engine *e, struct emu_gsi_port *gp)
{
	struct sa_client *c = emu_engine_ext_get(e, &client_ext);
	struct client_port *n;
	struct emu_gsi_agent *a;

	if (!c) {
		c = emu_calloc(1, sizeof(*c));
		if (!c || emu_engine_ext_set(e, &client_ext, c)) {
			free(c);
			return NULL;
		}
	}
	for (size_t i = 0; i < c->nports; i++)
		if (c->ports[i].gp == gp)
			return c->ports[i].agent;
	n = emu_realloc(c->ports, (c->nports + 1) * sizeof(*n));
	if (!n)
		return NULL;
	c->ports = n;
	a = emu_gsi_agent_register(gp, EMU_MGMT_CLASS_SUBN_ADM, EMU_SA_CLASS_VERSION, EMU_GSI_RMPP,
				   NULL, NULL);
	if (!a)
		return NULL;
	c->ports[c->nports++] = (struct client_port){ gp, a };
	return a;
}

static void query_done(struct emu_gsi_send *s, int status, const struct emu_gsi_recv *resp,
		       void *ctx)
{
	struct emu_sa_query *q = ctx;
	const struct emu_mad_record_desc *d = q->desc;
	uint16_t mad_status = 0;
	uint8_t *recs = NULL;
	size_t n = 0;

	(void)s;
	if (!status && resp) {
		mad_status = emu_be16_get(resp->mad + 4);
		if (mad_status) {
			status = -EINVAL; /* sa_query.c recv_handler */
		} else if (resp->mad[3] == EMU_MAD_METHOD_GET_TABLE_RESP) {
			size_t stride = (size_t)emu_be16_get(resp->mad + 44) * 8;

			n = stride && resp->len > EMU_SA_HDR_LEN
				    ? (resp->len - EMU_SA_HDR_LEN) / stride
				    : 0;
			recs = n ? emu_calloc(n, d->struct_size) : NULL;
			if (n && !recs) {
				status = -ENOMEM;
				n = 0;
			}
			for (size_t i = 0; i < n; i++)
				emu_mad_record_unpack(d, resp->mad + EMU_SA_HDR_LEN + i * stride,
						      recs + i * d->struct_size);
		} else {
			recs = emu_calloc(1, d->struct_size);
			if (!recs) {
				status = -ENOMEM;
			} else {
				n = 1;
				emu_mad_record_unpack(d, resp->mad + EMU_SA_HDR_LEN, recs);
			}
		}
	}
	if (q->cb)
		q->cb(q, status, mad_status, recs, n, d->struct_size, q->ctx);
	free(recs);
	free(q);
}

/* The default partition's P_Key of the port (full member first), as sa_query.c's
 * update_sm_ah looks it up. */
static uint16_t sm_pkey(const struct emu_port *po)
{
	for (size_t i = 0; i < po->npkeys; i++)
		if (po->pkeys[i] == 0xffff)
			return 0xffff;
	for (size_t i = 0; i < po->npkeys; i++)
		if (po->pkeys[i] == 0x7fff)
			return 0x7fff;
	return po->npkeys ? po->pkeys[0] : 0xffff;
}

struct emu_sa_query *emu_sa_query(struct emu_engine *e, const struct emu_sa_client_port *from,
				  uint8_t method, const struct emu_mad_record_desc *desc,
				  const void *rec, uint64_t comp_mask,
				  const struct emu_sa_query_opts *opts, emu_sa_query_cb *cb,
				  void *ctx, int *err)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	const struct emu_port *po;
	struct emu_gsi *g;
	struct emu_gsi_port *gp;
	struct emu_gsi_agent *a;
	struct emu_sa_query *q;
	struct emu_gsi_addr to;
	uint8_t mad[EMU_MAD_LEN];
	int rc = -EINVAL;

	if (!from || !desc || !rec)
		goto fail;
	if (from->host >= f->nhosts || from->dev >= f->hosts[from->host].ndevices ||
	    !from->port || from->port > f->hosts[from->host].devices[from->dev].nports) {
		rc = -ENODEV;
		goto fail;
	}
	po = &f->hosts[from->host].devices[from->dev].ports[from->port - 1];
	if (po->link_layer == 2) {
		rc = -ENODEV;
		goto fail;
	}
	if (!po->sm_lid) {
		rc = -EAGAIN;
		goto fail;
	}
	emu_sa_agent_start(e); /* the subnet's SA lives in this process (no SM: nobody answers) */
	rc = -ENOMEM;
	g = emu_gsi_get(e);
	if (!g)
		goto fail;
	gp = emu_gsi_port_get(g, from->host, from->dev, from->port);
	if (!gp) {
		rc = -errno;
		goto fail;
	}
	a = client_agent(e, gp);
	if (!a) {
		rc = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	q = emu_calloc(1, sizeof(*q));
	if (!q)
		goto fail;
	q->desc = desc;
	q->cb = cb;
	q->ctx = ctx;
	{
		struct emu_mad_hdr h = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
					 EMU_SA_CLASS_VERSION, method, 0, 0,
					 emu_gsi_agent_new_tid(a), desc->attr_id, 0 };
		struct emu_sa_hdr sh = { 0, desc->attr_offset, comp_mask };

		memset(mad, 0, sizeof(mad));
		emu_mad_hdr_put(mad, &h);
		emu_sa_hdr_put(mad + 36, &sh);
		emu_mad_record_pack(desc, rec, mad + EMU_SA_HDR_LEN);
	}
	memset(&to, 0, sizeof(to));
	to.lid = po->sm_lid;
	to.sl = po->sm_sl;
	to.qpn = 1;
	to.qkey = EMU_QP1_QKEY;
	to.pkey = sm_pkey(po);
	q->send = emu_gsi_send(a, &to, mad, EMU_MAD_LEN,
			       opts && opts->timeout_ms ? opts->timeout_ms
							: EMU_SA_QUERY_TIMEOUT_MS_DEFAULT,
			       opts ? opts->retries : 0, query_done, q, &rc);
	if (!q->send) {
		free(q);
		goto fail;
	}
	return q;
fail:
	if (err)
		*err = rc;
	return NULL;
}

void emu_sa_query_cancel(struct emu_sa_query *q)
{
	if (q)
		emu_gsi_cancel(q->send);
}

struct emu_sa_query *emu_sa_path_query(struct emu_engine *e, const struct emu_sa_client_port *from,
				       const struct emu_sa_path_rec *rec, uint64_t comp_mask,
				       bool table, const struct emu_sa_query_opts *opts,
				       emu_sa_query_cb *cb, void *ctx, int *err)
{
	return emu_sa_query(e, from, table ? EMU_MAD_METHOD_GET_TABLE : EMU_MAD_METHOD_GET,
			    &emu_sa_path_rec_desc, rec, comp_mask, opts, cb, ctx, err);
}

struct emu_sa_query *emu_sa_mcmember_join(struct emu_engine *e,
					  const struct emu_sa_client_port *from,
					  const struct emu_sa_mcmember_rec *rec, uint64_t comp_mask,
					  const struct emu_sa_query_opts *opts,
					  emu_sa_query_cb *cb, void *ctx, int *err)
{
	return emu_sa_query(e, from, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, rec,
			    comp_mask, opts, cb, ctx, err);
}

struct emu_sa_query *emu_sa_mcmember_leave(struct emu_engine *e,
					   const struct emu_sa_client_port *from,
					   const struct emu_sa_mcmember_rec *rec, uint64_t comp_mask,
					   const struct emu_sa_query_opts *opts,
					   emu_sa_query_cb *cb, void *ctx, int *err)
{
	return emu_sa_query(e, from, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc, rec,
			    comp_mask, opts, cb, ctx, err);
}

struct emu_sa_query *emu_sa_service_query(struct emu_engine *e,
					  const struct emu_sa_client_port *from, uint8_t method,
					  const struct emu_sa_service_rec *rec, uint64_t comp_mask,
					  const struct emu_sa_query_opts *opts,
					  emu_sa_query_cb *cb, void *ctx, int *err)
{
	return emu_sa_query(e, from, method, &emu_sa_service_rec_desc, rec, comp_mask, opts, cb,
			    ctx, err);
}
