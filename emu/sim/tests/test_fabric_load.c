/* Unit tests: the fabric text format, derived values (GIDs, MTUs, GUIDs, LIDs, states),
 * includes, hosts-data, lookups and the parsing helpers. */
#include "config.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "emu/sim/fabric_priv.h"
#include "emu/sim/tests/fabric_test.h"

static void test_builtin_values(void **state)
{
	struct emu_fabric *f = emu_fabric_builtin();
	const struct emu_host *h;
	const struct emu_device *d;
	const struct emu_port *p;
	uint8_t mac_gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x01, 0x01 };
	uint8_t v4_gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1 };

	(void)state;
	assert_non_null(f);
	assert_string_equal(f->source, "(built-in default)");
	assert_int_equal(f->seed, 1);
	assert_false(f->system_resolver);
	assert_false(f->sm.present);
	assert_int_equal(f->nhosts, 1);
	h = &f->hosts[0];
	assert_string_equal(h->name, "rxe-ref");
	assert_ptr_equal(h->fabric, f);
	assert_int_equal(h->ndevices, 2);
	d = &h->devices[0];
	assert_string_equal(d->name, "rxe0");
	assert_ptr_equal(d->host, h);
	assert_int_equal(d->vendor_id, 0xffffff);
	assert_int_equal(d->transport, 0);
	assert_int_equal(d->node_type, 1);
	assert_int_equal(d->node_guid, 0x000000fffe000101ull);
	assert_int_equal(d->caps.max_qp, 1048560);
	assert_int_equal(d->caps.max_qp_wr, 1048576);
	assert_int_equal(d->caps.max_sge, 32);
	assert_int_equal(d->caps.max_cqe, 32767);
	assert_int_equal(d->caps.max_mr, 524287);
	assert_int_equal(d->caps.max_srq_sge, 27);
	assert_int_equal(d->caps.max_qp_rd_atom, 128);
	assert_int_equal(d->caps.atomic_cap, 1);
	assert_int_equal(d->caps.max_msg_sz, 0x800000);
	assert_int_equal(d->caps.device_cap_flags, 0x01223c76);
	assert_int_equal(d->caps.max_pkeys, 64);
	assert_int_equal(d->caps.local_ca_ack_delay, 15);
	assert_int_equal(d->nports, 1);
	p = &d->ports[0];
	assert_ptr_equal(p->dev, d);
	assert_int_equal(p->num, 1);
	assert_int_equal(p->link_layer, 2);
	assert_int_equal(p->state, 4);
	assert_int_equal(p->phys_state, 5);
	assert_int_equal(p->active_mtu, 3);
	assert_int_equal(p->max_mtu, 5);
	assert_int_equal(p->gid_tbl_len, 1024);
	assert_int_equal(p->pkey_tbl_len, 1);
	assert_int_equal(p->npkeys, 1);
	assert_int_equal(p->pkeys[0], 0xffff);
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->link, -1);
	assert_int_equal(p->ngids, 2);
	assert_memory_equal(p->gids[0].raw, mac_gid, 16);
	assert_int_equal(p->gids[0].type, EMU_GID_ROCE_V2);
	assert_int_equal(p->gids[0].netdev, 0);
	assert_memory_equal(p->gids[1].raw, v4_gid, 16);
	assert_int_equal(p->gids[1].type, EMU_GID_ROCE_V2);
	assert_int_equal(h->nnetdevs, 2);
	assert_string_equal(h->netdevs[0].name, "d0");
	assert_int_equal(h->netdevs[0].mtu, 1500);
	assert_int_equal(h->netdevs[0].hwaddr_len, 6);
	assert_int_equal(h->netdevs[0].device, 0);
	assert_int_equal(h->netdevs[0].port, 1);
	assert_true(h->netdevs[0].up);
	assert_string_equal(h->netdevs[1].name, "s0");
	assert_int_equal(h->netdevs[1].device, 1);
	assert_gid(&h->devices[1].ports[0].gids[1], "::ffff:192.0.2.17");
	assert_int_equal(h->nroutes, 0);
	emu_fabric_free(f);
}

static void test_routes_and_lookups(void **state)
{
	struct emu_fabric *f = emu_fabric_builtin();
	const struct emu_host *h = &f->hosts[0];
	struct in_addr a;
	struct in6_addr a6;
	struct emu_name names[4];

	(void)state;
	inet_pton(AF_INET, "192.0.2.30", &a);
	assert_int_equal(emu_host_route(h, AF_INET, &a), 1);
	inet_pton(AF_INET, "192.0.2.1", &a);
	assert_int_equal(emu_host_route(h, AF_INET, &a), 0);
	inet_pton(AF_INET, "203.0.113.9", &a);
	assert_int_equal(emu_host_route(h, AF_INET, &a), -1);
	inet_pton(AF_INET6, "2001:db8::1", &a6);
	assert_int_equal(emu_host_route(h, AF_INET6, &a6), -1);
	assert_int_equal(emu_host_route(h, AF_UNIX, &a), -1);
	assert_true(emu_host_has_family(h, AF_INET));
	/* d0 carries its fe80:: link-local address (as in the reference VM), which glibc's
	 * AI_ADDRCONFIG counts as IPv6 */
	assert_true(emu_host_has_family(h, AF_INET6));
	assert_int_equal(h->netdevs[0].naddrs, 2);
	inet_pton(AF_INET6, "fe80::ff:fe00:101", &a6);
	assert_int_equal(h->netdevs[0].addrs[1].family, AF_INET6);
	assert_memory_equal(&h->netdevs[0].addrs[1].addr.v6, &a6, 16);
	assert_int_equal(h->netdevs[0].addrs[1].prefixlen, 64);
	assert_ptr_equal(emu_fabric_find_host(f, "rxe-ref"), h);
	assert_null(emu_fabric_find_host(f, "nope"));
	assert_int_equal(emu_fabric_lookup_name(f, "RXE-REF", AF_UNSPEC, names, 4), 2);
	inet_pton(AF_INET, "192.0.2.17", &a);
	assert_memory_equal(&names[1].addr.v4, &a, 4);
	assert_int_equal(emu_fabric_lookup_name(f, "rxe-ref", AF_INET6, names, 4), 0);
	assert_int_equal(emu_fabric_lookup_name(f, "rxe-ref", AF_INET, names, 1), 2);
	assert_int_equal(emu_fabric_lookup_name(f, "rxe-ref", AF_INET, NULL, 0), 2);
	assert_int_equal(emu_fabric_lookup_name(f, "unknown", AF_UNSPEC, names, 4), 0);
	emu_fabric_free(f);
}

static const char full_text[] =
	"# everything the format has, on two hosts\n"
	"seed 42\n"
	"resolver system\n"
	"faults delay=1.5ms jitter=10us loss=1% duplicate=0.5 reorder=0\n"
	"host alpha alias=a acm=on\n"
	"  alias alpha.example\n"
	"  device rxe0 link=eth guid=0x1122334455667788 vendor=0x1234 part=7 hw=3 fw=1.2.3 \"desc=alpha rxe\"\n"
	"    cap max_qp=1024 max_mr_size=4096 local_ca_ack_delay=3\n"
	"  netdev eth0 mac=02:aa:bb:cc:dd:ee mtu=9000 rdma=rxe0\n"
	"    addr 198.51.100.1/24 2001:db8:1::1/64\n"
	"    addr 198.51.100.7/24\n"
	"  netdev eth1 mtu=1200 rdma=none\n"
	"    addr 203.0.113.1/25\n"
	"  route default via 198.51.100.254\n"
	"  route 192.0.2.0/24 dev eth1\n"
	"  route default6 via 2001:db8:1::fe dev eth0\n"
	"host beta\n"
	"  acm off\n"
	"  device rxe0 link=eth\n"
	"    port 1 gid=2001:db8:ffff::1 pkeys=0xffff,0x8001 pkey-table=4\n"
	"  netdev eth0 rdma=rxe0/1 down\n"
	"    addr 198.51.100.2/24\n"
	"  netdev eth1 mtu=600 rdma=rxe1/1\n"
	"  device rxe1\n"
	"link alpha/rxe0/1 beta/rxe0/1 loss=0.25 down drop-match=b:42:0x04:2 "
	"drop-match=a:0x2a:0x10/0xf0:1\n"
	"name www.example 198.51.100.1 2001:db8:1::1\n"
	"name WWW.example 198.51.100.2\n";

static void test_full_format(void **state)
{
	struct emu_fabric *f = load_ok(full_text);
	const struct emu_host *a, *b;
	const struct emu_port *p;
	struct emu_name names[8];
	struct in_addr in;

	(void)state;
	assert_int_equal(f->seed, 42);
	assert_true(f->system_resolver);
	assert_int_equal(f->default_faults.delay_ns, 1500000);
	assert_int_equal(f->default_faults.jitter_ns, 10000);
	assert_true(f->default_faults.loss == 0.01);
	assert_true(f->default_faults.duplicate == 0.5);
	a = emu_fabric_find_host(f, "a");
	assert_non_null(a);
	assert_ptr_equal(emu_fabric_find_host(f, "alpha.example"), a);
	assert_true(a->acm);
	assert_int_equal(a->naliases, 2);
	assert_int_equal(a->devices[0].node_guid, 0x1122334455667788ull);
	assert_int_equal(a->devices[0].sys_image_guid, 0x1122334455667788ull);
	assert_int_equal(a->devices[0].vendor_id, 0x1234);
	assert_int_equal(a->devices[0].vendor_part_id, 7);
	assert_int_equal(a->devices[0].hw_ver, 3);
	assert_string_equal(a->devices[0].fw_ver, "1.2.3");
	assert_string_equal(a->devices[0].node_desc, "alpha rxe");
	assert_int_equal(a->devices[0].caps.max_qp, 1024);
	assert_int_equal(a->devices[0].caps.max_mr_size, 4096);
	assert_int_equal(a->devices[0].caps.local_ca_ack_delay, 3);
	assert_int_equal(a->devices[0].caps.max_sge, 32);
	p = port_of(f, "alpha", "rxe0", 1);
	assert_int_equal(p->active_mtu, 5); /* 9000 - 80 >= 4096 */
	assert_int_equal(p->ngids, 4);
	assert_gid(&p->gids[0], "fe80::aa:bbff:fecc:ddee");
	assert_gid(&p->gids[1], "::ffff:198.51.100.1");
	assert_gid(&p->gids[2], "::ffff:198.51.100.7");
	assert_gid(&p->gids[3], "2001:db8:1::1"); /* IPv4 first, then IPv6, as the kernel */
	assert_int_equal(p->link, 0);
	assert_int_equal(a->netdevs[1].device, -1);
	assert_int_equal(a->netdevs[1].mtu, 1200);
	assert_memory_equal(a->netdevs[1].hwaddr, ((uint8_t[]){ 2, 0, 0, 0, 1, 2 }), 6);
	assert_int_equal(a->nroutes, 3);
	assert_int_equal(a->routes[0].netdev, 0);
	assert_true(a->routes[0].has_gateway);
	assert_int_equal(a->routes[0].prefixlen, 0);
	assert_int_equal(a->routes[1].netdev, 1);
	assert_false(a->routes[1].has_gateway);
	assert_int_equal(a->routes[2].family, AF_INET6);
	inet_pton(AF_INET, "8.8.8.8", &in);
	assert_int_equal(emu_host_route(a, AF_INET, &in), 0);
	inet_pton(AF_INET, "192.0.2.9", &in);
	assert_int_equal(emu_host_route(a, AF_INET, &in), 1);
	inet_pton(AF_INET, "203.0.113.100", &in);
	assert_int_equal(emu_host_route(a, AF_INET, &in), 1);
	inet_pton(AF_INET, "203.0.113.200", &in);
	assert_int_equal(emu_host_route(a, AF_INET, &in), 0); /* outside the /25: default */

	b = emu_fabric_find_host(f, "beta");
	assert_false(b->acm);
	p = port_of(f, "beta", "rxe0", 1);
	assert_int_equal(p->state, 1); /* its netdev is down */
	assert_int_equal(p->phys_state, 3);
	assert_int_equal(p->npkeys, 2);
	assert_int_equal(p->pkeys[1], 0x8001);
	assert_int_equal(p->pkey_tbl_len, 4);
	assert_int_equal(p->ngids, 3);
	assert_gid(&p->gids[2], "2001:db8:ffff::1");
	assert_int_equal(p->gids[2].netdev, -1);
	assert_false(emu_host_has_family(b, AF_INET)); /* eth0 down, eth1 no address */
	p = port_of(f, "beta", "rxe1", 1);
	assert_int_equal(p->active_mtu, 2); /* 600 - 80 = 520 -> 512 */
	assert_int_equal(b->devices[1].node_guid, 0x000000fffe000202ull); /* EUI-64 of eth1's MAC */

	assert_int_equal(f->nlinks, 1);
	assert_true(f->links[0].faults.loss == 0.25);
	assert_true(f->links[0].faults.down);
	assert_int_equal(f->links[0].faults.nmatch, 2);
	assert_int_equal(f->links[0].faults.match[0].side, 1);
	assert_int_equal(f->links[0].faults.match[0].off, 42);
	assert_int_equal(f->links[0].faults.match[0].val, 4);
	assert_int_equal(f->links[0].faults.match[0].mask, 0xff);
	assert_int_equal(f->links[0].faults.match[0].nth, 2);
	assert_int_equal(f->links[0].faults.match[1].side, 0);
	assert_int_equal(f->links[0].faults.match[1].off, 42);
	assert_int_equal(f->links[0].faults.match[1].val, 0x10);
	assert_int_equal(f->links[0].faults.match[1].mask, 0xf0);
	assert_int_equal(f->links[0].faults.match[1].nth, 1);
	assert_int_equal(f->links[0].faults.delay_ns, 1500000); /* inherited default */
	assert_int_equal(f->links[0].width, 1);

	assert_int_equal(emu_fabric_lookup_name(f, "www.EXAMPLE", AF_UNSPEC, names, 8), 3);
	assert_int_equal(names[1].family, AF_INET6);
	assert_int_equal(emu_fabric_lookup_name(f, "www.example", AF_INET, names, 8), 2);
	/* host names and aliases resolve to their addresses after the name table */
	assert_int_equal(emu_fabric_lookup_name(f, "a", AF_UNSPEC, names, 8), 4);
	emu_fabric_free(f);
}

static void test_ib_text(void **state)
{
	struct emu_fabric *f = load_ok("switch sw ports=4 guid=0x0002c90200000001\n"
				       "host x\n"
				       "  device mlx4_0 link=ib ports=2\n"
				       "    port 2 lmc=2\n"
				       "  netdev ib0 rdma=mlx4_0/1\n"
				       "    addr 192.0.2.129/26\n"
				       "host y\n"
				       "  device mlx4_0 link=ib guid=0002:c903:0000:0100\n"
				       "    port 1 lid=40 mtu=2048\n"
				       "link x/mlx4_0/1 sw/1\n"
				       "link x/mlx4_0/2 sw/2 width=12x speed=EDR\n"
				       "link y/mlx4_0/1 sw/3\n");
	const struct emu_port *p;
	const struct emu_netdev *nd;

	(void)state;
	assert_true(f->sm.present);
	assert_int_equal(f->sm.subnet_prefix, 0xfe80000000000000ull);
	assert_int_equal(f->switches[0].lid, 1);
	assert_int_equal(f->sm.sm_lid, 1);
	assert_int_equal(f->sm.packet_lifetime, 18);
	p = port_of(f, "x", "mlx4_0", 1);
	assert_int_equal(p->lid, 2);
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->state, 4);
	assert_int_equal(p->active_mtu, 5);
	assert_int_equal(p->gid_tbl_len, 128);
	assert_int_equal(p->port_guid, 0x0200000000010101ull);
	assert_gid(&p->gids[0], "fe80::200:0:1:101");
	assert_int_equal(p->gids[0].type, EMU_GID_IB);
	assert_int_equal(p->gids[0].netdev, 0);
	p = port_of(f, "x", "mlx4_0", 2);
	assert_int_equal(p->lid, 4); /* LMC 2: a multiple of 4 */
	assert_int_equal(p->active_width, 8);
	assert_int_equal(p->active_speed, 32);
	assert_int_equal(p->gids[0].netdev, -1);
	p = port_of(f, "y", "mlx4_0", 1);
	assert_int_equal(p->lid, 40);
	assert_int_equal(p->max_mtu, 4);
	assert_int_equal(p->active_mtu, 4);
	assert_int_equal(p->active_width, 2);
	assert_int_equal(p->active_speed, 4);
	assert_gid(&p->gids[0], "fe80::2:c903:0:101");
	nd = &emu_fabric_find_host(f, "x")->netdevs[0];
	assert_int_equal(nd->hwaddr_len, 20);
	assert_memory_equal(nd->hwaddr, ((uint8_t[]){ 0, 0, 0, 0x48, 0xfe, 0x80 }), 6);
	assert_memory_equal(nd->hwaddr + 4, port_of(f, "x", "mlx4_0", 1)->gids[0].raw, 16);
	assert_int_equal(nd->mtu, 4092);
	assert_int_equal(f->switches[0].port_link[1], 0);
	assert_int_equal(f->switches[0].port_link[4], -1);
	emu_fabric_free(f);

	/* without an SM, linked IB ports stay in INIT without LIDs; unlinked ones poll */
	f = load_ok("sm none\nswitch sw ports=2\nhost x\n  device d link=ib ports=2\n"
		    "link x/d/1 sw/1\n");
	p = port_of(f, "x", "d", 1);
	assert_int_equal(p->state, 2);
	assert_int_equal(p->phys_state, 5);
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->sm_lid, 0);
	p = port_of(f, "x", "d", 2);
	assert_int_equal(p->state, 1);
	assert_int_equal(p->phys_state, 2);
	assert_false(f->sm.present);
	emu_fabric_free(f);

	/* explicit SM settings */
	f = load_ok("sm lid=7 subnet-prefix=fec0:0:0:1:: sl=3 mtu=2048 rate=40 packet-lifetime=20 "
		    "response-delay=2ms\nhost x\n  device d link=ib\n    port 1 lid=7 state=active\n");
	assert_int_equal(f->sm.sm_lid, 7);
	assert_int_equal(f->sm.sl, 3);
	assert_int_equal(f->sm.mtu, 4);
	assert_int_equal(f->sm.rate, 7);
	assert_int_equal(f->sm.packet_lifetime, 20);
	assert_int_equal(f->sm.response_delay_ns, 2000000);
	assert_int_equal(f->sm.subnet_prefix, 0xfec0000000000001ull);
	p = port_of(f, "x", "d", 1);
	assert_int_equal(p->sm_sl, 3);
	assert_gid(&p->gids[0], "fec0:0:0:1:200:0:1:101");
	emu_fabric_free(f);
}

static void test_hosts_data(void **state)
{
	struct emu_fabric *f;
	const struct emu_netdev *nd;
	struct emu_name names[4];
	struct in6_addr a6;

	(void)state;
	write_file("hd/map.data", "# address map\n"
				  "192.0.2.129 fe80::200:0:1:101\n"
				  "192.0.2.140\tfe80::200:0:1:101 0x48\n"
				  "2001:db8::5 fe80::ff:fe00:101\n"
				  "roce-name fe80::ff:fe00:101\n");
	f = load_ok("host x\n  device d link=ib\n  netdev ib0 rdma=d\n    addr 192.0.2.129/26\n"
		    "host r\n  device rxe0\n  netdev e0 rdma=rxe0 mac=02:00:00:00:01:01\n"
		    "    addr 198.51.100.1/24\n"
		    "hosts-data hd/map.data\n");
	/* [0] from the file, [1] the link-local address (IPoIB: from the port GUID), [2] added by
	 * hosts-data */
	nd = &emu_fabric_find_host(f, "x")->netdevs[0];
	assert_int_equal(nd->naddrs, 3);
	inet_pton(AF_INET6, "fe80::200:0:1:101", &a6);
	assert_memory_equal(&nd->addrs[1].addr.v6, &a6, 16);
	assert_int_equal(nd->addrs[2].prefixlen, 26);
	nd = &emu_fabric_find_host(f, "r")->netdevs[0];
	assert_int_equal(nd->naddrs, 3);
	assert_int_equal(nd->addrs[2].family, AF_INET6);
	assert_int_equal(nd->addrs[2].prefixlen, 128); /* no IPv6 subnet there */
	/* the new address gets its GID, as the kernel would add it */
	assert_int_equal(port_of(f, "r", "rxe0", 1)->ngids, 3);
	assert_gid(&port_of(f, "r", "rxe0", 1)->gids[2], "2001:db8::5");
	/* a name names every address of the netdev, the one hosts-data added included */
	assert_int_equal(emu_fabric_lookup_name(f, "roce-name", AF_UNSPEC, names, 4), 2);
	assert_int_equal(names[0].family, AF_INET);
	assert_int_equal(names[1].family, AF_INET6);
	emu_fabric_free(f);
}

static void test_includes(void **state)
{
	struct emu_fabric *f;
	struct emu_error err;

	(void)state;
	write_file("inc/top.fabric", "seed 9\ninclude sub/hosts.fabric\nlink a/d/1 b/d/1\n");
	write_file("inc/sub/hosts.fabric", "host a\n  device d\n  include more.fabric\n"
					    "  netdev e rdma=d\n");
	write_file("inc/sub/more.fabric", "host b\n  device d\n");
	f = emu_fabric_load(write_file("inc/x", "include top.fabric\n"), &err);
	assert_non_null(f);
	assert_int_equal(f->seed, 9);
	assert_int_equal(f->nhosts, 2);
	/* the includer's context comes back after an include */
	assert_int_equal(emu_fabric_find_host(f, "a")->nnetdevs, 1);
	assert_int_equal(emu_fabric_find_host(f, "b")->nnetdevs, 0);
	emu_fabric_free(f);

	/* cycles: ELOOP, at the include line that closes the cycle */
	write_file("cyc/a.fabric", "seed 1\ninclude b.fabric\n");
	write_file("cyc/b.fabric", "\n\ninclude a.fabric\n");
	errno = 0;
	f = emu_fabric_load(write_file("cyc/a.fabric", "seed 1\ninclude b.fabric\n"), &err);
	assert_null(f);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(err.line, 3);
	assert_non_null(strstr(err.file, "cyc/b.fabric"));
	assert_non_null(strstr(err.msg, "include cycle"));
	/* a file including itself */
	f = emu_fabric_load(write_file("self.fabric", "include self.fabric\n"), &err);
	assert_null(f);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(err.line, 1);

	/* missing files: ENOENT, at the line naming them, or line 0 for the top file */
	load_bad("seed 1\ninclude does-not-exist.fabric\n", ENOENT, 2,
		 "cannot open '");
	load_bad("topology nope.topo\n", ENOENT, 1, "nope.topo': No such file or directory");
	load_bad("hosts-data nope.data\n", ENOENT, 1, "nope.data");
	errno = 0;
	f = emu_fabric_load("/nonexistent/x.fabric", &err);
	assert_null(f);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(err.line, 0);
	assert_string_equal(err.file, "/nonexistent/x.fabric");
	assert_null(emu_fabric_load(NULL, &err));
	assert_int_equal(errno, EINVAL);
	assert_null(emu_fabric_load_text(NULL, "x", ".", &err));
	assert_int_equal(errno, EINVAL);
	/* errors inside an included file name that file */
	write_file("inc2/bad.fabric", "host a\nhost a\n");
	load_bad("include inc2/bad.fabric\n", EINVAL, 2, "duplicate host 'a'");
	f = emu_fabric_load_text("include inc2/bad.fabric\n", "t.fabric", tmpdir_make(), &err);
	assert_null(f);
	assert_non_null(strstr(err.file, "inc2/bad.fabric"));
}

static void test_helpers(void **state)
{
	uint8_t raw[16];
	uint64_t ns;
	double p;

	(void)state;
	assert_int_equal(emu_parse_gid("fe80::1", raw), 0);
	assert_int_equal(raw[0], 0xfe);
	assert_int_equal(raw[15], 1);
	assert_int_equal(emu_parse_gid("192.0.2.1", raw), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(emu_parse_gid(NULL, raw), -1);
	assert_string_equal(emu_link_layer_str(1), "InfiniBand");
	assert_string_equal(emu_link_layer_str(2), "Ethernet");
	assert_string_equal(emu_link_layer_str(0), "Unspecified");
	assert_string_equal(emu_port_state_str(4), "PORT_ACTIVE");
	assert_string_equal(emu_port_state_str(1), "PORT_DOWN");
	assert_string_equal(emu_port_state_str(9), "invalid state");
	assert_int_equal(emu_mtu_bytes(1), 256);
	assert_int_equal(emu_mtu_bytes(3), 1024);
	assert_int_equal(emu_mtu_bytes(5), 4096);
	assert_int_equal(emu_mtu_bytes(0), 0);
	assert_int_equal(emu_mtu_bytes(6), 0);
	assert_int_equal(emu_parse_duration("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(emu_parse_duration("250ns", &ns), 0);
	assert_int_equal(ns, 250);
	assert_int_equal(emu_parse_duration("2.5us", &ns), 0);
	assert_int_equal(ns, 2500);
	assert_int_equal(emu_parse_duration("3s", &ns), 0);
	assert_int_equal(ns, 3000000000ull);
	assert_int_equal(emu_parse_duration("5", &ns), -1);
	assert_int_equal(emu_parse_duration("-1ms", &ns), -1);
	assert_int_equal(emu_parse_duration("1h", &ns), -1);
	assert_int_equal(emu_parse_probability("0.5", &p), 0);
	assert_true(p == 0.5);
	assert_int_equal(emu_parse_probability("12.5%", &p), 0);
	assert_true(p == 0.125);
	assert_int_equal(emu_parse_probability("1.5", &p), -1);
	assert_int_equal(emu_parse_probability("x", &p), -1);
	{
		uint64_t g;
		uint8_t hw[20], len;
		char buf[20];

		assert_int_equal(emu_parse_guid("0x0002c90300000a01", &g), 0);
		assert_int_equal(g, 0x0002c90300000a01ull);
		assert_int_equal(emu_parse_guid("0002:c903:0000:0a01", &g), 0);
		assert_int_equal(g, 0x0002c90300000a01ull);
		assert_int_equal(emu_parse_guid("0002:c903:0000", &g), -1);
		assert_int_equal(emu_parse_guid("zz", &g), -1);
		emu_guid_str(0x0002c90300000a01ull, buf);
		assert_string_equal(buf, "0002:c903:0000:0a01");
		assert_int_equal(emu_parse_hwaddr("02:00:00:00:01:01", hw, sizeof(hw), &len), 0);
		assert_int_equal(len, 6);
		assert_int_equal(emu_parse_hwaddr("02:00:00", hw, sizeof(hw), &len), -1);
		assert_int_equal(emu_eui64_from_mac((const uint8_t[]){ 0x52, 0x54, 0, 0x12, 0x34, 0x56 }),
				 0x505400fffe123456ull);
		assert_int_equal(emu_mtu_from_bytes(1420), 3);
		assert_int_equal(emu_mtu_from_bytes(255), 0);
		assert_int_equal(emu_mtu_from_bytes(100000), 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_values),
		cmocka_unit_test(test_routes_and_lookups),
		cmocka_unit_test(test_full_format),
		cmocka_unit_test(test_ib_text),
		cmocka_unit_test(test_hosts_data),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_helpers),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	tmpdir_cleanup();
	return r;
}
