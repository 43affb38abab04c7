/* The kernel CM ids: their handles, creation and destruction (rdma_destroy_id's teardown of
 * every module's state), address resolution's start and the options (rdma_set_option). The
 * state machine is emu/rdma_cm/cma_state.c's, the modules' entry points emu/rdma_cm/cma_ops.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "emu/sim/trace.h"
#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/rdma_cm/ucma_event.h"

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

	emu_cma_resolve_cancel(id);
	emu_cma_svc_destroy(id);
	emu_cma_cm_destroy(id);
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

/* ---- address resolution ---- */

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
	ret = emu_cma_addr_ops_resolve(id, timeout_ms);
	if (ret)
		emu_cma_comp_exch(id, EMU_CMA_ADDR_QUERY, EMU_CMA_ADDR_BOUND);
	return ret;
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
