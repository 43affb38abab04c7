/* The kernel CM id's state machine and its events (cma.c's cma_comp_exch, the event handlers'
 * queueing through ucma), the outcomes of address and route resolution, the path records
 * and the attach order of the ids on their devices: what every other file of emu/rdma_cm
 * builds on (emu/rdma_cm/cma.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "emu/sim/trace.h"
#include "util/kmem.h"
#include "emu/rdma_cm/ucma_event.h"
#include "util/failnth.h"

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

	if (!ev) {
		/* ucma_event_handler: an event without memory is dropped */
		emu_fail_lost("rdma_cm event");
		return -ENOMEM;
	}
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

static uint64_t attach_counter;

void emu_cma_attach_dev(struct emu_cma_id *id)
{
	id->attach_seq = ++attach_counter;
}
