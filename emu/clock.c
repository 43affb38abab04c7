/* Virtual clock timers on a pairing heap.
 *
 * A pairing heap keeps the timer links inside struct emu_timer (no array to grow, so arming
 * cannot fail) and gives O(1) insert and amortised O(log n) removal of the minimum or of an
 * arbitrary node (cancel). Keys (deadline, seq) are unique, so the firing order is a total
 * order that does not depend on the heap's shape: any correct heap fires the same sequence.
 */
#include "emu/clock.h"

#include <assert.h>
#include <errno.h>

static bool timer_before(const struct emu_timer *a, const struct emu_timer *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	return a->seq < b->seq;
}

/* Melds two detached heap roots (their next/prev are NULL); returns the new root. */
static struct emu_timer *meld(struct emu_timer *a, struct emu_timer *b)
{
	struct emu_timer *tmp;

	if (!a)
		return b;
	if (!b)
		return a;
	if (timer_before(b, a)) {
		tmp = a;
		a = b;
		b = tmp;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* The standard two-pass merge of a sibling list: meld pairs left to right, then meld the
 * results right to left. Iterative, so a long sibling list cannot overflow the stack; the
 * first pass stacks its results through their (otherwise unused) next pointers. */
static struct emu_timer *merge_pairs(struct emu_timer *first)
{
	struct emu_timer *stack = NULL, *a, *b, *m, *res = NULL;

	while (first) {
		a = first;
		b = a->next;
		if (!b) {
			a->next = a->prev = NULL;
			m = a;
			first = NULL;
		} else {
			first = b->next;
			a->next = a->prev = NULL;
			b->next = b->prev = NULL;
			m = meld(a, b);
		}
		m->next = stack;
		stack = m;
	}
	while (stack) {
		m = stack;
		stack = m->next;
		m->next = NULL;
		res = meld(res, m);
	}
	if (res)
		res->prev = NULL;
	return res;
}

static void heap_remove(struct emu_clock *clk, struct emu_timer *t)
{
	struct emu_timer *sub;

	if (t == clk->root) {
		clk->root = merge_pairs(t->child);
	} else {
		if (t->prev->child == t)
			t->prev->child = t->next;
		else
			t->prev->next = t->next;
		if (t->next)
			t->next->prev = t->prev;
		t->next = t->prev = NULL;
		sub = merge_pairs(t->child);
		clk->root = meld(clk->root, sub);
	}
	t->child = t->next = t->prev = NULL;
	t->pending = false;
	clk->npending--;
}

void emu_clock_init(struct emu_clock *clk, uint64_t start_ns)
{
	*clk = (struct emu_clock){ .now = start_ns };
}

void emu_clock_fini(struct emu_clock *clk)
{
	while (clk->root)
		heap_remove(clk, clk->root);
}

bool emu_clock_next_deadline(const struct emu_clock *clk, uint64_t *deadline)
{
	if (!clk->root)
		return false;
	*deadline = clk->root->deadline;
	return true;
}

void emu_timer_init(struct emu_timer *t, emu_timer_fn *fn, void *arg)
{
	*t = (struct emu_timer){ .fn = fn, .arg = arg };
}

void emu_timer_arm_at(struct emu_clock *clk, struct emu_timer *t, uint64_t deadline)
{
	if (t->pending)
		heap_remove(clk, t);
	t->deadline = deadline < clk->now ? clk->now : deadline;
	t->seq = clk->seq++;
	t->child = t->next = t->prev = NULL;
	t->pending = true;
	clk->npending++;
	clk->root = meld(clk->root, t);
}

void emu_timer_arm_in(struct emu_clock *clk, struct emu_timer *t, uint64_t delay_ns)
{
	uint64_t deadline = clk->now + delay_ns;

	if (deadline < clk->now)
		deadline = UINT64_MAX;
	emu_timer_arm_at(clk, t, deadline);
}

bool emu_timer_cancel(struct emu_clock *clk, struct emu_timer *t)
{
	if (!t->pending)
		return false;
	heap_remove(clk, t);
	return true;
}

static void fire_root(struct emu_clock *clk)
{
	struct emu_timer *t = clk->root;

	heap_remove(clk, t);
	if (t->deadline > clk->now)
		clk->now = t->deadline;
	clk->fired++;
	t->fn(clk, t, t->arg);
}

bool emu_clock_run_next(struct emu_clock *clk)
{
	assert(!clk->running);
	if (!clk->root)
		return false;
	clk->running = true;
	fire_root(clk);
	clk->running = false;
	return true;
}

static int run(struct emu_clock *clk, bool bounded, uint64_t t, uint64_t max_steps,
	       uint64_t *fired)
{
	uint64_t n = 0;
	int ret = 0;

	assert(!clk->running);
	clk->running = true;
	while (clk->root && (!bounded || clk->root->deadline <= t)) {
		if (n == max_steps) {
			ret = -ELOOP;
			break;
		}
		fire_root(clk);
		n++;
	}
	clk->running = false;
	if (ret == 0 && bounded && t > clk->now)
		clk->now = t;
	if (fired)
		*fired = n;
	return ret;
}

int emu_clock_run_until(struct emu_clock *clk, uint64_t t, uint64_t max_steps, uint64_t *fired)
{
	return run(clk, true, t, max_steps, fired);
}

int emu_clock_run_idle(struct emu_clock *clk, uint64_t max_steps, uint64_t *fired)
{
	return run(clk, false, 0, max_steps, fired);
}
