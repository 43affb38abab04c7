/* Unit tests: every error of the fabric text format and of the consistency checks names the
 * file and line and says what was expected; errno is EINVAL (ENOENT, ELOOP elsewhere); nothing
 * is returned half-loaded (the sanitizer/valgrind runs catch leaks on these paths). */
#include "config.h"

#include "emu/sim/tests/fabric_test.h"

struct bad_case {
	const char *text;
	unsigned line;
	const char *msg;
};

#define H "host h\n  device d\n  netdev e rdma=d\n"  /* 3 lines */

static const struct bad_case syntax_cases[] = {
	{ "bogus 1\n", 1, "unknown directive 'bogus' (expected host," },
	{ "host a \"b\n", 1, "unterminated quote" },
	{ "seed\n", 1, "expected one number after 'seed'" },
	{ "seed -3\n", 1, "expected one number after 'seed', got '-3'" },
	{ "seed 1 2\n", 1, "expected one number after 'seed'" },
	{ "resolver dns\n", 1, "expected 'files' or 'system' after 'resolver', got 'dns'" },
	{ "process-qpns 3000\n", 1,
	  "expected a power of two from 1024 to 8388608 after 'process-qpns', got '3000'" },
	{ "process-qpns 512\n", 1,
	  "expected a power of two from 1024 to 8388608 after 'process-qpns', got '512'" },
	{ "process-qpns 16777216\n", 1,
	  "expected a power of two from 1024 to 8388608 after 'process-qpns', got '16777216'" },
	{ "faults\n", 1, "expected attributes (delay=" },
	{ "faults delay=5\n", 1, "expected a duration with a unit (ns, us, ms, s) after 'delay=', got '5'" },
	{ "faults jitter=1h\n", 1, "after 'jitter=', got '1h'" },
	{ "faults loss=2\n", 1, "expected a probability (0..1 or 0%..100%) after 'loss=', got '2'" },
	{ "faults duplicate=x\n", 1, "after 'duplicate='" },
	{ "faults reorder\n", 1, "after 'reorder='" },
	{ "faults down=maybe\n", 1, "expected 'on' or 'off' after 'down', got 'maybe'" },
	{ "faults speed=1\n", 1, "unknown attribute 'speed' on a 'faults' line" },
	{ "faults drop-match=c:42:4:1\n", 1, "expected END:OFFSET:VALUE[/MASK]:NTH after 'drop-match=' (END a or b, NTH from 1), got 'c:42:4:1'" },
	{ "faults drop-match=a:42:4:0\n", 1, "got 'a:42:4:0'" },
	{ "faults drop-match=a:42:0x100:1\n", 1, "got 'a:42:0x100:1'" },
	{ "faults drop-match=a:70000:4:1\n", 1, "got 'a:70000:4:1'" },
	{ "faults drop-match\n", 1, "NTH from 1), got ''" },
	{ "faults drop-match=a:1:1:1 drop-match=a:1:1:1 drop-match=a:1:1:1 drop-match=a:1:1:1 drop-match=a:1:1:1\n", 1, "at most 4 drop-match= rules a link" },
	{ "sm lid=0\n", 1, "expected a unicast LID (1..49151) after 'lid=', got '0'" },
	{ "sm lid=49152\n", 1, "expected a unicast LID" },
	{ "sm foo\n", 1, "expected key=value or 'none' after 'sm', got 'foo'" },
	{ "sm subnet-prefix=x\n", 1, "expected a subnet prefix like fe80:: after 'subnet-prefix='" },
	{ "sm sl=16\n", 1, "expected a service level (0..15) after 'sl=', got '16'" },
	{ "sm mtu=1500\n", 1, "expected an MTU (256, 512, 1024, 2048, 4096) after 'mtu=', got '1500'" },
	{ "sm rate=33\n", 1, "expected a rate in Gb/s" },
	{ "sm packet-lifetime=64\n", 1, "expected a packet lifetime exponent (0..63)" },
	{ "sm response-delay=7\n", 1, "after 'response-delay=', got '7'" },
	{ "sm lmc=1\n", 1, "unknown attribute 'lmc' on an 'sm' line" },
	{ "name x\n", 1, "expected a name and at least one address after 'name'" },
	{ "name x 192.0.2.1/24\n", 1, "expected an IPv4 or IPv6 address after 'name x', got '192.0.2.1/24'" },
	{ "name x nohost\n", 1, "got 'nohost'" },
	{ "link a/b/1\n", 1, "expected two endpoints after 'link'" },
	{ "link a a/b/1\n", 1, "expected a link endpoint HOST/DEVICE/PORT, SWITCH/PORT or 'none', got 'a'" },
	{ "link a/b/c/d x/1\n", 1, "got 'a/b/c/d'" },
	{ "link a//1 x/1\n", 1, "got 'a//1'" },
	{ "link none a/b/1\n", 1, "the first endpoint of a link cannot be 'none'" },
	{ "link a/b/1 c/d/1 width=3x\n", 1, "expected a link width (1x, 2x, 4x, 8x, 12x) after 'width=', got '3x'" },
	{ "link a/b/1 c/d/1 speed=XDR\n", 1, "expected a link speed (SDR, DDR, QDR" },
	{ "link a/b/1 c/d/1 color=red\n", 1, "unknown attribute 'color' on a 'link' line" },
	{ "switch\n", 1, "expected a switch name after 'switch'" },
	{ "switch s ports=0\n", 1, "expected a port count (1..254) after 'ports=', got '0'" },
	{ "switch s lid\n", 1, "expected key=value on a 'switch' line, got 'lid'" },
	{ "switch s guid=0\n", 1, "expected a GUID (0x0123456789abcdef or 0123:4567:89ab:cdef) after 'guid=', got '0'" },
	{ "switch s lid=0\n", 1, "expected a unicast LID (1..49151) after 'lid=', got '0'" },
	{ "switch s lmc=8\n", 1, "expected an LMC (0..7) after 'lmc=', got '8'" },
	{ "switch s flavour=x\n", 1, "unknown attribute 'flavour' on a 'switch' line" },
	{ "switch s\nswitch s\n", 2, "duplicate switch 's' (first defined at t.fabric:1)" },
	{ "host\n", 1, "expected a host name after 'host'" },
	{ "host a/b\n", 1, "expected a host name after 'host' (up to 63 characters, no '/', '=' or spaces), got 'a/b'" },
	{ "host aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 1, "expected a host name" },
	{ "host a\nhost a\n", 2, "duplicate host 'a' (first defined at t.fabric:1)" },
	{ "host a alias=b\nhost b\n", 2, "duplicate host name 'b' (already an alias)" },
	{ "host a\nhost b alias=a\n", 2, "duplicate host name 'a' (alias of 'b')" },
	{ "host a alias=x/y\n", 1, "expected a host alias" },
	{ "host a acm=maybe\n", 1, "expected 'on' or 'off' after 'acm=', got 'maybe'" },
	{ "host a color=red\n", 1, "unknown attribute 'color' on a 'host' line" },
	{ "alias x\n", 1, "'alias' needs a preceding 'host' line" },
	{ "host a\nalias\n", 2, "expected at least one name after 'alias'" },
	{ "acm on\n", 1, "'acm' needs a preceding 'host' line" },
	{ "host a\nacm\n", 2, "expected 'on' or 'off' after 'acm'" },
	{ "host a\nacm yes-please\n", 2, "expected 'on' or 'off' after 'acm', got 'yes-please'" },
	{ "device d\n", 1, "'device' needs a preceding 'host' line" },
	{ "host a\ndevice\n", 2, "expected a device name after 'device'" },
	{ "host a\ndevice d\ndevice d\n", 3, "duplicate device 'd' on host 'a' (first defined at t.fabric:2)" },
	{ "host a\ndevice d link=fc\n", 2, "expected 'eth' or 'ib' after 'link=', got 'fc'" },
	{ "host a\ndevice d ports=255\n", 2, "expected a port count (1..254) after 'ports=', got '255'" },
	{ "host a\ndevice d ib\n", 2, "expected key=value on a 'device' line, got 'ib'" },
	{ "host a\ndevice d guid=xyz\n", 2, "after 'guid=', got 'xyz'" },
	{ "host a\ndevice d sysguid=0\n", 2, "after 'sysguid=', got '0'" },
	{ "host a\ndevice d vendor=0x1000000\n", 2, "expected a 24-bit vendor id after 'vendor=', got '0x1000000'" },
	{ "host a\ndevice d part=x\n", 2, "expected a number after 'part=', got 'x'" },
	{ "host a\ndevice d hw=x\n", 2, "expected a number after 'hw=', got 'x'" },
	{ "host a\ndevice d fw=0123456789012345678901234567890123456789012345678901234567890123456789\n", 2, "is too long" },
	{ "host a\ndevice d desc=0123456789012345678901234567890123456789012345678901234567890123456789\n", 2, "is too long (max 63)" },
	{ "host a\ndevice d size=big\n", 2, "unknown attribute 'size' on a 'device' line" },
	{ "cap max_qp=1\n", 1, "'cap' needs a preceding 'device' line" },
	{ "host a\ndevice d\ncap\n", 3, "expected KEY=VALUE after 'cap'" },
	{ "host a\ndevice d\ncap max_fun=1\n", 3, "unknown device capability 'max_fun'" },
	{ "host a\ndevice d\ncap max_qp=4294967296\n", 3, "expected a number that fits 4 bytes after 'max_qp=', got '4294967296'" },
	{ "host a\ndevice d\ncap local_ca_ack_delay=256\n", 3, "fits 1 bytes" },
	{ "host a\ndevice d\ncap max_qp\n", 3, "after 'max_qp=', got ''" },
	{ "port 1\n", 1, "'port' needs a preceding 'device' line" },
	{ "host a\ndevice d\nport 0\n", 3, "expected a port number (1..254) after 'port', got '0'" },
	{ "host a\ndevice d\nport\n", 3, "expected a port number (1..254) after 'port', got ''" },
	{ "host a\ndevice d\nport 1 active\n", 3, "expected key=value on a 'port' line, got 'active'" },
	{ "host a\ndevice d\nport 1 link=x\n", 3, "expected 'eth' or 'ib' after 'link=', got 'x'" },
	{ "host a\ndevice d\nport 1 state=up\n", 3, "expected 'down', 'init', 'armed' or 'active' after 'state=', got 'up'" },
	{ "host a\ndevice d\nport 1 mtu=9000\n", 3, "expected an MTU (256, 512, 1024, 2048, 4096) after 'mtu=', got '9000'" },
	{ "host a\ndevice d\nport 1 active-mtu=x\n", 3, "after 'active-mtu=', got 'x'" },
	{ "host a\ndevice d\nport 1 lid=0xc000\n", 3, "expected a unicast LID (1..49151) after 'lid=', got '0xc000'" },
	{ "host a\ndevice d\nport 1 sm-lid=0\n", 3, "after 'sm-lid=', got '0'" },
	{ "host a\ndevice d\nport 1 lmc=9\n", 3, "expected an LMC (0..7) after 'lmc=', got '9'" },
	{ "host a\ndevice d\nport 1 width=5x\n", 3, "expected a link width" },
	{ "host a\ndevice d\nport 1 speed=fast\n", 3, "expected a link speed" },
	{ "host a\ndevice d\nport 1 guid=1:2\n", 3, "after 'guid=', got '1:2'" },
	{ "host a\ndevice d\nport 1 gid=192.0.2.1\n", 3, "expected a GID like fe80::2:c903:0:1 after 'gid=', got '192.0.2.1'" },
	{ "host a\ndevice d\nport 1 pkeys=0xffff,0x10000\n", 3, "expected P_Keys like 0xffff,0x8001 after 'pkeys=', got '0x10000'" },
	{ "host a\ndevice d\nport 1 pkeys=0x8000\n", 3, "got '0x8000'" },
	{ "host a\ndevice d\nport 1 pkeys=,\n", 3, "expected P_Keys like 0xffff,0x8001 after 'pkeys='" },
	{ "host a\ndevice d\nport 1 gid-table=0\n", 3, "expected a table length (1..65535) after 'gid-table=', got '0'" },
	{ "host a\ndevice d\nport 1 pkey-table=70000\n", 3, "after 'pkey-table='" },
	{ "host a\ndevice d\nport 1 color=red\n", 3, "unknown attribute 'color' on a 'port' line" },
	{ "netdev e\n", 1, "'netdev' needs a preceding 'host' line" },
	{ "host a\nnetdev\n", 2, "expected a netdev name after 'netdev'" },
	{ "host a\nnetdev e\nnetdev e\n", 3, "duplicate netdev 'e' on host 'a' (first defined at t.fabric:2)" },
	{ "host a\nnetdev e fast\n", 2, "expected key=value, 'up' or 'down' on a 'netdev' line, got 'fast'" },
	{ "host a\nnetdev e up=sometimes\n", 2, "expected 'on' or 'off' after 'up', got 'sometimes'" },
	{ "host a\nnetdev e ipv6=maybe\n", 2, "expected 'on' or 'off' after 'ipv6=', got 'maybe'" },
	{ "host a\nnetdev e mac=02:00:00:00:00\n", 2, "expected a hardware address (6 bytes for Ethernet, 20 for IPoIB, like 02:00:00:00:01:01) after 'mac=', got '02:00:00:00:00'" },
	{ "host a\nnetdev e hwaddr=0g:00:00:00:00:00\n", 2, "after 'hwaddr='" },
	{ "host a\nnetdev e mtu=67\n", 2, "expected an MTU in bytes (68..65535) after 'mtu=', got '67'" },
	{ "host a\nnetdev e rdma=d/0\n", 2, "expected DEVICE or DEVICE/PORT after 'rdma=', got a bad port '0'" },
	{ "host a\nnetdev e rdma=/1\n", 2, "expected DEVICE or DEVICE/PORT after 'rdma=', got ''" },
	{ "host a\nnetdev e speed=1\n", 2, "unknown attribute 'speed' on a 'netdev' line" },
	{ "addr 192.0.2.1/24\n", 1, "'addr' needs a preceding 'netdev' line" },
	{ "host a\nnetdev e\naddr\n", 3, "expected an address with a prefix length" },
	{ "host a\nnetdev e\naddr 192.0.2.1\n", 3, "after 'addr', got '192.0.2.1'" },
	{ "host a\nnetdev e\naddr 192.0.2.1/33\n", 3, "bad prefix length in '192.0.2.1/33' (expected 0..32 for IPv4, 0..128 for IPv6)" },
	{ "host a\nnetdev e\naddr 2001:db8::1/129\n", 3, "bad prefix length in '2001:db8::1/129'" },
	{ "host a\nnetdev e\naddr 192.0.2.1/\n", 3, "bad prefix length" },
	{ "host a\nnetdev e\naddr 192.0.2.1/-1\n", 3, "bad prefix length" },
	{ "host a\nnetdev e\naddr 192.0.2.300/24\n", 3, "got '192.0.2.300/24'" },
	{ "route default dev e\n", 1, "'route' needs a preceding 'host' line" },
	{ "host a\nroute\n", 2, "expected a destination (PREFIX, 'default' or 'default6') after 'route'" },
	{ "host a\nroute 192.0.2.0/40 dev e\n", 2, "bad prefix length in '192.0.2.0/40'" },
	{ "host a\nroute somewhere dev e\n", 2, "after 'route', got 'somewhere'" },
	{ "host a\nroute default\n", 2, "a route needs 'via GATEWAY', 'dev NETDEV' or both" },
	{ "host a\nroute default via\n", 2, "expected a value after 'via' on a 'route' line" },
	{ "host a\nroute default via x\n", 2, "expected a gateway address after 'via', got 'x'" },
	{ "host a\nroute default via 2001:db8::1\n", 2, "gateway '2001:db8::1' is not of the route's address family" },
	{ "host a\nroute default dev a/b\n", 2, "expected a netdev name after 'dev', got 'a/b'" },
	{ "host a\nroute default metric 5\n", 2, "expected 'via GATEWAY' or 'dev NETDEV' on a 'route' line, got 'metric'" },
	{ "include\n", 1, "expected one file name after 'include'" },
	{ "topology a b\n", 1, "expected one file name after 'topology'" },
	{ "# comment\n\n   \nseed 1 # trailing\nbogus\n", 5, "unknown directive 'bogus'" },
};

static const struct bad_case consistency_cases[] = {
	{ "host a\n  device d\nlink a/d/1 b/d/1\n", 3, "unknown host 'b' in link" },
	{ "host a\n  device d\nlink a/x/1 a/d/1\n", 3, "host 'a' has no device 'x' (in link)" },
	{ "host a\n  device d\nlink a/d/2 a/d/1\n", 3, "device 'a/d' has no port 2 (in link)" },
	{ "host a\n  device d\nlink a/d/x a/d/1\n", 3, "expected a port number at the end of link endpoint, got 'x'" },
	{ "host a\n  device d link=ib\nlink a/d/1 sw/1\n", 3, "unknown switch 'sw' in link" },
	{ "switch sw ports=2\nhost a\n  device d link=ib\nlink a/d/1 sw/3\n", 4, "switch 'sw' has no port 3 (ports 1..2)" },
	{ "host a\n  device d\nlink a/d/1 a/d/1\n", 3, "link from a port to itself" },
	{ "host a\n  device d\nhost b\n  device d\nhost c\n  device d\n"
	  "link a/d/1 b/d/1\nlink a/d/1 c/d/1\n", 8, "port a/d/1 is linked twice (also at t.fabric:7)" },
	{ "host a\n  device d\nhost b\n  device d\nlink a/d/1 b/d/1\nlink b/d/1 none\n", 6,
	  "port b/d/1 is linked twice (also at t.fabric:5)" },
	{ "host a\n  device d\nlink a/d/1 none\nlink a/d/1 none\n", 4, "port a/d/1 is linked twice (also at t.fabric:3)" },
	{ "host a\n  device d\nhost b\n  device d link=ib\nlink a/d/1 b/d/1\n", 5,
	  "link layer mismatch: a/d/1 is Ethernet, b/d/1 is InfiniBand" },
	{ "switch sw\nhost a\n  device d\nlink a/d/1 sw/1\n", 4,
	  "link layer mismatch: a/d/1 is Ethernet, sw/1 is InfiniBand" },
	{ "host a\n  netdev e rdma=rxe0\n", 2, "netdev 'e' is bound to device 'rxe0', which host 'a' does not have" },
	{ "host a\n  device d\n  netdev e rdma=d/2\n", 3, "netdev 'e' is bound to port 2 of 'd', which has 1 port(s)" },
	{ "host a\n  device d link=ib\n  netdev e rdma=d mac=02:00:00:00:00:01\n", 3,
	  "netdev 'e' is IPoIB: its hardware address has 20 bytes, not 6" },
	{ "host a\n  netdev e hwaddr=00:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:00:0a:01\n", 2,
	  "netdev 'e' is Ethernet: its hardware address has 6 bytes, not 20" },
	{ "host a\n  device d guid=0x1\n  device e guid=0x1\n", 3, "device 'a/e' has the node GUID of 'a/d' (0x0000000000000001)" },
	{ "host a\n  device d link=ib guid=0x5\nswitch s guid=0x5\n", 3, "switch 's' has the node GUID of device 'a/d'" },
	{ "host a\n  device d\n    port 1 lid=3\n", 3, "port 1 of 'd' is Ethernet: it has no LID, LMC or SM LID" },
	{ "host a\n  device d\n    port 1 mtu=1024 active-mtu=2048\n", 3, "active MTU 2048 of port 1 of 'd' exceeds its MTU 1024" },
	{ "host a\n  device d link=ib\n    port 1 pkeys=0xffff,0x8001 pkey-table=1\n", 3, "port 1 of 'd' has 2 P_Keys but a table of 1" },
	{ "host a\n  device d\n    port 1 gid-table=1\n  netdev e rdma=d\n    addr 192.0.2.1/24\n", 3,
	  "port 1 of 'd' has 2 GIDs but a table of 1" },
	{ "host a\n  device d link=ib\n    port 1 gid=fe80::1 gid=fe80::2 gid-table=1\n", 3, "has 2 GIDs but a table of 1" },
	{ "switch s lid=2\nhost a\n  device d link=ib\n    port 1 lid=2 state=active\n", 4, "LID 2 of a/d/1 is also used by switch s" },
	{ "switch s lid=4 lmc=1\nhost a\n  device d link=ib\n    port 1 lid=5 state=active\n", 4, "LID 5 of a/d/1 is also used by switch s" },
	{ "host a\n  device d link=ib ports=2\n    port 1 lid=8 lmc=2 state=active\n    port 2 lid=10 state=active\n", 4, "LID 10 of a/d/2 is also used by a/d/1" },
	{ "host a\n  device d link=ib\n    port 1 lid=49151 lmc=1 state=active\n", 3, "LID 49151 of a/d/1 is not a multiple of 2^lmc (2)" },
	{ "switch s lid=3 lmc=1\n", 1, "LID 3 of switch s is not a multiple of 2^lmc (2)" },
	{ "sm lid=9\nhost a\n  device d link=ib\n    port 1 state=active\n", 1, "SM LID 9 is not the LID of any switch or IB port" },
	{ "host a\n  netdev e\n    addr 192.0.2.1/24\nhost b\n  netdev e\n    addr 192.0.2.1/28\n", 5,
	  "duplicate address 192.0.2.1 (also on a/e)" },
	{ "host a\n  netdev e\n    addr 2001:db8::1/64 2001:db8::1/64\n", 2, "duplicate address 2001:db8::1 (also on a/e)" },
	{ "host a\n  netdev e\n  route default dev x\n", 3, "route via netdev 'x', which host 'a' does not have" },
	{ "host a\n  netdev e\n    addr 192.0.2.1/28\n  route default via 192.0.2.100\n", 4,
	  "gateway 192.0.2.100 is not in a connected subnet of host 'a'" },
};

static void run_cases(const struct bad_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		load_bad(c[i].text, EINVAL, c[i].line, c[i].msg);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	run_cases(syntax_cases, sizeof(syntax_cases) / sizeof(syntax_cases[0]));
}

static void test_consistency_errors(void **state)
{
	(void)state;
	run_cases(consistency_cases, sizeof(consistency_cases) / sizeof(consistency_cases[0]));
}

static void test_hostsdata_errors(void **state)
{
	(void)state;
	write_file("hd1.data", "192.0.2.1\n");
	load_bad("hosts-data hd1.data\n", EINVAL, 1, "expected 'ADDRESS GID [QPN]', got 1 words");
	write_file("hd2.data", "# c\n192.0.2.1 notagid\n");
	load_bad("hosts-data hd2.data\n", EINVAL, 2, "expected a GID like fe80::2:c903:0:1 after '192.0.2.1', got 'notagid'");
	write_file("hd3.data", "192.0.2.1 fe80::1 0x1000000\n");
	load_bad("hosts-data hd3.data\n", EINVAL, 1, "expected a QPN (0..0xffffff) after the GID, got '0x1000000'");
	write_file("hd4.data", "192.0.2.1 fe80::1 1 2\n");
	load_bad("hosts-data hd4.data\n", EINVAL, 1, "got 4 words");
	write_file("hd5.data", "192.0.2.1 fe80::1\n");
	load_bad("hosts-data hd5.data\n", EINVAL, 1, "no port in the fabric has GID fe80::1");
	write_file("hd6.data", "a/b fe80::1\n");
	load_bad("hosts-data hd6.data\n", EINVAL, 1, "expected an address or host name, got 'a/b'");
	write_file("hd7.data", "192.0.2.5 fe80::200:0:1:101\n");
	load_bad("host x\n  device d link=ib\nhosts-data hd7.data\n", EINVAL, 1,
		 "the port with GID fe80::200:0:1:101 has no netdev to carry address '192.0.2.5'");
	write_file("hd8.data", "192.0.2.9 fe80::200:0:1:101\n");
	load_bad("host x\n  device d link=ib\n  netdev ib0 rdma=d\n    addr 192.0.2.1/24\n"
		 "host y\n  netdev e\n    addr 192.0.2.9/24\nhosts-data hd8.data\n", EINVAL, 1,
		 "address 192.0.2.9 maps to GID fe80::200:0:1:101 (x/ib0) but is on y/e");
	write_file("hd9.data", "somename fe80::200:0:1:101\n");
	load_bad("host x\n  device d link=ib\n  netdev ib0 rdma=d\nhosts-data hd9.data\n", EINVAL, 1,
		 "netdev x/ib0 (GID fe80::200:0:1:101) has no address for name 'somename'");
}

/* A named file that never ends (a device) stops at the loaders' size limit instead of filling
 * memory: EFBIG, at the line that names it. */
static void test_endless_file(void **state)
{
	(void)state;
	load_bad("include /dev/zero\n", EFBIG, 1, "'/dev/zero' is larger than 16 MiB");
	load_bad("topology /dev/zero\n", EFBIG, 1, "'/dev/zero' is larger than 16 MiB");
	load_bad("hosts-data /dev/zero\n", EFBIG, 1, "'/dev/zero' is larger than 16 MiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endless_file),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_consistency_errors),
		cmocka_unit_test(test_hostsdata_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	tmpdir_cleanup();
	return r;
}
