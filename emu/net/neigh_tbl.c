/* Neighbour entries and their NUD state machine (net/core/neighbour.c: __neigh_event_send,
 * neigh_timer_handler, neigh_update), with the default parameters of emu/net/neigh.h:
 *
 *   NONE/FAILED --use--> INCOMPLETE   probes = ucast_probes (so only the mcast_probes remain:
 *                                      3 broadcast solicitations), one sent at once, timer
 *                                      retrans_time
 *   INCOMPLETE --timer--> INCOMPLETE  another broadcast solicitation, while probes < max
 *   INCOMPLETE/PROBE --timer--> FAILED  probes reached ucast+app+mcast (INCOMPLETE) or
 *                                      ucast+app+mcast_reprobes (PROBE)
 *   STALE --use--> DELAY                IP traffic through it (emu_neigh_touch; addr.c never)
 *   any --reply--> REACHABLE           a solicited reply (ARP reply to us / NA with S)
 *   any --hint--> STALE                 a request from it for us, an unsolicited NA
 *   REACHABLE --timer--> STALE          after reachable_time (no use meanwhile) or DELAY
 *                                      (used within delay_first_probe_time)
 *   DELAY --timer--> PROBE              not confirmed within delay_first_probe_time: unicast
 *                                      solicitations, probes from 0
 *   DELAY --timer--> REACHABLE          confirmed meanwhile
 *
 * addr.c reads a valid entry's address without "using" it (dst_fetch_ha calls
 * neigh_event_send only for an invalid entry), so rdma_resolve_addr never moves STALE to DELAY.
 * Entries are not garbage-collected (the kernel drops unused FAILED/STALE ones after
 * gc_stale_time when the table is large); a FAILED entry restarts on the next use. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/neigh_priv.h"
#include "util/failcall.h"

static const char *const nud_names[] = {
	"NONE", "INCOMPLETE", "REACHABLE", "STALE", "DELAY", "PROBE", "FAILED", "NOARP",
	"PERMANENT",
};

const char *emu_nud_name(enum emu_nud s)
{
	unsigned bit = 0;

	if (s == EMU_NUD_NONE)
		return nud_names[0];
	if (s & (s - 1))
		return "?";
	while (!((unsigned)s & (1u << bit)))
		bit++;
	return bit + 1 < sizeof(nud_names) / sizeof(*nud_names) ? nud_names[bit + 1] : "?";
}

static const struct emu_neigh_parms *parms(const struct neigh_entry *ne)
{
	(void)ne; /* arp_tbl and nd_tbl share Linux's defaults */
	return &emu_neigh_default_parms;
}

static uint64_t reach_time(const struct neigh_entry *ne)
{
	return ne->dev->reachable_ns[ne->family == AF_INET ? 0 : 1];
}

static uint64_t now_of(const struct neigh_entry *ne)
{
	return emu_clock_now(ne->dev->host->n->clk);
}

static struct emu_clock *clk_of(const struct neigh_entry *ne)
{
	return ne->dev->host->n->clk;
}

static void set_state(struct neigh_entry *ne, enum emu_nud s, const char *why)
{
	char buf[INET6_ADDRSTRLEN];
	enum emu_nud old = ne->state;

	ne->state = s;
	ne->updated = now_of(ne);
	emu_neigh_trace("%" PRIu64 " %s/%s %s: %s --%s--> %s", ne->updated, ne->dev->host->h->name,
			ne->dev->nd->name, emu_neigh_ntop(ne->family, ne->key, buf, sizeof(buf)),
			emu_nud_name(old), why, emu_nud_name(s));
	/* neigh_update_notify -> NETEVENT_NEIGH_UPDATE: addr.c looks again at its requests when
	 * the neighbour is valid */
	if ((s & EMU_NUD_VALID) && s != old)
		emu_neigh_reqs_kick(ne->dev->host->n);
	else if ((old & EMU_NUD_VALID) && !(s & EMU_NUD_VALID))
		emu_neigh_host_changed(ne->dev->host);
}

static unsigned max_probes(const struct neigh_entry *ne)
{
	const struct emu_neigh_parms *p = parms(ne);

	return p->ucast_probes + p->app_probes +
	       (ne->state == EMU_NUD_PROBE ? p->mcast_reprobes : p->mcast_probes);
}

/* neigh_probe(): one solicitation; unicast while probes < ucast_probes (PROBE state),
 * broadcast after (arp_solicit / ndisc_solicit count the same way). */
static void probe(struct neigh_entry *ne)
{
	bool ucast = ne->probes < parms(ne)->ucast_probes && ne->has_hw;

	ne->probes++;
	ne->dev->host->n->solicit(ne, ucast);
}

static void timer_fn(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct neigh_entry *ne = arg;
	const struct emu_neigh_parms *p = parms(ne);
	uint64_t now = emu_clock_now(clk);

	(void)t;
	switch (ne->state) {
	case EMU_NUD_REACHABLE:
		if (now < ne->confirmed + reach_time(ne)) {
			emu_timer_arm_at(clk, &ne->timer, ne->confirmed + reach_time(ne));
		} else if (now < ne->used + p->delay_probe_ns) {
			set_state(ne, EMU_NUD_DELAY, "timer");
			emu_timer_arm_in(clk, &ne->timer, p->delay_probe_ns);
		} else {
			set_state(ne, EMU_NUD_STALE, "timer");
		}
		return;
	case EMU_NUD_DELAY:
		if (now < ne->confirmed + p->delay_probe_ns) {
			set_state(ne, EMU_NUD_REACHABLE, "confirmed");
			emu_timer_arm_at(clk, &ne->timer, ne->confirmed + reach_time(ne));
		} else {
			set_state(ne, EMU_NUD_PROBE, "timer");
			ne->probes = 0;
			emu_timer_arm_in(clk, &ne->timer, p->retrans_ns);
			probe(ne);
		}
		return;
	case EMU_NUD_INCOMPLETE:
	case EMU_NUD_PROBE:
		if (ne->probes >= max_probes(ne)) {
			set_state(ne, EMU_NUD_FAILED, "timer");
			return;
		}
		emu_timer_arm_in(clk, &ne->timer, p->retrans_ns);
		probe(ne);
		return;
	default:
		return;
	}
}

struct neigh_entry *emu_neigh_entry_find(struct neigh_dev *d, int family, const void *addr)
{
	for (struct neigh_entry *ne = d->entries; ne; ne = ne->next)
		if (ne->family == family && !memcmp(ne->key, addr, emu_neigh_alen(family)))
			return ne;
	return NULL;
}

struct neigh_entry *emu_neigh_entry_get(struct neigh_dev *d, int family, const void *addr)
{
	struct neigh_entry *ne = emu_neigh_entry_find(d, family, addr);

	if (ne)
		return ne;
	ne = emu_calloc(1, sizeof(*ne));
	if (!ne)
		return NULL;
	ne->dev = d;
	ne->family = family;
	memcpy(ne->key, addr, emu_neigh_alen(family));
	emu_timer_init(&ne->timer, timer_fn, ne);
	ne->next = d->entries;
	d->entries = ne;
	ne->updated = ne->used = now_of(ne);
	/* arp_constructor / ndisc_constructor: a NOARP netdev's neighbours are valid at birth */
	if (d->noarp)
		set_state(ne, EMU_NUD_NOARP, "create");
	return ne;
}

void emu_neigh_event_send(struct neigh_entry *ne)
{
	const struct emu_neigh_parms *p = parms(ne);

	ne->used = now_of(ne);
	if (ne->state & (EMU_NUD_REACHABLE | EMU_NUD_NOARP | EMU_NUD_PERMANENT | EMU_NUD_DELAY |
			 EMU_NUD_PROBE | EMU_NUD_INCOMPLETE))
		return;
	if (ne->state == EMU_NUD_STALE) {
		/* traffic through a stale entry: confirm it within delay_first_probe_time */
		set_state(ne, EMU_NUD_DELAY, "use");
		emu_timer_arm_in(clk_of(ne), &ne->timer, p->delay_probe_ns);
		return;
	}
	if (p->mcast_probes + p->app_probes) {
		ne->probes = p->ucast_probes;
		set_state(ne, EMU_NUD_INCOMPLETE, "use");
		emu_timer_arm_in(clk_of(ne), &ne->timer, p->retrans_ns);
		probe(ne);
	} else {
		set_state(ne, EMU_NUD_FAILED, "use");
	}
}

void emu_neigh_update(struct neigh_entry *ne, const uint8_t *hw, enum emu_nud state)
{
	size_t len = ne->dev->nd->hwaddr_len;
	bool same = ne->has_hw && !memcmp(ne->hw, hw, len);

	if (ne->state & (EMU_NUD_NOARP | EMU_NUD_PERMANENT))
		return;
	/* a STALE hint with the address we have changes nothing (neigh_update) */
	if (state == EMU_NUD_STALE && same && (ne->state & EMU_NUD_VALID))
		return;
	if (ne->has_hw && !same)
		emu_neigh_host_changed(ne->dev->host); /* another link-layer address */
	memcpy(ne->hw, hw, len);
	ne->has_hw = true;
	if (state == EMU_NUD_REACHABLE) {
		ne->confirmed = now_of(ne);
		set_state(ne, EMU_NUD_REACHABLE, "reply");
		emu_timer_arm_in(clk_of(ne), &ne->timer, reach_time(ne));
	} else {
		emu_timer_cancel(clk_of(ne), &ne->timer);
		set_state(ne, EMU_NUD_STALE, "hint");
	}
}

void emu_neigh_entry_free(struct neigh_entry *ne)
{
	emu_timer_cancel(clk_of(ne), &ne->timer);
	free(ne);
}

int emu_neigh_dev_flush(struct neigh_dev *d)
{
	int n = 0;

	while (d->entries) {
		struct neigh_entry *ne = d->entries;

		d->entries = ne->next;
		emu_neigh_entry_free(ne);
		n++;
	}
	if (n)
		emu_neigh_host_changed(d->host);
	return n;
}
