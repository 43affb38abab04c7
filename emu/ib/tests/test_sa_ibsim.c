/* The fake SA against OpenSM: asks the emulator's SA (emu_sa_handle) on fixtures/ib.fabric for
 * the records that saquery asked OpenSM for on ibsim (fixtures/golden/ibsim, recorded by
 * scripts/ibsim-ref), prints each answer with saquery's dump formats and compares it with the
 * golden output field by field. A difference passes only when
 * fixtures/conformance/ibsim-sa.deviations lists it (file, field, golden value, emulator
 * value), and every listed deviation must still occur. docs/reference/ibsim-opensm.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/hca/pkt.h"
#include "emu/ib/tests/sa_test.h"

#define MAXF 96
#define MAXR 16

/* One record of a dump: its fields in order, name and value as saquery prints them. */
struct drec {
	char name[MAXF][40];
	char val[MAXF][80];
	size_t n;
};

struct dump {
	struct drec r[MAXR];
	size_t n;
};

struct deviation {
	char file[40], field[40], golden[80], emu[80];
	unsigned used;
};

static struct deviation devs[64];
static size_t ndevs;
static unsigned nequal, ndiffer, nlisted;

static struct sa_on_fabric ib;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void add_field(struct drec *r, const char *name, const char *fmt, ...)
{
	va_list ap;

	assert_true(r->n < MAXF);
	snprintf(r->name[r->n], sizeof(r->name[0]), "%s", name);
	va_start(ap, fmt);
	vsnprintf(r->val[r->n], sizeof(r->val[0]), fmt, ap);
	va_end(ap);
	r->n++;
}

/* saquery's dump: a line ending in "dump:" (or ClassPortInfo's heading) starts a record; "\t\tname.....value" is a field
 * (the name ends at the first two dots); other lines (RID, headings) carry no field. */
static void parse_dump(const char *golden_name, struct dump *d)
{
	char path[64], *text, *save = NULL;

	snprintf(path, sizeof(path), "golden/ibsim/%s.out", golden_name);
	text = slurp(fixture_path(path));
	memset(d, 0, sizeof(*d));
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *dots;

		if ((strstr(line, "dump:") || strstr(line, "ClassPortInfo:")) && line[0] != '\t') {
			assert_true(d->n < MAXR);
			d->n++;
			continue;
		}
		while (*line == '\t' || *line == ' ')
			line++;
		dots = strstr(line, "..");
		if (!dots || !d->n)
			continue;
		*dots = '\0';
		dots += 2;
		while (*dots == '.')
			dots++;
		add_field(&d->r[d->n - 1], line, "%s", dots);
	}
	free(text);
}

static void load_deviations(void)
{
	char *text = slurp(fixture_path("conformance/ibsim-sa.deviations")), *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct deviation *v = &devs[ndevs];
		char *col[5], *s2 = NULL;
		size_t k = 0;

		if (line[0] == '#' || !line[0])
			continue;
		for (char *c = strtok_r(line, "\t", &s2); c && k < 5; c = strtok_r(NULL, "\t", &s2))
			col[k++] = c;
		if (k != 5)
			fail_msg("ibsim-sa.deviations: want FILE FIELD GOLDEN EMULATOR REASON");
		assert_true(ndevs < sizeof(devs) / sizeof(devs[0]));
		snprintf(v->file, sizeof(v->file), "%s", col[0]);
		snprintf(v->field, sizeof(v->field), "%s", col[1]);
		snprintf(v->golden, sizeof(v->golden), "%s", col[2]);
		snprintf(v->emu, sizeof(v->emu), "%s", col[3]);
		ndevs++;
	}
	free(text);
}

/* A difference: listed (counted) or not (printed in the deviations file's format; the last
 * test fails on any). */
static bool difference(const char *file, const char *field, const char *golden, const char *emu)
{
	for (size_t i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].file, file) && !strcmp(devs[i].field, field) &&
		    !strcmp(devs[i].golden, golden) && !strcmp(devs[i].emu, emu)) {
			devs[i].used++;
			nlisted++;
			return true;
		}
	print_message("unlisted difference: %s\t%s\t%s\t%s\n", file, field, golden, emu);
	ndiffer++;
	return false;
}

static void compare(const char *file, const struct dump *golden, const struct dump *emu)
{
	char a[24], b[24];

	snprintf(a, sizeof(a), "%zu", golden->n);
	snprintf(b, sizeof(b), "%zu", emu->n);
	if (golden->n != emu->n) {
		difference(file, "records", a, b);
		return;
	}
	for (size_t i = 0; i < golden->n; i++) {
		const struct drec *g = &golden->r[i], *e = &emu->r[i];

		assert_int_equal(g->n, e->n);
		for (size_t f = 0; f < g->n; f++) {
			assert_string_equal(g->name[f], e->name[f]);
			if (!strcmp(g->val[f], e->val[f]))
				nequal++;
			else
				difference(file, g->name[f], g->val[f], e->val[f]);
		}
	}
}

/* GetTable of one attribute with a query record and mask: the records, stride apart. */
static uint8_t *get_table(const struct emu_mad_record_desc *d, uint64_t mask, const void *rec,
			  size_t *n, uint16_t *status)
{
	uint8_t mad[EMU_MAD_LEN], *r;
	size_t len;

	sa_req(mad, EMU_MAD_METHOD_GET_TABLE, 0x4242, d, mask, rec);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	*status = emu_be16_get(r + 4);
	*n = *status ? 0 : (len - EMU_SA_HDR_LEN) / (d->attr_offset * 8u);
	return r;
}

static const char *gid_str(const uint8_t *raw, char buf[INET6_ADDRSTRLEN])
{
	return inet_ntop(AF_INET6, raw, buf, INET6_ADDRSTRLEN);
}

/* ---- PathRecords ---- */

static void dump_path(const uint8_t *w, struct drec *r)
{
	char g[INET6_ADDRSTRLEN];

	add_field(r, "service_id", "0x%016" PRIx64, emu_be64_get(w));
	add_field(r, "dgid", "%s", gid_str(w + 8, g));
	add_field(r, "sgid", "%s", gid_str(w + 24, g));
	add_field(r, "dlid", "%u", emu_be16_get(w + 40));
	add_field(r, "slid", "%u", emu_be16_get(w + 42));
	add_field(r, "hop_flow_raw", "0x%X", emu_be32_get(w + 44));
	add_field(r, "tclass", "0x%X", w[48]);
	add_field(r, "num_path_revers", "0x%X", w[49]);
	add_field(r, "pkey", "0x%X", emu_be16_get(w + 50));
	add_field(r, "qos_class", "0x%X", emu_be16_get(w + 52) >> 4);
	add_field(r, "sl", "0x%X", emu_be16_get(w + 52) & 0xf);
	add_field(r, "mtu", "0x%X", w[54]);
	add_field(r, "rate", "0x%X", w[55]);
	add_field(r, "pkt_life", "0x%X", w[56]);
	add_field(r, "preference", "0x%X", w[57]);
	add_field(r, "resv2", "0x%02X%02X%02X%02X%02X%02X", w[58], w[59], w[60], w[61], w[62],
		  w[63]);
}

static void path_case(const char *file, uint64_t mask, const struct emu_sa_path_rec *q)
{
	struct dump g, e;
	uint16_t status;
	size_t n;
	uint8_t *r = get_table(&emu_sa_path_rec_desc, mask, q, &n, &status);

	parse_dump(file, &g);
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < n && i < MAXR; i++, e.n++)
		dump_path(r + EMU_SA_HDR_LEN + i * 64, &e.r[i]);
	free(r);
	compare(file, &g, &e);
}

static void path_records(void **state)
{
	static const uint16_t pairs[][2] = { { 2, 3 }, { 2, 4 }, { 3, 2 },
					     { 3, 4 }, { 4, 2 }, { 4, 3 } };
	struct emu_sa_path_rec q;
	char file[32];

	(void)state;
	/* saquery -p --src-to-dst S:D: GetTable, mask SLID|DLID. */
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		memset(&q, 0, sizeof(q));
		q.slid = pairs[i][0];
		q.dlid = pairs[i][1];
		snprintf(file, sizeof(file), "pr-lid-%u-%u", pairs[i][0], pairs[i][1]);
		path_case(file, EMU_PR_COMP_SLID | EMU_PR_COMP_DLID, &q);
	}
	/* saquery -p --sgid-to-dgid: GetTable, mask SGID|DGID. */
	memset(&q, 0, sizeof(q));
	gid_of(q.sgid, 0x0002c90300000a01ull);
	gid_of(q.dgid, 0x0002c90300000b01ull);
	path_case("pr-gid-a-b", EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q);
	gid_of(q.sgid, 0x0002c90300000c01ull);
	gid_of(q.dgid, 0x0002c90300000a01ull);
	path_case("pr-gid-c-a", EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q);
}

/* ---- NodeRecords ---- */

static void dump_node(const uint8_t *w, struct drec *r)
{
	static const char *const types[] = { "UNKNOWN", "Channel Adapter", "Switch", "Router" };
	char desc[65];

	memcpy(desc, w + 44, 64);
	desc[64] = '\0';
	add_field(r, "lid", "%u", emu_be16_get(w));
	add_field(r, "reserved", "0x%X", emu_be16_get(w + 2));
	add_field(r, "base_version", "0x%X", w[4]);
	add_field(r, "class_version", "0x%X", w[5]);
	add_field(r, "node_type", "%s", w[6] < 4 ? types[w[6]] : "UNKNOWN");
	add_field(r, "num_ports", "%u", w[7]);
	add_field(r, "sys_guid", "0x%016" PRIx64, emu_be64_get(w + 8));
	add_field(r, "node_guid", "0x%016" PRIx64, emu_be64_get(w + 16));
	add_field(r, "port_guid", "0x%016" PRIx64, emu_be64_get(w + 24));
	add_field(r, "partition_cap", "0x%X", emu_be16_get(w + 32));
	add_field(r, "device_id", "0x%X", emu_be16_get(w + 34));
	add_field(r, "revision", "0x%X", emu_be32_get(w + 36));
	add_field(r, "port_num", "%u", w[40]);
	add_field(r, "vendor_id", "0x%X", emu_be32_get(w + 40) & 0xffffff);
	add_field(r, "NodeDescription", "%s", desc);
}

static void node_records(void **state)
{
	struct emu_sa_node_rec q;
	struct dump g, e;
	char file[16];
	uint16_t status;
	size_t n;

	(void)state;
	/* saquery NR LID: GetTable, mask LID. */
	for (uint16_t lid = 1; lid <= 4; lid++) {
		uint8_t *r;

		memset(&q, 0, sizeof(q));
		q.lid = lid;
		r = get_table(&emu_sa_node_rec_desc, EMU_NR_COMP_LID, &q, &n, &status);
		assert_int_equal(status, 0);
		memset(&e, 0, sizeof(e));
		for (size_t i = 0; i < n && i < MAXR; i++, e.n++)
			dump_node(r + EMU_SA_HDR_LEN + i * 112, &e.r[i]);
		free(r);
		snprintf(file, sizeof(file), "nr-%u", lid);
		parse_dump(file, &g);
		compare(file, &g, &e);
	}
}

/* ---- MCMemberRecords ---- */

/* The node description saquery -m prints: the NodeRecord whose port GUID is the member's. */
static void member_desc(const uint8_t *port_gid, char out[65])
{
	uint8_t *r;
	size_t n;
	uint16_t status;

	snprintf(out, 65, "<unknown>");
	r = get_table(&emu_sa_node_rec_desc, 0, NULL, &n, &status);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *w = r + EMU_SA_HDR_LEN + i * 112;

		if (!memcmp(w + 24, port_gid + 8, 8)) {
			memcpy(out, w + 44, 64);
			out[64] = '\0';
			break;
		}
	}
	free(r);
}

static void mcmember_records(void **state)
{
	struct dump g, e;
	char gid[INET6_ADDRSTRLEN], desc[65];
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* saquery -g and -m: GetTable with an empty mask. */
	r = get_table(&emu_sa_mcmember_rec_desc, 0, NULL, &n, &status);
	assert_int_equal(status, 0);
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < n && i < MAXR; i++, e.n++) {
		const uint8_t *w = r + EMU_SA_HDR_LEN + i * 56;

		add_field(&e.r[i], "MGID", "%s", gid_str(w, gid));
		add_field(&e.r[i], "Mlid", "0x%X", emu_be16_get(w + 36));
		add_field(&e.r[i], "Mtu", "0x%X", w[38]);
		add_field(&e.r[i], "pkey", "0x%X", emu_be16_get(w + 40));
		add_field(&e.r[i], "Rate", "0x%X", w[42]);
		add_field(&e.r[i], "SL", "0x%X", w[44] >> 4);
	}
	parse_dump("mcmr-groups", &g);
	compare("mcmr-groups", &g, &e);
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < n && i < MAXR; i++, e.n++) {
		const uint8_t *w = r + EMU_SA_HDR_LEN + i * 56;

		add_field(&e.r[i], "MGID", "%s", gid_str(w, gid));
		add_field(&e.r[i], "Mlid", "0x%X", emu_be16_get(w + 36));
		add_field(&e.r[i], "PortGid", "%s", gid_str(w + 16, gid));
		add_field(&e.r[i], "ScopeState", "0x%X", w[48]);
		add_field(&e.r[i], "ProxyJoin", "0x%X", w[49] >> 7);
		member_desc(w + 16, desc);
		add_field(&e.r[i], "NodeDescription", "%s", desc);
	}
	free(r);
	parse_dump("mcmr-members", &g);
	compare("mcmr-members", &g, &e);
}

/* ---- ServiceRecords ---- */

static void service_records(void **state)
{
	struct dump g, e;
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* saquery SR: GetTable, empty mask; nothing registered on either side. */
	r = get_table(&emu_sa_service_rec_desc, 0, NULL, &n, &status);
	free(r);
	assert_int_equal(status, 0);
	parse_dump("sr-all", &g);
	memset(&e, 0, sizeof(e));
	e.n = n;
	compare("sr-all", &g, &e);
}

/* ---- PortInfoRecords, ClassPortInfo, SMInfoRecord ---- */

/* saquery PIR LID/PORT: GetTable, mask EndPortLID|PortNum. The RID is compared here; the
 * PortInfo each record carries is the SMA's, compared field by field with the real saquery's
 * output by emu/umad/tests/test_umad_ibsim.sh. */
static void portinfo_records(void **state)
{
	static const uint16_t cases[][2] = { { 1, 0 }, { 1, 1 }, { 2, 1 }, { 3, 1 }, { 4, 1 } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emu_sa_portinfo_rec q = { .lid = cases[i][0], .port_num = (uint8_t)cases[i][1] };
		struct dump g, e;
		char file[16];
		uint16_t status;
		size_t n;
		uint8_t *r = get_table(&emu_sa_portinfo_rec_desc,
				       EMU_PIR_COMP_LID | EMU_PIR_COMP_PORT_NUM, &q, &n, &status);

		assert_int_equal(status, 0);
		memset(&e, 0, sizeof(e));
		for (size_t k = 0; k < n && k < MAXR; k++, e.n++) {
			const uint8_t *w = r + EMU_SA_HDR_LEN + k * 72;

			add_field(&e.r[k], "EndPortLid", "%u", emu_be16_get(w));
			add_field(&e.r[k], "PortNum", "%u", w[2]);
			add_field(&e.r[k], "Options", "0x%X", w[3]);
		}
		free(r);
		snprintf(file, sizeof(file), "pir-%u-%u", cases[i][0], cases[i][1]);
		parse_dump(file, &g);
		for (size_t k = 0; k < g.n; k++)
			g.r[k].n = 3; /* the RID */
		compare(file, &g, &e);
	}
}

static void class_port_info(void **state)
{
	uint8_t mad[EMU_MAD_LEN], *r;
	const uint8_t *c;
	struct dump g, e;
	char gid[INET6_ADDRSTRLEN];
	size_t len;

	(void)state;
	/* saquery -c: Get ClassPortInfo */
	sa_req(mad, EMU_MAD_METHOD_GET, 0x77, NULL, 0, NULL);
	emu_be16_put(mad + 16, EMU_SA_ATTR_CLASS_PORT_INFO);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), 0);
	assert_int_equal(r[3], EMU_MAD_METHOD_GET_RESP);
	c = r + EMU_SA_HDR_LEN;
	memset(&e, 0, sizeof(e));
	e.n = 1;
	add_field(&e.r[0], "Base version", "%u", c[0]);
	add_field(&e.r[0], "Class version", "%u", c[1]);
	add_field(&e.r[0], "Capability mask", "0x%04X", emu_be16_get(c + 2));
	add_field(&e.r[0], "Capability mask 2", "0x%08X", emu_be32_get(c + 4) >> 5);
	add_field(&e.r[0], "Response time value", "0x%02X", c[7] & 0x1f);
	for (int t = 0; t < 2; t++) {
		const uint8_t *b = c + 8 + 32 * t;
		const char *w = t ? "Trap" : "Redirect";
		char name[40];

		snprintf(name, sizeof(name), "%s GID", w);
		add_field(&e.r[0], name, "%s", gid_str(b, gid));
		snprintf(name, sizeof(name), "%s TC/SL/FL", w);
		add_field(&e.r[0], name, "0x%08X", emu_be32_get(b + 16));
		snprintf(name, sizeof(name), "%s LID", w);
		add_field(&e.r[0], name, "%u", emu_be16_get(b + 20));
		snprintf(name, sizeof(name), "%s PKey", w);
		add_field(&e.r[0], name, "0x%04X", emu_be16_get(b + 22));
		snprintf(name, sizeof(name), "%s", t ? "Trap HL/QP" : "Redirect QP");
		add_field(&e.r[0], name, "0x%08X", emu_be32_get(b + 24) & (t ? 0xffffffffu : 0xffffffu));
		snprintf(name, sizeof(name), "%s QKey", w);
		add_field(&e.r[0], name, "0x%08X", emu_be32_get(b + 28));
	}
	free(r);
	parse_dump("cpi", &g);
	compare("cpi", &g, &e);

	/* any other method: ERR_REQ_INVALID, as OpenSM */
	sa_req(mad, EMU_MAD_METHOD_GET_TABLE, 0x78, NULL, 0, NULL);
	emu_be16_put(mad + 16, EMU_SA_ATTR_CLASS_PORT_INFO);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID));
	free(r);
}

static void sminfo_records(void **state)
{
	struct emu_sa_sminfo_rec q = { 0 }, rec;
	struct dump g, e;
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* saquery SMIR: GetTable, empty mask */
	r = get_table(&emu_sa_sminfo_rec_desc, 0, &q, &n, &status);
	assert_int_equal(status, 0);
	memset(&e, 0, sizeof(e));
	for (size_t k = 0; k < n && k < MAXR; k++, e.n++) {
		emu_mad_record_unpack(&emu_sa_sminfo_rec_desc, r + EMU_SA_HDR_LEN + k * 32, &rec);
		add_field(&e.r[k], "LID", "%u", rec.lid);
		add_field(&e.r[k], "GUID", "0x%016" PRIx64, rec.guid);
		add_field(&e.r[k], "SM_Key", "0x%016" PRIx64, rec.sm_key);
		add_field(&e.r[k], "ActCount", "%u", rec.act_count);
		add_field(&e.r[k], "Priority", "%u", rec.priority);
		add_field(&e.r[k], "SMState", "%u", rec.sm_state);
	}
	free(r);
	parse_dump("smir", &g);
	compare("smir", &g, &e);
}

static void every_deviation_occurs(void **state)
{
	(void)state;
	print_message("ibsim SA comparison: %u fields equal, %u listed deviations, %u unlisted\n",
		      nequal, nlisted, ndiffer);
	for (size_t i = 0; i < ndevs; i++)
		if (!devs[i].used)
			fail_msg("ibsim-sa.deviations lists %s %s %s %s, which no longer differs",
				 devs[i].file, devs[i].field, devs[i].golden, devs[i].emu);
	assert_int_equal(ndiffer, 0);
	assert_true(nequal > 0);
}

static int setup(void **state)
{
	(void)state;
	if (sa_on_fabric_up(&ib, fixture_path("ib.fabric")))
		return -1;
	load_deviations();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sa_on_fabric_down(&ib);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(path_records),	      cmocka_unit_test(node_records),
		cmocka_unit_test(mcmember_records),   cmocka_unit_test(service_records),
		cmocka_unit_test(portinfo_records),   cmocka_unit_test(class_port_info),
		cmocka_unit_test(sminfo_records),     cmocka_unit_test(every_deviation_occurs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
