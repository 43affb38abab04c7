/* The wire: frame copies in flight are timers on the virtual clock; faults are decided at send
 * time from per-direction PRNG streams. See wire.h for the exact fault semantics. */
#include "emu/sim/wire.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/sim/list.h"
#include "emu/sim/prng.h"
#include "util/failcall.h"

struct wire_pkt {
	struct emu_timer timer;
	struct emu_list node; /* on wire->in_flight, so emu_wire_free can reclaim it */
	struct emu_wire *w;
	struct wire_pkt *next_free; /* in the packet cache */
	uint32_t link;
	uint8_t dir;
	uint8_t copies;
	uint8_t cls;
	bool built;			 /* the sender's own CRCs over these bytes (emu_wire_rx_built) */
	uint32_t len;			 /* the frame's length */
	const struct emu_wire_lazy *lazy; /* data holds the frame's description, not its bytes */
	uint8_t data[];
};

/* Packet buffers are recycled through per-size-class caches (256 B .. 16 KiB, powers of two):
 * a busy link otherwise makes malloc hand memory back to the kernel and fault it in again on
 * every burst (measured: 3.7 us instead of 0.35 us per 4 KiB frame). Each class keeps up to
 * PKT_CACHE_BYTES of freed buffers, so the cache never holds more than the peak of frames in
 * flight it recycles. */
#define PKT_CLASS_MIN_SHIFT 8
#define PKT_CLASSES 7
#define PKT_CACHE_BYTES (4 * 1024 * 1024)

_Static_assert(sizeof(struct wire_pkt) + EMU_WIRE_MAX_FRAME <=
	       (size_t)1 << (PKT_CLASS_MIN_SHIFT + PKT_CLASSES - 1),
	       "the largest frame must fit the largest packet class");

struct wire_dir {
	struct emu_prng prng;
	uint32_t matched[EMU_FAULT_MATCH_MAX]; /* frames counted by each drop-match rule */
	struct emu_wire_counters ctr;
	uint64_t last_due;     /* delivery time of the latest frame: keeps the direction FIFO */
	struct wire_pkt *held; /* frame held back by the reorder fault, waiting to be overtaken */
};

/* A link's faults and its two directions' streams and counters. Made when the link gets
 * faults or carries its first frame (link_state): a process attached to rdmaemud holds the wire
 * of a whole fabric (10,000 nodes: 10,800 links) and sends on none of it. */
struct wire_state {
	struct emu_faults faults;
	struct wire_dir dir[2];
};

struct wire_link {
	int ep[2];
	int link_layer;
	struct wire_state *st; /* NULL: a perfect link that has carried nothing yet */
};

struct wire_ep {
	uint64_t id;
	emu_wire_rx_fn *rx;
	emu_wire_rx_lazy_fn *rx_lazy;
	void *ctx;
	int link;
	uint8_t side; /* which end of its link: the direction it sends on */
	bool down;    /* no carrier: sends and receives nothing (emu_wire_set_endpoint_down) */
	struct emu_wire_port_counters *pc; /* made at its first count (NULL: all zero) */
};

static const struct emu_faults perfect_link;

struct emu_wire {
	struct emu_clock *clk;
	struct emu_prng root;
	struct wire_ep *eps;
	size_t neps, eps_cap;
	struct wire_link *links;
	size_t nlinks, links_cap;
	struct emu_list in_flight;
	size_t nin_flight;
	struct emu_pcap *tap_eth, *tap_ib;
	uint64_t reorder_hold;
	struct wire_pkt *cache[PKT_CLASSES];
	size_t ncache[PKT_CLASSES];
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void inc(uint64_t *c, uint64_t n)
{
	*c = add_sat(*c, n);
}

/* One frame in a port's counters (wire.h: which octets, which frames are multicast). frame
 * NULL: a described frame, unicast. */
static void count(struct emu_wire_port_counters *c, bool rx, int link_layer,
		  const uint8_t *frame, size_t len)
{
	bool ib = link_layer == EMU_LL_INFINIBAND;
	uint64_t octets = ib && len >= 2 ? len - 2 : len; /* the VCRC is not counted */
	bool mcast = false;

	if (frame && ib && len >= 4) {
		uint16_t dlid = (uint16_t)(frame[2] << 8 | frame[3]);

		mcast = dlid >= 0xc000 && dlid != 0xffff;
	} else if (frame && !ib && len >= 1) {
		mcast = frame[0] & 1;
	}
	inc(rx ? &c->rcv_octets : &c->xmit_octets, octets);
	inc(rx ? &c->rcv_pkts : &c->xmit_pkts, 1);
	if (mcast)
		inc(rx ? &c->rcv_mcast : &c->xmit_mcast, 1);
	else
		inc(rx ? &c->rcv_ucast : &c->xmit_ucast, 1);
}

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0; /* false for NaN */
}

static bool faults_ok(const struct emu_faults *f)
{
	return prob_ok(f->loss) && prob_ok(f->duplicate) && prob_ok(f->reorder) &&
	       prob_ok(f->corrupt) && f->nmatch <= EMU_FAULT_MATCH_MAX;
}

/* Grows *arr (of *cap elements of `size` bytes) to hold at least `need`. */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	n = emu_realloc(*arr, ncap * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

void emu_wire_trim(struct emu_wire *w)
{
	void *p;

	if (w->neps && w->neps < w->eps_cap &&
	    (p = realloc(w->eps, w->neps * sizeof(*w->eps)))) {
		w->eps = p;
		w->eps_cap = w->neps;
	}
	if (w->nlinks && w->nlinks < w->links_cap &&
	    (p = realloc(w->links, w->nlinks * sizeof(*w->links)))) {
		w->links = p;
		w->links_cap = w->nlinks;
	}
}

static struct wire_pkt *pkt_alloc(struct emu_wire *w, size_t len)
{
	size_t need = sizeof(struct wire_pkt) + len;
	unsigned cls = 0;
	struct wire_pkt *p;

	while (((size_t)1 << (PKT_CLASS_MIN_SHIFT + cls)) < need)
		cls++;
	p = w->cache[cls];
	if (p) {
		w->cache[cls] = p->next_free;
		w->ncache[cls]--;
	} else {
		p = emu_kmem_alloc((size_t)1 << (PKT_CLASS_MIN_SHIFT + cls));
		if (!p)
			return NULL;
	}
	p->cls = (uint8_t)cls;
	return p;
}

static void pkt_free(struct emu_wire *w, struct wire_pkt *p)
{
	unsigned cls = p->cls;

	if (w->ncache[cls] < (size_t)PKT_CACHE_BYTES >> (PKT_CLASS_MIN_SHIFT + cls)) {
		p->next_free = w->cache[cls];
		w->cache[cls] = p;
		w->ncache[cls]++;
	} else {
		emu_kmem_free(p);
	}
}

struct emu_wire *emu_wire_new(struct emu_clock *clk, uint64_t seed)
{
	struct emu_wire *w;
	struct emu_prng fabric;

	if (!clk) {
		errno = EINVAL;
		return NULL;
	}
	w = emu_calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->clk = clk;
	emu_prng_seed(&fabric, seed);
	emu_prng_fork(&fabric, EMU_PRNG_DOMAIN_WIRE, &w->root);
	emu_list_init(&w->in_flight);
	w->reorder_hold = EMU_WIRE_REORDER_HOLD_NS;
	return w;
}

void emu_wire_free(struct emu_wire *w)
{
	struct emu_list *pos, *tmp;
	struct wire_pkt *p;

	if (!w)
		return;
	emu_list_for_each_safe(pos, tmp, &w->in_flight) {
		p = emu_list_entry(pos, struct wire_pkt, node);
		emu_timer_cancel(w->clk, &p->timer);
		emu_kmem_free(p);
	}
	for (unsigned c = 0; c < PKT_CLASSES; c++) {
		while ((p = w->cache[c])) {
			w->cache[c] = p->next_free;
			emu_kmem_free(p);
		}
	}
	for (size_t i = 0; i < w->neps; i++)
		free(w->eps[i].pc);
	for (size_t i = 0; i < w->nlinks; i++)
		free(w->links[i].st);
	free(w->eps);
	free(w->links);
	free(w);
}

static bool ep_valid(const struct emu_wire *w, int ep)
{
	return ep >= 0 && (size_t)ep < w->neps;
}

static bool link_valid(const struct emu_wire *w, int link)
{
	return link >= 0 && (size_t)link < w->nlinks;
}

/* Link `link`'s state, made (perfect) at its first need: NULL when out of memory. Its streams
 * are forked from the wire's by the link's index, the same whenever they are made. */
static struct wire_state *link_state(struct emu_wire *w, int link)
{
	struct wire_link *l = &w->links[link];

	if (!l->st) {
		l->st = emu_calloc(1, sizeof(*l->st));
		if (!l->st)
			return NULL;
		for (int d = 0; d < 2; d++)
			emu_prng_fork(&w->root, 2 * (uint64_t)link + (uint64_t)d, &l->st->dir[d].prng);
	}
	return l->st;
}

static const struct emu_faults *link_faults(const struct wire_link *l)
{
	return l->st ? &l->st->faults : &perfect_link;
}

/* Endpoint ep's port counters, made at the first count: NULL when out of memory (the frame
 * goes uncounted). */
static struct emu_wire_port_counters *ep_pc(struct emu_wire *w, int ep)
{
	struct wire_ep *e = &w->eps[ep];

	if (!e->pc)
		e->pc = emu_calloc(1, sizeof(*e->pc));
	return e->pc;
}

int emu_wire_add_endpoint(struct emu_wire *w, uint64_t id, emu_wire_rx_fn *rx, void *ctx)
{
	if (w->neps >= INT32_MAX)
		return -ENOMEM;
	if (grow((void **)&w->eps, &w->eps_cap, w->neps + 1, sizeof(*w->eps)))
		return -ENOMEM;
	w->eps[w->neps] = (struct wire_ep){ .id = id, .rx = rx, .ctx = ctx, .link = -1 };
	return (int)w->neps++;
}

uint64_t emu_wire_endpoint_id(const struct emu_wire *w, int ep)
{
	return ep_valid(w, ep) ? w->eps[ep].id : 0;
}

int emu_wire_endpoint_link(const struct emu_wire *w, int ep)
{
	return ep_valid(w, ep) ? w->eps[ep].link : -1;
}

int emu_wire_set_rx(struct emu_wire *w, int ep, emu_wire_rx_fn *rx, void *ctx)
{
	if (!ep_valid(w, ep))
		return -EINVAL;
	w->eps[ep].rx = rx;
	w->eps[ep].rx_lazy = NULL;
	w->eps[ep].ctx = ctx;
	return 0;
}

int emu_wire_set_endpoint_down(struct emu_wire *w, int ep, bool down)
{
	if (!ep_valid(w, ep))
		return -EINVAL;
	w->eps[ep].down = down;
	return 0;
}

bool emu_wire_endpoint_down(const struct emu_wire *w, int ep)
{
	return ep_valid(w, ep) && w->eps[ep].down;
}

int emu_wire_set_rx_lazy(struct emu_wire *w, int ep, emu_wire_rx_lazy_fn *fn)
{
	if (!ep_valid(w, ep))
		return -EINVAL;
	w->eps[ep].rx_lazy = fn;
	return 0;
}

int emu_wire_connect(struct emu_wire *w, int ep_a, int ep_b, int link_layer,
		     const struct emu_faults *faults)
{
	struct wire_link *l;
	size_t idx = w->nlinks;

	if (!faults)
		faults = &perfect_link;
	if (!ep_valid(w, ep_a) || !ep_valid(w, ep_b) || ep_a == ep_b || !faults_ok(faults) ||
	    (link_layer != EMU_LL_ETHERNET && link_layer != EMU_LL_INFINIBAND))
		return -EINVAL;
	if (w->eps[ep_a].link >= 0 || w->eps[ep_b].link >= 0)
		return -EBUSY;
	if (idx >= INT32_MAX / 2 ||
	    grow((void **)&w->links, &w->links_cap, idx + 1, sizeof(*w->links)))
		return -ENOMEM;
	l = &w->links[idx];
	*l = (struct wire_link){ .ep = { ep_a, ep_b }, .link_layer = link_layer };
	if (memcmp(faults, &perfect_link, sizeof(*faults))) {
		if (!link_state(w, (int)idx))
			return -ENOMEM;
		l->st->faults = *faults;
	}
	w->eps[ep_a].link = (int)idx;
	w->eps[ep_a].side = EMU_WIRE_A_TO_B;
	w->eps[ep_b].link = (int)idx;
	w->eps[ep_b].side = EMU_WIRE_B_TO_A;
	w->nlinks++;
	return (int)idx;
}

int emu_wire_set_faults(struct emu_wire *w, int link, const struct emu_faults *faults)
{
	struct wire_state *st;

	if (!link_valid(w, link) || !faults || !faults_ok(faults))
		return -EINVAL;
	st = link_state(w, link);
	if (!st)
		return -ENOMEM;
	st->faults = *faults;
	return 0;
}

int emu_wire_get_faults(const struct emu_wire *w, int link, struct emu_faults *out)
{
	if (!link_valid(w, link) || !out)
		return -EINVAL;
	*out = *link_faults(&w->links[link]);
	return 0;
}

int emu_wire_link_layer(const struct emu_wire *w, int link)
{
	return link_valid(w, link) ? w->links[link].link_layer : -EINVAL;
}

int emu_wire_counters(const struct emu_wire *w, int link, enum emu_wire_dir dir,
		      struct emu_wire_counters *out)
{
	if (!link_valid(w, link) || (dir != EMU_WIRE_A_TO_B && dir != EMU_WIRE_B_TO_A) || !out)
		return -EINVAL;
	if (w->links[link].st)
		*out = w->links[link].st->dir[dir].ctr;
	else
		memset(out, 0, sizeof(*out));
	return 0;
}

int emu_wire_port_counters(const struct emu_wire *w, int ep, struct emu_wire_port_counters *out)
{
	if (!w || !ep_valid(w, ep) || !out)
		return -EINVAL;
	if (w->eps[ep].pc)
		*out = *w->eps[ep].pc;
	else
		memset(out, 0, sizeof(*out));
	return 0;
}

int emu_wire_port_counters_set(struct emu_wire *w, int ep, const struct emu_wire_port_counters *in)
{
	if (!w || !ep_valid(w, ep) || !in)
		return -EINVAL;
	if (!ep_pc(w, ep))
		return -ENOMEM;
	*w->eps[ep].pc = *in;
	return 0;
}

void emu_wire_count(struct emu_wire *w, int ep, bool rx, int link_layer, const uint8_t *frame,
		    size_t len)
{
	struct emu_wire_port_counters *pc;

	if (w && ep_valid(w, ep) && frame && len && (pc = ep_pc(w, ep)))
		count(pc, rx, link_layer, frame, len);
}

void emu_wire_count_rcv_error(struct emu_wire *w, int ep)
{
	struct emu_wire_port_counters *pc;

	if (w && ep_valid(w, ep) && (pc = ep_pc(w, ep)))
		inc(&pc->rcv_errors, 1);
}

size_t emu_wire_nlinks(const struct emu_wire *w)
{
	return w->nlinks;
}

size_t emu_wire_nendpoints(const struct emu_wire *w)
{
	return w->neps;
}

size_t emu_wire_in_flight(const struct emu_wire *w)
{
	return w->nin_flight;
}

int emu_wire_set_tap(struct emu_wire *w, int link_layer, struct emu_pcap *tap)
{
	if (tap && emu_pcap_link_layer(tap) != link_layer)
		return -EINVAL;
	if (link_layer == EMU_LL_ETHERNET)
		w->tap_eth = tap;
	else if (link_layer == EMU_LL_INFINIBAND)
		w->tap_ib = tap;
	else
		return -EINVAL;
	return 0;
}

void emu_wire_set_reorder_hold(struct emu_wire *w, uint64_t hold_ns)
{
	w->reorder_hold = hold_ns;
}

/* A described frame: to the receiver's lazy function if it takes it, else built here, at the
 * instant its bytes would have arrived. */
static void deliver_lazy(struct emu_wire *w, const struct wire_ep *e, const struct wire_pkt *p,
			 uint64_t now)
{
	struct wire_pkt *b;

	if (e->rx_lazy && e->rx_lazy(e->ctx, p->lazy, p->data, now))
		return;
	if (!e->rx)
		return;
	b = pkt_alloc(w, p->len);
	if (!b) /* as a frame the receiver could not take in: lost */
		return;
	p->lazy->build(p->data, b->data, p->len);
	e->rx(e->ctx, b->data, p->len, now);
	pkt_free(w, b);
}

static __thread bool rx_built;

bool emu_wire_rx_built(void)
{
	return rx_built;
}

static void pkt_deliver(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct wire_pkt *p = arg;
	struct emu_wire *w = p->w;
	struct wire_link *l = &w->links[p->link];
	struct wire_dir *d = &l->st->dir[p->dir]; /* made when the frame was sent */
	int dst = l->ep[!p->dir];

	emu_list_del(&p->node);
	w->nin_flight--;
	if (d->held == p) /* its hold time ran out: nothing overtook it */
		d->held = NULL;
	if (l->st->faults.down || w->eps[dst].down) {
		d->ctr.dropped_down++;
	} else {
		for (unsigned i = 0; i < p->copies; i++) {
			/* Re-read through the arrays each time: the receiver may add endpoints
			 * or links, which moves them. */
			struct wire_dir *dd = &w->links[p->link].st->dir[p->dir];
			const struct wire_ep *e = &w->eps[dst];
			struct emu_wire_port_counters *pc = ep_pc(w, dst);

			dd->ctr.delivered++;
			if (i)
				dd->ctr.duplicated++;
			if (pc)
				count(pc, true, w->links[p->link].link_layer,
				      p->lazy ? NULL : p->data, p->len);
			if (p->lazy)
				deliver_lazy(w, e, p, emu_clock_now(clk));
			else if (e->rx) {
				rx_built = p->built;
				e->rx(e->ctx, p->data, p->len, emu_clock_now(clk));
				rx_built = false;
			}
		}
	}
	pkt_free(w, p);
}

static uint64_t draw_jitter(struct emu_prng *prng, uint64_t jitter_ns)
{
	if (jitter_ns == UINT64_MAX)
		return emu_prng_u64(prng);
	return emu_prng_below(prng, jitter_ns + 1);
}

/* The drop-match rules of the link for frames of direction `side`: true when this frame is
 * the nth match of one. Descriptions (lazy) never reach here on a link with rules. */
static bool match_drop(const struct wire_state *st, struct wire_dir *d, unsigned side,
		       const uint8_t *frame, size_t len)
{
	bool drop = false;

	for (unsigned i = 0; i < st->faults.nmatch; i++) {
		const struct emu_fault_match *m = &st->faults.match[i];

		if (m->side != side || m->off >= len || (frame[m->off] & m->mask) != m->val)
			continue;
		if (++d->matched[i] == m->nth)
			drop = true;
	}
	return drop;
}

/* emu_wire_send, of a frame (lazy NULL: data is its len bytes) or of a description (datalen
 * bytes; no capture is recording its link). pre: a packet emu_wire_send_buf gave, whose data
 * is the frame already (consumed, sent or not). */
static int wire_send(struct emu_wire *w, int ep, const void *data, size_t datalen, size_t len,
		     const struct emu_wire_lazy *lazy, struct wire_pkt *pre, bool built)
{
	struct wire_link *l;
	struct wire_state *st;
	struct wire_dir *d;
	struct wire_pkt *p, *held;
	struct emu_wire_port_counters *pc;
	const struct emu_faults *fl;
	struct emu_pcap *tap;
	bool lost, dup, reorder;
	uint64_t now, jitter, due, flip = UINT64_MAX;

	l = &w->links[w->eps[ep].link];
	now = emu_clock_now(w->clk);

	/* Allocate before any state changes, so that -ENOMEM leaves the wire (and its random
	 * streams) exactly as it was. */
	st = link_state(w, w->eps[ep].link);
	pc = ep_pc(w, ep);
	p = st && pc ? (pre ? pre : pkt_alloc(w, datalen)) : NULL;
	if (!p) {
		if (pre)
			pkt_free(w, pre);
		return -ENOMEM;
	}
	d = &st->dir[w->eps[ep].side];
	fl = &st->faults;

	d->ctr.sent++;
	if (fl->down || w->eps[ep].down) {
		d->ctr.dropped_down++;
		inc(&pc->xmit_discards, 1);
		pkt_free(w, p);
		return 0;
	}
	count(pc, false, l->link_layer, lazy ? NULL : data, len);
	tap = l->link_layer == EMU_LL_ETHERNET ? w->tap_eth : w->tap_ib;
	if (tap && !lazy)
		emu_pcap_write(tap, now, data, len);

	lost = emu_prng_chance(&d->prng, fl->loss);
	dup = emu_prng_chance(&d->prng, fl->duplicate);
	reorder = emu_prng_chance(&d->prng, fl->reorder);
	jitter = draw_jitter(&d->prng, fl->jitter_ns);
	/* after the draws: a rule leaves the random streams as they were, and so does a link
	 * without the corrupt fault (no draw) */
	if (!lazy && match_drop(st, d, w->eps[ep].side, data, len))
		lost = true;
	if (fl->corrupt > 0 && emu_prng_chance(&d->prng, fl->corrupt) && !lazy)
		flip = emu_prng_below(&d->prng, (uint64_t)len * 8);
	if (lost) {
		d->ctr.dropped_loss++;
		pkt_free(w, p);
		return 0;
	}

	due = add_sat(add_sat(now, fl->delay_ns), jitter);
	if (due < d->last_due)
		due = d->last_due;
	d->last_due = due;

	p->w = w;
	p->link = (uint32_t)w->eps[ep].link;
	p->dir = w->eps[ep].side;
	p->copies = dup ? 2 : 1;
	p->len = (uint32_t)len;
	p->lazy = lazy;
	if (p->data != data)
		memcpy(p->data, data, datalen);
	p->built = built && flip == UINT64_MAX;
	if (flip != UINT64_MAX) {
		p->data[flip / 8] ^= (uint8_t)(0x80u >> (flip % 8));
		d->ctr.corrupted++;
	}
	emu_timer_init(&p->timer, pkt_deliver, p);
	emu_list_add_tail(&w->in_flight, &p->node);
	w->nin_flight++;

	if (d->held) {
		/* This frame overtakes the held one, which follows it at the same instant:
		 * re-arming gives the held frame a later sequence number than this one. */
		held = d->held;
		d->held = NULL;
		emu_timer_arm_at(w->clk, &p->timer, due);
		emu_timer_arm_at(w->clk, &held->timer, due);
		d->ctr.reordered++;
	} else if (reorder) {
		d->held = p;
		emu_timer_arm_at(w->clk, &p->timer, add_sat(due, w->reorder_hold));
	} else {
		/* the same deadline as arm_at's, due >= now; a link's frames with one delay then
		 * wait in a lane of the clock, in the order they fire, instead of the heap */
		emu_timer_arm_in(w->clk, &p->timer, due - now);
	}
	return 0;
}

static int send_check(const struct emu_wire *w, int ep, size_t len)
{
	if (!w || !ep_valid(w, ep) || len == 0)
		return -EINVAL;
	if (len > EMU_WIRE_MAX_FRAME)
		return -EMSGSIZE;
	if (w->eps[ep].link < 0)
		return -ENOTCONN;
	return 0;
}

int emu_wire_send(struct emu_wire *w, int ep, const void *frame, size_t len)
{
	int rc = frame ? send_check(w, ep, len) : -EINVAL;

	return rc ? rc : wire_send(w, ep, frame, len, len, NULL, NULL, false);
}

/* The bytes of packet class cls a frame may take. */
static size_t pkt_room(unsigned cls)
{
	return ((size_t)1 << (PKT_CLASS_MIN_SHIFT + cls)) - sizeof(struct wire_pkt);
}

void *emu_wire_send_buf(struct emu_wire *w, int ep, size_t len)
{
	int rc = send_check(w, ep, len);
	struct wire_pkt *p;

	if (rc) {
		errno = -rc;
		return NULL;
	}
	p = pkt_alloc(w, len);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	return p->data;
}

static struct wire_pkt *buf_pkt(void *buf)
{
	return (struct wire_pkt *)((uint8_t *)buf - offsetof(struct wire_pkt, data));
}

int emu_wire_send_commit(struct emu_wire *w, int ep, void *buf, size_t len, bool built)
{
	struct wire_pkt *p = buf_pkt(buf);
	int rc = send_check(w, ep, len);

	if (!rc && len > pkt_room(p->cls))
		rc = -EMSGSIZE;
	if (rc) {
		pkt_free(w, p);
		return rc;
	}
	return wire_send(w, ep, buf, len, len, NULL, p, built);
}

void emu_wire_send_abort(struct emu_wire *w, void *buf)
{
	if (buf)
		pkt_free(w, buf_pkt(buf));
}

int emu_wire_send_lazy(struct emu_wire *w, int ep, const struct emu_wire_lazy *ops,
		       const void *obj, size_t objlen, size_t len)
{
	int rc = ops && obj && objlen ? send_check(w, ep, len) : -EINVAL;
	const struct wire_link *l;
	const struct emu_faults *fl;
	uint8_t *frame;

	if (rc)
		return rc;
	l = &w->links[w->eps[ep].link];
	fl = link_faults(l);
	if (!(l->link_layer == EMU_LL_ETHERNET ? w->tap_eth : w->tap_ib) && !fl->nmatch &&
	    !(fl->corrupt > 0))
		return wire_send(w, ep, obj, objlen, len, ops, NULL, false);
	/* a capture records the bytes at send time; drop-match rules look at them, the corrupt
	 * fault flips one */
	frame = emu_malloc(len);
	if (!frame)
		return -ENOMEM;
	ops->build(obj, frame, len);
	rc = wire_send(w, ep, frame, len, len, NULL, NULL, false);
	free(frame);
	return rc;
}
