/* ACM (spec §4.5, §15 rows 78-89): rdma_getaddrinfo's ibacm client.
 *
 * Row 78 (ibacm absent) runs wherever a device is visible. Rows 79-88 observe the bytes of
 * the acm.h protocol on /run/ibacm.sock (or a TCP port named in /run/ibacm.port): they need a
 * fake ibacm that records the requests. The emulated ibacm (lib/acm.c: an acm=on host, paths
 * from the fake SA, tested in lib/tests/test_gai_ib) answers by function call, not over that
 * socket, so these rows stay Notrun on emu as on system. Row 89 also needs the AF_IB entry
 * rdma_getaddrinfo prepends (ucma_resolve_af_ib), which lib/ does not build yet. */
#include "config.h"

#include <errno.h>
#include <rdma/rdma_cma.h>
#include <time.h>

#include "conformance/conformance.h"

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

#define FIXTURE "needs ibacm fixture"
#define ACM(row, desc) { "ACM-" #row, "ACM", row, desc, NULL, PRE_DEVICE, FIXTURE, 0, NULL, NULL }

static const struct conf_case cases[] = {
	{ "ACM-78", "ACM", 78, "ibacm not running (no /run/ibacm.port, no /run/ibacm.sock): ret 0, "
	  "route_len 0, connect_len 0, no delay",
	  "rdma_getaddrinfo.3 does not mention ibacm; every active lookup tries to reach it",
	  PRE_DEVICE | PRE_NOACM, NULL, 0, acm_78, NULL },
	ACM(79, "request for an active IPv4 lookup: 88 bytes, version 1, opcode 1, one DEST entry "
		"(flags 0x2, type 2, 4-byte address)"),
	ACM(80, "RAI_NUMERICHOST or RAI_NOROUTE: DEST entry flags 0x40000002 (NODELAY)"),
	ACM(81, "hint src present: SOURCE entry (flags 1, type 2/3) precedes DEST"),
	ACM(82, "hints.ai_route_len 64 or 72: an extra entry type 0x10 with the hint path record"),
	ACM(83, "passive lookup: no ibacm request"),
	ACM(84, "reply with hdr.status != 0 or a wrong length: ignored (no route, no src)"),
	ACM(85, "reply with 2 PATH entries (flags 0x3, 0x5): ai_route_len 144, flags kept, "
		"reserved 0"),
	ACM(86, "reply with a SOURCE IPv4 entry, no hint src: ai_src_addr = that address, port 0"),
	ACM(87, "reply SOURCE entry with a hint src: hint src kept"),
	ACM(88, "/run/ibacm.port names a port: TCP 127.0.0.1:port used instead of the unix socket"),
	ACM(89, "AF_IB-capable kernel + ibacm route for an IP lookup: [AF_IB entry with 36-byte "
		"ai_connect, IP entry]"),
};

const struct conf_area conf_area_acm = { "ACM", cases, sizeof cases / sizeof cases[0] };
