/* The fake SA's multicast groups (sa_groups.c): the groups in the order a query lists them,
 * their index by MGID and the multicast LIDs they hold, kept in step by adding and removing
 * groups through these functions only. Below the SA's engine (sa*.c), above the MAD codec. */
#ifndef RDMAEMU_EMU_SA_GROUPS_H
#define RDMAEMU_EMU_SA_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emu/ib/mad.h"

#define EMU_SA_MLID_MIN 0xc000
#define EMU_SA_MLID_MAX 0xfffe
#define EMU_SA_NMLIDS (EMU_SA_MLID_MAX - EMU_SA_MLID_MIN + 1)

struct emu_sa_member {
	uint8_t port_gid[16];
	uint8_t join_state, proxy_join;
};

struct emu_sa_mcgroup {
	struct emu_sa_mcmember_rec rec; /* group parameters; port_gid/join_state unused */
	/* the wire record of rec with no member (PortGID zero, JoinState and ProxyJoin 0): what a
	 * query lists for a group without members, and the group's fields a scan compares */
	uint8_t wire[52];
	struct emu_sa_member *members;
	size_t nmembers;
	bool well_known; /* never removed when empty */
};

struct emu_sa_groups {
	struct emu_sa_mcgroup *groups;
	size_t ngroups, cap_groups;
	/* the index by MGID: open addressing, linear probing, a slot holds a group's index + 1
	 * (0: empty), at most half of the slots in use; a join, a leave and a query naming an
	 * MGID find their group without comparing it with every other */
	uint32_t *by_mgid;
	size_t by_mgid_cap;
	/* the multicast LIDs the groups hold, bit m - EMU_SA_MLID_MIN: a new group takes the
	 * lowest free one without comparing every candidate with every group */
	uint64_t mlid_used[(EMU_SA_NMLIDS + 63) / 64];
};

/* The hash of a GID (port GIDs, MGIDs): every byte matters (GUIDs and the SA's MGID counter
 * differ anywhere), a murmur-style finaliser over both halves. */
static inline size_t emu_sa_gid_hash(const uint8_t gid[16])
{
	uint64_t a, b;

	memcpy(&a, gid, 8);
	memcpy(&b, gid + 8, 8);
	b ^= a * 0x9e3779b97f4a7c15ull;
	b ^= b >> 33;
	b *= 0xff51afd7ed558ccdull;
	b ^= b >> 33;
	b *= 0xc4ceb9fe1a85ec53ull;
	return (size_t)(b ^ (b >> 33));
}

/* The wire MCMemberRecord of a member of g: the group's fields, the selectors "exactly". */
void emu_sa_member_record(const struct emu_sa_mcgroup *g, const uint8_t *port_gid,
			  uint8_t join_state, uint8_t proxy, uint8_t *wire);

/* The group of MGID mgid, NULL when there is none. */
struct emu_sa_mcgroup *emu_sa_group_by_mgid(const struct emu_sa_groups *gs,
					    const uint8_t mgid[16]);
/* The lowest multicast LID no group holds, 0 when all are taken. */
uint16_t emu_sa_group_free_mlid(const struct emu_sa_groups *gs);
/* Appends a group of record r (its MGID not in use, its MLID free) without members, takes its
 * MLID and indexes its MGID; NULL without memory. */
struct emu_sa_mcgroup *emu_sa_group_add(struct emu_sa_groups *gs,
					const struct emu_sa_mcmember_rec *r);
/* Frees g's members, gives back its MLID, and puts the last group in its place. */
void emu_sa_group_remove(struct emu_sa_groups *gs, struct emu_sa_mcgroup *g);
void emu_sa_groups_free(struct emu_sa_groups *gs);

#endif
