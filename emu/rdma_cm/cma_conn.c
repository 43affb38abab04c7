/* rdma_cm's connection half on the IB CM agents (the kernel's cma.c IB/RoCE paths:
 * cma_ib_listen, cma_connect_ib, cma_resolve_ib_udp, cma_ib_handler, cma_req_handler,
 * cma_sidr_rep_handler, cma_accept_ib, cma_rep_recv, cma_send_sidr_rep, rdma_reject,
 * rdma_disconnect, rdma_notify, and ib_cm_init_qp_attr's RTR/RTS attributes).
 *
 * Every emulated host runs one CM agent per device on QP1 (emu/ib/cm_host.h), created for the
 * whole fabric at the first CM use, as every kernel loads ib_cm for all of its devices. A
 * listening rdma_cm id holds an ib_cm listen on its service ID (port space << 16 | port) on
 * its device, or every device of its host when bound to a wildcard; listens of the same
 * service ID are shared (ib_cm_insert_listen). An incoming REQ finds its rdma_cm listener by
 * the CMA header's destination address (cma_ib_id_from_event); none with the same service ID
 * means ib_cm's REJ 8, a listener whose address does not match means cma_req_handler fails
 * and ib_cm answers REJ 28.
 *
 * The ucma ids never have a kernel QP (the QP belongs to the library), so the active side
 * reports CONNECT_RESPONSE on REP and the library does RTR/RTS and the RTU (an ACCEPT without
 * parameters: cma_rep_recv), exactly as with the real kernel. docs/cma.md, "Connections". */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <rdma/rdma_user_cm.h>

#include "emu/ib/cm_agent.h"
#include "emu/ib/cm_host.h"
#include "emu/rdma_cm/cma_conn.h"
#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/sim/engine_ext.h"
#include "emu/ib/mad.h"
#include "emu/rdma_cm/ucma_event.h"
#include "util/failcall.h"
#include "util/failnth.h"

/* cm_destroy_id in REQ_RCVD with -ENOMEM: "Do not reject to allow future retries" */
#define LOST_REQ "a connection request (the CM drops it without a REJ; the sender's retry comes)"

/* ib_verbs.h enum ib_qp_attr_mask */
enum {
	QPA_STATE = 1 << 0,
	QPA_ACCESS_FLAGS = 1 << 3,
	QPA_PKEY_INDEX = 1 << 4,
	QPA_PORT = 1 << 5,
	QPA_AV = 1 << 7,
	QPA_PATH_MTU = 1 << 8,
	QPA_TIMEOUT = 1 << 9,
	QPA_RETRY_CNT = 1 << 10,
	QPA_RNR_RETRY = 1 << 11,
	QPA_RQ_PSN = 1 << 12,
	QPA_MAX_QP_RD_ATOMIC = 1 << 13,
	QPA_MIN_RNR_TIMER = 1 << 15,
	QPA_SQ_PSN = 1 << 16,
	QPA_MAX_DEST_RD_ATOMIC = 1 << 17,
	QPA_DEST_QPN = 1 << 20,
};
#define QPT_RC 2	      /* IB_QPT_RC */
#define QPT_UD 4	      /* IB_QPT_UD */
#define QPS_INIT 1
#define QPS_RTR 2
#define QPS_RTS 3
#define IB_EVENT_COMM_EST 4   /* enum ib_event_type */
#define IB_EVENT_PATH_MIG 6
#define PATH_FLAGS_PRIMARY 0x2b /* IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL */

/* ---- per-engine state: the shared ib_cm listens, the PSN stream ---- */

struct cm_listen {
	struct emu_list node;
	struct emu_cm_agent *agent;
	struct emu_cm_id *cm;
	uint64_t sid;
	unsigned refs;
};

struct cma_cm {
	struct emu_engine *e;
	struct emu_list listens;
	struct emu_prng psn; /* the ids' random initial PSNs (get_random_u32 in the kernel) */
	bool agents;	     /* every host's agents exist */
};

/* Per-id state (id->net[EMU_CMA_NET_CM]). */
enum { CTX_LISTEN = 1, CTX_CONN };

struct cma_conn {
	int kind; /* CTX_CONN */
	struct emu_cma_id *id;
	struct emu_cm_agent *agent;
	struct emu_cm_id *cm;
	/* what ib_cm keeps for ib_cm_init_qp_attr (cm_id_priv) */
	struct emu_cm_path_rec path; /* the primary path, as the local side sees it */
	uint32_t remote_qpn, sq_psn;
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	uint8_t sgid_index;
	uint32_t qkey;	 /* UD: id_priv->qkey */
	uint32_t qp_num; /* UD passive: our QPN, sent in the SIDR_REP */
};

struct cma_listen_ids {
	int kind; /* CTX_LISTEN */
	unsigned n;
	struct cm_listen *l[];
};

static void cma_cm_free(struct emu_engine *e, void *obj)
{
	struct cma_cm *c = obj;
	struct emu_list *pos, *tmp;

	(void)e;
	/* the agents (attached before us) free their ids themselves */
	emu_list_for_each_safe(pos, tmp, &c->listens)
		free(emu_list_entry(pos, struct cm_listen, node));
	free(c);
}

static const struct emu_engine_ext_type cma_cm_type = { .name = "cma_cm", .free = cma_cm_free };

static struct cma_cm *cma_cm_get(void)
{
	struct emu_engine *e = emu_engine_get();
	struct cma_cm *c = emu_engine_ext_get(e, &cma_cm_type);
	struct emu_prng seed;

	if (c)
		return c;
	/* the agents first: attachments are freed newest first, so ours goes before theirs */
	if (!emu_cm_host_agent(e, 0, 0) && errno != ENOENT)
		return NULL;
	c = emu_calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->e = e;
	emu_list_init(&c->listens);
	emu_prng_seed(&seed, emu_engine_fabric(e)->seed);
	emu_prng_fork(&seed, 0x636d61707370ull /* "cmapsp" */, &c->psn);
	if (emu_engine_ext_set(e, &cma_cm_type, c)) {
		free(c);
		return NULL;
	}
	return c;
}

static size_t host_index(const struct emu_host *h)
{
	return (size_t)(h - h->fabric->hosts);
}

/* Every device of every host runs its CM agent (ib_cm is loaded everywhere). */
static int ensure_agents(struct cma_cm *c)
{
	const struct emu_fabric *f = emu_engine_fabric(c->e);

	if (c->agents)
		return 0;
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++)
			if (!emu_cm_host_agent(c->e, h, d))
				return -errno;
	c->agents = true;
	return 0;
}

static struct emu_cm_agent *agent_of(const struct emu_cma_id *id)
{
	return emu_cm_host_agent(emu_engine_get(), host_index(id->host), (size_t)id->dev);
}

static int cma_cm_handler(struct emu_cm_id *cm, const struct emu_cm_event *ev);

/* ---- events ---- */

/* ucma_event_handler: events of a new connection whose CONNECT_REQUEST the application has
 * not accepted yet (uid still 0) are dropped. */
static void conn_event(struct emu_cma_id *id, uint32_t event, int32_t status,
		       const struct rdma_ucm_event_resp *param)
{
	if (!id->uid && event != EMU_CMA_EVENT_CONNECT_REQUEST) {
		emu_cma_trace("cma %u: event %u dropped (not accepted yet)", id->handle, event);
		/* "the accept will just fail later" (ucma_event_handler): a client of rdmaemud
		 * that kept a verdict for that accept must ask */
		emu_ucma_forget(id);
		return;
	}
	emu_cma_event(id, NULL, event, status, param);
}

static void set_pdata(uint8_t *dst, uint8_t *dst_len, const uint8_t *pd, unsigned len)
{
	if (pd && len)
		memcpy(dst, pd, len);
	*dst_len = (uint8_t)len;
}

/* ib_init_ah_attr_from_path (and cm_init_av_by_path): the address vector of a path. */
static void ah_from_path(const struct cma_conn *c, uint8_t port, struct ib_uverbs_ah_attr *ah)
{
	memset(ah, 0, sizeof *ah);
	memcpy(ah->grh.dgid, c->path.dgid, 16);
	ah->grh.flow_label = c->path.flow_label;
	ah->grh.sgid_index = c->sgid_index;
	ah->grh.hop_limit = c->path.hop_limit;
	ah->grh.traffic_class = c->path.traffic_class;
	ah->dlid = c->path.dlid;
	ah->sl = c->path.sl;
	ah->static_rate = c->path.rate;
	/* RoCE always carries a GRH; IB only off-subnet (hop limit > 1) */
	ah->is_global = !c->path.dlid || c->path.hop_limit > 1;
	ah->port_num = port;
}

static uint16_t pkey_index_of(const struct emu_cma_id *id, uint16_t pkey)
{
	const struct emu_port *p = &id->host->devices[id->dev].ports[id->port - 1];

	for (size_t i = 0; i < p->npkeys; i++)
		if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return (uint16_t)i;
	return 0;
}

/* ---- conn state ---- */

static struct cma_conn *conn_new(struct emu_cma_id *id, struct emu_cm_agent *a)
{
	struct cma_conn *c = emu_kmem_zalloc(sizeof *c);

	if (!c)
		return NULL;
	c->kind = CTX_CONN;
	c->id = id;
	c->agent = a;
	c->sgid_index = (uint8_t)(id->gid_index < 0 ? 0 : id->gid_index);
	id->net[EMU_CMA_NET_CM] = c;
	return c;
}

static void conn_free(struct emu_cma_id *id)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];

	if (!c)
		return;
	if (c->cm) {
		emu_cm_id_set_context(c->cm, NULL);
		emu_cm_destroy_id(c->cm);
	}
	emu_kmem_free(c);
	id->net[EMU_CMA_NET_CM] = NULL;
}

static uint32_t new_psn(void)
{
	struct cma_cm *c = cma_cm_get();

	return c ? (uint32_t)(emu_prng_u64(&c->psn) & 0xffffff) : 0;
}

/* The id's route as the CM wants it (sa_path_rec from the 64-byte wire record). */
static int path_of(const struct emu_cma_id *id, struct emu_cm_path_rec *out)
{
	struct emu_sa_path_rec r;

	if (!id->npaths)
		return -EINVAL;
	emu_mad_record_unpack(&emu_sa_path_rec_desc, (const uint8_t *)id->paths[0].path_rec, &r);
	memset(out, 0, sizeof *out);
	memcpy(out->sgid, r.sgid, 16);
	memcpy(out->dgid, r.dgid, 16);
	out->slid = r.slid;
	out->dlid = r.dlid;
	out->flow_label = r.flow_label;
	out->rate = r.rate;
	out->traffic_class = r.traffic_class;
	out->hop_limit = r.hop_limit;
	out->sl = r.sl;
	out->mtu = r.mtu;
	out->packet_life_time = r.packet_life_time;
	out->pkey = r.pkey;
	return 0;
}

/* The CMA IP header of a REQ/SIDR_REQ (cma_format_hdr): our source port and both addresses. */
static int format_hdr(const struct emu_cma_id *id, uint8_t *p)
{
	struct emu_cma_hdr h;

	memset(&h, 0, sizeof h);
	h.cma_version = EMU_CMA_VERSION;
	h.port = emu_cma_port((const struct sockaddr *)&id->src);
	if (id->src.ss_family == AF_INET) {
		h.ip_version = 4;
		memcpy(h.src + 12, &((const struct sockaddr_in *)&id->src)->sin_addr, 4);
		memcpy(h.dst + 12, &((const struct sockaddr_in *)&id->dst)->sin_addr, 4);
	} else {
		h.ip_version = 6;
		memcpy(h.src, &((const struct sockaddr_in6 *)&id->src)->sin6_addr, 16);
		memcpy(h.dst, &((const struct sockaddr_in6 *)&id->dst)->sin6_addr, 16);
	}
	return emu_cma_hdr_pack(p, &h);
}

/* rdma_get_service_id: an AF_IB address carries its service ID, an IP one gives
 * (port space << 16) + port. */
static uint64_t service_id_of(const struct emu_cma_id *id, const struct emu_cma_sockaddr *a)
{
	if (a->ss_family == 27 /* AF_IB */)
		return be64toh(a->ib.sib_sid);
	return emu_cma_service_id(id->ps, emu_cma_port(&a->sa));
}

/* cma_user_data_offset: an AF_IB id sends no CMA header (its user may: ai_connect), so all of
 * the REQ's 92 / SIDR_REQ's 216 bytes are the user's. */
static size_t hdr_len_of(const struct emu_cma_id *id)
{
	return id->src.ss_family == 27 ? 0 : EMU_CMA_HDR_LEN;
}

static void cm_dst(const struct emu_cma_id *id, const struct emu_cm_path_rec *path,
		   struct emu_cm_addr *dst)
{
	memset(dst, 0, sizeof *dst);
	dst->lid = path->dlid;
	memcpy(dst->gid, path->dgid, 16);
	dst->port = id->port;
	dst->pkey_index = pkey_index_of(id, path->pkey);
}

/* ---- the active side ---- */

static int connect_ud(struct emu_cma_id *id, struct cma_conn *c,
		      const struct rdma_ucm_conn_param *p)
{
	uint8_t pd[EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE];
	struct emu_cm_sidr_req_param r;

	size_t off = hdr_len_of(id);

	/* cma_resolve_ib_udp: header + user data, at most 216 bytes (-EINVAL) */
	if (off + p->private_data_len > EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	memset(pd, 0, sizeof pd);
	if (off && format_hdr(id, pd))
		return -EINVAL;
	memcpy(pd + off, p->private_data, p->private_data_len);
	memset(&r, 0, sizeof r);
	r.path = &c->path;
	cm_dst(id, &c->path, &r.dst);
	r.service_id = service_id_of(id, &id->dst);
	r.timeout_ms = 1u << (EMU_CMA_CM_RESPONSE_TIMEOUT - 8);
	r.max_cm_retries = EMU_CMA_MAX_CM_RETRIES;
	r.private_data = pd;
	r.private_data_len = (uint8_t)(off + p->private_data_len);
	return emu_cm_send_sidr_req(c->cm, &r);
}

static int connect_rc(struct emu_cma_id *id, struct cma_conn *c,
		      const struct rdma_ucm_conn_param *p, const struct rdma_ucm_ece *ece)
{
	uint8_t pd[EMU_CM_REQ_PRIVATE_DATA_SIZE];
	struct emu_cm_req_param r;

	size_t off = hdr_len_of(id);

	/* cma_connect_ib: header + user data, ib_send_cm_req refuses more than 92 bytes */
	if (off + p->private_data_len > EMU_CM_REQ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	memset(pd, 0, sizeof pd);
	if (off && format_hdr(id, pd))
		return -EINVAL;
	memcpy(pd + off, p->private_data, p->private_data_len);
	memset(&r, 0, sizeof r);
	r.primary_path = &c->path;
	cm_dst(id, &c->path, &r.dst);
	r.service_id = service_id_of(id, &id->dst);
	r.qp_num = p->qp_num;
	r.qp_type = EMU_CM_TRANSPORT_RC;
	r.starting_psn = id->seq_num;
	r.responder_resources = p->responder_resources;
	r.initiator_depth = p->initiator_depth;
	r.flow_control = p->flow_control;
	r.retry_count = p->retry_count < 7 ? p->retry_count : 7;
	r.rnr_retry_count = p->rnr_retry_count < 7 ? p->rnr_retry_count : 7;
	r.remote_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT;
	r.local_cm_response_timeout = EMU_CMA_CM_RESPONSE_TIMEOUT;
	r.max_cm_retries = EMU_CMA_MAX_CM_RETRIES;
	r.srq = p->srq ? 1 : 0;
	r.ece_vendor_id = ece ? ece->vendor_id : 0;
	r.ece_attr_mod = ece ? ece->attr_mod : 0;
	r.private_data = pd;
	r.private_data_len = (uint8_t)(off + p->private_data_len);
	/* what ib_cm remembers from its own REQ */
	c->sq_psn = 0;
	c->initiator_depth = r.initiator_depth;
	c->responder_resources = r.responder_resources;
	c->retry_count = r.retry_count;
	c->rnr_retry_count = r.rnr_retry_count;
	return emu_cm_send_req(c->cm, &r);
}

static int op_connect(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		      const struct rdma_ucm_ece *ece)
{
	struct cma_cm *cc = cma_cm_get();
	struct emu_cm_agent *a;
	struct cma_conn *c;
	int ret;

	if (!cc)
		return -ENOMEM;
	ret = ensure_agents(cc);
	if (ret)
		return ret;
	a = agent_of(id);
	if (!a)
		return -ENODEV;
	conn_free(id); /* a failed earlier attempt */
	c = conn_new(id, a);
	if (!c)
		return -ENOMEM;
	ret = path_of(id, &c->path);
	if (!ret)
		ret = emu_cm_create_id(a, cma_cm_handler, c, &c->cm);
	if (ret) {
		conn_free(id);
		return ret;
	}
	id->seq_num = new_psn();
	ret = id->qp_type == QPT_UD ? connect_ud(id, c, p) : connect_rc(id, c, p, ece);
	if (ret)
		conn_free(id);
	else
		emu_cma_trace("cma %u: %s sent (service 0x%llx)", id->handle,
			      id->qp_type == QPT_UD ? "SIDR_REQ" : "REQ",
			      (unsigned long long)service_id_of(id, &id->dst));
	return ret;
}

/* cma_ib_handler: the events of a connected (or connecting) RC id. */
static int conn_handler(struct cma_conn *c, const struct emu_cm_event *ev)
{
	struct emu_cma_id *id = c->id;
	struct rdma_ucm_event_resp r;
	uint32_t event;
	int32_t status = 0;

	if ((ev->type != EMU_CM_UE_TIMEWAIT_EXIT && id->state != EMU_CMA_CONNECT) ||
	    (ev->type == EMU_CM_UE_TIMEWAIT_EXIT && id->state != EMU_CMA_DISCONNECT))
		return 0;
	memset(&r, 0, sizeof r);
	switch (ev->type) {
	case EMU_CM_UE_REQ_ERROR:
	case EMU_CM_UE_REP_ERROR:
		event = EMU_CMA_EVENT_UNREACHABLE;
		status = -ETIMEDOUT;
		break;
	case EMU_CM_UE_REP_RECEIVED:
		/* what cm_rep_handler keeps (initiator depth and responder resources crossed) */
		c->remote_qpn = ev->msg->local_qpn;
		c->sq_psn = ev->msg->starting_psn;
		c->initiator_depth = ev->msg->responder_resources;
		c->responder_resources = ev->msg->initiator_depth;
		c->rnr_retry_count = ev->msg->rnr_retry_count;
		emu_cm_send_mra(c->cm, EMU_CMA_CM_MRA_SETTING, NULL, 0);
		/* ucma ids have no kernel QP: the library finishes (cma_set_rep_event_data) */
		event = EMU_CMA_EVENT_CONNECT_RESPONSE;
		set_pdata(r.param.conn.private_data, &r.param.conn.private_data_len,
			  ev->private_data, ev->private_data_len);
		r.param.conn.responder_resources = ev->msg->initiator_depth;
		r.param.conn.initiator_depth = ev->msg->responder_resources;
		r.param.conn.flow_control = ev->msg->end_to_end_flow_control;
		r.param.conn.rnr_retry_count = ev->msg->rnr_retry_count;
		r.param.conn.srq = ev->msg->srq;
		r.param.conn.qp_num = ev->msg->local_qpn;
		r.ece.vendor_id = ev->msg->vendor_id;
		r.ece.attr_mod = ev->msg->attr_mod;
		break;
	case EMU_CM_UE_RTU_RECEIVED:
	case EMU_CM_UE_USER_ESTABLISHED:
		event = EMU_CMA_EVENT_ESTABLISHED;
		break;
	case EMU_CM_UE_DREQ_ERROR:
		status = -ETIMEDOUT;
		/* fall through */
	case EMU_CM_UE_DREQ_RECEIVED:
	case EMU_CM_UE_DREP_RECEIVED:
		if (!emu_cma_comp_exch(id, EMU_CMA_CONNECT, EMU_CMA_DISCONNECT))
			return 0;
		event = EMU_CMA_EVENT_DISCONNECTED;
		break;
	case EMU_CM_UE_TIMEWAIT_EXIT:
		event = EMU_CMA_EVENT_TIMEWAIT_EXIT;
		break;
	case EMU_CM_UE_REJ_RECEIVED:
		event = EMU_CMA_EVENT_REJECTED;
		status = ev->msg->reason;
		set_pdata(r.param.conn.private_data, &r.param.conn.private_data_len,
			  ev->private_data, ev->private_data_len);
		break;
	default: /* MRA, LAP, APR: nothing for the consumer */
		return 0;
	}
	emu_cma_trace("cma %u: %s -> event %u status %d", id->handle,
		      emu_cm_uevent_name(ev->type), event, status);
	conn_event(id, event, status, &r);
	return 0;
}

/* cma_sidr_rep_handler */
static int sidr_handler(struct cma_conn *c, const struct emu_cm_event *ev)
{
	struct emu_cma_id *id = c->id;
	struct rdma_ucm_event_resp r;
	uint32_t event;
	int32_t status = 0;

	if (id->state != EMU_CMA_CONNECT)
		return 0;
	memset(&r, 0, sizeof r);
	switch (ev->type) {
	case EMU_CM_UE_SIDR_REQ_ERROR:
		event = EMU_CMA_EVENT_UNREACHABLE;
		status = -ETIMEDOUT;
		break;
	case EMU_CM_UE_SIDR_REP_RECEIVED:
		set_pdata(r.param.ud.private_data, &r.param.ud.private_data_len,
			  ev->private_data, ev->private_data_len);
		if (ev->msg->sidr_status != EMU_CM_SIDR_SUCCESS) {
			event = EMU_CMA_EVENT_UNREACHABLE;
			status = ev->msg->sidr_status;
			break;
		}
		/* cma_set_qkey: a Q_Key already set must match */
		if (c->qkey && ev->msg->qkey && c->qkey != ev->msg->qkey) {
			event = EMU_CMA_EVENT_ADDR_ERROR;
			status = -EINVAL;
			break;
		}
		if (!c->qkey)
			c->qkey = ev->msg->qkey;
		ah_from_path(c, id->port, (struct ib_uverbs_ah_attr *)&r.param.ud.ah_attr);
		r.param.ud.qp_num = ev->msg->qpn;
		r.param.ud.qkey = ev->msg->qkey;
		r.ece.vendor_id = ev->msg->vendor_id;
		r.ece.attr_mod = ev->msg->attr_mod;
		event = EMU_CMA_EVENT_ESTABLISHED;
		break;
	default:
		return 0;
	}
	emu_cma_trace("cma %u: %s -> event %u status %d", id->handle,
		      emu_cm_uevent_name(ev->type), event, status);
	conn_event(id, event, status, &r);
	return 0;
}

/* ---- the passive side ---- */

/* The netdev of host h that carries address a (the REQ's destination). */
static int netdev_of(const struct emu_host *h, const struct sockaddr *a)
{
	for (size_t i = 0; i < h->nnetdevs; i++) {
		const struct emu_netdev *n = &h->netdevs[i];

		for (size_t j = 0; j < n->naddrs; j++) {
			const struct emu_ifaddr *ia = &n->addrs[j];

			if (ia->family != a->sa_family)
				continue;
			if (a->sa_family == AF_INET &&
			    !memcmp(&ia->addr.v4, &((const struct sockaddr_in *)a)->sin_addr, 4))
				return (int)i;
			if (a->sa_family == AF_INET6 &&
			    !memcmp(&ia->addr.v6, &((const struct sockaddr_in6 *)a)->sin6_addr, 16))
				return (int)i;
		}
	}
	return -1;
}

static void hdr_addr(struct sockaddr_storage *ss, const struct emu_cma_hdr *h, const uint8_t *ip,
		     uint16_t port)
{
	memset(ss, 0, sizeof *ss);
	if (h->ip_version == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, ip + 12, 4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, ip, 16);
		s->sin6_port = htons(port);
	}
}

/* cma_format_paths_from_req: the passive side's path, stored as the PATH query returns it. */
static void store_req_path(struct emu_cma_id *id, struct cma_conn *c, const struct emu_cm_msg *m)
{
	struct ib_path_rec_data pd;
	struct emu_sa_path_rec r;
	unsigned plt = m->primary.local_ack_timeout;

	memset(&c->path, 0, sizeof c->path);
	memcpy(c->path.dgid, m->primary.local_gid, 16);
	memcpy(c->path.sgid, m->primary.remote_gid, 16);
	c->path.dlid = m->primary.local_lid == 0xffff ? 0 : m->primary.local_lid;
	c->path.slid = m->primary.remote_lid == 0xffff ? 0 : m->primary.remote_lid;
	c->path.flow_label = m->primary.flow_label;
	c->path.hop_limit = m->primary.hop_limit;
	c->path.traffic_class = m->primary.traffic_class;
	c->path.sl = m->primary.sl;
	c->path.rate = m->primary.packet_rate;
	c->path.mtu = m->path_mtu;
	c->path.pkey = m->pkey;
	c->path.packet_life_time = (uint8_t)(plt - (plt > 0));
	memset(&r, 0, sizeof r);
	memcpy(r.dgid, c->path.dgid, 16);
	memcpy(r.sgid, c->path.sgid, 16);
	r.dlid = c->path.dlid;
	r.slid = c->path.slid;
	r.flow_label = c->path.flow_label;
	r.hop_limit = c->path.hop_limit;
	r.traffic_class = c->path.traffic_class;
	r.reversible = 1;
	r.numb_path = 1;
	r.pkey = c->path.pkey;
	r.sl = c->path.sl;
	r.mtu_selector = 2;
	r.mtu = c->path.mtu;
	r.rate_selector = 2;
	r.rate = c->path.rate;
	r.packet_life_time_selector = 2;
	r.packet_life_time = c->path.packet_life_time;
	memset(&pd, 0, sizeof pd);
	pd.flags = PATH_FLAGS_PRIMARY;
	emu_mad_record_pack(&emu_sa_path_rec_desc, &r, (uint8_t *)pd.path_rec);
	(void)emu_cma_paths_set(id, &pd, 1); /* room reserved by req_handler */
}

/* cma_req_handler for a REQ or SIDR_REQ that reached one of our ib_cm listens. Non-zero: the
 * agent destroys the new cm id (REJ 28 / SIDR_REP REJECT, as ib_cm after a failed handler). */
/* cma_save_ib_info from a REQ's primary path: the new id's own address is the GID the
 * requester addressed (the path's remote GID), with the P_Key, the flow label and the service
 * ID under a full mask; the peer's is the requester's GID. */
static void afib_addrs(const struct emu_cm_msg *m, struct sockaddr_storage *own,
		       struct sockaddr_storage *peer)
{
	struct emu_sockaddr_ib *o = (struct emu_sockaddr_ib *)own;
	struct emu_sockaddr_ib *p = (struct emu_sockaddr_ib *)peer;

	memset(own, 0, sizeof *own);
	memset(peer, 0, sizeof *peer);
	o->sib_family = p->sib_family = 27; /* AF_IB */
	o->sib_pkey = p->sib_pkey = htons(m->pkey);
	o->sib_flowinfo = p->sib_flowinfo = htonl(m->primary.flow_label);
	memcpy(o->sib_addr, m->primary.remote_gid, 16);
	memcpy(p->sib_addr, m->primary.local_gid, 16);
	o->sib_sid = htobe64(m->service_id);
	o->sib_sid_mask = ~0ull;
}

/* cma_save_ib_info without a path (a SIDR_REQ): the new id's own address is the listener's,
 * with a full service ID mask; of the peer's only the family is set. */
static void afib_addrs_of_listener(const struct emu_cma_id *listen, struct sockaddr_storage *own,
				   struct sockaddr_storage *peer)
{
	struct emu_sockaddr_ib *o = (struct emu_sockaddr_ib *)own;

	memset(own, 0, sizeof *own);
	memset(peer, 0, sizeof *peer);
	memcpy(o, &listen->src, sizeof *o);
	o->sib_sid_mask = ~0ull;
	((struct emu_sockaddr_ib *)peer)->sib_family = 27; /* AF_IB */
}

/* cma_ib_acquire_dev for an IP request on an AF_IB listener: the GID comes from the receiving
 * netdev's hardware address (rdma_copy_src_l2_addr: IPoIB, the port's GID 0). On RoCE it would
 * come from rdma_ip2gid of the new id's AF_IB address, which has none: -ENODEV. */
static int attach_recv_port(struct emu_cma_id *id, const struct emu_host *h, size_t d,
			    uint8_t pnum, uint16_t pkey)
{
	const struct emu_device *dev = &h->devices[d];

	if (pnum < 1 || pnum > dev->nports || dev->ports[pnum - 1].link_layer != 1 ||
	    !dev->ports[pnum - 1].ngids)
		return -ENODEV;
	id->dev = (int)d;
	emu_cma_attach_dev(id);
	id->port = pnum;
	id->gid_index = 0;
	id->pkey = pkey;
	id->netdev = -1;
	for (size_t n = 0; n < h->nnetdevs; n++)
		if (h->netdevs[n].device == (int)d && h->netdevs[n].port == pnum)
			id->netdev = (int)n;
	return 0;
}

static int req_handler(struct emu_cm_id *cm, const struct emu_cm_event *ev)
{
	const struct emu_cm_msg *m = ev->msg;
	struct emu_cm_agent *a = emu_cm_id_agent(cm);
	const struct emu_host *h = NULL;
	bool sidr = ev->type == EMU_CM_UE_SIDR_REQ_RECEIVED;
	const struct emu_fabric *f = emu_engine_fabric(emu_engine_get());
	struct emu_cma_id *listen, *id;
	struct rdma_ucm_event_resp r;
	struct sockaddr_storage src, dst;
	struct emu_cma_hdr hdr;
	struct cma_conn *c;
	uint16_t ps = emu_cma_service_id_ps(m->service_id);
	uint16_t port = emu_cma_service_id_port(m->service_id);
	size_t off, d = 0;
	bool afib_req, afib_listen;
	int ret;

	/* the host and device whose agent this is */
	for (size_t i = 0; i < f->nhosts && !h; i++)
		for (d = 0; d < f->hosts[i].ndevices; d++)
			if (emu_cm_host_agent(emu_engine_get(), i, d) == a) {
				h = &f->hosts[i];
				break;
			}
	if (!h || !ev->private_data)
		return -EINVAL;
	/* cma_get_net_dev -> cma_save_ip_info: a CMA version other than 0 fails the request
	 * (-EINVAL, so REJ 28 / SIDR_REP REJECT); an IP version other than 4 or 6 makes it an
	 * AF_IB request (-EAFNOSUPPORT: no net_dev), which only AF_IB listeners take */
	ret = emu_cma_hdr_unpack(ev->private_data, ev->private_data_len, &hdr);
	if (ret && ret != -EAFNOSUPPORT) {
		emu_cma_trace("cma: %s with CMA version %u: refused", sidr ? "SIDR_REQ" : "REQ",
			      ev->private_data_len ? ev->private_data[0] : 0);
		return -EINVAL;
	}
	afib_req = ret != 0;
	if (!afib_req)
		hdr_addr(&dst, &hdr, hdr.dst, port);
	listen = emu_cma_find_req_listener(h, (int)d, ev->src->port, ps, port,
					   afib_req ? NULL : (const struct sockaddr *)&dst);
	if (!listen) {
		emu_cma_trace("cma: %s for port %u: no listener for the address", sidr ? "SIDR_REQ" :
			      "REQ", port);
		return -EINVAL;
	}
	/* cma_ib_check_req_qp_type */
	if ((listen->qp_type == QPT_UD) != sidr)
		return -EINVAL;
	/* cma_save_net_info and cma_user_data_offset go by the listener's family: an AF_IB
	 * listener's ids get AF_IB addresses (from the REQ's path, or the listener's own for a
	 * SIDR_REQ) and all the private data, a CMA header included */
	afib_listen = listen->src.ss_family == 27;
	off = afib_listen ? 0 : EMU_CMA_HDR_LEN;
	if (afib_listen && !sidr) {
		afib_addrs(m, &dst, &src);
	} else if (afib_listen) {
		afib_addrs_of_listener(listen, &dst, &src);
	} else {
		hdr_addr(&dst, &hdr, hdr.dst, port);
		hdr_addr(&src, &hdr, hdr.src, hdr.port);
	}
	id = emu_cma_conn_id_new(listen);
	if (!id) {
		emu_fail_lost(LOST_REQ);
		return -ENOMEM;
	}
	emu_cma_addr_copy(&id->src, (const struct sockaddr *)&dst);
	emu_cma_addr_copy(&id->dst, (const struct sockaddr *)&src);
	if (afib_listen && sidr && !afib_req)
		ret = attach_recv_port(id, h, d, ev->src->port, m->pkey);
	else if (afib_listen)
		/* cma_translate_ib / the path's SGID: the IB port with the own address's GID */
		ret = emu_cma_bind_ib_dev(id);
	else
		ret = emu_cma_acquire_dev(id, netdev_of(h, (const struct sockaddr *)&dst));
	/* the REQ's path, stored below, and the connection: cma_ib_new_conn_id's kmallocs,
	 * whose failure is -ENOMEM (the CM then drops the REQ without a REJ, and the sender's
	 * retry finds the listener again); the device's is the REJ of cma_ib_acquire_dev */
	if (!ret && !sidr && emu_cma_paths_reserve(id, 1))
		ret = -ENOMEM;
	c = ret ? NULL : conn_new(id, a);
	if (!c) {
		/* never reported: its backlog slot goes back */
		listen->backlog++;
		emu_cma_id_destroy(id);
		if (ret == 0 || ret == -ENOMEM)
			emu_fail_lost(LOST_REQ);
		return ret < 0 ? ret : ret ? -EINVAL : -ENOMEM;
	}
	c->cm = cm;
	emu_cm_id_set_context(cm, c);
	id->seq_num = new_psn();
	memset(&r, 0, sizeof r);
	if (sidr) {
		/* a path for the reply's address vector: the requester's port */
		memset(&c->path, 0, sizeof c->path);
		memcpy(c->path.dgid, ev->src->gid, 16);
		c->path.dlid = ev->src->lid;
		c->path.hop_limit = 64;
		r.param.ud.private_data_len = (uint8_t)(EMU_CM_SIDR_REQ_PRIVATE_DATA_SIZE - off);
		memcpy(r.param.ud.private_data, ev->private_data + off,
		       r.param.ud.private_data_len);
	} else {
		store_req_path(id, c, m);
		c->remote_qpn = m->local_qpn;
		c->sq_psn = m->starting_psn;
		c->responder_resources = m->initiator_depth;
		c->initiator_depth = m->responder_resources;
		c->retry_count = m->retry_count;
		c->rnr_retry_count = m->rnr_retry_count;
		/* cma_set_req_event_data */
		r.param.conn.private_data_len = (uint8_t)(EMU_CM_REQ_PRIVATE_DATA_SIZE - off);
		memcpy(r.param.conn.private_data, ev->private_data + off,
		       r.param.conn.private_data_len);
		r.param.conn.responder_resources = m->initiator_depth;
		r.param.conn.initiator_depth = m->responder_resources;
		r.param.conn.flow_control = m->end_to_end_flow_control;
		r.param.conn.retry_count = m->retry_count;
		r.param.conn.rnr_retry_count = m->rnr_retry_count;
		r.param.conn.srq = m->srq;
		r.param.conn.qp_num = m->local_qpn;
		r.ece.vendor_id = m->vendor_id;
		r.ece.attr_mod = m->attr_mod;
	}
	emu_cma_trace("cma %u: %s from port %u -> CONNECT_REQUEST on listener %u", id->handle,
		      sidr ? "SIDR_REQ" : "REQ", hdr.port, listen->handle);
	if (emu_cma_event(id, NULL, EMU_CMA_EVENT_CONNECT_REQUEST, 0, &r)) {
		/* ucma_connect_event_handler's -ENOMEM: cma_ib_req_handler parts the CM id from
		 * the new id, destroys the id, and the CM drops the REQ for the sender to retry */
		c->cm = NULL;
		emu_cm_id_set_context(cm, NULL);
		listen->backlog++;
		emu_cma_id_destroy(id);
		return -ENOMEM;
	}
	/* until rdma_accept sets it, the new id has no user context (ucma_connect_event_handler) */
	id->uid = 0;
	if (!sidr)
		emu_cm_send_mra(cm, EMU_CMA_CM_MRA_SETTING, NULL, 0);
	return 0;
}

static int cma_cm_handler(struct emu_cm_id *cm, const struct emu_cm_event *ev)
{
	int *kind = emu_cm_id_context(cm);

	if (ev->type == EMU_CM_UE_REQ_RECEIVED || ev->type == EMU_CM_UE_SIDR_REQ_RECEIVED)
		return req_handler(cm, ev);
	if (!kind || *kind != CTX_CONN) /* the cma id is gone, or a listen */
		return 0;
	if (((struct cma_conn *)kind)->id->qp_type == QPT_UD)
		return sidr_handler((struct cma_conn *)kind, ev);
	return conn_handler((struct cma_conn *)kind, ev);
}

static int send_sidr_rep(struct cma_conn *c, uint8_t status, const void *pd, uint8_t len,
			 const struct rdma_ucm_ece *ece)
{
	struct emu_cm_sidr_rep_param r;

	memset(&r, 0, sizeof r);
	r.status = status;
	if (status == EMU_CM_SIDR_SUCCESS) {
		/* cma_set_qkey: RDMA_PS_UDP and RDMA_PS_IB use RDMA_UDP_QKEY */
		c->qkey = EMU_CMA_QKEY;
		r.qp_num = c->qp_num;
		r.qkey = c->qkey;
		r.ece_vendor_id = ece ? ece->vendor_id : 0;
		r.ece_attr_mod = ece ? ece->attr_mod : 0;
	}
	r.private_data = pd;
	r.private_data_len = len;
	return emu_cm_send_sidr_rep(c->cm, &r);
}

/* rdma_accept: passive RC (cma_accept_ib: REP), active RC without parameters (cma_rep_recv:
 * RTU), UD (cma_send_sidr_rep SUCCESS). A failure rejects the request (REJ 28). */
static int op_accept(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		     const struct rdma_ucm_ece *ece)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];
	struct emu_cm_rep_param rep;
	int ret;

	if (!c || !c->cm)
		return -EINVAL;
	if (id->qp_type == QPT_UD) {
		if (p && p->private_data_len > EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE)
			return -EINVAL;
		c->qp_num = p ? p->qp_num : 0;
		ret = send_sidr_rep(c, EMU_CM_SIDR_SUCCESS, p ? p->private_data : NULL,
				    p ? p->private_data_len : 0, ece);
		return ret;
	}
	if (!p) {
		ret = emu_cm_send_rtu(c->cm, NULL, 0);
		if (ret)
			emu_cm_send_rej(c->cm, EMU_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		return ret;
	}
	memset(&rep, 0, sizeof rep);
	rep.qp_num = p->qp_num;
	rep.starting_psn = id->seq_num;
	rep.responder_resources = p->responder_resources;
	rep.initiator_depth = p->initiator_depth;
	rep.flow_control = p->flow_control;
	rep.rnr_retry_count = p->rnr_retry_count < 7 ? p->rnr_retry_count : 7;
	rep.srq = p->srq ? 1 : 0;
	rep.ece_vendor_id = ece ? ece->vendor_id : 0;
	rep.ece_attr_mod = ece ? ece->attr_mod : 0;
	rep.private_data = p->private_data;
	rep.private_data_len = p->private_data_len;
	ret = emu_cm_send_rep(c->cm, &rep);
	if (ret) {
		emu_cm_send_rej(c->cm, EMU_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0);
		return ret;
	}
	/* ib_send_cm_rep: what the responder's QP gets at RTS */
	c->initiator_depth = rep.initiator_depth;
	c->responder_resources = rep.responder_resources;
	c->rnr_retry_count = rep.rnr_retry_count;
	return 0;
}

static int op_reject(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];

	if (!c || !c->cm)
		return -EINVAL;
	if (id->qp_type == QPT_UD) {
		if (len > EMU_CM_SIDR_REP_PRIVATE_DATA_SIZE)
			return -EINVAL;
		return send_sidr_rep(c, EMU_CM_SIDR_REJECT, pdata, len, NULL);
	}
	return emu_cm_send_rej(c->cm, reason, NULL, 0, pdata, len);
}

/* The checks of op_connect, connect_rc and ib_send_cm_req (RC), op_accept with ib_send_cm_rep
 * or ib_send_cm_rtu, op_disconnect, without doing anything: what can fail them is known
 * here, but for memory. *sub: CONNECT the private data bytes it takes at most (with the
 * CMA header); ACCEPT 0x100 | that for a passive id (a REP: the command's conn_param valid),
 * 0 for an active one (the RTU: conn_param not valid); DISCONNECT 0. */
static bool op_sure(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub)
{
	const struct cma_conn *c = id->net[EMU_CMA_NET_CM];
	const struct cma_cm *cc = emu_engine_ext_get(emu_engine_get(), &cma_cm_type);

	if (id->qp_type != QPT_RC)
		return false;
	switch (cmd) {
	case RDMA_USER_CM_CMD_CONNECT:
		if (!cc || !cc->agents || !agent_of(id) || !id->npaths ||
		    (id->src.ss_family != AF_INET && id->src.ss_family != AF_INET6))
			return false;
		*sub = EMU_CM_REQ_PRIVATE_DATA_SIZE - EMU_CMA_HDR_LEN;
		return true;
	case RDMA_USER_CM_CMD_ACCEPT:
		if (!c || !c->cm)
			return false;
		switch (emu_cm_id_state(c->cm)) {
		case EMU_CM_REQ_RCVD:
		case EMU_CM_MRA_REQ_SENT:
			*sub = 0x100 | EMU_CM_REP_PRIVATE_DATA_SIZE;
			return true;
		case EMU_CM_REP_RCVD:
		case EMU_CM_MRA_REP_SENT:
			*sub = 0;
			return true;
		default:
			return false;
		}
	case RDMA_USER_CM_CMD_DISCONNECT:
		*sub = 0;
		return c && c->cm;
	default:
		return false;
	}
}

/* rdma_disconnect: a DREQ, or the DREP answering one; neither possible is not an error. */
static int op_disconnect(struct emu_cma_id *id)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];
	int dreq;

	if (!c || !c->cm)
		return -EINVAL;
	dreq = emu_cm_send_dreq(c->cm, NULL, 0);
	if (dreq) {
		int err = emu_cm_send_drep(c->cm, NULL, 0);

		if (!err)
			emu_cma_trace("cma %u: DREP sent", id->handle);
		else if (err == -ENOMEM || dreq == -ENOMEM) /* rdma_disconnect returns 0 */
			emu_fail_lost("a DREQ or DREP (rdma_disconnect goes on without it; both sides "
				      "wait for DISCONNECTED, or the peer's DREQ retries end)");
	} else {
		emu_cma_trace("cma %u: DREQ sent", id->handle);
	}
	return 0;
}

/* ib_cm_notify: IB_EVENT_COMM_EST establishes (cm_establish); IB_EVENT_PATH_MIG moves to the
 * alternate path (cm_migrate: 0 on an established connection, which here has no alternate
 * path to move to); anything else EINVAL. */
static int op_notify(struct emu_cma_id *id, uint32_t event)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];

	if (!c || !c->cm)
		return -EINVAL;
	switch (event) {
	case IB_EVENT_COMM_EST:
		return emu_cm_establish(c->cm);
	case IB_EVENT_PATH_MIG:
		return emu_cm_id_state(c->cm) == EMU_CM_ESTABLISHED ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

/* ib_cm_init_qp_attr: INIT/RTR/RTS from the connection, in the states ib_cm allows. */
static int op_init_qp_attr(struct emu_cma_id *id, struct ib_uverbs_qp_attr *a)
{
	struct cma_conn *c = id->net[EMU_CMA_NET_CM];
	unsigned st;

	if (!c || !c->cm)
		return -EINVAL;
	st = emu_cm_id_state(c->cm);
	switch (st) {
	case EMU_CM_REQ_SENT:
	case EMU_CM_MRA_REQ_RCVD:
		if (a->qp_state != QPS_INIT)
			return -EINVAL;
		break;
	case EMU_CM_REQ_RCVD:
	case EMU_CM_MRA_REQ_SENT:
	case EMU_CM_REP_RCVD:
	case EMU_CM_MRA_REP_SENT:
	case EMU_CM_REP_SENT:
	case EMU_CM_MRA_REP_RCVD:
	case EMU_CM_ESTABLISHED:
		break;
	default:
		return -EINVAL;
	}
	switch (a->qp_state) {
	case QPS_INIT:
		a->qp_attr_mask = QPA_STATE | QPA_ACCESS_FLAGS | QPA_PKEY_INDEX | QPA_PORT;
		a->qp_access_flags = 2 /* IB_ACCESS_REMOTE_WRITE */;
		if (c->responder_resources)
			a->qp_access_flags |= 4 | 8; /* REMOTE_READ | REMOTE_ATOMIC */
		a->pkey_index = pkey_index_of(id, c->path.pkey);
		a->port_num = id->port;
		return 0;
	case QPS_RTR:
		a->qp_attr_mask = QPA_STATE | QPA_AV | QPA_PATH_MTU | QPA_DEST_QPN | QPA_RQ_PSN |
				  QPA_MAX_DEST_RD_ATOMIC | QPA_MIN_RNR_TIMER;
		ah_from_path(c, id->port, &a->ah_attr);
		a->path_mtu = c->path.mtu;
		a->dest_qp_num = c->remote_qpn;
		a->max_dest_rd_atomic = c->responder_resources;
		a->min_rnr_timer = 0;
		emu_cma_trace("cma %u: RTR dest qpn 0x%x rq psn 0x%x mtu %u dgid ..%02x%02x sgid "
			      "index %u plt %u", id->handle, c->remote_qpn, id->seq_num,
			      c->path.mtu, c->path.dgid[14], c->path.dgid[15], c->sgid_index,
			      c->path.packet_life_time);
		return 0; /* rq_psn: the core sets the id's own PSN */
	case QPS_RTS:
		a->qp_attr_mask = QPA_STATE | QPA_SQ_PSN | QPA_RETRY_CNT | QPA_RNR_RETRY |
				  QPA_MAX_QP_RD_ATOMIC | QPA_TIMEOUT;
		a->sq_psn = c->sq_psn;
		a->retry_cnt = c->retry_count;
		a->rnr_retry = c->rnr_retry_count;
		a->max_rd_atomic = c->initiator_depth;
		a->timeout = emu_cm_id_av_timeout(c->cm);
		emu_cma_trace("cma %u: RTS sq psn 0x%x timeout %u", id->handle, c->sq_psn,
			      a->timeout);
		return 0;
	default:
		return -EINVAL;
	}
}

/* ---- listens ---- */

static struct cm_listen *listen_get(struct cma_cm *cc, struct emu_cm_agent *a, uint64_t sid)
{
	struct emu_list *pos, *tmp;
	struct cm_listen *l;

	emu_list_for_each_safe(pos, tmp, &cc->listens) {
		l = emu_list_entry(pos, struct cm_listen, node);
		if (l->agent == a && l->sid == sid) {
			l->refs++;
			return l;
		}
	}
	l = emu_calloc(1, sizeof *l);
	if (!l)
		return NULL;
	if (emu_cm_create_id(a, cma_cm_handler, l, &l->cm) ||
	    emu_cm_listen(l->cm, sid, 0)) {
		if (l->cm)
			emu_cm_destroy_id(l->cm);
		free(l);
		return NULL;
	}
	l->agent = a;
	l->sid = sid;
	l->refs = 1;
	emu_list_add_tail(&cc->listens, &l->node);
	return l;
}

static void listen_put(struct cm_listen *l)
{
	if (--l->refs)
		return;
	emu_list_del(&l->node);
	emu_cm_destroy_id(l->cm);
	free(l);
}

/* cma_ib_listen on the bound device, or on every device of the host (cma_listen_on_all). */
static int op_listen(struct emu_cma_id *id)
{
	struct cma_cm *cc = cma_cm_get();
	uint64_t sid = service_id_of(id, &id->src);
	struct cma_listen_ids *ls;
	size_t first, last;
	int ret;

	if (!cc)
		return -ENOMEM;
	ret = ensure_agents(cc);
	if (ret)
		return ret;
	first = id->dev >= 0 ? (size_t)id->dev : 0;
	last = id->dev >= 0 ? (size_t)id->dev + 1 : id->host->ndevices;
	ls = emu_calloc(1, sizeof *ls + (last - first) * sizeof ls->l[0]);
	if (!ls)
		return -ENOMEM;
	ls->kind = CTX_LISTEN;
	for (size_t d = first; d < last; d++) {
		struct emu_cm_agent *a;
		struct cm_listen *l;

		/* cma_listen_on_all walks the registered devices only */
		if (id->host->devices[d].removed)
			continue;
		a = emu_cm_host_agent(cc->e, host_index(id->host), d);
		l = a ? listen_get(cc, a, sid) : NULL;

		if (!l) {
			while (ls->n)
				listen_put(ls->l[--ls->n]);
			free(ls);
			return -ENOMEM;
		}
		ls->l[ls->n++] = l;
	}
	id->net[EMU_CMA_NET_CM] = ls;
	emu_cma_trace("cma %u: listening on service 0x%llx (%u device%s)", id->handle,
		      (unsigned long long)sid, ls->n, ls->n == 1 ? "" : "s");
	return 0;
}

static void op_destroy(struct emu_cma_id *id)
{
	int *kind = id->net[EMU_CMA_NET_CM];

	if (!kind)
		return;
	if (*kind == CTX_LISTEN) {
		struct cma_listen_ids *ls = (struct cma_listen_ids *)kind;

		while (ls->n)
			listen_put(ls->l[--ls->n]);
		free(ls);
		id->net[EMU_CMA_NET_CM] = NULL;
		return;
	}
	/* ib_destroy_cm_id sends what the state demands (REJ, DREQ, DREP, SIDR_REP REJECT) */
	conn_free(id);
}

void emu_cma_conn_listen_drop_dev(struct emu_cma_id *id, size_t dev)
{
	int *kind = id->net[EMU_CMA_NET_CM];
	struct cma_listen_ids *ls;
	struct emu_cm_agent *a;

	if (!kind || *kind != CTX_LISTEN)
		return;
	ls = (struct cma_listen_ids *)kind;
	a = emu_cm_host_agent(emu_engine_get(), host_index(id->host), dev);
	for (unsigned i = 0; a && i < ls->n; i++) {
		if (ls->l[i]->agent != a)
			continue;
		listen_put(ls->l[i]);
		ls->l[i] = ls->l[--ls->n];
		emu_cma_trace("cma %u: listen on device %zu dropped (device removed), %u left",
			      id->handle, dev, ls->n);
		return;
	}
}

const struct emu_cma_cm_ops emu_cma_ib_cm_ops = {
	.connect = op_connect,
	.accept = op_accept,
	.reject = op_reject,
	.disconnect = op_disconnect,
	.sure = op_sure,
	.notify = op_notify,
	.init_qp_attr = op_init_qp_attr,
	.destroy = op_destroy,
	.listen = op_listen,
	.drop_dev = emu_cma_conn_listen_drop_dev,
};

/* The emulated kernel's CM is the IB CM, from the start. */
__attribute__((constructor)) static void install(void)
{
	emu_cma_set_cm_ops(&emu_cma_ib_cm_ops);
}

struct emu_cm_agent *emu_cma_conn_agent(const struct emu_cma_id *id)
{
	const struct cma_conn *c = id->net[EMU_CMA_NET_CM];

	return c && c->kind == CTX_CONN ? c->agent : NULL;
}
