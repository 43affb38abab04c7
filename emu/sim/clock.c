/* Virtual clock timers on a pairing heap.
 *
 * A pairing heap keeps the timer links inside struct emu_timer (no array to grow, so arming
 * cannot fail) and gives O(1) insert and amortised O(log n) removal of the minimum or of an
 * arbitrary node (cancel). Keys (deadline, seq) are unique, so the firing order is a total
 * order that does not depend on the heap's shape: any correct heap fires the same sequence.
 *
 * Timers armed with a delay (emu_timer_arm_in) mostly wait in lanes instead (clock.h): one
 * FIFO list per delay, sorted by construction, with only its head in the heap through a
 * proxy node that carries the head's key. The order stays the same total order.
 */
#include "emu/sim/clock.h"

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

/* Takes t (a heap node: a timer or a lane's proxy) out of the heap. */
static void heap_unlink(struct emu_clock *clk, struct emu_timer *t)
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
}

static void heap_insert(struct emu_clock *clk, struct emu_timer *t)
{
	t->child = t->next = t->prev = NULL;
	clk->root = meld(clk->root, t);
}

/* Lane i's head changed: its proxy leaves the heap and comes back with the new head's key
 * (the proxy's `pending` says whether it is in the heap). */
static void lane_rekey(struct emu_clock *clk, unsigned i)
{
	struct emu_clock_lanes *l = &clk->lanes;
	struct emu_timer *p = &l->proxy[i], *h = l->head[i];

	if (p->pending)
		heap_unlink(clk, p);
	p->pending = h != NULL;
	if (h) {
		p->deadline = h->deadline;
		p->seq = h->seq;
		heap_insert(clk, p);
	}
}

/* Takes a pending timer out of its lane or the heap. */
static void timer_remove(struct emu_clock *clk, struct emu_timer *t)
{
	if (t->lane) {
		struct emu_clock_lanes *l = &clk->lanes;
		unsigned i = t->lane - 1u;
		bool head = l->head[i] == t;

		if (t->prev)
			t->prev->next = t->next;
		else
			l->head[i] = t->next;
		if (t->next)
			t->next->prev = t->prev;
		else
			l->tail[i] = t->prev;
		t->next = t->prev = NULL;
		t->lane = 0;
		if (head)
			lane_rekey(clk, i);
	} else {
		heap_unlink(clk, t);
	}
	t->pending = false;
	clk->npending--;
}

/* The timer the heap's root stands for: itself, or the head of the proxy's lane. */
static struct emu_timer *root_timer(const struct emu_clock *clk)
{
	const struct emu_timer *r = clk->root;

	return r->lane ? clk->lanes.head[r->lane - 1u] : clk->root;
}

void emu_clock_init(struct emu_clock *clk, uint64_t start_ns)
{
	*clk = (struct emu_clock){ .now = start_ns };
	for (unsigned i = 0; i < EMU_CLOCK_LANES; i++)
		clk->lanes.proxy[i].lane = (uint8_t)(i + 1);
}

void emu_clock_fini(struct emu_clock *clk)
{
	while (clk->root)
		timer_remove(clk, root_timer(clk));
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
		timer_remove(clk, t);
	t->deadline = deadline < clk->now ? clk->now : deadline;
	t->seq = clk->seq++;
	t->pending = true;
	clk->npending++;
	heap_insert(clk, t);
}

void emu_timer_arm_in(struct emu_clock *clk, struct emu_timer *t, uint64_t delay_ns)
{
	struct emu_clock_lanes *l = &clk->lanes;
	uint64_t deadline = clk->now + delay_ns;
	unsigned i, free_lane = EMU_CLOCK_LANES;

	if (deadline < clk->now)
		deadline = UINT64_MAX;
	/* "after this call": the heap's new minimum, a meld at the root and out again at once
	 * (a lane would add its proxy's moves to that), unless other timers are due now too: a
	 * burst of them (a message's looped-back packets, a link without delay) made the root's
	 * child list as long as the burst, a merge over all of it at each firing */
	if (delay_ns == 0 && !(clk->root && clk->root->deadline == deadline)) {
		emu_timer_arm_at(clk, t, deadline);
		return;
	}
	if (t->pending)
		timer_remove(clk, t);
	for (i = 0; i < EMU_CLOCK_LANES; i++) {
		if (!l->head[i]) {
			if (free_lane == EMU_CLOCK_LANES)
				free_lane = i;
		} else if (l->delay[i] == delay_ns) {
			break;
		}
	}
	if (i == EMU_CLOCK_LANES) {
		if (free_lane == EMU_CLOCK_LANES) { /* every lane busy with another delay */
			emu_timer_arm_at(clk, t, deadline);
			return;
		}
		i = free_lane;
		l->delay[i] = delay_ns;
	}
	/* the lane's last timer was armed no later, with the same delay: t goes at its end */
	t->deadline = deadline;
	t->seq = clk->seq++;
	t->pending = true;
	t->lane = (uint8_t)(i + 1);
	t->child = t->next = NULL;
	t->prev = l->tail[i];
	clk->npending++;
	if (l->tail[i]) {
		l->tail[i]->next = t;
		l->tail[i] = t;
	} else {
		l->head[i] = l->tail[i] = t;
		lane_rekey(clk, i);
	}
}

bool emu_timer_cancel(struct emu_clock *clk, struct emu_timer *t)
{
	if (!t->pending)
		return false;
	timer_remove(clk, t);
	return true;
}

static void fire_root(struct emu_clock *clk)
{
	struct emu_timer *t = root_timer(clk);

	timer_remove(clk, t);
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
