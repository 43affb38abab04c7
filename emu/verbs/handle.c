/* uverbs object handles: each context numbers its objects (PD, MR, MW, CQ, QP, SRQ, AH) from
 * 0, the lowest free one first, as ib_uverbs's idr does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/verbs_priv.h"
#include "util/failcall.h"

uint32_t emu_verbs_handle_get(struct emu_vctx *c)
{
	uint32_t h;

	pthread_mutex_lock(&c->handle_lock);
	for (h = 0; h < c->nhandles && c->handles[h]; h++)
		;
	if (h == c->nhandles) {
		size_t n = c->nhandles ? c->nhandles * 2 : 64;
		uint8_t *p = emu_realloc(c->handles, n);

		if (p) {
			memset(p + c->nhandles, 0, n - c->nhandles);
			c->handles = p;
			c->nhandles = n;
		}
	}
	if (h < c->nhandles)
		c->handles[h] = 1;
	pthread_mutex_unlock(&c->handle_lock);
	return h; /* out of memory: a duplicate handle, harmless (nothing looks handles up) */
}

void emu_verbs_handle_put(struct emu_vctx *c, uint32_t handle)
{
	pthread_mutex_lock(&c->handle_lock);
	if (handle < c->nhandles)
		c->handles[handle] = 0;
	pthread_mutex_unlock(&c->handle_lock);
}
