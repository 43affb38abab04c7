/* The fake SA: its state (ports, groups, services), lookups, faults, RMPP segmentation; the
 * dispatch is sa_dispatch.c, the responses sa_resp.c, the records sa_path.c, sa_mc.c,
 * sa_node.c. See emu/ib/sa.h for the behaviour; OpenSM's osm_sa_*.c is the model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "emu/sim/prng.h"
#include "emu/ib/sa.h"
#include "emu/ib/sa_priv.h"
#include "emu/sim/topology.h"
#include "util/failcall.h"

const char *emu_sa_verdict_name(enum emu_sa_verdict v)
{
	static const char *const n[] = { "ANSWER", "DROP", "BUSY", "ERROR" };

	return (unsigned)v < 4 ? n[v] : "?";
}

/* ---- construction ---- */

static int add_port(struct emu_sa *sa, struct emu_port *po)
{
	struct emu_sa_port *n;

	if (sa->nports == sa->cap_ports) {
		size_t cap = sa->cap_ports ? 2 * sa->cap_ports : 8;

		n = emu_realloc(sa->ports, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		sa->ports = n;
		sa->cap_ports = cap;
	}
	sa->ports[sa->nports++] = (struct emu_sa_port){ .port = po };
	return 0;
}

static int add_ipoib_broadcast(struct emu_sa *sa)
{
	/* OpenSM creates the default partition's IPoIB broadcast group at start (partition
	 * config "Default=0x7fff,ipoib"): Q_Key 0x0b1b, MTU 2048, 10 Gb/s, link-local scope. */
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					  0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff };
	struct emu_sa_mcmember_rec r = { 0 };
	struct emu_sa_mcgroup *g;

	memcpy(r.mgid, mgid, 16);
	r.qkey = 0x0b1b;
	r.mlid = EMU_SA_MLID_MIN;
	r.mtu = 4;
	r.rate = 3;
	r.pkey = 0xffff;
	r.sl = sa->f->sm.sl;
	r.packet_life_time = sa->f->sm.packet_lifetime;
	r.scope = 2;
	g = emu_sa_group_add(&sa->mc, &r);
	if (!g)
		return -ENOMEM;
	g->well_known = true;
	return 0;
}

struct emu_sa *emu_sa_new(const struct emu_fabric *f, const struct emu_topology *t)
{
	struct emu_sa *sa;
	struct emu_prng root;

	if (!f || !f->sm.present) {
		errno = ENODEV;
		return NULL;
	}
	sa = emu_calloc(1, sizeof(*sa));
	if (!sa)
		return NULL;
	sa->f = f;
	sa->t = t;
	sa->policy.response_delay_ns = f->sm.response_delay_ns;
	sa->policy.drop_next = f->sm.drop_next;
	sa->policy.drop = f->sm.drop;
	sa->policy.busy_next = f->sm.busy_next;
	sa->policy.busy = f->sm.busy;
	sa->policy.error_status = f->sm.error_status;
	sa->policy.error_attr = f->sm.error_attr;
	emu_prng_seed(&root, f->seed);
	emu_prng_fork(&root, EMU_PRNG_DOMAIN_SA, &sa->prng);
	/* The SA knows the IB CA ports (RoCE ports have no SA). */
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t d = 0; d < f->hosts[h].ndevices; d++) {
			struct emu_device *dev = &f->hosts[h].devices[d];

			for (size_t p = 0; p < dev->nports; p++)
				if (dev->ports[p].link_layer == 1 && add_port(sa, &dev->ports[p])) {
					emu_sa_free(sa);
					errno = ENOMEM;
					return NULL;
				}
		}
	if (add_ipoib_broadcast(sa) || emu_sa_index_ports(sa)) {
		emu_sa_free(sa);
		errno = ENOMEM;
		return NULL;
	}
	return sa;
}

void emu_sa_free(struct emu_sa *sa)
{
	if (!sa)
		return;
	emu_sa_groups_free(&sa->mc);
	free(sa->ports);
	free(sa->services);
	free(sa->replay);
	free(sa->unreachable);
	free(sa->by_lid);
	free(sa->by_gid);
	free(sa);
}

struct emu_sa_policy *emu_sa_policy(struct emu_sa *sa)
{
	return &sa->policy;
}

void emu_sa_set_time(struct emu_sa *sa, uint64_t now_ns)
{
	sa->now_ns = now_ns;
}

int emu_sa_set_unreachable(struct emu_sa *sa, const uint8_t dgid[16], bool unreachable)
{
	for (size_t i = 0; i < sa->nunreachable; i++)
		if (!memcmp(sa->unreachable[i].raw, dgid, 16)) {
			if (!unreachable)
				sa->unreachable[i] = sa->unreachable[--sa->nunreachable];
			return 0;
		}
	if (!unreachable)
		return 0;
	struct emu_sa_gid *n = emu_realloc(sa->unreachable, (sa->nunreachable + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	sa->unreachable = n;
	memcpy(n[sa->nunreachable++].raw, dgid, 16);
	return 0;
}

size_t emu_sa_mcgroup_count(const struct emu_sa *sa)
{
	return sa->mc.ngroups;
}

int emu_sa_mcgroup_member(const struct emu_sa *sa, const uint8_t mgid[16],
			  const uint8_t port_gid[16], uint16_t *mlid)
{
	const struct emu_sa_mcgroup *g = emu_sa_group_by_mgid(&sa->mc, mgid);

	if (!g)
		return -ENOENT;
	if (mlid)
		*mlid = g->rec.mlid;
	for (size_t m = 0; m < g->nmembers; m++)
		if (!memcmp(g->members[m].port_gid, port_gid, 16))
			return g->members[m].join_state;
	return 0;
}

size_t emu_sa_service_count(const struct emu_sa *sa)
{
	return sa->nservices;
}

size_t emu_sa_replay_count(const struct emu_sa *sa)
{
	return sa->nreplay;
}

/* ---- faults ---- */

enum emu_sa_verdict emu_sa_decide(struct emu_sa *sa, uint64_t *delay_ns)
{
	/* Both draws happen every time (see emu_sa.h). */
	bool drop = emu_prng_chance(&sa->prng, sa->policy.drop);
	bool busy = emu_prng_chance(&sa->prng, sa->policy.busy);

	if (delay_ns)
		*delay_ns = sa->policy.response_delay_ns;
	if (sa->policy.drop_next) {
		sa->policy.drop_next--;
		return EMU_SA_DROP;
	}
	if (drop)
		return EMU_SA_DROP;
	if (sa->policy.busy_next) {
		sa->policy.busy_next--;
		return EMU_SA_BUSY;
	}
	if (busy)
		return EMU_SA_BUSY;
	if (sa->policy.error_status)
		return EMU_SA_ERROR;
	return EMU_SA_ANSWER;
}

/* ---- RMPP ---- */

unsigned emu_sa_rmpp_nsegs(size_t msg_len)
{
	size_t data = msg_len > EMU_SA_HDR_LEN ? msg_len - EMU_SA_HDR_LEN : 0;

	return data ? (unsigned)((data + EMU_SA_DATA_LEN - 1) / EMU_SA_DATA_LEN) : 1;
}

int emu_sa_rmpp_segment(const uint8_t *msg, size_t msg_len, unsigned seg, uint8_t out[EMU_MAD_LEN])
{
	unsigned n = emu_sa_rmpp_nsegs(msg_len);
	size_t data = msg_len - EMU_SA_HDR_LEN, off, chunk;
	struct emu_rmpp_hdr rh;

	if (!msg || msg_len < EMU_SA_HDR_LEN || seg < 1 || seg > n)
		return -EINVAL;
	off = (size_t)(seg - 1) * EMU_SA_DATA_LEN;
	chunk = data - off < EMU_SA_DATA_LEN ? data - off : EMU_SA_DATA_LEN;
	memset(out, 0, EMU_MAD_LEN);
	memcpy(out, msg, EMU_SA_HDR_LEN); /* MAD + RMPP + SA headers repeat in every segment */
	memcpy(out + EMU_SA_HDR_LEN, msg + EMU_SA_HDR_LEN + off, chunk);
	emu_rmpp_hdr_get(msg + 24, &rh);
	rh.flags = EMU_RMPP_FLAG_ACTIVE | (seg == 1 ? EMU_RMPP_FLAG_FIRST : 0) |
		   (seg == n ? EMU_RMPP_FLAG_LAST : 0);
	rh.data1 = seg;
	/* PayloadLength counts the SA header of every segment (the kernel's mad_rmpp.c does the
	 * same): the first gives the whole message, the last its own bytes, the middle ones 0. */
	if (seg == 1)
		rh.data2 = (uint32_t)(data + 20u * n);
	else if (seg == n)
		rh.data2 = (uint32_t)(20 + chunk);
	else
		rh.data2 = 0;
	emu_rmpp_hdr_put(out + 24, &rh);
	return 0;
}
