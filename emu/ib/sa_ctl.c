/* The SA part of the control API (include/rdmaemu/ctl.h: rdmaemu_ctl_sa_policy). */
#include "config.h"

#include <errno.h>

#include "emu/sim/engine.h"
#include "emu/ib/sa_agent.h"
#include "rdmaemu/ctl.h"

int rdmaemu_ctl_sa_policy(const struct rdmaemu_sa_policy *set, struct rdmaemu_sa_policy *old)
{
	struct emu_engine *e;
	struct emu_sa_policy *p;
	int rc;

	if (set && (!(set->drop >= 0 && set->drop <= 1) || !(set->busy >= 0 && set->busy <= 1))) {
		errno = EINVAL;
		return -1;
	}
	e = emu_engine_get();
	if (!e)
		return -1;
	emu_engine_lock(e);
	rc = emu_sa_agent_start(e);
	if (rc) {
		emu_engine_unlock(e);
		errno = -rc;
		return -1;
	}
	p = emu_sa_policy(emu_sa_agent_sa(e));
	if (old)
		*old = (struct rdmaemu_sa_policy){ p->response_delay_ns, p->drop_next, p->drop,
						   p->busy_next, p->busy, p->error_status,
						   p->error_attr };
	if (set) {
		p->response_delay_ns = set->response_delay_ns;
		p->drop_next = set->drop_next;
		p->drop = set->drop;
		p->busy_next = set->busy_next;
		p->busy = set->busy;
		p->error_status = set->error_status;
		p->error_attr = set->error_attr;
	}
	emu_engine_unlock(e);
	return 0;
}
