/* idtab: pointers by 32-bit key in a sparse three-level table (emu/sim/idtab.h). */
#include "idtab.h"

#include <errno.h>
#include <stdlib.h>

#include "util/kmem.h"
#include "util/failcall.h"

#define TOP_BITS 12
#define MID_BITS 11
#define LEAF_BITS 9
#define MID_N (1u << MID_BITS)
#define LEAF_N (1u << LEAF_BITS)

/* 4 KiB: a kmem object (its largest class), so leaves come from the huge-page slabs and
 * are reused there; from malloc, each leaf a counter moves past was freed and a new one
 * faulted in (~50 page faults a round of bench/cm_bench at 10,000 connections). */
struct emu_idtab_leaf {
	void *slot[LEAF_N];
};

struct emu_idtab_mid {
	struct emu_idtab_leaf *leaf[MID_N];
	uint16_t nset[MID_N]; /* slots set in each leaf */
	unsigned n;           /* leaves present */
};

_Static_assert(sizeof(struct emu_idtab_leaf) == EMU_KMEM_MAX, "a leaf is a kmem object");

static inline unsigned top_of(uint32_t k) { return k >> (MID_BITS + LEAF_BITS); }
static inline unsigned mid_of(uint32_t k) { return (k >> LEAF_BITS) & (MID_N - 1); }
static inline unsigned leaf_of(uint32_t k) { return k & (LEAF_N - 1); }

/* An emptied middle node (all its leaves NULL, counts 0) is kept for the next one needed:
 * ids made and destroyed in rounds empty and refill the same one, and a fresh one (20 KiB from
 * malloc) is five page faults each time. */
static void mid_drop(struct emu_idtab *t, struct emu_idtab_mid *m)
{
	if (t->spare)
		free(m);
	else
		t->spare = m;
}

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
	if (!t->top && !(t->top = emu_calloc((size_t)1 << TOP_BITS, sizeof *t->top)))
		return -ENOMEM;
	m = t->top[top_of(key)];
	if (!m) {
		m = t->spare ? t->spare : emu_calloc(1, sizeof *m);
		if (!m)
			return -ENOMEM;
		t->spare = NULL;
		t->top[top_of(key)] = m;
	}
	l = m->leaf[mid_of(key)];
	if (!l) {
		l = emu_kmem_zalloc(sizeof *l);
		if (!l) {
			if (!m->n) {
				t->top[top_of(key)] = NULL;
				mid_drop(t, m);
			}
			return -ENOMEM;
		}
		m->leaf[mid_of(key)] = l;
		m->n++;
	}
	if (l->slot[leaf_of(key)])
		return -EEXIST;
	l->slot[leaf_of(key)] = p;
	m->nset[mid_of(key)]++;
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
	if (!--m->nset[mid_of(key)]) {
		m->leaf[mid_of(key)] = NULL;
		emu_kmem_free(l);
		if (!--m->n) {
			t->top[top_of(key)] = NULL;
			mid_drop(t, m);
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
				emu_kmem_free(m->leaf[j]);
			free(m);
		}
		free(t->top);
	}
	free(t->spare);
	t->spare = NULL;
	t->top = NULL;
	t->n = 0;
}
