/* rdma_resolve_route on a host where ibacm runs (fixtures/ib.fabric, ib-c acm=on): rdma-core's
 * ucma_set_ib_route asks ibacm for the path first (rdma_getaddrinfo with RAI_ROUTEONLY) and
 * hands it to the kernel as RDMA_OPTION_IB_PATH, whose handler raises ROUTE_RESOLVED; the
 * kernel's own SA query never happens. The two are told apart by an SA that drops one
 * request: ibacm retries after its 2000 ms and succeeds, while the kernel's query (no
 * retries) fails with the caller's 1000 ms -> -1/ETIMEDOUT, as on ib-a, which runs no ibacm.
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/sim/fabric.h"
#include "emu/sim/process.h"
#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

#define MS 1000000ull

static uint64_t now(void)
{
	uint64_t t;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

static const uint8_t *gid0(const char *host)
{
	return emu_fabric_find_host(emu_process_fabric(), host)->devices[0].ports[0].gids[0].raw;
}

/* a synchronous id whose address is resolved to dst (IPv4 or IPv6) */
static struct rdma_cm_id *resolved_id(const char *dst)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct rdma_cm_id *id = NULL;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, dst, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(7471);
	} else {
		assert_int_equal(inet_pton(AF_INET6, dst, &sin6->sin6_addr), 1);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(7471);
	}
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, 2000), 0);
	return id;
}

static void drop_next_sa(unsigned n)
{
	struct rdmaemu_sa_policy pol;

	assert_int_equal(rdmaemu_ctl_sa_policy(NULL, &pol), 0);
	pol.drop_next = n;
	assert_int_equal(rdmaemu_ctl_sa_policy(&pol, NULL), 0);
}

static void check_route(struct rdma_cm_id *id, const char *src, uint16_t slid, const char *dst,
			uint16_t dlid)
{
	const struct ibv_sa_path_rec *p = id->route.path_rec;

	assert_int_equal(id->route.num_paths, 1);
	assert_non_null(p);
	assert_memory_equal(p->sgid.raw, gid0(src), 16);
	assert_memory_equal(p->dgid.raw, gid0(dst), 16);
	assert_int_equal(be16toh(p->slid), slid);
	assert_int_equal(be16toh(p->dlid), dlid);
	assert_int_equal(be16toh(p->pkey), 0xffff);
	assert_int_equal(p->packet_life_time, 18);
	assert_int_equal(p->mtu, IBV_MTU_4096);
}

static void test_route_from_ibacm(void **state)
{
	struct rdma_cm_id *id;
	uint64_t t0;

	(void)state;
	id = resolved_id("192.0.2.130");
	drop_next_sa(1);
	t0 = now();
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	/* ibacm's first query dropped, its retry answered after the SA's 50 us */
	assert_true(now() - t0 > 2000 * MS);
	assert_true(now() - t0 < 2001 * MS);
	assert_non_null(id->event);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(id->event->status, 0);
	check_route(id, "ib-c", 4, "ib-b", 3);
	assert_int_equal(rdma_destroy_id(id), 0);

	/* nothing dropped: one ibacm round trip, the route as the kernel would have it */
	id = resolved_id("192.0.2.129");
	t0 = now();
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	assert_true(now() - t0 >= 50000);
	assert_true(now() - t0 < MS);
	check_route(id, "ib-c", 4, "ib-a", 2);
	assert_int_equal(rdma_destroy_id(id), 0);
}

static void test_route_without_ibacm(void **state)
{
	struct rdma_cm_id *id;
	uint64_t t0;

	(void)state;
	id = resolved_id("192.0.2.130");
	drop_next_sa(1);
	t0 = now();
	errno = 0;
	assert_int_equal(rdma_resolve_route(id, 1000), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(now() - t0 >= 1000 * MS);
	assert_true(now() - t0 < 1001 * MS);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ROUTE_ERROR);
	assert_int_equal(id->event->status, -ETIMEDOUT);
	/* and again with an SA that answers: the kernel's query */
	assert_int_equal(rdma_destroy_id(id), 0);
	id = resolved_id("192.0.2.130");
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	check_route(id, "ib-a", 2, "ib-b", 3);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* IPv6 over IPoIB (docs/neigh.md): the address resolves by neighbour discovery through the
 * SA's multicast groups and the answerer's IPoIB path, then the kernel's path query. */
static void test_route_ipv6_without_ibacm(void **state)
{
	struct rdma_cm_id *id;
	const struct sockaddr_in6 *src;
	struct in6_addr want;
	uint64_t t0;

	(void)state;
	t0 = now();
	id = resolved_id("2001:db8:0:81::b");
	/* the NS waited for ib-a's send-only join: ADDR_RESOLVED after the SA's 50 us. ib-b's
	 * unicast NA did not wait: ib-b has had the path to ib-a's GID since its ARP reply in
	 * test_route_without_ibacm (ipoib's paths are per GID, shared by ARP and IPv6), so no
	 * second SA round trip (which would make it 100 us) */
	assert_int_equal(now() - t0, 50000);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	src = (const struct sockaddr_in6 *)rdma_get_local_addr(id);
	assert_int_equal(src->sin6_family, AF_INET6);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:0:81::a", &want), 1);
	assert_memory_equal(&src->sin6_addr, &want, 16);
	assert_memory_equal(id->route.addr.addr.ibaddr.dgid.raw, gid0("ib-b"), 16);
	assert_int_equal(rdma_resolve_route(id, 1000), 0);
	check_route(id, "ib-a", 2, "ib-b", 3);
	assert_int_equal(rdma_destroy_id(id), 0);
}

/* One process per host (librdmacm's device list is the process's host's): the ib-a half
 * runs in a child that re-executes this program with TEST_ACM_ROUTE_NODE set. */
int main(int argc, char **argv)
{
	const struct CMUnitTest with_acm[] = {
		cmocka_unit_test(test_route_from_ibacm),
	};
	const struct CMUnitTest without_acm[] = {
		cmocka_unit_test(test_route_without_ibacm),
		cmocka_unit_test(test_route_ipv6_without_ibacm),
	};
	const char *node = getenv("TEST_ACM_ROUTE_NODE");
	int st;

	(void)argc;
	if (!node) {
		pid_t pid = fork();

		if (pid == 0) {
			setenv("TEST_ACM_ROUTE_NODE", "ib-a", 1);
			/* argv[0], not /proc/self/exe: that is the valgrind tool under
			 * make check-valgrind */
			execv(argv[0], argv);
			_exit(99);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
			return 99;
		if (WEXITSTATUS(st))
			return WEXITSTATUS(st);
		node = "ib-c";
		setenv("TEST_ACM_ROUTE_NODE", node, 1); /* verbs_test_init re-executes us */
	}
	verbs_test_init(argv, "ib.fabric", NULL, node);
	if (!strcmp(node, "ib-c"))
		return cmocka_run_group_tests(with_acm, NULL, NULL);
	return cmocka_run_group_tests(without_acm, NULL, NULL);
}
