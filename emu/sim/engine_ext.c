/* Per-engine attachments (emu/sim/engine_ext.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "emu/sim/engine_ext.h"
#include "util/failcall.h"

struct emu_engine_ext {
	struct emu_engine_ext *next;
	const struct emu_engine_ext_type *type;
	void *obj;
};

void *emu_engine_ext_find(struct emu_engine_ext *head, const struct emu_engine_ext_type *type)
{
	for (struct emu_engine_ext *x = head; x; x = x->next)
		if (x->type == type)
			return x->obj;
	return NULL;
}

int emu_engine_ext_add(struct emu_engine_ext **head, const struct emu_engine_ext_type *type,
		       void *obj)
{
	struct emu_engine_ext *x;

	if (emu_engine_ext_find(*head, type))
		return -EEXIST;
	x = emu_malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	*x = (struct emu_engine_ext){ .next = *head, .type = type, .obj = obj };
	*head = x;
	return 0;
}

void emu_engine_ext_free_all(struct emu_engine *e, struct emu_engine_ext **head)
{
	/* A layer freed here may look up another (the SA agent unregisters from the MAD layer):
	 * unlink one at a time, newest first, so the older ones are still found. */
	while (*head) {
		struct emu_engine_ext *x = *head;

		*head = x->next;
		if (x->type->free)
			x->type->free(e, x->obj);
		free(x);
	}
}
