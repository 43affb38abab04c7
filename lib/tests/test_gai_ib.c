/* rdma_getaddrinfo on the InfiniBand fixture (fixtures/ib.fabric): the emulated ibacm's path
 * resolution through the fake SA on the wire (spec §4.5) on ib-c (acm=on), and the hosts
 * without ibacm (ib-a). Exact values: the SA's record for LIDs 4 -> 3, its answer times on
 * the virtual clock, and the SA faults (drop => no route, no source). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <rdma/rdma_cma.h>

#include "emu/engine.h"
#include "emu/fabric.h"
#include "emu/mad.h"
#include "emu/process.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull

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
	assert_int_equal(r->ai_connect_len, 0);
	assert_null(r->ai_connect);
}

static void test_acm_path_ipv4(void **state)
{
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
	/* and the source ibacm chose: ib0's address, port 0 */
	assert_int_equal(r->ai_src_len, sizeof(struct sockaddr_in));
	sin = (struct sockaddr_in *)r->ai_src_addr;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc0000283);
	assert_int_equal(sin->sin_port, 0);
	assert_null(r->ai_next);
	rdma_freeaddrinfo(r);
}

static void test_acm_path_ipv6_hint_src(void **state)
{
	struct rdma_addrinfo hints, *r = NULL;
	struct sockaddr_in6 src;

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
	/* the caller's source is kept (port included) */
	assert_int_equal(r->ai_src_len, sizeof(src));
	assert_memory_equal(r->ai_src_addr, &src, sizeof(src));
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
