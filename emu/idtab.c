/* idtab: pointers by 32-bit key in a sparse three-level table (emu/idtab.h). */
#include "idtab.h"

#include <errno.h>
#include <stdlib.h>

#define TOP_BITS 12
#define MID_BITS 10
#define LEAF_BITS 10
#define MID_N (1u << MID_BITS)
#define LEAF_N (1u << LEAF_BITS)

struct emu_idtab_leaf {
	void *slot[LEAF_N];
	unsigned n; /* slots set */
};

struct emu_idtab_mid {
	struct emu_idtab_leaf *leaf[MID_N];
	unsigned n; /* leaves present */
};

static inline unsigned top_of(uint32_t k) { return k >> (MID_BITS + LEAF_BITS); }
static inline unsigned mid_of(uint32_t k) { return (k >> LEAF_BITS) & (MID_N - 1); }
static inline unsigned leaf_of(uint32_t k) { return k & (LEAF_N - 1); }

void *emu_idtab_get(const struct emu_idtab *t, uint32_t key)
{
	struct emu_idtab_mid *m;
	struct emu_idtab_leaf *l;

	if (!t->top || !(m = t->top[top_of(key)]) || !(l = m->leaf[mid_of(key)]))
		return NULL;
	return l->slot[leaf_of(key)];
}

int emu_idtab_set(struct emu_idtab *t, uint32_t key, void *p)
{
	struct emu_idtab_mid *m;
	struct emu_idtab_leaf *l;

	if (!p)
		return -EINVAL;
	if (!t->top && !(t->top = calloc((size_t)1 << TOP_BITS, sizeof *t->top)))
		return -ENOMEM;
	m = t->top[top_of(key)];
	if (!m) {
		m = calloc(1, sizeof *m);
		if (!m)
			return -ENOMEM;
		t->top[top_of(key)] = m;
	}
	l = m->leaf[mid_of(key)];
	if (!l) {
		l = calloc(1, sizeof *l);
		if (!l) {
			if (!m->n) {
				t->top[top_of(key)] = NULL;
				free(m);
			}
			return -ENOMEM;
		}
		m->leaf[mid_of(key)] = l;
		m->n++;
	}
	if (l->slot[leaf_of(key)])
		return -EEXIST;
	l->slot[leaf_of(key)] = p;
	l->n++;
	t->n++;
	return 0;
}

void *emu_idtab_del(struct emu_idtab *t, uint32_t key)
{
	struct emu_idtab_mid *m;
	struct emu_idtab_leaf *l;
	void *p;

	if (!t->top || !(m = t->top[top_of(key)]) || !(l = m->leaf[mid_of(key)]) ||
	    !(p = l->slot[leaf_of(key)]))
		return NULL;
	l->slot[leaf_of(key)] = NULL;
	t->n--;
	if (!--l->n) {
		m->leaf[mid_of(key)] = NULL;
		free(l);
		if (!--m->n) {
			t->top[top_of(key)] = NULL;
			free(m);
		}
	}
	return p;
}

void emu_idtab_destroy(struct emu_idtab *t)
{
	if (t->top) {
		for (unsigned i = 0; i < (1u << TOP_BITS); i++) {
			struct emu_idtab_mid *m = t->top[i];

			if (!m)
				continue;
			for (unsigned j = 0; j < MID_N; j++)
				free(m->leaf[j]);
			free(m);
		}
		free(t->top);
	}
	t->top = NULL;
	t->n = 0;
}
