/* Per-engine attachments: protocol layers that live as long as the process engine (the MAD
 * layer, the SA agent, ...) hang their state on it here, so that emu_engine_reset() frees them
 * with the engine (before the topology and the clock go) and a new engine starts without them.
 *
 * An attachment is keyed by the address of its type descriptor. Lock held for every call. */
#ifndef RDMAEMU_EMU_ENGINE_EXT_H
#define RDMAEMU_EMU_ENGINE_EXT_H

struct emu_engine;

struct emu_engine_ext_type {
	const char *name;
	/* Called by emu_engine_reset with the engine still whole (lock not held: no other
	 * thread uses the engine then); must cancel the object's timers and claims. */
	void (*free)(struct emu_engine *e, void *obj);
};

/* The object attached for `type`, NULL if none. */
void *emu_engine_ext_get(struct emu_engine *e, const struct emu_engine_ext_type *type);
/* Attaches obj for `type` (replacing nothing: -EEXIST when one is attached). 0, -ENOMEM. */
int emu_engine_ext_set(struct emu_engine *e, const struct emu_engine_ext_type *type, void *obj);

/* ---- the list behind them, which the engine keeps (engine.c) ---- */
struct emu_engine_ext;
void *emu_engine_ext_find(struct emu_engine_ext *head, const struct emu_engine_ext_type *type);
int emu_engine_ext_add(struct emu_engine_ext **head, const struct emu_engine_ext_type *type,
		       void *obj);
/* Frees the attachments of e (list *head), last attached first. */
void emu_engine_ext_free_all(struct emu_engine *e, struct emu_engine_ext **head);

#endif
