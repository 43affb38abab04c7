/* GAI (spec §4, §15 rows 35-77): rdma_getaddrinfo, table-driven like fabtests' getinfo_test.c.
 *
 * One table row per stimulus (node, service, hints) with the exact expected result: return
 * value (and errno for -1), or the result's flags/family/qp_type/port_space and the source and
 * destination sockaddr bytes. Every successful result must also have NULL canonnames, no route
 * or connect data (ibacm is not running: PRE_NOACM) and ai_next NULL, unless the row says
 * otherwise. `fake` rows of the spec need a visible device (PRE_DEVICE).
 *
 * Names used: numeric addresses, "localhost" (/etc/hosts) and an unknown service name (the
 * services database); nothing reaches DNS. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <string.h>

#include "conformance/conformance.h"
#include "rdmaemu/compat.h"

struct hints {
	int flags, family, qp, ps;
	const char *src, *dst; /* conf_parse_sockaddr specs */
};

enum {
	ROW_ANY_RESULT = 1 << 0,  /* only "no crash" (row 69) */
	ROW_NEEDS_HTTP = 1 << 1,  /* the services database must know "http" */
};

struct gai_row {
	const char *node, *service;
	const struct hints *h; /* NULL: hints NULL */
	int ret, err;          /* expected return; errno when ret == -1 */
	int flags, family, qp, ps;
	const char *src, *dst; /* expected sockaddrs; NULL: absent (len 0, pointer NULL) */
	unsigned opts;
};

#define SENTINEL ((struct rdma_addrinfo *)0x5a5a5a5a5a5aUL)
#define GID "fe80::2:c903:a:b"

static struct sockaddr_storage hint_src, hint_dst;

static void build_hints(const struct hints *h, struct rdma_addrinfo *out)
{
	memset(out, 0, sizeof *out);
	out->ai_flags = h->flags;
	out->ai_family = h->family;
	out->ai_qp_type = h->qp;
	out->ai_port_space = h->ps;
	if (h->src) {
		out->ai_src_len = conf_parse_sockaddr(h->src, &hint_src);
		out->ai_src_addr = (struct sockaddr *)&hint_src;
		if (!out->ai_src_len)
			conf_fatal("bad hint src spec %s", h->src);
	}
	if (h->dst) {
		out->ai_dst_len = conf_parse_sockaddr(h->dst, &hint_dst);
		out->ai_dst_addr = (struct sockaddr *)&hint_dst;
		if (!out->ai_dst_len)
			conf_fatal("bad hint dst spec %s", h->dst);
	}
}

static void fmt_str(char *buf, size_t size, const char *s)
{
	if (s)
		snprintf(buf, size, "\"%s\"", s);
	else
		snprintf(buf, size, "NULL");
}

static void set_stimulus(const char *node, const char *service, const struct hints *h)
{
	char n[80], s[80], hb[256] = "NULL";

	fmt_str(n, sizeof n, node);
	fmt_str(s, sizeof s, service);
	if (h) {
		size_t len = (size_t)snprintf(hb, sizeof hb, "{");
#define ADD(...) len += (size_t)snprintf(hb + len, len < sizeof hb ? sizeof hb - len : 0, __VA_ARGS__)
		if (h->flags)
			ADD("%sflags 0x%x", len > 1 ? " " : "", (unsigned)h->flags);
		if (h->family)
			ADD("%sfamily %d", len > 1 ? " " : "", h->family);
		if (h->qp)
			ADD("%sqp %d", len > 1 ? " " : "", h->qp);
		if (h->ps)
			ADD("%sps 0x%x", len > 1 ? " " : "", (unsigned)h->ps);
		if (h->src)
			ADD("%ssrc %s", len > 1 ? " " : "", h->src);
		if (h->dst)
			ADD("%sdst %s", len > 1 ? " " : "", h->dst);
		ADD("}");
#undef ADD
	}
	conf_stimulus("(%s,%s,%s)", n, s, hb);
}

static void fmt_ret(char *buf, size_t size, int ret, int err)
{
	if (ret == -1)
		snprintf(buf, size, "-1 errno %s", conf_errno_name(err));
	else if (ret < 0)
		snprintf(buf, size, "%d (%s)", ret, conf_eai_name(ret));
	else
		snprintf(buf, size, "%d", ret);
}

/* Compare a result sockaddr with a spec, byte for byte (length and every byte). */
static void expect_addr(const char *what, const struct sockaddr *sa, socklen_t len,
			const char *spec)
{
	char got[160];

	conf_fmt_sockaddr(got, sizeof got, sa, len);
	if (!spec) {
		conf_expect(!sa && !len, "%s: got %s (ptr %p len %u), want absent", what, got,
			    (const void *)sa, (unsigned)len);
		return;
	}

	struct sockaddr_storage want;
	socklen_t wlen = conf_parse_sockaddr(spec, &want);
	char ws[160];

	if (!wlen)
		conf_fatal("bad expected spec %s", spec);
	conf_fmt_sockaddr(ws, sizeof ws, (struct sockaddr *)&want, wlen);
	if (!conf_expect(sa && len == wlen, "%s: got %s, want %s", what, got, ws))
		return;
	conf_expect(!memcmp(sa, &want, wlen), "%s: bytes differ: got %s, want %s", what, got, ws);
}

/* Checks every result field that must be empty in the absence of ibacm and canonnames. */
static void expect_plain(const struct rdma_addrinfo *r)
{
	EXPECT_NULL("ai_src_canonname", r->ai_src_canonname);
	EXPECT_NULL("ai_dst_canonname", r->ai_dst_canonname);
	EXPECT_INT("ai_route_len", r->ai_route_len, 0);
	EXPECT_NULL("ai_route", r->ai_route);
	EXPECT_INT("ai_connect_len", r->ai_connect_len, 0);
	EXPECT_NULL("ai_connect", r->ai_connect);
	EXPECT_NULL("ai_next", r->ai_next);
}

static void note_result(const struct rdma_addrinfo *r)
{
	char s[160], d[160];

	conf_note("0: flags 0x%x family %d qp %d ps 0x%x src %s dst %s%s", (unsigned)r->ai_flags,
		  r->ai_family, r->ai_qp_type, (unsigned)r->ai_port_space,
		  conf_fmt_sockaddr(s, sizeof s, r->ai_src_addr, r->ai_src_len),
		  conf_fmt_sockaddr(d, sizeof d, r->ai_dst_addr, r->ai_dst_len),
		  r->ai_route_len || r->ai_connect_len || r->ai_next ? " (+route/connect/next)" : "");
}

static void gai_run(const struct conf_case *c)
{
	const struct gai_row *row = c->data;
	struct rdma_addrinfo hints, *res = SENTINEL;
	char got[64], want[64];
	int ret, err;

	if ((row->opts & ROW_NEEDS_HTTP) && !getservbyname("http", "tcp"))
		conf_notrun("the services database has no \"http\" entry");
	if (row->h)
		build_hints(row->h, &hints);
	set_stimulus(row->node, row->service, row->h);

	errno = 0;
	ret = rdma_getaddrinfo(row->node, row->service, row->h ? &hints : NULL, &res);
	err = errno;
	fmt_ret(got, sizeof got, ret, err);

	if (row->opts & ROW_ANY_RESULT) {
		conf_note("%s (any result; no crash)", got);
		if (!ret)
			rdma_freeaddrinfo(res);
		return;
	}
	fmt_ret(want, sizeof want, row->ret, row->err);
	if (ret != row->ret || (ret == -1 && err != row->err)) {
		conf_expect(false, "got %s, want %s", got, want);
		if (!ret && res && res != SENTINEL)
			rdma_freeaddrinfo(res);
		return;
	}
	if (ret) {
		conf_expect(res == SENTINEL, "*res written on failure (%p)", (void *)res);
		conf_note("%s", got);
		return;
	}
	if (!conf_expect(res && res != SENTINEL, "ret 0 but *res not set"))
		return;
	EXPECT_HEX("ai_flags", res->ai_flags, row->flags);
	EXPECT_INT("ai_family", res->ai_family, row->family);
	EXPECT_INT("ai_qp_type", res->ai_qp_type, row->qp);
	EXPECT_HEX("ai_port_space", res->ai_port_space, row->ps);
	expect_addr("src", res->ai_src_addr, res->ai_src_len, row->src);
	expect_addr("dst", res->ai_dst_addr, res->ai_dst_len, row->dst);
	expect_plain(res);
	note_result(res);
	rdma_freeaddrinfo(res);
}

/* Row 43: EAI_QPTYPE is named by the man page but defined by no header. */
static void gai_43(const struct conf_case *c)
{
	conf_stimulus("#ifdef EAI_QPTYPE after <rdma/rdma_cma.h>, <netdb.h>");
#ifdef EAI_QPTYPE
	conf_expect(false, "EAI_QPTYPE is defined (%d)", (int)EAI_QPTYPE);
#else
	conf_note("not defined (inconsistent qp/ps gives EAI_SOCKTYPE %d)", EAI_SOCKTYPE);
#endif
}

static struct rdma_addrinfo *lookup_ok(const char *node, const char *service,
				       const struct rdma_addrinfo *hints, const char *what)
{
	struct rdma_addrinfo *r = NULL;
	int ret = rdma_getaddrinfo(node, service, hints, &r);

	if (ret) {
		conf_expect(false, "%s: ret %d (%s, errno %s)", what, ret, conf_eai_name(ret),
			    conf_errno_name(errno));
		return NULL;
	}
	return r;
}

/* Row 62: canonical names are never requested from getaddrinfo(3). */
static void gai_62(const struct conf_case *c)
{
	struct rdma_addrinfo passive = { .ai_flags = RAI_PASSIVE }, hdst = { 0 };
	struct sockaddr_storage dst;
	struct {
		const char *node, *service;
		const struct rdma_addrinfo *h;
		const char *what;
	} q[] = {
		{ "localhost", "7471", NULL, "(\"localhost\",\"7471\",NULL)" },
		{ "localhost", "7471", &passive, "(\"localhost\",\"7471\",{PASSIVE})" },
		{ "127.0.0.1", NULL, &passive, "(\"127.0.0.1\",NULL,{PASSIVE})" },
		{ NULL, NULL, &hdst, "(NULL,NULL,{dst 10.9.9.9:2222})" },
	};
	unsigned n = 0;

	hdst.ai_dst_len = conf_parse_sockaddr("10.9.9.9:2222", &dst);
	hdst.ai_dst_addr = (struct sockaddr *)&dst;
	conf_stimulus("canonnames of 4 lookups (localhost active/passive, numeric, hints-only)");
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		struct rdma_addrinfo *r = lookup_ok(q[i].node, q[i].service, q[i].h, q[i].what);

		if (!r)
			continue;
		for (struct rdma_addrinfo *p = r; p; p = p->ai_next, n++) {
			conf_expect(!p->ai_src_canonname, "%s: ai_src_canonname \"%s\"", q[i].what,
				    p->ai_src_canonname);
			conf_expect(!p->ai_dst_canonname, "%s: ai_dst_canonname \"%s\"", q[i].what,
				    p->ai_dst_canonname);
		}
		rdma_freeaddrinfo(r);
	}
	conf_note("%u entries, all canonnames NULL", n);
}

/* Row 63: only the first getaddrinfo(3) result is used. */
static void gai_63(const struct conf_case *c)
{
	struct rdma_addrinfo *r;
	char d[160];

	conf_stimulus("(\"localhost\",\"7471\",NULL)");
	if (!(r = lookup_ok("localhost", "7471", NULL, "lookup")))
		return;
	conf_fmt_sockaddr(d, sizeof d, r->ai_dst_addr, r->ai_dst_len);
	EXPECT_NULL("ai_next", r->ai_next);
	conf_expect(r->ai_family == AF_INET || r->ai_family == AF_INET6, "family %d", r->ai_family);
	if (r->ai_dst_addr && r->ai_dst_len >= sizeof(struct sockaddr_in))
		EXPECT_INT("dst port", ntohs(((struct sockaddr_in *)r->ai_dst_addr)->sin_port), 7471);
	else
		conf_expect(false, "no destination address (%s)", d);
	conf_note("one entry: family %d dst %s", r->ai_family, d);
	rdma_freeaddrinfo(r);
}

/* Row 71: rdma_freeaddrinfo walks ai_next and frees every node and buffer. Two library results
 * are chained and freed, several times over: the allocator's in-use byte count (which includes
 * glibc's per-thread cache, so only a steady state is comparable) must stop changing, whereas a
 * leaked node or buffer grows it every round. In an ASan build (where mallinfo2 reports
 * nothing) LeakSanitizer looks for unreachable blocks instead. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void gai_71(const struct conf_case *c)
{
	struct rdma_addrinfo hsrc = { .ai_port_space = RDMA_PS_TCP }, *a, *b;
	struct sockaddr_storage src;
	size_t used[6];

	conf_stimulus("rdma_freeaddrinfo(a) with a->ai_next = b (b has a hint src copy), 6 rounds");
	hsrc.ai_src_len = conf_parse_sockaddr("10.1.2.3:1111", &src);
	hsrc.ai_src_addr = (struct sockaddr *)&src;
	for (int i = 0; i < 6; i++) {
		if (!(a = lookup_ok("127.0.0.1", "7471", NULL, "first")))
			return;
		if (!(b = lookup_ok("127.0.0.1", "7471", &hsrc, "second"))) {
			rdma_freeaddrinfo(a);
			return;
		}
		if (a->ai_next || b->ai_next)
			conf_fatal("results already have ai_next");
		a->ai_next = b;
		rdma_freeaddrinfo(a);
		used[i] = mallinfo2().uordblks;
	}
	if (__lsan_do_recoverable_leak_check)
		conf_expect(!__lsan_do_recoverable_leak_check(), "LeakSanitizer found leaks");
	conf_expect(used[3] == used[4] && used[4] == used[5],
		    "heap in use grows by %zu, %zu bytes per round (not every node/buffer freed)",
		    used[4] - used[3], used[5] - used[4]);
	conf_note("2-node list freed; heap in use steady at %zu bytes", used[5]);
}

/* Row 76: RAI_SA on a host whose ports are all RoCE/iWARP finds no IB port. */
static void gai_76(const struct conf_case *c)
{
	struct ibv_device **devs;
	int n = 0, ret, err;
	struct rdma_addrinfo hints = { .ai_flags = RAI_SA }, *r = SENTINEL;

	char ibport[128] = "";

	devs = ibv_get_device_list(&n);
	for (int i = 0; devs && i < n && !ibport[0]; i++) {
		struct ibv_context *ctx = ibv_open_device(devs[i]);
		struct ibv_device_attr da;

		if (!ctx)
			continue;
		if (!ibv_query_device(ctx, &da))
			for (int p = 1; p <= da.phys_port_cnt && !ibport[0]; p++) {
				struct ibv_port_attr pa;
				if (!ibv_query_port(ctx, (uint8_t)p, &pa) &&
				    pa.link_layer == IBV_LINK_LAYER_INFINIBAND &&
				    pa.state >= IBV_PORT_ACTIVE)
					snprintf(ibport, sizeof ibport, "%s port %d",
						 ibv_get_device_name(devs[i]), p);
			}
		ibv_close_device(ctx);
	}
	if (devs)
		ibv_free_device_list(devs);
	if (ibport[0])
		conf_notrun("%s is an active InfiniBand port", ibport);
	conf_stimulus("(NULL,\"7471\",{flags RAI_SA}) with no active IB port");
	errno = 0;
	ret = rdma_getaddrinfo(NULL, "7471", &hints, &r);
	err = errno;
	EXPECT_INT("ret", ret, -1);
	if (ret == -1)
		EXPECT_ERRNO("errno", err, ENOENT);
	conf_expect(r == SENTINEL, "*res written on failure");
	if (!ret && r != SENTINEL)
		rdma_freeaddrinfo(r);
	conf_note("-1 errno %s", conf_errno_name(err));
}

#define H(...) (&(const struct hints){ __VA_ARGS__ })
#define R(...) (&(const struct gai_row){ __VA_ARGS__ })
#define DEV (PRE_DEVICE | PRE_NOACM)
#define ROW(id, row, desc, doc, pre, node_, service_, hints_, ...) \
	{ "GAI-" id, "GAI", row, desc, doc, pre, NULL, 0, gai_run, \
	  R(.node = node_, .service = service_, .h = hints_, __VA_ARGS__) }
/* Result of row 35, shared by the rows whose stimulus must not change it. */
#define A1 .family = AF_INET, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .dst = "127.0.0.1:7471"

static const struct conf_case cases[] = {
	ROW("35", 35, "(\"127.0.0.1\",\"7471\",NULL): family 2, qp 2, ps 0x106, flags 0, dst "
	    "127.0.0.1:7471 len 16, no src, canonnames NULL, no route/connect, ai_next NULL",
	    "man: ai_src_len is 0 only 'if an appropriate source address could not be discovered'; "
	    "librdmacm does no source discovery (src only from hints or ibacm)",
	    DEV, "127.0.0.1", "7471", NULL, A1),
	ROW("36", 36, "hints ps RDMA_PS_UDP: qp 4 (UD), ps 0x111", NULL, DEV, "127.0.0.1", "7471",
	    H(.ps = RDMA_PS_UDP), .family = AF_INET, .qp = IBV_QPT_UD, .ps = RDMA_PS_UDP,
	    .dst = "127.0.0.1:7471"),
	ROW("37", 37, "hints ps RDMA_PS_IPOIB: qp 4, ps 0x2", NULL, DEV, "127.0.0.1", "7471",
	    H(.ps = RDMA_PS_IPOIB), .family = AF_INET, .qp = IBV_QPT_UD, .ps = RDMA_PS_IPOIB,
	    .dst = "127.0.0.1:7471"),
	ROW("38", 38, "hints ps RDMA_PS_IB, qp 0: qp 2, ps 0x13f", NULL, DEV, "127.0.0.1", "7471",
	    H(.ps = RDMA_PS_IB), .family = AF_INET, .qp = IBV_QPT_RC, .ps = RDMA_PS_IB,
	    .dst = "127.0.0.1:7471"),
	ROW("39a", 39, "hints qp IBV_QPT_RC, ps 0: qp kept (2), ps 0x106", NULL, DEV, "127.0.0.1", "7471",
	    H(.qp = IBV_QPT_RC), A1),
	ROW("39b", 39, "hints qp IBV_QPT_UD, ps 0: qp kept (4), ps 0x111", NULL, DEV, "127.0.0.1", "7471",
	    H(.qp = IBV_QPT_UD), .family = AF_INET, .qp = IBV_QPT_UD, .ps = RDMA_PS_UDP,
	    .dst = "127.0.0.1:7471"),
	ROW("39c", 39, "hints qp IBV_QPT_UC, ps 0: qp kept (3), ps 0x106", NULL, DEV, "127.0.0.1", "7471",
	    H(.qp = IBV_QPT_UC), .family = AF_INET, .qp = IBV_QPT_UC, .ps = RDMA_PS_TCP,
	    .dst = "127.0.0.1:7471"),
	ROW("40a", 40, "hints qp XRC_SEND (9), ps IB: qp kept, ps 0x13f",
	    "rdma_getaddrinfo.3: supported QP types are IBV_QPT_UD and IBV_QPT_RC", DEV, "127.0.0.1", "7471",
	    H(.qp = IBV_QPT_XRC_SEND, .ps = RDMA_PS_IB), .family = AF_INET,
	    .qp = IBV_QPT_XRC_SEND, .ps = RDMA_PS_IB, .dst = "127.0.0.1:7471"),
	ROW("40b", 40, "passive, hints qp XRC_RECV (10), ps IB: qp kept, ps 0x13f",
	    "rdma_getaddrinfo.3: supported QP types are IBV_QPT_UD and IBV_QPT_RC", DEV, "127.0.0.1", "7471",
	    H(.flags = RAI_PASSIVE, .qp = IBV_QPT_XRC_RECV, .ps = RDMA_PS_IB),
	    .flags = RAI_PASSIVE, .family = AF_INET, .qp = IBV_QPT_XRC_RECV, .ps = RDMA_PS_IB,
	    .src = "127.0.0.1:7471"),
	ROW("41", 41, "hints qp UD + ps TCP: EAI_SOCKTYPE (-7)",
	    "rdma_getaddrinfo.3 (and the zh seed) name EAI_QPTYPE, which no header defines",
	    DEV, "127.0.0.1", "7471", H(.qp = IBV_QPT_UD, .ps = RDMA_PS_TCP), .ret = EAI_SOCKTYPE),
	ROW("42", 42, "hints qp RC + ps UDP: EAI_SOCKTYPE (-7)",
	    "rdma_getaddrinfo.3 (and the zh seed) name EAI_QPTYPE, which no header defines",
	    DEV, "127.0.0.1", "7471", H(.qp = IBV_QPT_RC, .ps = RDMA_PS_UDP), .ret = EAI_SOCKTYPE),
	{ "GAI-43", "GAI", 43, "EAI_QPTYPE is not defined by <rdma/rdma_cma.h> or <netdb.h>",
	  "rdma_getaddrinfo.3 lists EAI_QPTYPE as a return code", PRE_NONE, NULL, 0, gai_43, NULL },
	ROW("44a", 44, "hints qp 99: kept verbatim, ps derived from glibc's first result (0x106)",
	    NULL, DEV, "127.0.0.1", "7471", H(.qp = 99), .family = AF_INET, .qp = 99, .ps = RDMA_PS_TCP,
	    .dst = "127.0.0.1:7471"),
	ROW("44b", 44, "hints ps 0x1234: kept verbatim, qp derived from glibc's first result (2)",
	    NULL, DEV, "127.0.0.1", "7471", H(.ps = 0x1234), .family = AF_INET, .qp = IBV_QPT_RC, .ps = 0x1234,
	    .dst = "127.0.0.1:7471"),
	ROW("45", 45, "RAI_PASSIVE, node NULL, \"7471\", ps TCP: flags == RAI_PASSIVE, src "
	    "0.0.0.0:7471, no dst", "man: ai_dst_len 'will be 0 if the RAI_PASSIVE flag was "
	    "specified'", DEV, NULL, "7471", H(.flags = RAI_PASSIVE, .ps = RDMA_PS_TCP),
	    .flags = RAI_PASSIVE, .family = AF_INET, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP,
	    .src = "0.0.0.0:7471"),
	ROW("46", 46, "RAI_PASSIVE, \"127.0.0.1\", service NULL: src 127.0.0.1 port 0", NULL, DEV,
	    "127.0.0.1", NULL, H(.flags = RAI_PASSIVE), .flags = RAI_PASSIVE, .family = AF_INET,
	    .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .src = "127.0.0.1:0"),
	ROW("47", 47, "RAI_PASSIVE with hint src/dst: hint addresses ignored, src from node, no dst",
	    NULL, DEV, "127.0.0.1", "7471", H(.flags = RAI_PASSIVE, .src = "10.1.2.3:1111", .dst = "10.9.9.9:2222"),
	    .flags = RAI_PASSIVE, .family = AF_INET, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP,
	    .src = "127.0.0.1:7471"),
	ROW("48", 48, "active with hint src 10.1.2.3:1111: src copied byte for byte, dst from node",
	    NULL, DEV, "127.0.0.1", "7471", H(.src = "10.1.2.3:1111"), A1, .src = "10.1.2.3:1111"),
	ROW("49", 49, "active with hint dst and a node: hint dst ignored", NULL, DEV, "127.0.0.1", "7471",
	    H(.dst = "10.9.9.9:2222"), A1),
	ROW("50a", 50, "RAI_PASSIVE \"::\": family 10, src [::]:7471 len 28", NULL, DEV, "::", "7471",
	    H(.flags = RAI_PASSIVE), .flags = RAI_PASSIVE, .family = AF_INET6, .qp = IBV_QPT_RC,
	    .ps = RDMA_PS_TCP, .src = "[::]:7471"),
	ROW("50b", 50, "RAI_PASSIVE, node NULL, family AF_INET6: src [::]:7471 len 28", NULL, DEV,
	    NULL, "7471", H(.flags = RAI_PASSIVE, .family = AF_INET6), .flags = RAI_PASSIVE,
	    .family = AF_INET6, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .src = "[::]:7471"),
	ROW("51", 51, "node NULL, service NULL, hints all zero: 0 and an all-zero entry", NULL, DEV,
	    NULL, NULL, H(0)),
	ROW("52", 52, "node/service NULL, hints {flags 0x104, family 2, qp UD, ps UDP, src, dst}: "
	    "copied verbatim", NULL, DEV, NULL, NULL,
	    H(.flags = 0x104, .family = AF_INET, .qp = IBV_QPT_UD, .ps = RDMA_PS_UDP,
	      .src = "10.1.2.3:1111", .dst = "10.9.9.9:2222"),
	    .flags = 0x104, .family = AF_INET, .qp = IBV_QPT_UD, .ps = RDMA_PS_UDP,
	    .src = "10.1.2.3:1111", .dst = "10.9.9.9:2222"),
	ROW("53", 53, "node/service NULL, hints RAI_PASSIVE + dst: dst copied, flags 0x1",
	    "man: ai_dst_len 'will be 0 if the RAI_PASSIVE flag was specified'", DEV, NULL, NULL,
	    H(.flags = RAI_PASSIVE, .dst = "10.9.9.9:2222"), .flags = RAI_PASSIVE,
	    .dst = "10.9.9.9:2222"),
	ROW("54", 54, "RAI_NUMERICHOST with \"localhost\": EAI_NONAME (-2)", NULL, DEV, "localhost",
	    "7471", H(.flags = RAI_NUMERICHOST), .ret = EAI_NONAME),
	ROW("55", 55, "unknown service name: EAI_SERVICE (-8)", NULL, DEV, "127.0.0.1",
	    "rdmaemu-no-such-service", NULL, .ret = EAI_SERVICE),
	{ "GAI-56", "GAI", 56, "service \"http\": port 80 (services database)", NULL, DEV, NULL, 0,
	  gai_run, R(.node = "127.0.0.1", .service = "http", .h = NULL, .family = AF_INET, .qp = IBV_QPT_RC,
		     .ps = RDMA_PS_TCP, .dst = "127.0.0.1:80", .opts = ROW_NEEDS_HTTP) },
	ROW("57a", 57, "family AF_INET with \"::1\": EAI_ADDRFAMILY (-9)", NULL, DEV, "::1", "7471",
	    H(.family = AF_INET), .ret = EAI_ADDRFAMILY),
	ROW("57b", 57, "family AF_INET6 with \"127.0.0.1\": EAI_ADDRFAMILY (-9)", NULL, DEV, "127.0.0.1", "7471",
	    H(.family = AF_INET6), .ret = EAI_ADDRFAMILY),
	ROW("58", 58, "family AF_INET6 without RAI_FAMILY, \"::1\": honoured, family 10",
	    "man: RAI_FAMILY means 'the ai_family setting should be used as an input hint'; "
	    "ai_family is honoured without it", DEV, "::1", "7471", H(.family = AF_INET6),
	    .family = AF_INET6, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .dst = "[::1]:7471"),
	ROW("59", 59, "unknown flag bits 0x100c0: ignored, result 0, result flags 0",
	    "man lists EAI_BADFLAGS ('hints.ai_flags contains invalid flags'); unknown bits are "
	    "dropped", DEV, "127.0.0.1", "7471", H(.flags = 0x100c0), A1),
	ROW("60", 60, "family 12345: EAI_FAMILY (-6)", NULL, DEV, "127.0.0.1", "7471", H(.family = 12345),
	    .ret = EAI_FAMILY),
	ROW("61a", 61, "RAI_NOROUTE on an active lookup: no effect without ibacm (flags 0)", NULL,
	    DEV, "127.0.0.1", "7471", H(.flags = RAI_NOROUTE), A1),
	ROW("61b", 61, "RAI_NUMERICHOST on an active lookup: no effect (flags 0)", NULL, DEV, "127.0.0.1", "7471",
	    H(.flags = RAI_NUMERICHOST), A1),
	{ "GAI-62", "GAI", 62, "AI_CANONNAME never requested: ai_src_canonname and "
	  "ai_dst_canonname NULL for every lookup",
	  "man documents ai_src_canonname/ai_dst_canonname as the canonical names", DEV, NULL, 0,
	  gai_62, NULL },
	{ "GAI-63", "GAI", 63, "multi-address name \"localhost\": exactly one entry (ai_next NULL)",
	  "man: res is 'a linked list of rdma_addrinfo structures'; only glibc's first result "
	  "is used", DEV, NULL, 0, gai_63, NULL },
	ROW("64", 64, "AF_IB + RAI_FAMILY + RAI_NUMERICHOST \"" GID "\" \"7471\" ps TCP: family 27, "
	    "sockaddr_ib len 48, pkey 0xffff, sid 0x1061d2f, mask ~0", NULL, DEV, GID, "7471",
	    H(.flags = RAI_FAMILY | RAI_NUMERICHOST, .family = AF_IB, .ps = RDMA_PS_TCP),
	    .family = AF_IB, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP,
	    .dst = "ib:[" GID "] pkey=0xffff sid=0x0000000001061d2f mask=0xffffffffffffffff"),
	ROW("65", 65, "same with ps IB: sid 0x13f1d2f", NULL, DEV, GID, "7471",
	    H(.flags = RAI_FAMILY | RAI_NUMERICHOST, .family = AF_IB, .ps = RDMA_PS_IB),
	    .family = AF_IB, .qp = IBV_QPT_RC, .ps = RDMA_PS_IB,
	    .dst = "ib:[" GID "] pkey=0xffff sid=0x00000000013f1d2f mask=0xffffffffffffffff"),
	ROW("66", 66, "same without service: sid 0x1060000, mask 0xffffffffffff0000", NULL, DEV, GID,
	    NULL, H(.flags = RAI_FAMILY | RAI_NUMERICHOST, .family = AF_IB, .ps = RDMA_PS_TCP),
	    .family = AF_IB, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP,
	    .dst = "ib:[" GID "] pkey=0xffff sid=0x0000000001060000 mask=0xffffffffffff0000"),
	ROW("67", 67, "same with RAI_PASSIVE: src is the sockaddr_ib, flags 1", NULL, DEV, GID,
	    "7471", H(.flags = RAI_PASSIVE | RAI_FAMILY | RAI_NUMERICHOST, .family = AF_IB,
		      .ps = RDMA_PS_TCP), .flags = RAI_PASSIVE, .family = AF_IB, .qp = IBV_QPT_RC,
	    .ps = RDMA_PS_TCP,
	    .src = "ib:[" GID "] pkey=0xffff sid=0x0000000001061d2f mask=0xffffffffffffffff"),
	ROW("68a", 68, "family AF_IB without RAI_FAMILY: ordinary AF_INET6 result", NULL, DEV, GID,
	    "7471", H(.flags = RAI_NUMERICHOST, .family = AF_IB, .ps = RDMA_PS_TCP),
	    .family = AF_INET6, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .dst = "[" GID "]:7471"),
	ROW("68b", 68, "family AF_IB + RAI_FAMILY without RAI_NUMERICHOST: ordinary AF_INET6 result",
	    NULL, DEV, GID, "7471", H(.flags = RAI_FAMILY, .family = AF_IB, .ps = RDMA_PS_TCP),
	    .family = AF_INET6, .qp = IBV_QPT_RC, .ps = RDMA_PS_TCP, .dst = "[" GID "]:7471"),
	ROW("69", 69, "AF_IB conversion of an IPv4 literal: undefined (real library over-reads); "
	    "only 'no crash' is required", NULL, DEV, "10.0.0.1", "7471",
	    H(.flags = RAI_FAMILY | RAI_NUMERICHOST, .family = AF_IB, .ps = RDMA_PS_TCP),
	    .opts = ROW_ANY_RESULT),
	ROW("70", 70, "errno after a successful call is unspecified and not inspected (result as "
	    "row 35)", "rdma_getaddrinfo.3 (2010): '-1 on error, errno set'; the real library "
	    "leaves errno ENOENT on success", DEV, "127.0.0.1", "7471", NULL, A1),
	{ "GAI-71", "GAI", 71, "rdma_freeaddrinfo on a list with ai_next frees every node and all "
	  "owned buffers", NULL, DEV, NULL, 0, gai_71, NULL },
	ROW("72a", 72, "below v60: RAI_SA bit ignored (same result as without)", NULL,
	    DEV | PRE_LEVEL_BELOW60, "127.0.0.1", "7471", H(.flags = RAI_SA), A1),
	ROW("72b", 72, "below v60: RAI_DNS bit ignored", NULL, DEV | PRE_LEVEL_BELOW60, "127.0.0.1", "7471",
	    H(.flags = RAI_DNS), A1),
	ROW("72c", 72, "below v60: RAI_SA | RAI_DNS ignored", NULL, DEV | PRE_LEVEL_BELOW60, "127.0.0.1", "7471",
	    H(.flags = RAI_SA | RAI_DNS), A1),
	ROW("73", 73, ">= v60: RAI_SA with a node: -1/EOPNOTSUPP",
	    "rdma-core dfc0afdea (v60), librdmacm/addrinfo.c:rdma_getaddrinfo", DEV | PRE_LEVEL60, "127.0.0.1", "7471",
	    H(.flags = RAI_SA), .ret = -1, .err = EOPNOTSUPP),
	ROW("74", 74, ">= v60: RAI_SA | RAI_DNS: -1/EOPNOTSUPP",
	    "rdma_getaddrinfo.3 (v60): RAI_SA and RAI_DNS are 'mutually exclusive'; rdma-core "
	    "dfc0afdea, librdmacm/addrinfo.c:rdma_getaddrinfo",
	    DEV | PRE_LEVEL60, NULL, "7471", H(.flags = RAI_SA | RAI_DNS), .ret = -1,
	    .err = EOPNOTSUPP),
	ROW("75", 75, ">= v60: RAI_SA, node NULL, service NULL: -1/EINVAL",
	    "rdma-core dfc0afdea (v60), librdmacm/addrinfo.c:ucma_getaddrinfo_sa",
	    DEV | PRE_LEVEL60, NULL, NULL, H(.flags = RAI_SA), .ret = -1, .err = EINVAL),
	{ "GAI-76", "GAI", 76, ">= v60: RAI_SA on a host without active IB-link-layer ports: "
	  "-1/ENOENT", "rdma-core dfc0afdea (v60), librdmacm/addrinfo.c:ucma_getaddrinfo_sa",
	  DEV | PRE_LEVEL60, NULL, 0, gai_76, NULL },
	ROW("77", 77, ">= v60: RAI_DNS alone is identical to no flag",
	    "rdma-core dfc0afdea (v60): rdma_getaddrinfo reads RAI_DNS only beside RAI_SA",
	    DEV | PRE_LEVEL60,
	    "127.0.0.1", "7471", H(.flags = RAI_DNS), A1),
};

const struct conf_area conf_area_gai = { "GAI", cases, sizeof cases / sizeof cases[0] };
