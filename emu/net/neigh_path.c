/* IPoIB path records: what a unicast IPoIB frame of the neighbour layer (an ARP reply, an
 * IPv6 NA, a unicast ARP or NS probe) needs before it can leave, as Linux 6.1's ipoib does it
 * (drivers/infiniband/ulp/ipoib/ipoib_main.c: unicast_arp_send for ARP, neigh_add_path for
 * IPv6; both path_rec_create, init_path_rec, path_rec_start, path_rec_completion):
 *  - one path per destination GID and netdev, kept until the netdev goes down
 *    (ipoib_ib_dev_down -> ipoib_flush_paths); a path with an answer (path->ah) sends at once
 *    to the record's DLID and SL, the QPN from the hardware address;
 *  - otherwise the frame waits in the path's queue, at most IPOIB_MAX_PATH_REC_QUEUE (3)
 *    frames (more are dropped), and a PathRecord Get goes to the SA unless one is already
 *    under way: DGID the destination, SGID the port's GID 0, P_Key the default partition,
 *    NumbPath 1, Reversible 1, TClass the broadcast group's (0), with component mask
 *    DGID | SGID | NUMB_PATH | TRAFFIC_CLASS | PKEY and a 1000 ms timeout, no retry
 *    (ib_sa_path_rec_get(..., 1000, GFP_ATOMIC, path_rec_completion, ...));
 *  - the answer sends the queue in order; a failure (timeout, an SA error status, no
 *    record) drops it, and the path stays without an answer, so the next frame asks again;
 *  - a query that cannot start (no SM on the port) drops the frame at once.
 * Counted in the host's neighbour stats (path_queries, path_failed; drops in `dropped`);
 * RDMAEMU_TRACE=neigh prints one line per query and per answer. Engine lock held. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/neigh_priv.h"
#include "emu/ib/sa_client.h"
#include "util/failcall.h"

#define IPOIB_MAX_PATH_REC_QUEUE 3
#define PATH_QUERY_TIMEOUT_MS 1000
/* the largest unicast frame of the layer: IPoIB header 4 + IPv6 header 40 + NA 24 + its
 * 24-byte IPoIB link-layer option = 92 bytes (an IPoIB ARP: 60) */
#define PATH_FRAME_MAX 92

struct path_frame {
	uint32_t dqpn;
	size_t len;
	uint8_t data[PATH_FRAME_MAX];
};

struct neigh_path {
	struct neigh_path *next;
	struct neigh_dev *dev;
	uint8_t dgid[16];
	bool valid; /* path->ah: a record arrived */
	uint16_t dlid;
	uint8_t sl;
	struct emu_sa_query *query; /* under way, NULL otherwise */
	unsigned nqueued;
	struct path_frame queue[IPOIB_MAX_PATH_REC_QUEUE];
};

static const char *gid_str(const uint8_t *gid, char *buf, size_t len)
{
	return emu_neigh_ntop(AF_INET6, gid, buf, len);
}

static struct neigh_path *path_find(struct neigh_dev *d, const uint8_t *dgid)
{
	for (struct neigh_path *p = d->paths; p; p = p->next)
		if (!memcmp(p->dgid, dgid, 16))
			return p;
	return NULL;
}

static void path_done(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
		      size_t nrecs, size_t rec_size, void *ctx)
{
	struct neigh_path *p = ctx;
	struct neigh_dev *d = p->dev;
	char g[64];

	(void)q;
	(void)rec_size;
	p->query = NULL;
	if (!status && !nrecs)
		status = -EINVAL;
	emu_neigh_trace("ipoib %s: path to %s: status %d (MAD status 0x%x), %u queued",
			d->nd->name, gid_str(p->dgid, g, sizeof(g)), status, mad_status,
			p->nqueued);
	if (status) {
		/* path_rec_completion(): the queued frames are dropped (tx_dropped) */
		d->host->st.path_failed++;
		d->host->st.dropped += p->nqueued;
		p->nqueued = 0;
		return;
	}
	{
		const struct emu_sa_path_rec *rec = recs;

		p->dlid = rec->dlid;
		p->sl = rec->sl;
		p->valid = true;
	}
	for (unsigned i = 0; i < p->nqueued; i++)
		emu_neigh_ipoib_send(d, p->dlid, p->sl, p->queue[i].dqpn, NULL, p->queue[i].data,
				     p->queue[i].len);
	p->nqueued = 0;
}

static int path_rec_start(struct neigh_path *p)
{
	struct neigh_dev *d = p->dev;
	struct emu_sa_client_port from = { d->host->idx, (size_t)d->nd->device, d->nd->port };
	struct emu_sa_query_opts opts = { PATH_QUERY_TIMEOUT_MS, 0 };
	struct emu_sa_path_rec rec;
	char g[64];
	int err = -ENOMEM;

	/* init_path_rec() */
	memset(&rec, 0, sizeof(rec));
	memcpy(rec.dgid, p->dgid, 16);
	memcpy(rec.sgid, d->gid, 16);
	rec.pkey = 0xffff; /* priv->pkey: the default partition (the only one modelled) */
	rec.numb_path = 1;
	rec.reversible = 1;
	rec.traffic_class = 0; /* the broadcast group's (emu/ib/sa.c: OpenSM's default, 0) */
	p->query = emu_sa_path_query(d->host->n->e, &from, &rec,
				     EMU_PR_COMP_DGID | EMU_PR_COMP_SGID | EMU_PR_COMP_NUMB_PATH |
					     EMU_PR_COMP_TCLASS | EMU_PR_COMP_PKEY,
				     false, &opts, path_done, p, &err);
	emu_neigh_trace("ipoib %s: path record query for %s: %s (%d)", d->nd->name,
			gid_str(p->dgid, g, sizeof(g)), p->query ? "sent" : "failed",
			p->query ? 0 : err);
	if (!p->query)
		return err;
	d->host->st.path_queries++;
	return 0;
}

void emu_neigh_path_send(struct neigh_dev *d, const uint8_t dst_hw[20], const uint8_t *payload,
			 size_t len)
{
	uint32_t dqpn = (uint32_t)dst_hw[1] << 16 | (uint32_t)dst_hw[2] << 8 | dst_hw[3];
	struct neigh_path *p = path_find(d, dst_hw + 4);
	struct path_frame *f;

	if (p && p->valid) {
		emu_neigh_ipoib_send(d, p->dlid, p->sl, dqpn, NULL, payload, len);
		return;
	}
	if (!p) {
		p = emu_calloc(1, sizeof(*p));
		if (!p) {
			d->host->st.dropped++;
			return;
		}
		p->dev = d;
		memcpy(p->dgid, dst_hw + 4, 16);
		p->next = d->paths;
		d->paths = p;
	}
	if (!p->query && path_rec_start(p)) {
		d->host->st.dropped++;
		return;
	}
	if (p->nqueued >= IPOIB_MAX_PATH_REC_QUEUE || len > PATH_FRAME_MAX) {
		d->host->st.dropped++;
		return;
	}
	f = &p->queue[p->nqueued++];
	f->dqpn = dqpn;
	f->len = len;
	memcpy(f->data, payload, len);
}

void emu_neigh_paths_flush(struct neigh_dev *d)
{
	while (d->paths) {
		struct neigh_path *p = d->paths;

		/* ib_sa_cancel_query: path_done runs now with -EINTR and drops the queue */
		if (p->query)
			emu_sa_query_cancel(p->query);
		d->paths = p->next;
		free(p);
	}
}
