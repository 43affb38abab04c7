/* The fake SA's multicast groups (sa_groups.h): their records, the array of groups, their
 * index by MGID (open addressing, linear probing, removal by backward shift) and the bitmap of
 * the MLIDs they hold. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/sa_groups.h"
#include "util/failcall.h"

static const uint8_t zero_gid[16];

void emu_sa_member_record(const struct emu_sa_mcgroup *g, const uint8_t *port_gid,
			  uint8_t join_state, uint8_t proxy, uint8_t *wire)
{
	struct emu_sa_mcmember_rec r = g->rec;

	memcpy(r.port_gid, port_gid, 16);
	r.join_state = join_state;
	r.proxy_join = proxy;
	r.mtu_selector = r.rate_selector = r.packet_life_time_selector = EMU_SA_SEL_EQ;
	emu_mad_record_pack(&emu_sa_mcmember_rec_desc, &r, wire);
}

/* Multicast LID mlid (EMU_SA_MLID_MIN..EMU_SA_MLID_MAX) taken by a group or freed. */
static void mlid_mark(struct emu_sa_groups *gs, uint16_t mlid, bool used)
{
	unsigned b = (unsigned)mlid - EMU_SA_MLID_MIN;

	if (used)
		gs->mlid_used[b / 64] |= 1ull << (b % 64);
	else
		gs->mlid_used[b / 64] &= ~(1ull << (b % 64));
}

uint16_t emu_sa_group_free_mlid(const struct emu_sa_groups *gs)
{
	for (unsigned w = 0; w < sizeof(gs->mlid_used) / sizeof(gs->mlid_used[0]); w++) {
		uint64_t free_bits = ~gs->mlid_used[w];
		unsigned m;

		if (!free_bits)
			continue;
		m = w * 64 + (unsigned)__builtin_ctzll(free_bits);
		return m < EMU_SA_NMLIDS ? (uint16_t)(EMU_SA_MLID_MIN + m) : 0;
	}
	return 0;
}

static size_t home(const struct emu_sa_groups *gs, const uint8_t mgid[16])
{
	return emu_sa_gid_hash(mgid) & (gs->by_mgid_cap - 1);
}

/* The slot holding mgid's group, or the empty slot where it would go. */
static size_t slot_of(const struct emu_sa_groups *gs, const uint8_t mgid[16])
{
	size_t m = gs->by_mgid_cap - 1, h = home(gs, mgid);

	while (gs->by_mgid[h] && memcmp(gs->groups[gs->by_mgid[h] - 1].rec.mgid, mgid, 16))
		h = (h + 1) & m;
	return h;
}

struct emu_sa_mcgroup *emu_sa_group_by_mgid(const struct emu_sa_groups *gs, const uint8_t mgid[16])
{
	uint32_t v;

	if (!gs->by_mgid_cap)
		return NULL;
	v = gs->by_mgid[slot_of(gs, mgid)];
	return v ? &gs->groups[v - 1] : NULL;
}

/* Index of twice the slots: at most half of them in use. */
static int grow_index(struct emu_sa_groups *gs)
{
	size_t cap = gs->by_mgid_cap ? 2 * gs->by_mgid_cap : 16;
	uint32_t *old = gs->by_mgid, *n = emu_calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	gs->by_mgid = n;
	gs->by_mgid_cap = cap;
	for (size_t i = 0; i < gs->ngroups; i++)
		n[slot_of(gs, gs->groups[i].rec.mgid)] = (uint32_t)i + 1;
	free(old);
	return 0;
}

struct emu_sa_mcgroup *emu_sa_group_add(struct emu_sa_groups *gs, const struct emu_sa_mcmember_rec *r)
{
	struct emu_sa_mcgroup *g;

	if (2 * (gs->ngroups + 1) > gs->by_mgid_cap && grow_index(gs))
		return NULL;
	if (gs->ngroups == gs->cap_groups) {
		size_t cap = gs->cap_groups ? 2 * gs->cap_groups : 4;
		struct emu_sa_mcgroup *n = emu_realloc(gs->groups, cap * sizeof(*n));

		if (!n)
			return NULL;
		gs->groups = n;
		gs->cap_groups = cap;
	}
	g = &gs->groups[gs->ngroups++];
	memset(g, 0, sizeof(*g));
	g->rec = *r;
	emu_sa_member_record(g, zero_gid, 0, 0, g->wire);
	gs->by_mgid[slot_of(gs, r->mgid)] = (uint32_t)gs->ngroups;
	mlid_mark(gs, r->mlid, true);
	return g;
}

/* Empties slot i: each later slot of the run whose home does not lie cyclically in (i, j]
 * moves back into the hole, so that every lookup still finds its group. */
static void unindex(struct emu_sa_groups *gs, size_t i)
{
	size_t m = gs->by_mgid_cap - 1;

	for (size_t j = (i + 1) & m; gs->by_mgid[j]; j = (j + 1) & m) {
		size_t k = home(gs, gs->groups[gs->by_mgid[j] - 1].rec.mgid);

		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		gs->by_mgid[i] = gs->by_mgid[j];
		i = j;
	}
	gs->by_mgid[i] = 0;
}

void emu_sa_group_remove(struct emu_sa_groups *gs, struct emu_sa_mcgroup *g)
{
	size_t gi = (size_t)(g - gs->groups), last = gs->ngroups - 1;

	unindex(gs, slot_of(gs, g->rec.mgid));
	mlid_mark(gs, g->rec.mlid, false);
	free(g->members);
	if (gi != last) {
		/* the last group takes the freed place; its slot follows it */
		*g = gs->groups[last];
		gs->by_mgid[slot_of(gs, g->rec.mgid)] = (uint32_t)gi + 1;
	}
	gs->ngroups--;
}

void emu_sa_groups_free(struct emu_sa_groups *gs)
{
	for (size_t i = 0; i < gs->ngroups; i++)
		free(gs->groups[i].members);
	free(gs->groups);
	free(gs->by_mgid);
}
