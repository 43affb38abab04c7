/* ACM (spec §4.5, §15 rows 78-89): rdma_getaddrinfo's ibacm client.
 *
 * Row 78 (ibacm absent) runs wherever a device is visible. Rows 79-89 run a fake ibacm
 * (fakeacm.h) in the case's process: it records each request byte for byte and answers with
 * the reply the row scripts. On the system target it takes /run/ibacm.sock (or
 * /run/ibacm.port), so those rows need root and no running ibacm; on the emulator the
 * library is pointed at it with RDMAEMU_IBACM_SERVER_PATH / RDMAEMU_IBACM_PORT_FILE.
 * librdmacm connects once per process, so each row is one process (the runner forks). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>
#include <time.h>

#include "conformance/conformance.h"
#include "conformance/fakeacm.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void acm_78(const struct conf_case *c)
{
	struct rdma_addrinfo *r = NULL;
	double t0, dt;
	int ret;

	conf_stimulus("no ibacm: (\"127.0.0.1\",\"7471\",NULL)");
	t0 = now();
	ret = rdma_getaddrinfo("127.0.0.1", "7471", NULL, &r);
	dt = now() - t0;
	if (!EXPECT_INT("ret", ret, 0))
		return;
	EXPECT_INT("ai_route_len", r->ai_route_len, 0);
	EXPECT_NULL("ai_route", r->ai_route);
	EXPECT_INT("ai_connect_len", r->ai_connect_len, 0);
	EXPECT_NULL("ai_connect", r->ai_connect);
	EXPECT_INT("ai_src_len", r->ai_src_len, 0);
	conf_expect(dt < 1.0, "took %.3f s (an absent ibacm must not delay the lookup)", dt);
	conf_note("0: route 0, connect 0, no src, %.3f s", dt);
	rdma_freeaddrinfo(r);
}

/* ---- rows with the fake ibacm -------------------------------------------------------- */

#define DST4 "192.0.2.7"
#define SRC4 "192.0.2.1"
#define ACM_SRC4 "10.0.0.5" /* the source address the fake ibacm "selects" */
#define DST6 "2001:db8::7"
#define SRC6 "2001:db8::1"

/* What the fake answers: status, and whether to add a SOURCE entry / paths. */
struct acm_script {
	uint8_t status;
	bool source;           /* a SOURCE IPv4 entry ACM_SRC4 */
	int npaths;            /* PATH entries (flags from path_flags) */
	uint32_t path_flags[2];
	int bad_len;           /* 1: header length 88, 160 bytes sent; 2: 8 bytes sent */
};

/* A recognisable path record: byte i = 0x40 + i (byte 0 the tag), then the fields the AF_IB
 * entry reads: sgid fe80::1, dgid fe80::2, flow label 0x12345 with hop limit 64, P_Key 0xffff. */
static void test_path(uint8_t raw[64], uint8_t tag)
{
	struct ibv_path_record p;

	for (int i = 0; i < 64; i++)
		raw[i] = (uint8_t)(0x40 + i);
	raw[0] = tag;
	memcpy(&p, raw, sizeof p);
	memset(&p.sgid, 0, sizeof p.sgid);
	memset(&p.dgid, 0, sizeof p.dgid);
	p.sgid.raw[0] = p.dgid.raw[0] = 0xfe;
	p.sgid.raw[1] = p.dgid.raw[1] = 0x80;
	p.sgid.raw[15] = 1;
	p.dgid.raw[15] = 2;
	p.flowlabel_hoplimit = htobe32((0x12345u << 8) | 64);
	p.pkey = htobe16(0xffff);
	memcpy(raw, &p, sizeof p);
}

static size_t scripted_reply(const uint8_t *req, size_t req_len, uint8_t *buf, void *arg)
{
	const struct acm_script *s = arg;
	size_t len = fakeacm_put_hdr(buf, s->status);

	(void)req;
	(void)req_len;
	if (s->source) {
		struct in_addr a;

		inet_pton(AF_INET, ACM_SRC4, &a);
		len = fakeacm_put_addr(buf, len, 1, AF_INET, &a);
	}
	for (int i = 0; i < s->npaths; i++) {
		uint8_t path[64];

		test_path(path, (uint8_t)(0xa0 + i));
		len = fakeacm_put_path(buf, len, s->path_flags[i], path);
	}
	if (s->bad_len == 1) {
		fakeacm_set_len(buf, (uint16_t)(len - FAKEACM_EP_LEN)); /* one entry more than announced */
	} else if (s->bad_len == 2) {
		len = 8; /* shorter than a header */
	}
	return len;
}

/* The reply a real ibacm gives when it cannot resolve: ENODATA, header only. */
static const struct acm_script enodata = { .status = 3 };

static struct sockaddr *sa4(const char *ip, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sin->sin_addr);
	return (struct sockaddr *)sin;
}

static struct sockaddr *sa6(const char *ip, struct sockaddr_in6 *sin6)
{
	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, ip, &sin6->sin6_addr);
	return (struct sockaddr *)sin6;
}

/* rdma_getaddrinfo that must succeed; ends the case otherwise. */
static struct rdma_addrinfo *lookup(const char *node, const char *service,
				    const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *r = NULL;
	int ret = rdma_getaddrinfo(node, service, hints, &r);

	if (ret || !r) {
		fakeacm_stop();
		conf_fatal("rdma_getaddrinfo(%s, %s): %d errno %s", node ? node : "NULL",
			   service ? service : "NULL", ret, conf_errno_name(errno));
	}
	return r;
}

/* Request i: the header checks every request shares, and its entry count. */
static const uint8_t *expect_req(size_t i, size_t neps)
{
	struct fakeacm_hdr h;
	size_t len = 0;
	const uint8_t *m = fakeacm_req(i, &len);
	char what[32];

	if (!conf_expect(m != NULL, "request %zu: none received (%zu in all)", i, fakeacm_nreqs()))
		return NULL;
	fakeacm_get_hdr(m, &h);
	snprintf(what, sizeof what, "request %zu bytes", i);
	EXPECT_INT(what, len, FAKEACM_HDR_LEN + neps * FAKEACM_EP_LEN);
	EXPECT_INT("hdr.version", h.version, 1);
	EXPECT_INT("hdr.opcode", h.opcode, 1);
	EXPECT_INT("hdr.status", h.status, 0);
	EXPECT_INT("hdr.data", h.data[0] | h.data[1] << 8 | h.data[2] << 16, 0);
	EXPECT_INT("hdr.length", h.length, len);
	EXPECT_INT("hdr.tid", h.tid, 0);
	return len == FAKEACM_HDR_LEN + neps * FAKEACM_EP_LEN ? m : NULL;
}

/* Entry i of msg is an address entry with these flags, type and address bytes (rest 0). */
static void expect_addr_ep(const uint8_t *m, size_t i, uint32_t flags, int family,
			   const char *ip)
{
	struct fakeacm_ep ep;
	uint8_t want[64] = { 0 };

	fakeacm_get_ep(m, i, &ep);
	inet_pton(family, ip, want);
	EXPECT_HEX("ep.flags", ep.flags, flags);
	EXPECT_HEX("ep.type", ep.type, family == AF_INET ? 2 : 3);
	EXPECT_INT("ep.reserved", ep.reserved, 0);
	conf_expect(!memcmp(ep.info, want, 64), "ep %zu info: not the %s address %s followed by "
		    "zeros", i, family == AF_INET ? "IPv4" : "IPv6", ip);
}

static void acm_79(const struct conf_case *c)
{
	struct rdma_addrinfo *r;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm; rdma_getaddrinfo(\"" DST4 "\", \"7471\", NULL)");
	r = lookup(DST4, "7471", NULL);
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 1);
	const uint8_t *m = expect_req(0, 1);
	if (m)
		expect_addr_ep(m, 0, 0x2, AF_INET, DST4);
	EXPECT_INT("ai_route_len (ENODATA reply)", r->ai_route_len, 0);
	conf_note("88 bytes: version 1, opcode 1, length 88, tid 0; DEST flags 0x2 type 2 "
		  DST4);
	rdma_freeaddrinfo(r);
}

static void acm_80(const struct conf_case *c)
{
	static const int flags[2] = { RAI_NUMERICHOST, RAI_NOROUTE };
	struct rdma_addrinfo hints, *r;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm; (\"" DST4 "\", \"7471\", RAI_NUMERICHOST), then RAI_NOROUTE");
	for (int i = 0; i < 2; i++) {
		memset(&hints, 0, sizeof hints);
		hints.ai_flags = flags[i];
		r = lookup(DST4, "7471", &hints);
		rdma_freeaddrinfo(r);
	}
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 2);
	for (size_t i = 0; i < 2; i++) {
		const uint8_t *m = expect_req(i, 1);

		if (m)
			expect_addr_ep(m, 0, 0x40000002, AF_INET, DST4);
	}
	conf_note("DEST flags 0x40000002 for both");
}

static void acm_81(const struct conf_case *c)
{
	struct rdma_addrinfo hints, *r;
	struct sockaddr_in src;
	struct sockaddr_in6 src6;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm; (\"" DST4 "\", \"7471\", src " SRC4 "), (\"" DST6
		      "\", \"7471\", family AF_INET6, src " SRC6 ")");
	memset(&hints, 0, sizeof hints);
	hints.ai_src_addr = sa4(SRC4, &src);
	hints.ai_src_len = sizeof src;
	r = lookup(DST4, "7471", &hints);
	rdma_freeaddrinfo(r);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET6;
	hints.ai_src_addr = sa6(SRC6, &src6);
	hints.ai_src_len = sizeof src6;
	r = lookup(DST6, "7471", &hints);
	rdma_freeaddrinfo(r);
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 2);
	const uint8_t *m = expect_req(0, 2);
	if (m) {
		expect_addr_ep(m, 0, 0x1, AF_INET, SRC4);
		expect_addr_ep(m, 1, 0x2, AF_INET, DST4);
	}
	m = expect_req(1, 2);
	if (m) {
		expect_addr_ep(m, 0, 0x1, AF_INET6, SRC6);
		expect_addr_ep(m, 1, 0x2, AF_INET6, DST6);
	}
	conf_note("160 bytes: SOURCE (1, type 2 / 3) then DEST (2)");
}

static void acm_82(const struct conf_case *c)
{
	struct rdma_addrinfo hints, *r;
	uint8_t rec[64], data[72], want[2][64];

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm; (\"" DST4 "\", \"7471\", ai_route = a 64-byte path record), "
		      "then a 72-byte ibv_path_data");
	test_path(rec, 0x11);
	memset(data, 0, sizeof data);
	data[0] = 0x2b; /* ibv_path_data.flags: not sent */
	test_path(data + 8, 0x22);
	memcpy(want[0], rec, 64);
	memcpy(want[1], data + 8, 64);
	memset(&hints, 0, sizeof hints);
	hints.ai_route = rec;
	hints.ai_route_len = sizeof rec;
	r = lookup(DST4, "7471", &hints);
	rdma_freeaddrinfo(r);
	hints.ai_route = data;
	hints.ai_route_len = sizeof data;
	r = lookup(DST4, "7471", &hints);
	rdma_freeaddrinfo(r);
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 2);
	for (size_t i = 0; i < 2; i++) {
		const uint8_t *m = expect_req(i, 2);
		struct fakeacm_ep ep;

		if (!m)
			continue;
		expect_addr_ep(m, 0, 0x2, AF_INET, DST4);
		fakeacm_get_ep(m, 1, &ep);
		EXPECT_HEX("path ep.flags", ep.flags, 0);
		EXPECT_HEX("path ep.type", ep.type, 0x10);
		EXPECT_INT("path ep.reserved", ep.reserved, 0);
		conf_expect(!memcmp(ep.info, want[i], 64), "request %zu: the PATH entry is not the "
			    "hint's path record", i);
	}
	conf_note("160 bytes: DEST, then PATH (flags 0, type 0x10, the record verbatim)");
}

static void acm_83(const struct conf_case *c)
{
	struct rdma_addrinfo hints, *r;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm; (NULL, \"7471\", RAI_PASSIVE), then (\"" DST4 "\", \"7471\")");
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = RAI_PASSIVE;
	r = lookup(NULL, "7471", &hints);
	rdma_freeaddrinfo(r);
	EXPECT_INT("requests after the passive lookup", fakeacm_nreqs(), 0);
	EXPECT_INT("connected after the passive lookup", fakeacm_connected(), 0);
	r = lookup(DST4, "7471", NULL);
	rdma_freeaddrinfo(r);
	fakeacm_stop();
	/* the active lookup does reach the fake: the silence above is the passive rule */
	EXPECT_INT("requests after the active lookup", fakeacm_nreqs(), 1);
	const uint8_t *m = expect_req(0, 1);
	if (m)
		expect_addr_ep(m, 0, 0x2, AF_INET, DST4);
	conf_note("passive: no connection, no request; the active one after it: 1 request");
}

static void expect_plain(const struct rdma_addrinfo *r, const char *what)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%s: ai_route_len", what);
	EXPECT_INT(buf, r->ai_route_len, 0);
	snprintf(buf, sizeof buf, "%s: ai_route", what);
	EXPECT_NULL(buf, r->ai_route);
	snprintf(buf, sizeof buf, "%s: ai_src_len", what);
	EXPECT_INT(buf, r->ai_src_len, 0);
	snprintf(buf, sizeof buf, "%s: ai_connect_len", what);
	EXPECT_INT(buf, r->ai_connect_len, 0);
	snprintf(buf, sizeof buf, "%s: ai_next", what);
	EXPECT_NULL(buf, r->ai_next);
	snprintf(buf, sizeof buf, "%s: ai_family", what);
	EXPECT_INT(buf, r->ai_family, AF_INET);
}

/* Replies cycle through the scripts of row 84. */
static const struct acm_script bad84[3] = {
	{ .status = 3, .source = true, .npaths = 1, .path_flags = { 0x2b } },
	{ .status = 0, .source = true, .npaths = 1, .path_flags = { 0x2b }, .bad_len = 1 },
	{ .status = 0, .source = true, .npaths = 1, .path_flags = { 0x2b }, .bad_len = 2 },
};

static size_t reply_84(const uint8_t *req, size_t req_len, uint8_t *buf, void *arg)
{
	size_t *n = arg;

	return scripted_reply(req, req_len, buf, (void *)&bad84[(*n)++ % 3]);
}

static void acm_84(const struct conf_case *c)
{
	static const char *const what[3] = { "status 3", "length 88, 160 sent", "8 bytes" };
	size_t n = 0;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, reply_84, &n);
	conf_stimulus("fake ibacm answering SOURCE " ACM_SRC4 " + PATH with status 3, with header "
		      "length 88 on 160 bytes, with 8 bytes; (\"" DST4 "\", \"7471\") each");
	for (int i = 0; i < 3; i++) {
		struct rdma_addrinfo *r = lookup(DST4, "7471", NULL);

		expect_plain(r, what[i]);
		rdma_freeaddrinfo(r);
	}
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 3);
	conf_note("all three ignored: route 0, no src, one entry");
}

/* The IP entry of a result (after an AF_IB entry the library may put in front). */
static const struct rdma_addrinfo *ip_entry(const struct rdma_addrinfo *r)
{
	if (r && r->ai_family == AF_IB)
		r = r->ai_next;
	return r;
}

static void acm_85(const struct conf_case *c)
{
	static const struct acm_script two = { .npaths = 2, .path_flags = { 0x3, 0x5 } };
	struct rdma_addrinfo hints, *r;
	const struct rdma_addrinfo *ip;
	struct sockaddr_in src;

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&two);
	conf_stimulus("fake ibacm answering 2 PATH entries (flags 0x3, 0x5); (\"" DST4 "\", "
		      "\"7471\", src " SRC4 ")");
	/* a source in the hints: with AF_IB support the library builds ai_connect from it (and
	 * dereferences NULL without one) */
	memset(&hints, 0, sizeof hints);
	hints.ai_src_addr = sa4(SRC4, &src);
	hints.ai_src_len = sizeof src;
	r = lookup(DST4, "7471", &hints);
	fakeacm_stop();
	ip = ip_entry(r);
	if (!conf_expect(ip && ip->ai_family == AF_INET, "no AF_INET entry in the result")) {
		rdma_freeaddrinfo(r);
		return;
	}
	EXPECT_INT("ai_route_len", ip->ai_route_len, 144);
	if (ip->ai_route_len == 144 && ip->ai_route) {
		for (int i = 0; i < 2; i++) {
			const struct ibv_path_data *pd = (const struct ibv_path_data *)ip->ai_route + i;
			uint8_t want[64];

			test_path(want, (uint8_t)(0xa0 + i));
			EXPECT_HEX("path_data.flags", pd->flags, i ? 0x5 : 0x3);
			EXPECT_INT("path_data.reserved", pd->reserved, 0);
			conf_expect(!memcmp(&pd->path, want, 64), "path %d: bytes differ from the reply",
				    i);
		}
	}
	conf_note("ai_route_len 144; flags 0x3, 0x5; reserved 0; records as sent%s",
		  r->ai_family == AF_IB ? " (AF_IB entry in front)" : "");
	rdma_freeaddrinfo(r);
}

static void acm_86(const struct conf_case *c)
{
	static const struct acm_script src = { .source = true };
	struct rdma_addrinfo *r;
	char buf[64];

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&src);
	conf_stimulus("fake ibacm answering SOURCE " ACM_SRC4 "; (\"" DST4 "\", \"7471\")");
	r = lookup(DST4, "7471", NULL);
	fakeacm_stop();
	EXPECT_INT("ai_src_len", r->ai_src_len, sizeof(struct sockaddr_in));
	conf_fmt_sockaddr(buf, sizeof buf, r->ai_src_addr, r->ai_src_len);
	conf_expect(!strcmp(buf, ACM_SRC4 ":0/16"), "ai_src_addr %s, want " ACM_SRC4 ":0/16", buf);
	/* no PATH entry: rdma-core still sets ai_route to calloc(0, 72); only the length counts */
	EXPECT_INT("ai_route_len", r->ai_route_len, 0);
	EXPECT_NULL("ai_next", r->ai_next);
	conf_note("ai_src_addr %s, len 16", buf);
	rdma_freeaddrinfo(r);
}

static void acm_87(const struct conf_case *c)
{
	static const struct acm_script src = { .source = true };
	struct rdma_addrinfo hints, *r;
	struct sockaddr_in hs;
	char buf[64];

	(void)c;
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&src);
	conf_stimulus("fake ibacm answering SOURCE " ACM_SRC4 "; (\"" DST4 "\", \"7471\", src "
		      SRC4 ")");
	memset(&hints, 0, sizeof hints);
	hints.ai_src_addr = sa4(SRC4, &hs);
	hints.ai_src_len = sizeof hs;
	r = lookup(DST4, "7471", &hints);
	fakeacm_stop();
	EXPECT_INT("requests", fakeacm_nreqs(), 1);
	EXPECT_INT("ai_src_len", r->ai_src_len, sizeof(struct sockaddr_in));
	conf_fmt_sockaddr(buf, sizeof buf, r->ai_src_addr, r->ai_src_len);
	conf_expect(!strcmp(buf, SRC4 ":0/16"), "ai_src_addr %s, want the hint's " SRC4 ":0/16",
		    buf);
	conf_note("ai_src_addr %s (the hint's)", buf);
	rdma_freeaddrinfo(r);
}

static void acm_88(const struct conf_case *c)
{
	struct rdma_addrinfo *r;

	(void)c;
	/* only a TCP listener exists: a request arriving proves the port file was used */
	fakeacm_start(FAKEACM_TCP, scripted_reply, (void *)&enodata);
	conf_stimulus("fake ibacm on TCP 127.0.0.1, its port in the port file; (\"" DST4
		      "\", \"7471\")");
	r = lookup(DST4, "7471", NULL);
	fakeacm_stop();
	EXPECT_INT("connected over TCP", fakeacm_connected(), 1);
	EXPECT_INT("requests", fakeacm_nreqs(), 1);
	const uint8_t *m = expect_req(0, 1);
	if (m)
		expect_addr_ep(m, 0, 0x2, AF_INET, DST4);
	conf_note("the request came over TCP 127.0.0.1:<port from the file>");
	rdma_freeaddrinfo(r);
}

/* rdma-core's af_ib_support probe (ucma_init): an RDMA_PS_IB id bound to a wildcard AF_IB
 * address under the TCP service prefix. */
static bool af_ib_supported(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	struct sockaddr_ib sib;
	bool ok = false;

	if (!ch)
		return false;
	if (!rdma_create_id(ch, &id, NULL, RDMA_PS_IB)) {
		memset(&sib, 0, sizeof sib);
		sib.sib_family = AF_IB;
		sib.sib_sid = htobe64(RDMA_IB_IP_PS_TCP);
		sib.sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
		ok = rdma_bind_addr(id, (struct sockaddr *)&sib) == 0;
		rdma_destroy_id(id);
	}
	rdma_destroy_event_channel(ch);
	return ok;
}

static void expect_sib(const char *what, const struct sockaddr *sa, socklen_t len,
		       uint8_t gid_last, uint64_t sid, uint64_t mask)
{
	const struct sockaddr_ib *sib = (const struct sockaddr_ib *)sa;
	uint8_t gid[16] = { 0xfe, 0x80 };
	char buf[64];

	gid[15] = gid_last;
	snprintf(buf, sizeof buf, "%s len", what);
	if (!EXPECT_INT(buf, len, sizeof(struct sockaddr_ib)) || !sa)
		return;
	snprintf(buf, sizeof buf, "%s family", what);
	EXPECT_INT(buf, sib->sib_family, AF_IB);
	snprintf(buf, sizeof buf, "%s pkey", what);
	EXPECT_HEX(buf, be16toh(sib->sib_pkey), 0xffff);
	snprintf(buf, sizeof buf, "%s flowinfo", what);
	EXPECT_HEX(buf, be32toh(sib->sib_flowinfo), 0x12345);
	conf_expect(!memcmp(&sib->sib_addr, gid, 16), "%s gid: not fe80::%x", what, gid_last);
	snprintf(buf, sizeof buf, "%s sid", what);
	EXPECT_HEX(buf, be64toh(sib->sib_sid), sid);
	snprintf(buf, sizeof buf, "%s sid_mask", what);
	EXPECT_HEX(buf, be64toh(sib->sib_sid_mask), mask);
}

static void acm_89(const struct conf_case *c)
{
	static const struct acm_script path = { .source = true, .npaths = 1,
						.path_flags = { 0x2b } };
	const struct rdma_addrinfo *ip;
	struct rdma_addrinfo *r;
	uint8_t want_hdr[36] = { 0, 0x40 };

	(void)c;
	if (!af_ib_supported())
		conf_notrun("the kernel takes no AF_IB address (rdma-core's af_ib_support is 0)");
	fakeacm_start(FAKEACM_UNIX, scripted_reply, (void *)&path);
	conf_stimulus("fake ibacm answering SOURCE " ACM_SRC4 " + PATH (fe80::1 -> fe80::2, pkey "
		      "0xffff, flow 0x12345); (\"" DST4 "\", \"7471\")");
	r = lookup(DST4, "7471", NULL);
	fakeacm_stop();
	if (!conf_expect(r->ai_family == AF_IB, "first entry family %d, want AF_IB (27)",
			 r->ai_family)) {
		rdma_freeaddrinfo(r);
		return;
	}
	EXPECT_INT("AF_IB ai_port_space", r->ai_port_space, RDMA_PS_TCP);
	EXPECT_INT("AF_IB ai_qp_type", r->ai_qp_type, IBV_QPT_RC);
	EXPECT_INT("AF_IB ai_route_len", r->ai_route_len, 72);
	EXPECT_INT("AF_IB ai_connect_len", r->ai_connect_len, 36);
	inet_pton(AF_INET, ACM_SRC4, want_hdr + 16);
	inet_pton(AF_INET, DST4, want_hdr + 32);
	if (r->ai_connect_len == 36)
		conf_expect(!memcmp(r->ai_connect, want_hdr, 36), "ai_connect: not {cma_version 0, "
			    "ip_version 0x40, port 0, src ::" ACM_SRC4 ", dst ::" DST4 "}");
	expect_sib("AF_IB src", r->ai_src_addr, r->ai_src_len, 1,
		   (uint64_t)RDMA_PS_TCP << 16, RDMA_IB_IP_PS_MASK);
	expect_sib("AF_IB dst", r->ai_dst_addr, r->ai_dst_len, 2,
		   ((uint64_t)RDMA_PS_TCP << 16) + 7471, ~0ull);
	ip = r->ai_next;
	if (conf_expect(ip != NULL, "no entry after the AF_IB one")) {
		EXPECT_INT("IP entry family", ip->ai_family, AF_INET);
		EXPECT_INT("IP entry ai_route_len", ip->ai_route_len, 72);
		EXPECT_INT("IP entry ai_connect_len", ip->ai_connect_len, 0);
		EXPECT_NULL("IP entry ai_next", ip->ai_next);
	}
	conf_note("[AF_IB: route 72, connect 36 (ip_version 0x40), sid 0x%llx, IP entry]",
		  (unsigned long long)((uint64_t)RDMA_PS_TCP << 16) + 7471);
	rdma_freeaddrinfo(r);
}

#define FA (PRE_DEVICE | PRE_FAKEACM)
#define ACM(row, fn, desc) { "ACM-" #row, "ACM", row, desc, NULL, FA, NULL, 0, fn, NULL }

static const struct conf_case cases[] = {
	{ "ACM-78", "ACM", 78, "ibacm not running (no /run/ibacm.port, no /run/ibacm.sock): ret 0, "
	  "route_len 0, connect_len 0, no delay",
	  "rdma_getaddrinfo.3 does not mention ibacm; every active lookup tries to reach it",
	  PRE_DEVICE | PRE_NOACM, NULL, 0, acm_78, NULL },
	ACM(79, acm_79, "request for an active IPv4 lookup: 88 bytes, version 1, opcode 1, one DEST "
		"entry (flags 0x2, type 2, 4-byte address)"),
	ACM(80, acm_80, "RAI_NUMERICHOST or RAI_NOROUTE: DEST entry flags 0x40000002 (NODELAY)"),
	ACM(81, acm_81, "hint src present: SOURCE entry (flags 1, type 2/3) precedes DEST"),
	ACM(82, acm_82, "hints.ai_route_len 64 or 72: an extra entry type 0x10 with the hint path "
		"record"),
	ACM(83, acm_83, "passive lookup: no ibacm request"),
	ACM(84, acm_84, "reply with hdr.status != 0 or a wrong length: ignored (no route, no src)"),
	ACM(85, acm_85, "reply with 2 PATH entries (flags 0x3, 0x5): ai_route_len 144, flags kept, "
		"reserved 0"),
	ACM(86, acm_86, "reply with a SOURCE IPv4 entry, no hint src: ai_src_addr = that address, "
		"port 0"),
	ACM(87, acm_87, "reply SOURCE entry with a hint src: hint src kept"),
	ACM(88, acm_88, "/run/ibacm.port names a port: TCP 127.0.0.1:port used instead of the unix "
		"socket"),
	ACM(89, acm_89, "AF_IB-capable kernel + ibacm route for an IP lookup: [AF_IB entry with "
		"36-byte ai_connect, IP entry]"),
};

const struct conf_area conf_area_acm = { "ACM", cases, sizeof cases / sizeof cases[0] };
