/* Unit tests: every shipped fixture loads; the built-in default fabric equals
 * fixtures/default.fabric and rxe-ref.fabric's host; key values of the reference fixtures are
 * the ones the real-stack reference VM shows; `fabric show` output is stable. */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "emu/sim/tests/fabric_test.h"

static struct emu_fabric *load_fixture(const char *name)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load(fixture_path(name), &err);

	if (!f)
		fail_msg("%s: %s:%u: %s", name, err.file, err.line, err.msg);
	return f;
}

/* `fabric show` without its first line (which names the source) */
static char *show_body(const struct emu_fabric *f)
{
	char *s = show_to_string(f), *nl = strchr(s, '\n');

	assert_non_null(nl);
	memmove(s, nl + 1, strlen(nl + 1) + 1);
	return s;
}

static void test_all_fixtures_load(void **state)
{
	static const char *const names[] = { "default.fabric", "rxe-ref.fabric", "rxe-ref2.fabric",
					     "ib.fabric", "mixed4.fabric", "nodev.fabric" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct emu_fabric *f = load_fixture(names[i]);
		char *s = show_to_string(f);

		assert_non_null(strstr(s, names[i]));
		free(s);
		emu_fabric_free(f);
	}
}

static void test_builtin_is_default_fabric(void **state)
{
	struct emu_fabric *b = emu_fabric_builtin(), *d = load_fixture("default.fabric"),
			  *r = load_fixture("rxe-ref.fabric");
	char *sb = show_body(b), *sd = show_body(d), *sr = show_body(r), *full = show_to_string(b);

	(void)state;
	assert_string_equal(sb, sd);
	assert_string_equal(sb, sr);
	assert_true(!strncmp(full, "fabric (built-in default)\n", 26));
	free(sb);
	free(sd);
	free(sr);
	free(full);
	emu_fabric_free(b);
	emu_fabric_free(d);
	emu_fabric_free(r);
}

static void test_show_stable(void **state)
{
	struct emu_fabric *f = emu_fabric_builtin(), *g = emu_fabric_builtin();
	char *a = show_to_string(f), *b = show_to_string(g);

	(void)state;
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "\nhost rxe-ref\n  acm off\n  device rxe0\n"
				  "    node_guid 0000:00ff:fe00:0101 sys_image_guid 0000:00ff:fe00:0101\n"
				  "    vendor_id 0xffffff vendor_part_id 0 hw_ver 0x0 fw_ver 0.0.0\n"));
	assert_non_null(strstr(a, "    port 1 Ethernet PORT_ACTIVE (LinkUp)\n"
				  "      mtu active 1024 max 4096  width 1x speed SDR\n"));
	assert_non_null(strstr(a, "      gid 0 fe80::ff:fe00:101 RoCE v2 d0\n"
				  "      gid 1 ::ffff:192.0.2.1 RoCE v2 d0\n      link none\n"));
	assert_non_null(strstr(a, "  netdev s0 up mtu 1500 hwaddr 02:00:00:00:01:02 rdma rxe1/1\n"
				  "    inet 192.0.2.17/28\n"));
	assert_non_null(strstr(a, "sm none\n"));
	free(a);
	free(b);
	emu_fabric_free(f);
	emu_fabric_free(g);
}

static void test_rxe_ref2(void **state)
{
	struct emu_fabric *f = load_fixture("rxe-ref2.fabric");
	const struct emu_host *a = emu_fabric_find_host(f, "A"), *b = emu_fabric_find_host(f, "B");
	struct in_addr in;
	struct emu_name n[2];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(f->nlinks, 1);
	assert_int_equal(a->devices[0].ports[0].link, 0);
	assert_int_equal(b->devices[0].ports[0].link, 0);
	assert_gid(&a->devices[0].ports[0].gids[1], "::ffff:192.0.2.65");
	assert_gid(&b->devices[0].ports[0].gids[1], "::ffff:192.0.2.66");
	inet_pton(AF_INET, "192.0.2.66", &in);
	assert_int_equal(emu_host_route(a, AF_INET, &in), 0);
	assert_int_equal(emu_fabric_lookup_name(f, "b", AF_INET, n, 2), 1);
	assert_memory_equal(&n[0].addr.v4, &in, 4);
	emu_fabric_free(f);
}

static void test_ib_fixture(void **state)
{
	struct emu_fabric *f = load_fixture("ib.fabric");
	const struct emu_port *p;
	const struct emu_host *c;
	struct emu_name n[4];

	(void)state;
	assert_true(f->sm.present);
	assert_int_equal(f->sm.sm_lid, 1);
	assert_int_equal(f->sm.response_delay_ns, 50000);
	assert_int_equal(f->nswitches, 1);
	assert_int_equal(f->nhosts, 3);
	assert_int_equal(f->nlinks, 3);
	p = port_of(f, "ib-b", "mlx5_0", 1);
	assert_int_equal(p->lid, 3);
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->state, 4);
	assert_gid(&p->gids[0], "fe80::2:c903:0:b01");
	c = emu_fabric_find_host(f, "ib-c");
	assert_true(c->acm);
	assert_false(emu_fabric_find_host(f, "ib-a")->acm);
	assert_int_equal(c->netdevs[0].hwaddr_len, 20);
	assert_int_equal(c->netdevs[0].mtu, 4092);
	assert_true(emu_host_has_family(c, AF_INET6));
	assert_int_equal(emu_fabric_lookup_name(f, "ipoib-c", AF_UNSPEC, n, 4), 2);
	emu_fabric_free(f);
}

static void test_mixed4_and_nodev(void **state)
{
	struct emu_fabric *f = load_fixture("mixed4.fabric");
	const struct emu_host *gw = emu_fabric_find_host(f, "gw"), *ra;
	struct in_addr in;

	(void)state;
	assert_int_equal(f->seed, 7);
	assert_int_equal(f->nhosts, 4);
	assert_int_equal(gw->ndevices, 2);
	assert_int_equal(gw->devices[0].ports[0].link_layer, 2);
	assert_int_equal(gw->devices[1].ports[0].link_layer, 1);
	assert_int_equal(port_of(f, "gw", "mlx5_0", 1)->lid, 2);
	assert_int_equal(port_of(f, "ib-a", "mlx5_0", 1)->lid, 3);
	assert_int_equal(port_of(f, "ib-b", "mlx5_0", 1)->lid, 4);
	assert_int_equal(f->links[0].faults.delay_ns, 2000);
	ra = emu_fabric_find_host(f, "roce-a");
	inet_pton(AF_INET, "203.0.113.2", &in);
	assert_int_equal(emu_host_route(ra, AF_INET, &in), 0);
	assert_int_equal(port_of(f, "roce-a", "rxe0", 1)->ngids, 3);
	emu_fabric_free(f);

	f = load_fixture("nodev.fabric");
	assert_int_equal(f->nhosts, 1);
	assert_string_equal(f->hosts[0].name, "nodev");
	assert_int_equal(f->hosts[0].ndevices, 0);
	assert_int_equal(f->hosts[0].netdevs[0].device, -1);
	assert_true(emu_host_has_family(&f->hosts[0], AF_INET));
	emu_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_fixtures_load),
		cmocka_unit_test(test_builtin_is_default_fabric),
		cmocka_unit_test(test_show_stable),
		cmocka_unit_test(test_rxe_ref2),
		cmocka_unit_test(test_ib_fixture),
		cmocka_unit_test(test_mixed4_and_nodev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
