/* The CM agents on the wire (emu/ib/cm_host.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/cm_agent.h"
#include "emu/ib/cm_host.h"
#include "emu/sim/engine.h"
#include "emu/sim/engine_ext.h"
#include "emu/ib/gsi.h"
#include "emu/sim/prng.h"
#include "util/failcall.h"
#include "util/failnth.h"

/* Up to this many ports a device (fabric devices have 1 or 2). */
#define CM_HOST_MAX_PORTS 8

struct cm_dev {
	struct emu_cm_agent *agent;
	struct emu_gsi_agent *qp1[CM_HOST_MAX_PORTS + 1]; /* by port number */
	char name[2 * EMU_NAME_MAX + 2];
	const struct emu_device *edev;
};

struct cm_host {
	struct emu_engine *e;
	struct cm_dev **devs; /* by host, then device: devs[host][dev] */
	size_t nhosts;
};

static void cm_host_free(struct emu_engine *e, void *obj)
{
	struct cm_host *h = obj;
	const struct emu_fabric *f = emu_engine_fabric(e);

	for (size_t i = 0; i < h->nhosts; i++) {
		if (!h->devs[i])
			continue;
		for (size_t d = 0; d < f->hosts[i].ndevices; d++) {
			struct cm_dev *cd = &h->devs[i][d];

			/* the agent first: its timers may still send through the QP1 agents */
			if (cd->agent)
				emu_cm_agent_destroy(cd->agent);
			for (unsigned p = 0; p <= CM_HOST_MAX_PORTS; p++)
				if (cd->qp1[p])
					emu_gsi_agent_unregister(cd->qp1[p]);
		}
		free(h->devs[i]);
	}
	free(h->devs);
	free(h);
}

static const struct emu_engine_ext_type cm_host_type = {
	.name = "cm",
	.free = cm_host_free,
};

static int cm_send(void *ctx, const struct emu_cm_addr *dst, const uint8_t mad[EMU_MAD_LEN])
{
	struct cm_dev *cd = ctx;
	struct emu_gsi_addr to;
	struct emu_gsi_port_info pi;
	int err = 0;

	if (dst->port == 0 || dst->port > CM_HOST_MAX_PORTS || !cd->qp1[dst->port])
		return -ENOENT;
	emu_gsi_port_info(emu_gsi_agent_port(cd->qp1[dst->port]), &pi);
	memset(&to, 0, sizeof(to));
	to.lid = dst->lid;
	memcpy(to.gid, dst->gid, sizeof(to.gid));
	/* RoCE always carries the IP header; IB sends a GRH only off-subnet (no LID) */
	to.grh = pi.link_layer == EMU_LL_ETHERNET || dst->lid == 0;
	to.qpn = 1;
	if (!emu_gsi_send(cd->qp1[dst->port], &to, mad, EMU_MAD_LEN, 0, 0, NULL, NULL, &err)) {
		if (err == -ENOMEM) /* ib_create_send_mad failed: the MAD never leaves */
			emu_fail_lost("CM MAD");
		return err;
	}
	return 0;
}

static void cm_recv(struct emu_gsi_agent *a, const struct emu_gsi_recv *r, void *ctx)
{
	struct cm_dev *cd = ctx;
	struct emu_gsi_port_info pi;
	struct emu_cm_addr src;
	unsigned port;

	/* an unregistered device (rdmaemu_ctl_device_remove): cm_remove_one took its CM away,
	 * MADs for it find no agent */
	if (cd->edev && cd->edev->removed)
		return;
	for (port = 1; port <= CM_HOST_MAX_PORTS && cd->qp1[port] != a; port++)
		;
	if (port > CM_HOST_MAX_PORTS)
		return;
	emu_gsi_port_info(r->port, &pi);
	memset(&src, 0, sizeof(src));
	src.lid = r->from.lid;
	memcpy(src.gid, r->from.gid, sizeof(src.gid));
	src.port = (uint8_t)port;
	emu_cm_agent_rx(cd->agent, &src, r->mad, r->len);
}

static const struct emu_cm_transport_ops cm_ops = {
	.send_mad = cm_send,
};

static int cm_dev_open(struct emu_engine *e, struct cm_dev *cd, size_t host, size_t dev)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	const struct emu_device *d = &f->hosts[host].devices[dev];
	struct emu_gsi *g = emu_gsi_get(e);
	struct emu_cm_agent_cfg cfg;
	struct emu_prng seed;
	int err;

	if (!g)
		return -ENOMEM;
	snprintf(cd->name, sizeof(cd->name), "%s/%s", f->hosts[host].name, d->name);
	cd->edev = d;
	memset(&cfg, 0, sizeof(cfg));
	cfg.name = cd->name;
	cfg.ca_guid = d->node_guid;
	cfg.ack_delay = 15; /* rxe's local CA ACK delay (rxe_param.h RXE_LOCAL_CA_ACK_DELAY) */
	cfg.hi_tid = (uint32_t)(host << 8 | dev) + 1;
	/* the agent forks its streams from the fabric seed at creation: stream = the device */
	emu_prng_seed(&seed, f->seed);
	cfg.prng = &seed;
	cfg.stream = (uint64_t)(host << 8 | dev);
	err = emu_cm_agent_create(emu_engine_clock(e), &cm_ops, cd, &cfg, &cd->agent);
	if (err)
		return err;
	for (unsigned p = 1; p <= d->nports && p <= CM_HOST_MAX_PORTS; p++) {
		struct emu_gsi_port *gp = emu_gsi_port_get(g, host, dev, p);

		if (!gp)
			return -errno;
		cd->qp1[p] = emu_gsi_agent_register(gp, EMU_MGMT_CLASS_CM, EMU_CM_CLASS_VERSION,
						    EMU_GSI_SERVER, cm_recv, cd);
		if (!cd->qp1[p])
			return -errno;
	}
	return 0;
}

struct emu_cm_agent *emu_cm_host_agent(struct emu_engine *e, size_t host, size_t dev)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	struct cm_host *h = emu_engine_ext_get(e, &cm_host_type);
	struct cm_dev *cd;
	int err;

	if (host >= f->nhosts || dev >= f->hosts[host].ndevices) {
		errno = ENOENT;
		return NULL;
	}
	if (!h) {
		/* the MAD layer before this attachment: attachments go newest first */
		if (!emu_gsi_get(e))
			return NULL;
		h = emu_calloc(1, sizeof(*h));
		if (!h || !(h->devs = emu_calloc(f->nhosts, sizeof(*h->devs)))) {
			free(h);
			errno = ENOMEM;
			return NULL;
		}
		h->e = e;
		h->nhosts = f->nhosts;
		if (emu_engine_ext_set(e, &cm_host_type, h)) {
			free(h->devs);
			free(h);
			errno = ENOMEM;
			return NULL;
		}
	}
	if (!h->devs[host]) {
		h->devs[host] = emu_calloc(f->hosts[host].ndevices, sizeof(**h->devs));
		if (!h->devs[host]) {
			errno = ENOMEM;
			return NULL;
		}
	}
	cd = &h->devs[host][dev];
	if (cd->agent)
		return cd->agent;
	err = cm_dev_open(e, cd, host, dev);
	if (err) {
		if (cd->agent)
			emu_cm_agent_destroy(cd->agent);
		for (unsigned p = 0; p <= CM_HOST_MAX_PORTS; p++)
			if (cd->qp1[p])
				emu_gsi_agent_unregister(cd->qp1[p]);
		memset(cd, 0, sizeof(*cd));
		errno = -err;
		return NULL;
	}
	return cd->agent;
}
