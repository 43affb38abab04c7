/* rdma_getaddrinfo on the InfiniBand fixture (fixtures/ib.fabric): the emulated ibacm's path
 * resolution through the fake SA on the wire (spec §4.5) on ib-c (acm=on), and the hosts
 * without ibacm (ib-a). Exact values: the SA's record for LIDs 4 -> 3, its answer times on
 * the virtual clock, and the SA faults (drop => no route, no source). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/ib/mad.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull
/* rdma-core's internal flag (librdmacm/cma.h), not in the public header */
#define RAI_ROUTEONLY 0x01000000

static void attach(const char *node)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	emu_engine_reset();
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/ib.fabric", top && *top ? top : RDMAEMU_SRCDIR);
	assert_int_equal(rdmaemu_ctl_attach(path, node), 0);
	emu_engine_set_quiesce_ns(emu_engine_get(), 0);
}

static int teardown(void **state)
{
	(void)state;
	emu_engine_reset();
	emu_process_reset();
	return 0;
}

static uint64_t now(void)
{
	uint64_t t;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static const uint8_t *gid0(const char *host)
{
	const struct emu_fabric *f = emu_process_fabric();

	return emu_fabric_find_host(f, host)->devices[0].ports[0].gids[0].raw;
}

static void check_path(const struct rdma_addrinfo *r, const char *src_host, uint16_t slid,
		       const char *dst_host, uint16_t dlid)
{
	const struct ibv_path_data *p;
	struct emu_sa_path_rec rec;

	assert_int_equal(r->ai_route_len, sizeof(struct ibv_path_data));
	assert_int_equal(r->ai_route_len, 72);
	p = r->ai_route;
	assert_int_equal(p->flags, 0x2b); /* GMP | PRIMARY | BIDIRECTIONAL */
	assert_int_equal(p->reserved, 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, (const uint8_t *)&p->path, &rec);
	assert_memory_equal(rec.sgid, gid0(src_host), 16);
	assert_memory_equal(rec.dgid, gid0(dst_host), 16);
	assert_int_equal(rec.slid, slid);
	assert_int_equal(rec.dlid, dlid);
	assert_int_equal(rec.pkey, 0xffff);
	assert_int_equal(rec.sl, 0);
	assert_int_equal(rec.packet_life_time, 18);
	assert_int_equal(rec.reversible, 1);
	assert_int_equal(rec.mtu, 5); /* 4096 */
	if (r->ai_family == AF_IB)
		return; /* its ai_connect: check_af_ib */
	assert_int_equal(r->ai_connect_len, 0);
	assert_null(r->ai_connect);
}

/* The AF_IB entry ucma_resolve_af_ib puts in front of an IP result with a route (the kernel
 * takes AF_IB): r's twin with sockaddr_ib addresses from the path and the 36-byte connect
 * header; ip_src/ip_dst are the IP entry's addresses (4 or 16 bytes), sport/dport its ports. */
static const struct rdma_addrinfo *check_af_ib(const struct rdma_addrinfo *r, const char *src_host,
					       const char *dst_host, int ipv, const void *ip_src,
					       const void *ip_dst, uint16_t sport, uint16_t dport)
{
	const struct sockaddr_ib *s = (const struct sockaddr_ib *)r->ai_src_addr;
	const struct sockaddr_ib *d = (const struct sockaddr_ib *)r->ai_dst_addr;
	const uint8_t *c = r->ai_connect;
	size_t alen = ipv == 4 ? 4 : 16;

	assert_int_equal(r->ai_family, AF_IB);
	assert_int_equal(r->ai_qp_type, IBV_QPT_RC);
	assert_int_equal(r->ai_port_space, RDMA_PS_TCP);
	assert_non_null(r->ai_next);
	assert_int_equal(r->ai_flags, r->ai_next->ai_flags);
	assert_int_equal(r->ai_next->ai_family, ipv == 4 ? AF_INET : AF_INET6);
	assert_int_equal(r->ai_route_len, r->ai_next->ai_route_len);
	assert_memory_equal(r->ai_route, r->ai_next->ai_route, r->ai_route_len);
	assert_int_equal(r->ai_src_len, sizeof(struct sockaddr_ib));
	assert_int_equal(r->ai_dst_len, sizeof(struct sockaddr_ib));
	assert_int_equal(s->sib_family, AF_IB);
	assert_int_equal(ntohs(s->sib_pkey), 0xffff);
	assert_int_equal(s->sib_flowinfo, 0);
	assert_memory_equal(s->sib_addr.sib_raw, gid0(src_host), 16);
	assert_int_equal(be64toh(s->sib_sid), 0x01060000ull | sport);
	assert_int_equal(be64toh(s->sib_sid_mask), RDMA_IB_IP_PS_MASK |
			 (sport ? RDMA_IB_IP_PORT_MASK : 0));
	assert_int_equal(d->sib_family, AF_IB);
	assert_int_equal(ntohs(d->sib_pkey), 0xffff);
	assert_memory_equal(d->sib_addr.sib_raw, gid0(dst_host), 16);
	assert_int_equal(be64toh(d->sib_sid), 0x01060000ull | dport);
	assert_int_equal(be64toh(d->sib_sid_mask), RDMA_IB_IP_PS_MASK | RDMA_IB_IP_PORT_MASK);
	/* ib_connect_hdr: version 0, IP version in the high nibble, port 0, the IP addresses
	 * (IPv4 in the last word of each 16-byte field) */
	assert_int_equal(r->ai_connect_len, 36);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[1], ipv << 4);
	assert_int_equal(c[2], 0);
	assert_int_equal(c[3], 0);
	assert_memory_equal(c + 4 + 16 - alen, ip_src, alen);
	assert_memory_equal(c + 20 + 16 - alen, ip_dst, alen);
	return r->ai_next;
}

static void test_acm_path_ipv4(void **state)
{
	const struct rdma_addrinfo *ip;
	struct rdma_addrinfo *r = NULL;
	struct sockaddr_in *sin;
	uint64_t t0;

	(void)state;
	attach("ib-c");
	t0 = now();
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &r), 0);
	/* one SA round trip: the 50 us response delay plus the wire, well under a millisecond */
	assert_true(now() - t0 >= 50000);
	assert_true(now() - t0 < MS);
	check_path(r, "ib-c", 4, "ib-b", 3);
	ip = check_af_ib(r, "ib-c", "ib-b", 4, (const uint8_t[]){ 192, 0, 2, 131 },
			 (const uint8_t[]){ 192, 0, 2, 130 }, 0, 7471);
	check_path(ip, "ib-c", 4, "ib-b", 3);
	/* and the source ibacm chose: ib0's address, port 0 */
	assert_int_equal(ip->ai_src_len, sizeof(struct sockaddr_in));
	sin = (struct sockaddr_in *)ip->ai_src_addr;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000283);
	assert_int_equal(sin->sin_port, 0);
	assert_null(ip->ai_next);
	rdma_freeaddrinfo(r);
}

static void test_acm_path_ipv6_hint_src(void **state)
{
	struct rdma_addrinfo hints, *r = NULL;
	const struct rdma_addrinfo *ip;
	struct sockaddr_in6 src;
	struct in6_addr dst6;

	(void)state;
	attach("ib-c");
	memset(&src, 0, sizeof(src));
	src.sin6_family = AF_INET6;
	src.sin6_port = htons(9);
	inet_pton(AF_INET6, "2001:db8:0:81::c", &src.sin6_addr);
	memset(&hints, 0, sizeof(hints));
	hints.ai_src_addr = (struct sockaddr *)&src;
	hints.ai_src_len = sizeof(src);
	assert_int_equal(rdma_getaddrinfo("2001:db8:0:81::a", "7471", &hints, &r), 0);
	check_path(r, "ib-c", 4, "ib-a", 2);
	inet_pton(AF_INET6, "2001:db8:0:81::a", &dst6);
	ip = check_af_ib(r, "ib-c", "ib-a", 6, &src.sin6_addr, &dst6, 9, 7471);
	check_path(ip, "ib-c", 4, "ib-a", 2);
	/* the caller's source is kept (port included) */
	assert_int_equal(ip->ai_src_len, sizeof(src));
	assert_memory_equal(ip->ai_src_addr, &src, sizeof(src));
	rdma_freeaddrinfo(r);

	/* RAI_ROUTEONLY (rdma_resolve_route's own lookup in rdma-core): no AF_IB entry */
	hints.ai_flags = RAI_ROUTEONLY;
	assert_int_equal(rdma_getaddrinfo("2001:db8:0:81::a", "7471", &hints, &r), 0);
	assert_int_equal(r->ai_family, AF_INET6);
	check_path(r, "ib-c", 4, "ib-a", 2);
	assert_null(r->ai_next);
	rdma_freeaddrinfo(r);
}

static void test_acm_sa_faults(void **state)
{
	struct rdmaemu_sa_policy pol;
	struct rdma_addrinfo *r = NULL;
	uint64_t t0;

	(void)state;
	attach("ib-c");
	/* the SA drops the next 3 requests: ibacm's 2000 ms timeout and 2 retries run out,
	 * its error reply is ignored: no route, no source, after exactly 3 x 2000 ms */
	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = 3;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	t0 = now();
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &r), 0);
	assert_int_equal(now() - t0, 6000 * MS);
	assert_int_equal(r->ai_route_len, 0);
	assert_null(r->ai_route);
	assert_int_equal(r->ai_src_len, 0);
	assert_null(r->ai_src_addr);
	rdma_freeaddrinfo(r);

	/* two drops: the second retry gets the answer at 2 x 2000 ms + the SA's delay */
	pol.drop_next = 2;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	t0 = now();
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &r), 0);
	assert_true(now() - t0 > 4000 * MS);
	assert_true(now() - t0 < 4001 * MS);
	check_path(r, "ib-c", 4, "ib-b", 3);
	check_path(r->ai_next, "ib-c", 4, "ib-b", 3);
	rdma_freeaddrinfo(r);

	/* an SA error status (ERR_NO_RECORDS): ignored as well */
	pol.drop_next = 0;
	pol.error_status = 0x0300;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &r), 0);
	assert_int_equal(r->ai_route_len, 0);
	assert_int_equal(r->ai_src_len, 0);
	rdma_freeaddrinfo(r);
}

static void test_acm_no_answer(void **state)
{
	struct rdma_addrinfo hints, *r = NULL;
	uint64_t t0;

	(void)state;
	attach("ib-c");
	/* an on-subnet address no host owns: ibacm cannot resolve it, no SA query, nothing */
	t0 = now();
	assert_int_equal(rdma_getaddrinfo("192.0.2.140", "7471", NULL, &r), 0);
	assert_int_equal(now(), t0);
	assert_int_equal(r->ai_route_len, 0);
	assert_int_equal(r->ai_src_len, 0);
	rdma_freeaddrinfo(r);
	/* passive lookups never ask ibacm */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	assert_int_equal(rdma_getaddrinfo("192.0.2.131", "7471", &hints, &r), 0);
	assert_int_equal(r->ai_route_len, 0);
	rdma_freeaddrinfo(r);
	/* ib-a runs no ibacm: no route, no source, no time */
	attach("ib-a");
	t0 = now();
	assert_int_equal(rdma_getaddrinfo("192.0.2.130", "7471", NULL, &r), 0);
	assert_int_equal(now(), t0);
	assert_int_equal(r->ai_route_len, 0);
	assert_int_equal(r->ai_src_len, 0);
	rdma_freeaddrinfo(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_acm_path_ipv4, teardown),
		cmocka_unit_test_teardown(test_acm_path_ipv6_hint_src, teardown),
		cmocka_unit_test_teardown(test_acm_sa_faults, teardown),
		cmocka_unit_test_teardown(test_acm_no_answer, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
