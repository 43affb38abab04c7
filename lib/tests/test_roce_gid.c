/* The RoCE GID table follows the netdev's addresses (emu/net/roce_gid.c, docs/neigh.md "GID
 * table"), on rxe-ref: an added address takes the first empty entry as a RoCE v2 GID, a
 * removed one leaves its entry empty (zeros for ibv_query_gid, ENODATA for ibv_query_gid_ex,
 * EINVAL for the sysfs type file), the default GID stays; rdma_bind_addr sees the netdev's
 * addresses as they are now. The sequence mirrors what Linux 6.1 + rxe did in the reference
 * VM (scripts/rxe-vm with `ip addr add/del` on d0).
 * Re-executes itself on the emulated libibverbs (verbs_test.h). */
#include "config.h"

#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include "emu/verbs/tests/verbs_test.h"
#include "rdmaemu/ctl.h"

static struct ibv_context *ctx;
static uint32_t ndev_ifindex0; /* GID 0's netdev: d0 */

static void gid_is(int index, const char *text)
{
	union ibv_gid g, want;

	assert_int_equal(ibv_query_gid(ctx, 1, index, &g), 0);
	memset(&want, 0, sizeof(want));
	if (text)
		assert_int_equal(inet_pton(AF_INET6, text, want.raw), 1);
	if (memcmp(g.raw, want.raw, 16)) {
		char buf[INET6_ADDRSTRLEN];

		fail_msg("GID %d is %s, expected %s", index,
			 inet_ntop(AF_INET6, g.raw, buf, sizeof(buf)), text ? text : "empty");
	}
}

static void entry_is(int index, const char *text)
{
	struct ibv_gid_entry e;
	union ibv_gid want;

	if (!text) {
		assert_int_equal(ibv_query_gid_ex(ctx, 1, index, &e, 0), ENODATA);
		return;
	}
	assert_int_equal(ibv_query_gid_ex(ctx, 1, index, &e, 0), 0);
	assert_int_equal(inet_pton(AF_INET6, text, want.raw), 1);
	assert_memory_equal(e.gid.raw, want.raw, 16);
	assert_int_equal(e.gid_index, index);
	assert_int_equal(e.gid_type, IBV_GID_TYPE_ROCE_V2);
	assert_int_equal(e.ndev_ifindex, ndev_ifindex0);
}

static int bind_to(const char *ip)
{
	struct rdma_cm_id *id;
	struct sockaddr_in sin;
	int ret;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	errno = 0;
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin) ? errno : 0;
	if (!ret) {
		union ibv_gid want;

		/* the id's source GID is the address's entry */
		assert_non_null(id->verbs);
		memset(&want, 0, sizeof(want));
		want.raw[10] = want.raw[11] = 0xff;
		memcpy(want.raw + 12, &sin.sin_addr, 4);
		assert_memory_equal(id->route.addr.addr.ibaddr.sgid.raw, want.raw, 16);
	}
	assert_int_equal(rdma_destroy_id(id), 0);
	return ret;
}

static void test_addresses_make_gids(void **state)
{
	struct ibv_gid_entry e0;

	(void)state;
	assert_int_equal(ibv_query_gid_ex(ctx, 1, 0, &e0, 0), 0);
	ndev_ifindex0 = e0.ndev_ifindex;
	assert_true(ndev_ifindex0 > 0);
	gid_is(0, "fe80::ff:fe00:101");
	gid_is(1, "::ffff:192.0.2.1");
	entry_is(1, "::ffff:192.0.2.1");
	gid_is(2, NULL);
	entry_is(2, NULL);
	assert_int_equal(bind_to("192.0.2.2"), EADDRNOTAVAIL);

	/* ip addr add 192.0.2.2/28 dev d0: GID 2 */
	assert_int_equal(rdmaemu_ctl_addr_add("rxe-ref", "d0", "192.0.2.2/28"), 0);
	gid_is(2, "::ffff:192.0.2.2");
	entry_is(2, "::ffff:192.0.2.2");
	assert_int_equal(bind_to("192.0.2.2"), 0);
	/* ip addr add 2001:db8::1/64 dev d0: GID 3 */
	assert_int_equal(rdmaemu_ctl_addr_add("rxe-ref", "d0", "2001:db8::1/64"), 0);
	gid_is(3, "2001:db8::1");
	entry_is(3, "2001:db8::1");
	/* ip addr del 192.0.2.2/28: GID 2 empty, GID 3 stays where it was */
	assert_int_equal(rdmaemu_ctl_addr_del("rxe-ref", "d0", "192.0.2.2/28"), 0);
	gid_is(2, NULL);
	entry_is(2, NULL);
	gid_is(3, "2001:db8::1");
	assert_int_equal(bind_to("192.0.2.2"), EADDRNOTAVAIL);
	/* the next address takes the first empty entry */
	assert_int_equal(rdmaemu_ctl_addr_add("rxe-ref", "d0", "192.0.2.3/28"), 0);
	gid_is(2, "::ffff:192.0.2.3");
	assert_int_equal(bind_to("192.0.2.3"), 0);
	gid_is(4, NULL);
	/* (Linux drops secondary addresses with their primary; the neighbour layer does not
	 * model that, so the secondary goes first here, as it would with it) */
	assert_int_equal(rdmaemu_ctl_addr_del("rxe-ref", "d0", "192.0.2.3/28"), 0);
	gid_is(2, NULL);
	/* the original address goes: its entry empties, the default GID stays */
	assert_int_equal(rdmaemu_ctl_addr_del("rxe-ref", "d0", "192.0.2.1/28"), 0);
	gid_is(0, "fe80::ff:fe00:101");
	gid_is(1, NULL);
	entry_is(1, NULL);
	assert_int_equal(bind_to("192.0.2.1"), EADDRNOTAVAIL);
	/* and comes back into entry 1 */
	assert_int_equal(rdmaemu_ctl_addr_add("rxe-ref", "d0", "192.0.2.1/28"), 0);
	gid_is(1, "::ffff:192.0.2.1");
	assert_int_equal(bind_to("192.0.2.1"), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses_make_gids),
	};
	struct ibv_device **list;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 1);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, "rxe-ref");
	list = ibv_get_device_list(NULL);
	if (!list || !list[0] || !(ctx = ibv_open_device(list[0])))
		return 99;
	ibv_free_device_list(list);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
