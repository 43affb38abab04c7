/* rdmaemu_ctl_cm_fault: the CM agents' message faults (emu/ib/cm_agent.h emu_cm_fault_set) for
 * programs, by host, device and message name. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/ib/cm_agent.h"
#include "emu/ib/cm_host.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

static uint16_t attr_of(const char *msg)
{
	for (uint16_t a = EMU_CM_ATTR_REQ; a <= EMU_CM_ATTR_APR; a++)
		if (!strcmp(emu_cm_attr_name(a), msg))
			return a;
	return 0;
}

static emu_cm_fault_remote_fn *remote;

void emu_cm_fault_set_remote(emu_cm_fault_remote_fn *fn)
{
	remote = fn;
}

int rdmaemu_ctl_cm_fault(const char *node, const char *device, const char *msg,
			 const struct rdmaemu_cm_fault *set, struct rdmaemu_cm_fault *old)
{
	const struct emu_host *self = emu_process_host();
	struct emu_engine *e = self ? emu_engine_get() : NULL;
	const struct emu_fabric *f;
	uint16_t attr = msg ? attr_of(msg) : 0;
	size_t h;
	int n = 0, err = 0;

	if (!e)
		return -1; /* errno: the attach error */
	if (!attr || (set && (set->drop < 0 || set->drop > 1 || set->dup < 0 || set->dup > 1 ||
			      set->delay < 0 || set->delay > 1))) {
		errno = EINVAL;
		return -1;
	}
	if (remote) {
		err = -remote(node ? node : self->name, device, msg, set, old);
		if (err)
			errno = err;
		return err ? -1 : 0;
	}
	f = emu_engine_fabric(e);
	for (h = 0; h < f->nhosts; h++)
		if (!strcmp(f->hosts[h].name, node ? node : self->name))
			break;
	if (h == f->nhosts) {
		errno = ENOENT;
		return -1;
	}
	emu_engine_lock(e);
	for (size_t d = 0; d < f->hosts[h].ndevices && !err; d++) {
		struct emu_cm_agent *a;
		struct emu_cm_fault cur;

		if (device && strcmp(device, f->hosts[h].devices[d].name))
			continue;
		a = emu_cm_host_agent(e, h, d);
		if (!a) {
			err = errno;
			break;
		}
		n++;
		emu_cm_fault_get(a, attr, &cur);
		if (old && n == 1) {
			old->drop_next = cur.drop_next;
			old->dup_next = cur.dup_next;
			old->delay_next = cur.delay_next;
			old->drop = cur.p_drop;
			old->dup = cur.p_dup;
			old->delay = cur.p_delay;
			old->delay_ns = cur.delay_ns;
		}
		if (set) {
			cur.drop_next = set->drop_next;
			cur.dup_next = set->dup_next;
			cur.delay_next = set->delay_next;
			cur.p_drop = set->drop;
			cur.p_dup = set->dup;
			cur.p_delay = set->delay;
			cur.delay_ns = set->delay_ns;
			emu_cm_fault_set(a, attr, &cur);
		}
	}
	emu_engine_unlock(e);
	if (!err && !n)
		err = ENOENT;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int rdmaemu_ctl_cm_counters(const char *node, const char *msg, uint64_t out[4])
{
	const struct emu_host *self = emu_process_host();
	struct emu_engine *e = self ? emu_engine_get() : NULL;
	const struct emu_fabric *f;
	uint16_t attr = msg ? attr_of(msg) : 0;
	int cls = emu_cm_class(attr);
	size_t h;

	if (!e)
		return -1;
	if (!attr || !out) {
		errno = EINVAL;
		return -1;
	}
	f = emu_engine_fabric(e);
	for (h = 0; h < f->nhosts; h++)
		if (!strcmp(f->hosts[h].name, node ? node : self->name))
			break;
	if (h == f->nhosts) {
		errno = ENOENT;
		return -1;
	}
	memset(out, 0, 4 * sizeof *out);
	emu_engine_lock(e);
	for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
		struct emu_cm_agent *a = emu_cm_host_agent(e, h, d);
		struct emu_cm_counters c;

		if (!a)
			continue;
		emu_cm_agent_counters(a, &c);
		out[0] += c.tx[cls];
		out[1] += c.tx_retries[cls];
		out[2] += c.rx[cls];
		out[3] += c.dropped[cls];
	}
	emu_engine_unlock(e);
	return 0;
}
