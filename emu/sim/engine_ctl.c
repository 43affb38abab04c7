/* Virtual time in the control API (include/rdmaemu/ctl.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "emu/sim/engine.h"
#include "rdmaemu/ctl.h"

int rdmaemu_ctl_now_ns(uint64_t *now)
{
	struct emu_engine *e;

	if (!now) {
		errno = EINVAL;
		return -1;
	}
	e = emu_engine_get();
	if (!e)
		return -1;
	*now = emu_engine_peek_now(e);
	return 0;
}

int rdmaemu_ctl_advance_ns(uint64_t delta)
{
	struct emu_engine *e = emu_engine_get();
	int rc;

	if (!e)
		return -1;
	emu_engine_lock(e);
	rc = emu_engine_advance(e, delta);
	emu_engine_unlock(e);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}
