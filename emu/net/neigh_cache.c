/* The hosts' neighbour caches from outside the layer: `ip neigh` lookups, traffic through an
 * entry, flushes, and the counters. See emu/net/neigh.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/net/neigh_priv.h"

int emu_neigh_stats(struct emu_engine *e, size_t host, struct emu_neigh_stats *out)
{
	struct neigh_host *nh = emu_neigh_host(emu_neigh_get(e), host);

	if (!nh || !out)
		return -ENOENT;
	*out = nh->st;
	return 0;
}

int emu_neigh_lookup(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr,
		     enum emu_nud *state, uint8_t *hw, uint8_t *hw_len)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);
	const void *a;
	int family = emu_neigh_sa_addr(addr, &a);
	struct neigh_entry *ne;

	if (!d || family < 0)
		return -ENOENT;
	ne = emu_neigh_entry_find(d, family, a);
	if (!ne)
		return -ENOENT;
	if (state)
		*state = ne->state;
	if (hw_len)
		*hw_len = (ne->state & EMU_NUD_VALID) ? d->nd->hwaddr_len : 0;
	if (hw && (ne->state & EMU_NUD_VALID))
		memcpy(hw, ne->hw, d->nd->hwaddr_len);
	return 0;
}

int emu_neigh_touch(struct emu_engine *e, size_t host, int netdev, const struct sockaddr *addr)
{
	struct neigh_dev *d = emu_neigh_dev(emu_neigh_get(e), host, netdev);
	const void *a;
	int family = emu_neigh_sa_addr(addr, &a);
	struct neigh_entry *ne;

	if (!d || family < 0)
		return -ENOENT;
	ne = emu_neigh_entry_get(d, family, a);
	if (!ne)
		return -ENOMEM;
	emu_neigh_event_send(ne);
	return (int)ne->state;
}

int emu_neigh_flush(struct emu_engine *e, size_t host, int netdev)
{
	struct emu_neigh *n = emu_neigh_get(e);
	struct neigh_host *nh = emu_neigh_host(n, host);
	struct neigh_dev *d;
	int total = 0;

	if (!nh)
		return -ENOENT;
	if (netdev >= 0) {
		d = emu_neigh_dev(n, host, netdev);
		return d ? emu_neigh_dev_flush(d) : -ENOENT;
	}
	for (size_t i = 0; i < nh->ndevs; i++)
		total += emu_neigh_dev_flush(&nh->devs[i]);
	return total;
}
