/* The kernel CM id: its state machine, events, options, QP attributes, and the entry points of
 * the network operations, which check arguments and states as the kernel's cma.c does and then
 * hand over to the module that owns the protocol (the ops tables of emu/rdma_cm/ucma.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/sim/trace.h"
#include "emu/sim/engine.h"
#include "emu/sim/kmem.h"
#include "emu/rdma_cm/cma_conn.h"
#include "emu/rdma_cm/ucma.h"
#include "emu/net/neigh.h"

static const char *const state_names[EMU_CMA_NSTATES] = {
	[EMU_CMA_IDLE] = "IDLE",
	[EMU_CMA_ADDR_QUERY] = "ADDR_QUERY",
	[EMU_CMA_ADDR_RESOLVED] = "ADDR_RESOLVED",
	[EMU_CMA_ROUTE_QUERY] = "ROUTE_QUERY",
	[EMU_CMA_ROUTE_RESOLVED] = "ROUTE_RESOLVED",
	[EMU_CMA_CONNECT] = "CONNECT",
	[EMU_CMA_DISCONNECT] = "DISCONNECT",
	[EMU_CMA_ADDR_BOUND] = "ADDR_BOUND",
	[EMU_CMA_LISTEN] = "LISTEN",
	[EMU_CMA_DEVICE_REMOVAL] = "DEVICE_REMOVAL",
	[EMU_CMA_DESTROYING] = "DESTROYING",
	[EMU_CMA_ADDRINFO_QUERY] = "ADDRINFO_QUERY",
	[EMU_CMA_ADDRINFO_RESOLVED] = "ADDRINFO_RESOLVED",
};

const char *emu_cma_state_name(enum emu_cma_state s)
{
	return (unsigned)s < EMU_CMA_NSTATES ? state_names[s] : "?";
}

bool emu_cma_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "cma");
}

void emu_cma_trace_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_trace_vprint("", fmt, ap);
	va_end(ap);
}

void emu_cma_set_state(struct emu_cma_id *id, enum emu_cma_state to)
{
	emu_cma_trace("cma %u: %s -> %s", id->handle, emu_cma_state_name(id->state),
		      emu_cma_state_name(to));
	id->state = to;
}

bool emu_cma_comp_exch(struct emu_cma_id *id, enum emu_cma_state from, enum emu_cma_state to)
{
	if (id->state != from)
		return false;
	emu_cma_set_state(id, to);
	return true;
}

/* ---- the network modules' tables ---- */

static const struct emu_cma_addr_ops *addr_ops;
static const struct emu_cma_route_ops *route_ops;
/* The IB CM module is built in (emu/rdma_cm/cma_conn.c); tests may plug in another. */
static const struct emu_cma_cm_ops *cm_ops = &emu_cma_ib_cm_ops;

void emu_cma_set_addr_ops(const struct emu_cma_addr_ops *ops) { addr_ops = ops; }
void emu_cma_set_route_ops(const struct emu_cma_route_ops *ops) { route_ops = ops; }
void emu_cma_set_cm_ops(const struct emu_cma_cm_ops *ops) { cm_ops = ops; }

/* A network step whose module is not there yet: say so once, fail with ENOSYS. */
static int not_yet(const char *what, const char *module)
{
	static unsigned said;
	unsigned bit = 0;

	for (const char *p = module; *p; p++)
		bit = bit * 31 + (unsigned char)*p;
	bit = 1u << (bit % 31);
	if (!(said & bit)) {
		said |= bit;
		fprintf(stderr, "rdmaemu: %s needs the %s module, which this build does not have "
			"yet (ENOSYS)\n", what, module);
	}
	return -ENOSYS;
}

/* ---- ids ---- */

static struct emu_cma_id **table;
static uint32_t table_len;
static uint32_t table_free; /* no free handle below this one */
/* A handle reserved for a posted CREATE_ID (emu_cma_id_reserve): taken, but no id yet. */
static struct emu_cma_id reserved;

struct emu_cma_id *emu_cma_id_lookup(uint32_t handle)
{
	struct emu_cma_id *id = handle < table_len ? table[handle] : NULL;

	return id == &reserved ? NULL : id;
}

uint32_t emu_cma_id_limit(void)
{
	return table_len;
}

/* xa_alloc: the lowest free handle, the table grown when none is; UINT32_MAX when it cannot
 * grow. */
static uint32_t alloc_handle(void)
{
	uint32_t h;

	for (h = table_free; h < table_len && table[h]; h++)
		;
	if (h == table_len) {
		uint32_t n = table_len ? table_len * 2 : 64;
		struct emu_cma_id **t = emu_kmem_table_zalloc(n * sizeof *t);

		if (!t)
			return UINT32_MAX;
		if (table_len)
			memcpy(t, table, table_len * sizeof *t);
		emu_kmem_table_free(table, table_len * sizeof *t);
		table = t;
		table_len = n;
	}
	table_free = h + 1;
	return h;
}

static void free_handle(uint32_t h)
{
	table[h] = NULL;
	if (h < table_free)
		table_free = h;
}

uint32_t emu_cma_id_reserve(void)
{
	uint32_t h = alloc_handle();

	if (h != UINT32_MAX)
		table[h] = &reserved;
	return h;
}

void emu_cma_id_unreserve(uint32_t handle)
{
	if (handle < table_len && table[handle] == &reserved)
		free_handle(handle);
}

struct emu_cma_id *emu_cma_id_new_at(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				     uint8_t qp_type, uint32_t handle)
{
	struct emu_cma_id *id;
	uint32_t h = handle;

	if (h == UINT32_MAX) {
		h = alloc_handle();
		if (h == UINT32_MAX)
			return NULL;
	} else if (h >= table_len || table[h] != &reserved) {
		return NULL;
	}
	id = emu_kmem_zalloc(sizeof *id);
	if (!id) {
		if (handle == UINT32_MAX)
			free_handle(h);
		return NULL;
	}
	id->handle = h;
	id->uid = uid;
	id->file = f;
	id->host = f->host;
	id->state = EMU_CMA_IDLE;
	id->ps = ps;
	id->qp_type = qp_type;
	id->dev = id->netdev = id->gid_index = -1;
	emu_list_init(&id->bind_node);
	emu_list_init(&id->mcs);
	emu_list_add_tail(&f->ids, &id->file_node);
	table[h] = id;
	emu_cma_trace("cma %u: created (ps 0x%x, qp type %u)", h, ps, qp_type);
	return id;
}

struct emu_cma_id *emu_cma_id_new(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				  uint8_t qp_type)
{
	return emu_cma_id_new_at(f, uid, ps, qp_type, UINT32_MAX);
}

static void drop_events(struct emu_ucma_file *f, struct emu_cma_id *id);

void emu_cma_id_teardown(struct emu_cma_id *id)
{
	struct emu_list *pos;

	if (addr_ops && addr_ops->cancel)
		addr_ops->cancel(id);
	if (route_ops && route_ops->cancel)
		route_ops->cancel(id);
	emu_cma_svc_destroy(id);
	if (cm_ops && cm_ops->destroy && (id->has_cm || id->net[EMU_CMA_NET_CM]))
		cm_ops->destroy(id);
	id->has_cm = false;
	/* the memberships stay until ucma frees them (destroy or LEAVE_MCAST) */
	for (pos = id->mcs.next; pos != &id->mcs; pos = pos->next)
		emu_cma_leave(id, emu_list_entry(pos, struct emu_cma_mc, node));
	emu_cma_release_port(id);
}

void emu_cma_id_destroy(struct emu_cma_id *id)
{
	struct emu_list *pos, *tmp;
	/* a listener closed by device removal still has its unread requests' ids pointing at it */
	bool listener = id->state == EMU_CMA_LISTEN || id->closed;

	emu_cma_set_state(id, EMU_CMA_DESTROYING);
	if (!id->closed)
		emu_cma_id_teardown(id);
	emu_list_for_each_safe(pos, tmp, &id->mcs) {
		struct emu_cma_mc *mc = emu_list_entry(pos, struct emu_cma_mc, node);

		emu_list_del(&mc->node);
		free(mc);
	}
	drop_events(id->file, id);
	/* Requests queued for this listener that nobody read die with it (their ids were never
	 * seen by the application); only a listener has such ids. */
	for (uint32_t h = 0; listener && h < table_len; h++)
		if (table[h] && table[h] != &reserved && table[h]->listen == id)
			table[h]->listen = NULL;
	emu_list_del(&id->file_node);
	free_handle(id->handle);
	emu_kmem_free(id->paths);
	emu_kmem_free(id);
}

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct emu_cma_id) <= 384, "an rdma_cm id fits the 384-byte kmem class");
#endif

/* Removes the queued events of id; the conn ids of its unread CONNECT_REQUESTs are destroyed. */
static void drop_events(struct emu_ucma_file *f, struct emu_cma_id *id)
{
	struct emu_list *pos, *tmp;

restart:
	emu_list_for_each_safe(pos, tmp, &f->events) {
		struct emu_ucma_event *ev = emu_list_entry(pos, struct emu_ucma_event, node);
		struct emu_cma_id *conn = NULL;

		if (ev->event == EMU_CMA_EVENT_CONNECT_REQUEST && ev->id->listen == id)
			conn = ev->id;
		else if (ev->id != id)
			continue;
		emu_ucma_event_unqueue(f, ev);
		emu_ucma_event_put(f, ev);
		if (conn) {
			/* the nested destroy edits this list too: walk it again */
			emu_cma_id_destroy(conn);
			goto restart;
		}
	}
}

/* How many response bytes from EMU_UCMA_EV_PARAM an event of param keeps: the union's fixed
 * fields and the private data its length covers, read both as conn and as UD parameters (what
 * the other reading adds is only kept in vain); the rest up to the tail is zero, since every
 * caller starts from a zeroed response. */
static size_t param_len(const struct rdma_ucm_event_resp *param)
{
	const size_t conn = offsetof(struct rdma_ucm_event_resp, param.conn.private_data) +
			    param->param.conn.private_data_len;
	size_t ud = offsetof(struct rdma_ucm_event_resp, param.ud.private_data) +
		    param->param.ud.private_data_len;

	if (ud > EMU_UCMA_EV_TAIL)
		ud = EMU_UCMA_EV_TAIL;
	return (conn > ud ? conn : ud) - EMU_UCMA_EV_PARAM;
}

static bool tail_zero(const struct rdma_ucm_event_resp *param)
{
	const uint8_t *t = (const uint8_t *)param + EMU_UCMA_EV_TAIL;
	uint64_t w, any = 0;
	size_t i;

	/* word by word: a memcmp call cost more than the whole test */
	for (i = 0; i + sizeof w <= EMU_UCMA_EV_TAIL_LEN; i += sizeof w) {
		memcpy(&w, t + i, sizeof w);
		any |= w;
	}
	for (; i < EMU_UCMA_EV_TAIL_LEN; i++)
		any |= t[i];
	return !any;
}

int emu_cma_event(struct emu_cma_id *id, struct emu_cma_mc *mc, uint32_t event, int32_t status,
		  const struct rdma_ucm_event_resp *param)
{
	struct emu_ucma_file *f = id->file;
	size_t plen = param ? param_len(param) : 0;
	bool tail = param && !tail_zero(param);
	struct emu_ucma_event *ev = emu_ucma_event_get(f, plen + (tail ? EMU_UCMA_EV_TAIL_LEN : 0));

	if (!ev)
		return -ENOMEM;
	ev->id = id;
	ev->mc = mc;
	ev->uid = mc ? mc->uid : id->uid;
	ev->handle = id->handle;
	ev->event = event;
	ev->status = (uint32_t)status;
	ev->param_len = (uint16_t)plen;
	ev->tail = tail;
	if (plen)
		memcpy(ev->data, (const uint8_t *)param + EMU_UCMA_EV_PARAM, plen);
	if (tail)
		memcpy(ev->data + plen, (const uint8_t *)param + EMU_UCMA_EV_TAIL,
		       EMU_UCMA_EV_TAIL_LEN);
	emu_ucma_event_queue(f, ev);
	emu_cma_trace("cma %u: event %u status %d queued", id->handle, event, status);
	return 0;
}

struct emu_cma_id *emu_cma_conn_id_new(struct emu_cma_id *listen)
{
	struct emu_cma_id *id;

	if (listen->backlog <= 0)
		return NULL;
	id = emu_cma_id_new(listen->file, listen->uid, listen->ps, listen->qp_type);
	if (!id)
		return NULL;
	listen->backlog--;
	id->listen = listen;
	id->has_cm = true;
	emu_cma_set_state(id, EMU_CMA_CONNECT);
	return id;
}

void emu_cma_addr_resolved(struct emu_cma_id *id, int status)
{
	if (!status && emu_cma_comp_exch(id, EMU_CMA_ADDR_QUERY, EMU_CMA_ADDR_RESOLVED)) {
		emu_cma_event(id, NULL, EMU_CMA_EVENT_ADDR_RESOLVED, 0, NULL);
		return;
	}
	emu_cma_comp_exch(id, EMU_CMA_ADDR_QUERY, EMU_CMA_ADDR_BOUND);
	emu_cma_event(id, NULL, EMU_CMA_EVENT_ADDR_ERROR, status ? status : -EINVAL, NULL);
}

int emu_cma_paths_reserve(struct emu_cma_id *id, unsigned n)
{
	struct ib_path_rec_data *p;

	if (n > EMU_CMA_MAX_PATHS)
		n = EMU_CMA_MAX_PATHS;
	if (n <= id->paths_cap)
		return 0;
	p = emu_kmem_alloc(n * sizeof *p);
	if (!p)
		return -ENOMEM;
	emu_kmem_free(id->paths);
	id->paths = p;
	id->paths_cap = (uint8_t)n;
	id->npaths = 0;
	return 0;
}

int emu_cma_paths_set(struct emu_cma_id *id, const struct ib_path_rec_data *paths, unsigned n)
{
	int err;

	if (n > EMU_CMA_MAX_PATHS)
		n = EMU_CMA_MAX_PATHS;
	err = emu_cma_paths_reserve(id, n);
	if (err)
		return err;
	if (n)
		memcpy(id->paths, paths, n * sizeof *paths);
	id->npaths = (uint8_t)n;
	return 0;
}

void emu_cma_route_resolved(struct emu_cma_id *id, const struct ib_path_rec_data *paths,
			    unsigned npaths, int status)
{
	/* cma_query_handler: a path that cannot be kept fails the route (-ENOMEM) */
	if (!status && id->state == EMU_CMA_ROUTE_QUERY)
		status = emu_cma_paths_set(id, paths, npaths);
	if (!status && emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ROUTE_RESOLVED)) {
		emu_cma_event(id, NULL, EMU_CMA_EVENT_ROUTE_RESOLVED, 0, NULL);
		return;
	}
	emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ADDR_RESOLVED);
	emu_cma_event(id, NULL, EMU_CMA_EVENT_ROUTE_ERROR, status ? status : -EINVAL, NULL);
}

/* ---- address and route resolution ---- */

int emu_cma_resolve_addr(struct emu_cma_id *id, const struct sockaddr *src,
			 const struct sockaddr *dst, uint32_t timeout_ms)
{
	struct sockaddr_storage zero;
	int ret;

	/* resolve_prepare_src: an IDLE id is bound first, to src or to the wildcard of dst's
	 * family (an IPv6 link-local dst lends its scope) */
	if (!src || !src->sa_family) {
		memset(&zero, 0, sizeof zero);
		zero.ss_family = dst->sa_family;
		if (dst->sa_family == AF_INET6)
			((struct sockaddr_in6 *)&zero)->sin6_scope_id =
				((const struct sockaddr_in6 *)dst)->sin6_scope_id;
		else if (dst->sa_family == 27) /* AF_IB: the wildcard takes dst's P_Key */
			((struct emu_sockaddr_ib *)&zero)->sib_pkey =
				((const struct emu_sockaddr_ib *)dst)->sib_pkey;
		src = (const struct sockaddr *)&zero;
	}
	if (id->state == EMU_CMA_IDLE) {
		ret = emu_cma_bind(id, src);
		if (ret)
			return ret;
	}
	if (id->src.ss_family != dst->sa_family)
		return -EINVAL;
	if (!emu_cma_comp_exch(id, EMU_CMA_ADDR_BOUND, EMU_CMA_ADDR_QUERY))
		return -EINVAL;
	memset(&id->dst, 0, sizeof id->dst);
	memcpy(&id->dst, dst, emu_cma_addr_size(dst));
	ret = addr_ops && addr_ops->resolve_addr ?
		addr_ops->resolve_addr(id, timeout_ms) :
		not_yet("rdma_resolve_addr", "neighbour (emu/net/neigh)");
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_ADDR_QUERY, EMU_CMA_ADDR_BOUND);
	return ret;
}

int emu_cma_resolve_route(struct emu_cma_id *id, uint32_t timeout_ms)
{
	int ret;

	if (!emu_cma_comp_exch(id, EMU_CMA_ADDR_RESOLVED, EMU_CMA_ROUTE_QUERY))
		return -EINVAL;
	ret = route_ops && route_ops->resolve_route ?
		route_ops->resolve_route(id, timeout_ms) :
		not_yet("rdma_resolve_route", "SA client (emu/ib/sa_client)");
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ADDR_RESOLVED);
	return ret;
}

bool emu_cma_cm_sure(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub)
{
	/* get_ctx_dev, then the state checks of emu_cma_connect / accept / disconnect */
	if (id->closed || id->dev < 0 || !cm_ops || !cm_ops->sure)
		return false;
	if ((cmd == RDMA_USER_CM_CMD_CONNECT && id->state != EMU_CMA_ROUTE_RESOLVED) ||
	    (cmd == RDMA_USER_CM_CMD_ACCEPT && id->state != EMU_CMA_CONNECT) ||
	    (cmd == RDMA_USER_CM_CMD_DISCONNECT && !id->has_cm))
		return false;
	return cm_ops->sure(id, cmd, sub);
}

bool emu_cma_resolve_route_sure(const struct emu_cma_id *id)
{
	return id->state == EMU_CMA_ADDR_RESOLVED && !id->closed && id->dev >= 0 && route_ops &&
	       route_ops->sure && route_ops->sure(id);
}

/* ---- options ---- */

/* ib_path_rec_data.flags of the record that becomes the path (IB_PATH_GMP | IB_PATH_PRIMARY |
 * IB_PATH_BIDIRECTIONAL). */
#define PATH_FLAGS_PRIMARY 0x2b

static int set_ib_path(struct emu_cma_id *id, const void *optval, uint32_t optlen)
{
	const struct ib_path_rec_data *p = optval;

	if (optlen % sizeof *p)
		return -EINVAL;
	for (; optlen; optlen -= sizeof *p, p++)
		if (p->flags == PATH_FLAGS_PRIMARY)
			break;
	if (!optlen)
		return -EINVAL;
	if (id->dev < 0)
		return -EINVAL;
	if (!emu_cma_comp_exch(id, EMU_CMA_ADDR_RESOLVED, EMU_CMA_ROUTE_QUERY))
		return -EINVAL;
	/* RoCE: the route needs the netdev the address was resolved on */
	if (id->netdev < 0) {
		emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ADDR_RESOLVED);
		return -ENODEV;
	}
	if (emu_cma_paths_set(id, p, 1)) {
		emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ADDR_RESOLVED);
		return -ENOMEM; /* cma_set_ib_paths: kmalloc of the route */
	}
	emu_cma_comp_exch(id, EMU_CMA_ROUTE_QUERY, EMU_CMA_ROUTE_RESOLVED);
	return emu_cma_event(id, NULL, EMU_CMA_EVENT_ROUTE_RESOLVED, 0, NULL);
}

int emu_cma_set_option(struct emu_cma_id *id, uint32_t level, uint32_t optname,
		       const void *optval, uint32_t optlen)
{
	int v;

	switch (level) {
	case RDMA_OPTION_ID:
		switch (optname) {
		case RDMA_OPTION_ID_TOS:
			if (optlen != 1)
				return -EINVAL;
			id->tos = *(const uint8_t *)optval;
			id->tos_set = true;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
			if (optlen != sizeof(int))
				return -EINVAL;
			memcpy(&v, optval, sizeof v);
			/* rdma_set_reuseaddr */
			if ((v && id->state != EMU_CMA_LISTEN) || id->state == EMU_CMA_IDLE) {
				id->reuseaddr = v != 0;
				return 0;
			}
			return -EINVAL;
		case RDMA_OPTION_ID_AFONLY:
			if (optlen != sizeof(int))
				return -EINVAL;
			memcpy(&v, optval, sizeof v);
			if (id->state != EMU_CMA_IDLE && id->state != EMU_CMA_ADDR_BOUND)
				return -EINVAL;
			id->afonly_set = true;
			id->afonly = v != 0;
			return 0;
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (optlen != 1)
				return -EINVAL;
			/* IB_QPT_RC 2, IB_QPT_XRC_INI 9 */
			if (id->qp_type != 2 && id->qp_type != 9)
				return -EINVAL;
			id->timeout = *(const uint8_t *)optval;
			id->timeout_set = true;
			return 0;
		default:
			return -ENOSYS;
		}
	case RDMA_OPTION_IB:
		if (optname == RDMA_OPTION_IB_PATH)
			return set_ib_path(id, optval, optlen);
		return -ENOSYS;
	default:
		return -ENOSYS;
	}
}

/* ---- QP attributes (rdma_init_qp_attr for IB and RoCE ports) ---- */

/* cma_set_default_qkey (Linux 6.1 with the 2023 "join multicast to UD QP type only" fix, as
 * the reference VM runs): RDMA_PS_UDP and RDMA_PS_IB take RDMA_UDP_QKEY; RDMA_PS_IPOIB reads
 * the Q_Key of the port's IPoIB broadcast group from the multicast module
 * (ib_sa_get_mcmember_rec): -ENODEV when the device has no InfiniBand port (the module keeps
 * no data for it: measured on rxe, init_qp_attr and rdma_create_qp -1/ENODEV), -EADDRNOTAVAIL
 * when no IPoIB interface of the port is up (nobody joined the group), else the group's Q_Key
 * (OpenSM's IPoIB groups, as the emulated SA creates them). Other port spaces: 0. */
static int default_qkey(const struct emu_cma_id *id, uint32_t *qkey)
{
	const struct emu_host *h = id->host;
	const struct emu_device *d = &h->devices[id->dev];
	bool ib = false;

	*qkey = 0;
	if (id->ps == EMU_CMA_PS_UDP || id->ps == EMU_CMA_PS_IB) {
		*qkey = EMU_CMA_QKEY;
		return 0;
	}
	if (id->ps != EMU_CMA_PS_IPOIB)
		return 0;
	for (size_t i = 0; i < d->nports; i++)
		ib |= d->ports[i].link_layer == 1 /* IBV_LINK_LAYER_INFINIBAND */;
	if (!ib)
		return -ENODEV;
	for (size_t i = 0; i < h->nnetdevs; i++) {
		const struct emu_netdev *n = &h->netdevs[i];

		if (n->device == id->dev && n->port == id->port && n->hwaddr_len == 20 && n->up) {
			*qkey = EMU_IPOIB_QKEY;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

int emu_cma_init_qp_attr(struct emu_cma_id *id, struct ib_uverbs_qp_attr *attr)
{
	const struct emu_port *p;
	int ret;

	if (id->dev < 0)
		return -EINVAL;
	if (attr->qp_state > 6 /* IB_QPS_ERR */)
		return -EINVAL;
	p = &id->host->devices[id->dev].ports[id->port - 1];
	if (!id->has_cm || id->qp_type == 4 /* UD */) {
		/* cma_ib_init_qp_attr: the INIT attributes, whatever state was asked */
		/* RoCE ports look up the default P_Key 0xffff (cma_ib_init_qp_attr) */
		uint16_t pkey = p->link_layer == 1 ? id->pkey : 0xffff;

		attr->pkey_index = 0;
		for (size_t i = 0; i < p->npkeys; i++) {
			if ((p->pkeys[i] & 0x7fff) == (pkey & 0x7fff)) {
				attr->pkey_index = (uint16_t)i;
				break;
			}
		}
		attr->port_num = id->port;
		attr->qp_attr_mask = 1 << 0 /* STATE */ | 1 << 4 /* PKEY_INDEX */ | 1 << 5 /* PORT */;
		if (id->qp_type == 4) {
			ret = default_qkey(id, &attr->qkey);
			if (ret)
				return ret;
			attr->qp_attr_mask |= 1 << 6 /* QKEY */;
		} else {
			attr->qp_access_flags = 0;
			attr->qp_attr_mask |= 1 << 3 /* ACCESS_FLAGS */;
		}
		ret = 0;
	} else {
		ret = cm_ops && cm_ops->init_qp_attr ? cm_ops->init_qp_attr(id, attr) :
			not_yet("rdma_init_qp_attr (RTR/RTS)", "IB CM (emu/ib/cm_agent)");
	}
	if (!ret && attr->qp_state == 2 /* IB_QPS_RTR */)
		attr->rq_psn = id->seq_num;
	if (!ret && id->timeout_set && (attr->qp_attr_mask & (1 << 9) /* TIMEOUT */))
		attr->timeout = id->timeout;
	return ret;
}

/* ---- connections ---- */

int emu_cma_connect(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		    const struct rdma_ucm_ece *ece)
{
	int ret;

	if (!emu_cma_comp_exch(id, EMU_CMA_ROUTE_RESOLVED, EMU_CMA_CONNECT))
		return -EINVAL;
	ret = cm_ops && cm_ops->connect ? cm_ops->connect(id, p, ece) :
		not_yet("rdma_connect", "IB CM (emu/ib/cm_agent)");
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_CONNECT, EMU_CMA_ROUTE_RESOLVED);
	else
		id->has_cm = true;
	return ret;
}

int emu_cma_accept(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		   const struct rdma_ucm_ece *ece)
{
	if (id->state != EMU_CMA_CONNECT)
		return -EINVAL;
	return cm_ops && cm_ops->accept ? cm_ops->accept(id, p, ece) :
		not_yet("rdma_accept", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_reject(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->reject ? cm_ops->reject(id, pdata, len, reason) :
		not_yet("rdma_reject", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_disconnect(struct emu_cma_id *id)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->disconnect ? cm_ops->disconnect(id) :
		not_yet("rdma_disconnect", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_notify(struct emu_cma_id *id, uint32_t event)
{
	if (!id->has_cm)
		return -EINVAL;
	return cm_ops && cm_ops->notify ? cm_ops->notify(id, event) :
		not_yet("rdma_notify", "IB CM (emu/ib/cm_agent)");
}

int emu_cma_cm_listen(struct emu_cma_id *id)
{
	return cm_ops && cm_ops->listen ? cm_ops->listen(id) : 0;
}

void emu_cma_cm_drop_dev(struct emu_cma_id *id, size_t dev)
{
	if (cm_ops && cm_ops->drop_dev)
		cm_ops->drop_dev(id, dev);
}

/* ---- multicast ---- */

int emu_cma_join(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	if (id->dev < 0)
		return -EINVAL;
	if (id->state != EMU_CMA_ADDR_BOUND && id->state != EMU_CMA_ADDR_RESOLVED)
		return -EINVAL;
	/* UD ids only (6.1 stable, "RDMA/cma: Refactor the inbound/outbound path records"
	 * series; measured: a join on an RDMA_PS_TCP id is EINVAL, devrm_probe2) */
	if (id->qp_type != 4 /* IB_QPT_UD */)
		return -EINVAL;
	return route_ops && route_ops->join ? route_ops->join(id, mc) :
		not_yet("rdma_join_multicast", "SA client (emu/ib/sa_client)");
}

void emu_cma_leave(struct emu_cma_id *id, struct emu_cma_mc *mc)
{
	if (route_ops && route_ops->leave)
		route_ops->leave(id, mc);
}
