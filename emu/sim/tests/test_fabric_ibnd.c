/* Unit tests: the ibnetdiscover topology reader (real output, ibsim's files and its include). */
#include "config.h"

#include "emu/sim/tests/fabric_test.h"

/* Two leaf switches joined by two cables; node1 has two HCAs, node2 a dual-port HCA cabled to
 * both switches, and one CA kept its vendor node description. The second switch's record
 * comes from an ibsim `include`. Both directions of every cable are listed, as ibnetdiscover
 * prints them. */
static const char topo_main[] =
	"#\n"
	"# Topology file: generated on Tue Jan  9 12:00:00 2024\n"
	"#\n"
	"# Initiated from node 0002c90300001000 port 0002c90300001001\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0xc738\n"
	"sysimgguid=0x2c90200000100\n"
	"switchguid=0x2c90200000100(2c90200000100)\n"
	"Switch\t36 \"S-0002c90200000100\"\t\t# \"MF0;leaf1:SX6036/U1\" enhanced port 0 lid 1 lmc 0\n"
	"[1]\t\"H-0002c90300001000\"[1](2c90300001001) \t\t# \"node1 mlx5_0\" lid 10 4xFDR\n"
	"[2]\t\"H-0002c90300002000\"[1](2c90300002001) \t\t# \"node1 mlx5_1\" lid 11 4xFDR\n"
	"[3]\t\"H-0002c90300003000\"[1](2c90300003001) \t\t# \"node2 mlx5_0\" lid 12 4xFDR\n"
	"[35]\t\"S-0002c90200000200\"[35]\t\t# \"MF0;leaf2:SX6036/U1\" lid 2 4xFDR\n"
	"[36]\t\"S-0002c90200000200\"[36]\t\t# \"MF0;leaf2:SX6036/U1\" lid 2 4xFDR\n"
	"\n"
	"include leaf2.topo\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1013\n"
	"sysimgguid=0x2c90300001000\n"
	"caguid=0x2c90300001000\n"
	"Ca\t1 \"H-0002c90300001000\"\t\t# \"node1 mlx5_0\"\n"
	"[1](2c90300001001) \t\"S-0002c90200000100\"[1]\t\t# lid 10 lmc 0 \"MF0;leaf1:SX6036/U1\" lid 1 4xFDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1013\n"
	"sysimgguid=0x2c90300002000\n"
	"caguid=0x2c90300002000\n"
	"Ca\t1 \"H-0002c90300002000\"\t\t# \"node1 mlx5_1\"\n"
	"[1](2c90300002001) \t\"S-0002c90200000100\"[2]\t\t# lid 11 lmc 0 \"MF0;leaf1:SX6036/U1\" lid 1 4xFDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1013\n"
	"sysimgguid=0x2c90300003000\n"
	"caguid=0x2c90300003000\n"
	"Ca\t2 \"H-0002c90300003000\"\t\t# \"node2 mlx5_0\"\n"
	"[1](2c90300003001) \t\"S-0002c90200000100\"[3]\t\t# lid 12 lmc 0 \"MF0;leaf1:SX6036/U1\" lid 1 4xFDR\n"
	"[2](2c90300003002) \t\"S-0002c90200000200\"[3]\t\t# lid 13 lmc 0 \"MF0;leaf2:SX6036/U1\" lid 2 4xQDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x673c\n"
	"sysimgguid=0x2c90300004000\n"
	"caguid=0x2c90300004000\n"
	"Ca\t2 \"H-0002c90300004000\"\t\t# \"MT25408 ConnectX Mellanox Technologies\"\n"
	"[1](2c90300004001) \t\"S-0002c90200000200\"[4]\t\t# lid 20 lmc 2 \"MF0;leaf2:SX6036/U1\" lid 2 4xQDR\n";

static const char topo_leaf2[] =
	"vendid=0x2c9\n"
	"devid=0xc738\n"
	"sysimgguid=0x2c90200000200\n"
	"switchguid=0x2c90200000200(2c90200000200)\n"
	"Switch\t36 \"S-0002c90200000200\"\t\t# \"MF0;leaf2:SX6036/U1\" base port 0 lid 2 lmc 0\n"
	"[3]\t\"H-0002c90300003000\"[2](2c90300003002) \t\t# \"node2 mlx5_0\" lid 13 4xQDR\n"
	"[4]\t\"H-0002c90300004000\"[1](2c90300004001) \t\t# \"MT25408 ConnectX Mellanox Technologies\" lid 20 4xQDR\n"
	"[35]\t\"S-0002c90200000100\"[35]\t\t# \"MF0;leaf1:SX6036/U1\" lid 1 4xFDR\n"
	"[36]\t\"S-0002c90200000100\"[36]\t\t# \"MF0;leaf1:SX6036/U1\" lid 1 4xFDR\n";

static void test_multi_switch(void **state)
{
	struct emu_fabric *f;
	const struct emu_host *h;
	const struct emu_port *p;

	(void)state;
	write_file("topo/main.topo", topo_main);
	write_file("topo/leaf2.topo", topo_leaf2);
	f = load_ok("topology topo/main.topo\n"
		    "host node1\n"
		    "  netdev ib0 rdma=mlx5_0\n"
		    "    addr 192.0.2.129/26\n"
		    "link S-0002c90200000100/35 S-0002c90200000200/35 delay=100ns\n");
	assert_int_equal(f->nswitches, 2);
	assert_string_equal(f->switches[0].name, "S-0002c90200000100");
	assert_string_equal(f->switches[0].node_desc, "MF0;leaf1:SX6036/U1");
	assert_int_equal(f->switches[0].node_guid, 0x0002c90200000100ull);
	assert_int_equal(f->switches[0].lid, 1);
	assert_int_equal(f->switches[1].lid, 2);
	assert_int_equal(f->switches[1].nports, 36);
	/* 3 + 2 CA cables and 2 inter-switch cables, each once */
	assert_int_equal(f->nlinks, 7);
	assert_int_equal(f->nhosts, 3);
	h = emu_fabric_find_host(f, "node1");
	assert_non_null(h);
	assert_int_equal(h->ndevices, 2);
	assert_string_equal(h->devices[0].name, "mlx5_0");
	assert_string_equal(h->devices[1].name, "mlx5_1");
	assert_int_equal(h->devices[1].node_guid, 0x0002c90300002000ull);
	assert_int_equal(h->devices[1].vendor_id, 0x2c9);
	assert_int_equal(h->devices[1].vendor_part_id, 0x1013);
	assert_string_equal(h->devices[1].node_desc, "node1 mlx5_1");
	p = port_of(f, "node1", "mlx5_0", 1);
	assert_int_equal(p->link_layer, 1);
	assert_int_equal(p->state, 4);
	assert_int_equal(p->lid, 10);
	assert_int_equal(p->sm_lid, 1); /* the SM defaults to the first switch */
	assert_int_equal(p->port_guid, 0x0002c90300001001ull);
	assert_int_equal(p->active_width, 2);
	assert_int_equal(p->active_speed, 16);
	assert_gid(&p->gids[0], "fe80::2:c903:0:1001");
	assert_int_equal(h->netdevs[0].hwaddr_len, 20);
	p = port_of(f, "node2", "mlx5_0", 2);
	assert_int_equal(p->lid, 13);
	assert_int_equal(p->active_speed, 4);
	assert_int_equal(p->port_guid, 0x0002c90300003002ull);
	assert_int_equal(f->links[p->link].b.kind + f->links[p->link].a.kind, 3);
	/* a free-form description: host = its first word, device = hcaN */
	p = port_of(f, "MT25408", "hca0", 1);
	assert_int_equal(p->lid, 20);
	assert_int_equal(p->lmc, 2);
	p = port_of(f, "MT25408", "hca0", 2);
	assert_int_equal(p->state, 1);
	assert_int_equal(p->phys_state, 2);
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->link, -1);
	/* the link line added its delay to the topology's cable */
	assert_int_equal(f->switches[0].port_link[35], f->switches[1].port_link[35]);
	assert_int_equal(f->links[f->switches[0].port_link[35]].faults.delay_ns, 100);
	assert_int_equal(f->links[f->switches[0].port_link[36]].faults.delay_ns, 0);
	assert_true(f->sm.present);
	assert_int_equal(f->sm.sm_lid, 1);
	emu_fabric_free(f);
}

/* ibsim's own net files: Hca, bare ids, w= widths, no GUIDs or LIDs (the SM assigns them). */
static void test_ibsim_format(void **state)
{
	struct emu_fabric *f;
	const struct emu_port *p;

	(void)state;
	write_file("ibsim/net", "# Net configuration file example\n"
				"Switch\t8 \"Switch1\"\n"
				"[1]\t\"Hca1\"[1]\n"
				"[2]\t\"Hca2\"[2]\tw=12\n"
				"[3]\t\"Switch2\"[3]\n"
				"\n"
				"Switch 8 \"Switch2\"\n"
				"[3]\t\"Switch1\"[3]\n"
				"do echo hello\n"
				"\n"
				"Hca\t2 \"Hca1\"\n"
				"[1]\t\"Switch1\"[1]\n"
				"\n"
				"Hca\t2 \"Hca2\"\n"
				"[2]\t\"Switch1\"[2]\n");
	f = load_ok("topology ibsim/net\n");
	assert_int_equal(f->nswitches, 2);
	assert_int_equal(f->nlinks, 3);
	assert_int_equal(f->switches[0].lid, 1);
	assert_int_equal(f->switches[1].lid, 2);
	p = port_of(f, "Hca1", "hca0", 1);
	assert_int_equal(p->lid, 3);
	assert_int_equal(p->state, 4);
	p = port_of(f, "Hca2", "hca0", 2);
	assert_int_equal(p->lid, 4);
	assert_int_equal(p->active_width, 8);
	assert_int_equal(p->active_speed, 1);
	assert_int_equal(port_of(f, "Hca2", "hca0", 1)->state, 1);
	/* GUIDs are the deterministic defaults */
	assert_int_equal(emu_fabric_find_host(f, "Hca1")->devices[0].node_guid, 0x0200000000010100ull);
	assert_int_equal(f->switches[0].node_guid, 0x0200000100000100ull);
	emu_fabric_free(f);
}

/* A device declared with a CA's GUID before the topology line gets that CA, whatever the
 * node description says; a host line after the topology reopens the host it created. */
static void test_binding(void **state)
{
	struct emu_fabric *f;

	(void)state;
	write_file("bind.topo", "caguid=0x2c90300001000\n"
				"Ca\t1 \"H-0002c90300001000\"\t# \"localhost HCA-1\"\n"
				"[1](2c90300001001) \t\"H-0002c90300002000\"[1]\t# lid 5 lmc 0 \"peer mlx4_0\" lid 6 4xDDR\n"
				"\n"
				"Ca\t1 \"H-0002c90300002000\"\t# \"peer mlx4_0\"\n");
	f = load_ok("host storage\n"
		    "  device mlx4_7 link=ib guid=0x0002c90300001000 fw=2.42.5000\n"
		    "sm lid=6\n"
		    "topology bind.topo\n"
		    "host peer alias=peer.example\n"
		    "  netdev ib0 rdma=mlx4_0\n");
	assert_int_equal(f->nhosts, 2);
	assert_string_equal(f->hosts[0].devices[0].fw_ver, "2.42.5000");
	assert_string_equal(f->hosts[0].devices[0].node_desc, "localhost HCA-1");
	assert_int_equal(port_of(f, "storage", "mlx4_7", 1)->lid, 5);
	assert_int_equal(port_of(f, "storage", "mlx4_7", 1)->active_speed, 2);
	assert_int_equal(port_of(f, "peer", "mlx4_0", 1)->lid, 6);
	/* the peer port's LID came from the other end of the cable only */
	assert_int_equal(port_of(f, "peer", "mlx4_0", 1)->sm_lid, 6);
	assert_int_equal(f->sm.sm_lid, 6);
	assert_ptr_equal(emu_fabric_find_host(f, "peer.example"), emu_fabric_find_host(f, "peer"));
	emu_fabric_free(f);
}

struct topo_bad {
	const char *topo;
	unsigned line;
	const char *msg;
};

static const struct topo_bad topo_cases[] = {
	{ "Switch 8 \"S-1\"\n[1]\t\"H-2\"[1]\n", 2, "port 1 of \"S-1\" is cabled to unknown node \"H-2\"" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[9]\nSwitch 8 \"S-2\"\n", 2,
	  "port 1 of \"S-1\" is cabled to port 9 of \"S-2\", which has ports 1..8" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-1\"[1]\n", 2, "port 1 of \"S-1\" is cabled to itself" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1]\nSwitch 8 \"S-2\"\n[1]\t\"S-1\"[2]\n", 2,
	  "port 1 of \"S-1\" is cabled to \"S-2\"[1], but that port is cabled to \"S-1\"[2]" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1]\n[1]\t\"S-2\"[2]\n", 3, "port 1 of \"S-1\" is listed twice (first at" },
	{ "Switch 8 \"S-1\"\n[9]\t\"S-2\"[1]\n", 2, "port 9 is out of range for \"S-1\" (1..8)" },
	{ "[1]\t\"S-2\"[1]\n", 1, "port line before any node header (Switch, Ca)" },
	{ "Switch 8 \"S-1\"\n[x]\t\"S-2\"[1]\n", 2, "expected a port line like [1] \"S-0002c90200000001\"[3]" },
	{ "Switch 8 \"S-1\"\n[1]\tS-2[1]\n", 2, "expected the peer as \"NODE-ID\"[PORT] after [1]" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1] junk\n", 2, "unexpected 'junk' after the peer port" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1] w=3\n", 2, "expected w=1, w=4, w=8 or w=12" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1] # \"x lid 3\n", 2, "unterminated quote in the comment" },
	{ "Switch 8 \"S-1\"\n[1]\t\"S-2\"[1] # \"x\" lid zz\n", 2, "expected a LID after 'lid', got 'zz'" },
	{ "Switch 0 \"S-1\"\n", 1, "expected a port count (1..254) after the node type, got '0 \"S-1\"'" },
	{ "Switch 8 S-1\n", 1, "expected a quoted node id like \"S-0002c90200000001\"" },
	{ "Switch 8 \"S-1\"\nSwitch 8 \"S-1\"\n", 2, "duplicate node \"S-1\" (first at" },
	{ "Switch 8 \"S-1\" # \"d\" base port 0 lid 1 lmc 9\n", 1, "expected an LMC (0..7) after 'lmc', got '9'" },
	{ "Switch 8 \"S-1\" extra\n", 1, "unexpected 'extra' after the node id" },
	{ "Rt 2 \"R-1\"\n", 1, "IB routers (Rt) are not supported" },
	{ "vendid=zz\n", 1, "expected a hex value after 'vendid=', got 'zz'" },
	{ "colour=0x1\n", 1, "unknown topology line 'colour=0x1'" },
	{ "switchguid=0x1(zz)\n", 1, "expected 'switchguid=0xGUID(PORTGUID)', got '0x1(zz)'" },
	{ "hello world\n", 1, "expected a node header (Switch N \"ID\", Ca N \"ID\"), a port line" },
	{ "# nothing\n", 0, "describes no nodes" },
	{ "Ca 1 \"H-1\" # \"a b\"\n[1]\t\"S-1\"[1] # lid 3 lmc 0 \"s\" lid 1 4xSDR\nSwitch 4 \"S-1\" # \"s\" base port 0 lid 2 lmc 0\n",
	  2, "switch \"S-1\" has LID 1 here but 2 elsewhere" },
};

static void test_topology_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(topo_cases) / sizeof(topo_cases[0]); i++) {
		struct emu_error err;
		struct emu_fabric *f;

		write_file("bad.topo", topo_cases[i].topo);
		errno = 0;
		f = emu_fabric_load_text("\ntopology bad.topo\n", "t.fabric", tmpdir_make(), &err);
		if (f)
			fail_msg("case %zu loaded", i);
		if (errno != EINVAL || !strstr(err.msg, topo_cases[i].msg) ||
		    err.line != (topo_cases[i].line ? topo_cases[i].line : 2))
			fail_msg("case %zu: got %s:%u '%s', expected line %u '%s'", i, err.file,
				 err.line, err.msg, topo_cases[i].line, topo_cases[i].msg);
		/* errors inside the topology name the topology file, else the fabric file */
		assert_non_null(strstr(err.file, topo_cases[i].line ? "bad.topo" : "t.fabric"));
	}
	/* the CA of a device declared link=eth */
	write_file("eth.topo", "caguid=0x5\nCa 1 \"H-5\" # \"h d\"\n");
	load_bad("host h\n  device d guid=0x5\n    port 1 link=eth\ntopology eth.topo\n", EINVAL, 2,
		 "CA \"H-5\" is InfiniBand but device 'd' port 1 is declared link=eth (t.fabric:3)");
	/* an ibsim include cycle */
	write_file("loop1.topo", "include loop2.topo\n");
	write_file("loop2.topo", "Switch 2 \"S-1\"\ninclude loop1.topo\n");
	load_bad("topology loop1.topo\n", ELOOP, 2, "include cycle");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_switch),
		cmocka_unit_test(test_ibsim_format),
		cmocka_unit_test(test_binding),
		cmocka_unit_test(test_topology_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	tmpdir_cleanup();
	return r;
}
