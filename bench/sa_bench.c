/* SA benchmark: PathRecord queries per second, in-process.
 *
 *   sa_engine   emu_sa_handle alone on fixtures/ib.fabric (request MAD in, response MAD out).
 *   sa_process  the same through emu_sa_process (fault decision, two PRNG draws, included).
 *   sa_wire     the full round trip: SA client -> MAD layer -> UD packet built, ICRC/VCRC ->
 *               switch -> SA agent on the switch's port 0 (parse, checks, emu_sa_process) ->
 *               answer packet -> switch -> client (parse, TID match, unpack, callback); response
 *               delay 0, 1000 queries in flight per batch, all at one virtual instant.
 *   fabric10k   an ibnetdiscover topology of 10,000 nodes (9,600 CAs, 300 leaf and 100 spine
 *               switches) generated here, loaded (emu_fabric_load_text + fabric_ibnd.c), then
 *               the topology built (forwarding tables) and the SA created; load time, build time
 *               and memory (VmRSS growth), and PathRecord Get rate across that fabric.
 *   mcast       MCMemberRecord on ib.fabric with many groups: ib-a creates 16,000 groups (a
 *               join without MGID: the SA picks MGID and MLID), ib-b joins each by its MGID, a
 *               Get of ib-a's membership of each (MGID, PortGID, JoinState), 100 GetTables by
 *               a Q_Key no group has (a scan of every group), then both leave every group; the
 *               time of each step.
 * Usage: sa_bench [FIXTURES-DIR] [seconds per figure, default 1] [engine|wire|fabric10k|mcast]
 * (default: all four parts), or sa_bench --write-fabric10k DIR [NADDR]: the 10,000-node fabric
 * as files (write_fabric10k). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_clock.h"
#include <unistd.h>

#include "emu/sim/clock.h"
#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "emu/ib/sa.h"
#include "emu/ib/sa_client.h"
#include "emu/sim/topology.h"
#include "rdmaemu/ctl.h"

static double now_s(void)
{
	return (double)bench_clock_ns() / 1e9;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

static void gid_of(uint8_t gid[16], uint64_t guid)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (int i = 0; i < 8; i++)
		gid[8 + i] = (uint8_t)(guid >> (56 - 8 * i));
}

static void path_req(uint8_t mad[EMU_MAD_LEN], uint64_t sguid, uint64_t dguid)
{
	struct emu_mad_hdr h = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
				 EMU_SA_CLASS_VERSION, EMU_MAD_METHOD_GET, 0, 0, 1,
				 EMU_SA_ATTR_PATH_RECORD, 0 };
	struct emu_sa_hdr sh = { 0, emu_sa_path_rec_desc.attr_offset,
				 EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_NUMB_PATH };
	struct emu_sa_path_rec q = { 0 };

	gid_of(q.sgid, sguid);
	gid_of(q.dgid, dguid);
	q.numb_path = 1;
	memset(mad, 0, EMU_MAD_LEN);
	emu_mad_hdr_put(mad, &h);
	emu_sa_hdr_put(mad + 36, &sh);
	emu_mad_record_pack(&emu_sa_path_rec_desc, &q, mad + EMU_SA_HDR_LEN);
}

/* Queries per second of emu_sa_handle (process=0) or emu_sa_process (1) on one request. */
static double engine_rate(struct emu_sa *sa, const uint8_t *mad, bool process, double secs,
			  unsigned long *count)
{
	unsigned long n = 0;
	double t0 = now_s(), t;

	do {
		for (int i = 0; i < 10000; i++) {
			uint8_t *r;
			size_t len;
			uint64_t d;
			int rc = process ? emu_sa_process(sa, mad, EMU_MAD_LEN, &r, &len, &d)
					 : emu_sa_handle(sa, mad, EMU_MAD_LEN, &r, &len);

			if (rc || !r || r[4] || r[5]) {
				fprintf(stderr, "sa_bench: unexpected answer: %d status 0x%02x%02x\n",
					rc, r ? r[4] : 0, r ? r[5] : 0);
				exit(1);
			}
			free(r);
		}
		n += 10000;
		t = now_s() - t0;
	} while (t < secs);
	*count = n;
	return (double)n / t;
}

static unsigned long answered;

static void cb(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
	       size_t n, size_t rec_size, void *ctx)
{
	(void)q, (void)recs, (void)rec_size, (void)ctx;
	if (status || mad_status || n != 1) {
		fprintf(stderr, "sa_bench: query failed: %d 0x%04x\n", status, mad_status);
		exit(1);
	}
	answered++;
}

static void bench_wire(const char *fixtures, double secs)
{
	static const struct emu_sa_client_port a = { 0, 0, 1 };
	struct rdmaemu_sa_policy pol = { 0 };
	struct emu_sa_path_rec q = { 0 };
	char path[1200];
	struct emu_engine *e;
	unsigned long sent = 0;
	double t0, t;
	uint64_t vt;

	snprintf(path, sizeof(path), "%s/ib.fabric", fixtures);
	if (rdmaemu_ctl_attach(path, "ib-a") || rdmaemu_ctl_sa_policy(&pol, NULL) ||
	    !(e = emu_engine_get())) {
		fprintf(stderr, "sa_bench: cannot attach %s\n", path);
		exit(1);
	}
	gid_of(q.sgid, 0x0002c90300000a01ull);
	gid_of(q.dgid, 0x0002c90300000b01ull);
	q.numb_path = 1;
	emu_engine_lock(e);
	vt = emu_engine_now(e);
	t0 = now_s();
	do {
		for (int i = 0; i < 1000; i++) {
			int err = 0;

			if (!emu_sa_path_query(e, &a, &q,
					       EMU_PR_COMP_SGID | EMU_PR_COMP_DGID |
						       EMU_PR_COMP_NUMB_PATH,
					       false, NULL, cb, NULL, &err)) {
				fprintf(stderr, "sa_bench: query not sent: %d\n", err);
				exit(1);
			}
		}
		sent += 1000;
		emu_engine_run_now(e);
		t = now_s() - t0;
	} while (t < secs);
	if (answered != sent || emu_engine_now(e) != vt) {
		fprintf(stderr, "sa_bench: %lu of %lu answered\n", answered, sent);
		exit(1);
	}
	emu_engine_unlock(e);
	printf("bench sa_wire queries=%lu secs=%.3f queries_per_s=%.0f ns_per_query=%.0f\n", sent,
	       t, (double)sent / t, t * 1e9 / (double)sent);
	emu_engine_reset();
	emu_process_reset();
}

/* ---- the 10,000-node fabric ---- */

#define NLEAF 300
#define NSPINE 100
#define CA_PER_LEAF 32
#define UPLINKS 4
#define NCA (NLEAF * CA_PER_LEAF)

static uint64_t leaf_guid(unsigned i) { return 0x0002c90200100000ull + i; }
static uint64_t spine_guid(unsigned i) { return 0x0002c90200200000ull + i; }
static uint64_t ca_guid(unsigned i) { return 0x0002c90300000000ull + ((uint64_t)i << 8); }
static unsigned leaf_lid(unsigned i) { return 1 + i; }
static unsigned spine_lid(unsigned i) { return 1 + NLEAF + i; }
static unsigned ca_lid(unsigned i) { return 1 + NLEAF + NSPINE + i; }

/* Leaf l's uplink u goes to spine (l + u) % NSPINE, so neighbouring leaves share three spines
 * and every leaf reaches every other through one spine; spine ports are numbered in leaf
 * order. */
static unsigned spine_of(unsigned l, unsigned u) { return (l + u) % NSPINE; }

static char *gen_topology(size_t *len)
{
	static unsigned sport[NLEAF][UPLINKS];
	unsigned next[NSPINE] = { 0 };
	size_t cap = 16u << 20, n = 0;
	char *b = malloc(cap);

#define P(...) (n += (size_t)snprintf(b + n, cap - n, __VA_ARGS__))
	if (!b)
		return NULL;
	for (unsigned l = 0; l < NLEAF; l++)
		for (unsigned u = 0; u < UPLINKS; u++)
			sport[l][u] = ++next[spine_of(l, u)];
	P("# generated by sa_bench: %u leaves, %u spines, %u CAs\n\n", NLEAF, NSPINE, NCA);
	for (unsigned l = 0; l < NLEAF; l++) {
		P("vendid=0x2c9\ndevid=0xc738\nsysimgguid=0x%llx\nswitchguid=0x%llx(%llx)\n",
		  (unsigned long long)leaf_guid(l), (unsigned long long)leaf_guid(l),
		  (unsigned long long)leaf_guid(l));
		P("Switch\t36 \"S-%016llx\"\t\t# \"leaf%u\" base port 0 lid %u lmc 0\n",
		  (unsigned long long)leaf_guid(l), l, leaf_lid(l));
		for (unsigned c = 0; c < CA_PER_LEAF; c++) {
			unsigned ca = l * CA_PER_LEAF + c;

			P("[%u]\t\"H-%016llx\"[1](%llx)\t\t# \"node%u mlx5_0\" lid %u 4xEDR\n", c + 1,
			  (unsigned long long)ca_guid(ca), (unsigned long long)ca_guid(ca) + 1, ca,
			  ca_lid(ca));
		}
		for (unsigned u = 0; u < UPLINKS; u++) {
			unsigned sp = spine_of(l, u);

			P("[%u]\t\"S-%016llx\"[%u]\t\t# \"spine%u\" lid %u 4xEDR\n",
			  CA_PER_LEAF + 1 + u, (unsigned long long)spine_guid(sp), sport[l][u], sp,
			  spine_lid(sp));
		}
		P("\n");
	}
	for (unsigned s = 0; s < NSPINE; s++) {
		P("vendid=0x2c9\ndevid=0xc738\nsysimgguid=0x%llx\nswitchguid=0x%llx(%llx)\n",
		  (unsigned long long)spine_guid(s), (unsigned long long)spine_guid(s),
		  (unsigned long long)spine_guid(s));
		P("Switch\t36 \"S-%016llx\"\t\t# \"spine%u\" base port 0 lid %u lmc 0\n",
		  (unsigned long long)spine_guid(s), s, spine_lid(s));
		for (unsigned l = 0; l < NLEAF; l++)
			for (unsigned u = 0; u < UPLINKS; u++)
				if (spine_of(l, u) == s)
					P("[%u]\t\"S-%016llx\"[%u]\t\t# \"leaf%u\" lid %u 4xEDR\n",
					  sport[l][u], (unsigned long long)leaf_guid(l),
					  CA_PER_LEAF + 1 + u, l, leaf_lid(l));
		P("\n");
	}
	for (unsigned ca = 0; ca < NCA; ca++) {
		unsigned l = ca / CA_PER_LEAF;

		P("vendid=0x2c9\ndevid=0x1017\nsysimgguid=0x%llx\ncaguid=0x%llx\n",
		  (unsigned long long)ca_guid(ca), (unsigned long long)ca_guid(ca));
		P("Ca\t1 \"H-%016llx\"\t\t# \"node%u mlx5_0\"\n", (unsigned long long)ca_guid(ca),
		  ca);
		P("[1](%llx) \t\"S-%016llx\"[%u]\t\t# lid %u lmc 0 \"leaf%u\" lid %u 4xEDR\n\n",
		  (unsigned long long)ca_guid(ca) + 1, (unsigned long long)leaf_guid(l),
		  ca % CA_PER_LEAF + 1, ca_lid(ca), l, leaf_lid(l));
		if (n + 4096 > cap) {
			fprintf(stderr, "sa_bench: topology buffer too small\n");
			exit(1);
		}
	}
#undef P
	*len = n;
	return b;
}

static void bench_fabric10k(double secs)
{
	char dir[] = "/tmp/sa_bench.XXXXXX", topo[64], text[160];
	struct emu_error err;
	struct emu_fabric *f;
	struct emu_topology *t;
	struct emu_clock clk;
	struct emu_sa *sa;
	uint8_t mad[EMU_MAD_LEN];
	unsigned long count;
	size_t len;
	char *b = gen_topology(&len);
	FILE *fp;
	long rss0, rss1, rss2;
	double t0, t_load, t_build, rate;

	if (!b || !mkdtemp(dir))
		exit(1);
	snprintf(topo, sizeof(topo), "%s/fabric10k.topo", dir);
	fp = fopen(topo, "w");
	if (!fp || fwrite(b, 1, len, fp) != len || fclose(fp))
		exit(1);
	free(b);
	snprintf(text, sizeof(text), "seed 1\nsm lid=1\ntopology %s\n", topo);
	rss0 = rss_kib();
	t0 = now_s();
	f = emu_fabric_load_text(text, "fabric10k", dir, &err);
	t_load = now_s() - t0;
	if (!f) {
		fprintf(stderr, "sa_bench: %s:%u: %s\n", err.file, err.line, err.msg);
		exit(1);
	}
	rss1 = rss_kib();
	emu_clock_init(&clk, 0);
	t0 = now_s();
	t = emu_topology_build(f, &clk, NULL, &err);
	sa = t ? emu_sa_new(f, t) : NULL;
	t_build = now_s() - t0;
	if (!sa) {
		fprintf(stderr, "sa_bench: topology/SA of the 10k fabric failed\n");
		exit(1);
	}
	rss2 = rss_kib();
	printf("bench fabric10k nodes=%zu hosts=%zu switches=%zu links=%zu topo_bytes=%zu "
	       "load_s=%.3f topology_and_sa_s=%.3f rss_load_mib=%.1f rss_total_mib=%.1f\n",
	       f->nhosts + f->nswitches, f->nhosts, f->nswitches, f->nlinks, len, t_load, t_build,
	       (double)(rss1 - rss0) / 1024, (double)(rss2 - rss0) / 1024);
	/* a path across two leaves and a spine (leaf 0 -> spine 0.. -> leaf 299) */
	path_req(mad, ca_guid(0) + 1, ca_guid(NCA - 1) + 1);
	rate = engine_rate(sa, mad, false, secs, &count);
	printf("bench sa_engine_10k queries=%lu queries_per_s=%.0f\n", count, rate);
	emu_sa_free(sa);
	emu_topology_free(t);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	unlink(topo);
	rmdir(dir);
}

/* The 10,000-node fabric as files, for bench/run-scale's processes: DIR/fabric10k.topo and
 * DIR/fabric10k.fabric, whose first NADDR hosts (spread over the leaves: every
 * NCA / NADDR-th CA) get an IPoIB netdev ib0 with an address of 198.18.0.0/15; one line a
 * host on stdout, "host NAME ADDRESS", for the script. */
static int write_fabric10k(const char *dir, unsigned naddr)
{
	char path[1100];
	size_t len;
	char *b = gen_topology(&len);
	FILE *fp;

	if (!b || naddr > NCA)
		return 1;
	snprintf(path, sizeof(path), "%s/fabric10k.topo", dir);
	fp = fopen(path, "w");
	if (!fp || fwrite(b, 1, len, fp) != len || fclose(fp)) {
		perror(path);
		return 1;
	}
	free(b);
	snprintf(path, sizeof(path), "%s/fabric10k.fabric", dir);
	fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		return 1;
	}
	fprintf(fp, "# %u CAs under %u leaf and %u spine switches (sa_bench --write-fabric10k)\n"
		"seed 1\nresolver files\nsm lid=1\ntopology fabric10k.topo\n", NCA, NLEAF, NSPINE);
	for (unsigned i = 0; i < naddr; i++) {
		unsigned ca = (unsigned)((unsigned long)i * NCA / naddr);

		fprintf(fp, "host node%u\n  netdev ib0 rdma=mlx5_0/1\n    addr 198.%u.%u.%u/15\n", ca,
			18 + i / 62500, i / 250 % 250, i % 250 + 1);
		printf("host node%u 198.%u.%u.%u\n", ca, 18 + i / 62500, i / 250 % 250, i % 250 + 1);
	}
	if (fclose(fp)) {
		perror(path);
		return 1;
	}
	return 0;
}

/* ---- multicast groups ---- */

#define MC_GROUPS 16000
#define MC_SCANS 100

/* A MCMemberRecord request of port GUID guid on group mgid (NULL: a new group). */
static void mc_req(uint8_t mad[EMU_MAD_LEN], uint8_t method, uint64_t guid, const uint8_t *mgid)
{
	struct emu_mad_hdr h = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
				 EMU_SA_CLASS_VERSION, method, 0, 0, 1,
				 EMU_SA_ATTR_MCMEMBER_RECORD, 0 };
	struct emu_sa_hdr sh = { 0, emu_sa_mcmember_rec_desc.attr_offset,
				 EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE };
	struct emu_sa_mcmember_rec q = { 0 };

	gid_of(q.port_gid, guid);
	if (mgid) {
		memcpy(q.mgid, mgid, 16);
		sh.comp_mask |= EMU_MCR_COMP_MGID;
	} else {
		sh.comp_mask |= EMU_MCR_COMP_QKEY | EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_PKEY |
				EMU_MCR_COMP_FLOW_LABEL | EMU_MCR_COMP_SL;
		q.qkey = 0x11111111;
		q.pkey = 0xffff;
	}
	q.join_state = 1;
	memset(mad, 0, EMU_MAD_LEN);
	emu_mad_hdr_put(mad, &h);
	emu_sa_hdr_put(mad + 36, &sh);
	emu_mad_record_pack(&emu_sa_mcmember_rec_desc, &q, mad + EMU_SA_HDR_LEN);
}

/* One request; the answer must be a success with a record, whose MGID goes to mgid when
 * given. */
static void mc_do(struct emu_sa *sa, const uint8_t *mad, uint8_t *mgid)
{
	uint8_t *r;
	size_t len;
	int rc = emu_sa_handle(sa, mad, EMU_MAD_LEN, &r, &len);

	if (rc || !r || r[4] || r[5] || len < EMU_SA_HDR_LEN + 52) {
		fprintf(stderr, "sa_bench: unexpected MCMemberRecord answer: %d status 0x%02x%02x\n",
			rc, r ? r[4] : 0, r ? r[5] : 0);
		exit(1);
	}
	if (mgid)
		memcpy(mgid, r + EMU_SA_HDR_LEN, 16);
	free(r);
}

/* A GetTable by a Q_Key no group has: every group compared, no record. */
static void mc_scan(struct emu_sa *sa)
{
	struct emu_mad_hdr h = { EMU_MAD_BASE_VERSION, EMU_MGMT_CLASS_SUBN_ADM,
				 EMU_SA_CLASS_VERSION, EMU_MAD_METHOD_GET_TABLE, 0, 0, 1,
				 EMU_SA_ATTR_MCMEMBER_RECORD, 0 };
	struct emu_sa_hdr sh = { 0, emu_sa_mcmember_rec_desc.attr_offset, EMU_MCR_COMP_QKEY };
	struct emu_sa_mcmember_rec q = { 0 };
	uint8_t mad[EMU_MAD_LEN], *r;
	size_t len;

	q.qkey = 0x22222222;
	memset(mad, 0, EMU_MAD_LEN);
	emu_mad_hdr_put(mad, &h);
	emu_sa_hdr_put(mad + 36, &sh);
	emu_mad_record_pack(&emu_sa_mcmember_rec_desc, &q, mad + EMU_SA_HDR_LEN);
	if (emu_sa_handle(sa, mad, EMU_MAD_LEN, &r, &len) || !r || r[4] || r[5] ||
	    len != EMU_SA_HDR_LEN) {
		fprintf(stderr, "sa_bench: unexpected answer to a scan (%zu bytes)\n", len);
		exit(1);
	}
	free(r);
}

static void bench_mcast(const char *fixtures)
{
	static uint8_t mgids[MC_GROUPS][16];
	static const uint64_t a = 0x0002c90300000a01ull, b = 0x0002c90300000b01ull;
	static const char *const step[5] = { "create", "join", "get", "scan", "leave" };
	static const unsigned ops[5] = { MC_GROUPS, MC_GROUPS, MC_GROUPS, MC_SCANS, MC_GROUPS };
	char path[1200];
	struct emu_error err;
	struct emu_fabric *f;
	struct emu_topology *t;
	struct emu_clock clk;
	struct emu_sa *sa;
	uint8_t mad[EMU_MAD_LEN];
	double secs[5];

	snprintf(path, sizeof(path), "%s/ib.fabric", fixtures);
	f = emu_fabric_load(path, &err);
	emu_clock_init(&clk, 0);
	t = f ? emu_topology_build(f, &clk, NULL, &err) : NULL;
	sa = t ? emu_sa_new(f, t) : NULL;
	if (!sa) {
		fprintf(stderr, "sa_bench: no SA of %s\n", path);
		exit(1);
	}
	for (int s = 0; s < 5; s++) {
		double t0 = now_s();

		for (unsigned g = 0; g < ops[s]; g++) {
			switch (s) {
			case 0:
				mc_req(mad, EMU_MAD_METHOD_SET, a, NULL);
				mc_do(sa, mad, mgids[g]);
				break;
			case 1:
				mc_req(mad, EMU_MAD_METHOD_SET, b, mgids[g]);
				mc_do(sa, mad, NULL);
				break;
			case 2:
				mc_req(mad, EMU_MAD_METHOD_GET, a, mgids[g]);
				mc_do(sa, mad, NULL);
				break;
			case 3:
				mc_scan(sa);
				break;
			default:
				mc_req(mad, EMU_MAD_METHOD_DELETE, a, mgids[g]);
				mc_do(sa, mad, NULL);
				mc_req(mad, EMU_MAD_METHOD_DELETE, b, mgids[g]);
				mc_do(sa, mad, NULL);
			}
		}
		secs[s] = now_s() - t0;
		if (s == 0 && emu_sa_mcgroup_count(sa) != MC_GROUPS + 1) {
			fprintf(stderr, "sa_bench: %zu groups\n", emu_sa_mcgroup_count(sa));
			exit(1);
		}
	}
	if (emu_sa_mcgroup_count(sa) != 1) {
		fprintf(stderr, "sa_bench: %zu groups left\n", emu_sa_mcgroup_count(sa));
		exit(1);
	}
	for (int s = 0; s < 5; s++)
		printf("bench sa_mcast_%s groups=%u ops=%u secs=%.3f us_per_op=%.2f\n", step[s],
		       MC_GROUPS, ops[s], secs[s], secs[s] * 1e6 / ops[s]);
	emu_sa_free(sa);
	emu_topology_free(t);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
}

int main(int argc, char **argv)
{
	const char *fixtures = argc > 1 ? argv[1] : RDMAEMU_SRCDIR "/fixtures";
	double secs = argc > 2 ? atof(argv[2]) : 1.0, r1, r2;
	const char *only = argc > 3 ? argv[3] : NULL;
	char path[1200];
	struct emu_error err;
	struct emu_fabric *f;
	struct emu_topology *t;
	struct emu_clock clk;
	struct emu_sa *sa;
	uint8_t mad[EMU_MAD_LEN];
	unsigned long c1, c2;

	if (argc > 2 && !strcmp(argv[1], "--write-fabric10k"))
		return write_fabric10k(argv[2], argc > 3 ? (unsigned)atoi(argv[3]) : 0);
	if (only && strcmp(only, "engine")) {
		if (!strcmp(only, "wire"))
			bench_wire(fixtures, secs);
		else if (!strcmp(only, "fabric10k"))
			bench_fabric10k(secs);
		else if (!strcmp(only, "mcast"))
			bench_mcast(fixtures);
		else
			return 2;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/ib.fabric", fixtures);
	f = emu_fabric_load(path, &err);
	if (!f) {
		fprintf(stderr, "sa_bench: %s:%u: %s\n", err.file, err.line, err.msg);
		return 1;
	}
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, NULL, &err);
	sa = t ? emu_sa_new(f, t) : NULL;
	if (!sa)
		return 1;
	emu_sa_policy(sa)->response_delay_ns = 0;
	path_req(mad, 0x0002c90300000a01ull, 0x0002c90300000b01ull);
	r1 = engine_rate(sa, mad, false, secs, &c1);
	r2 = engine_rate(sa, mad, true, secs, &c2);
	printf("bench sa_engine queries=%lu queries_per_s=%.0f ns_per_query=%.0f\n", c1, r1,
	       1e9 / r1);
	printf("bench sa_process queries=%lu queries_per_s=%.0f ns_per_query=%.0f\n", c2, r2,
	       1e9 / r2);
	emu_sa_free(sa);
	emu_topology_free(t);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	if (only)
		return 0;
	bench_wire(fixtures, secs);
	bench_fabric10k(secs);
	bench_mcast(fixtures);
	return 0;
}
