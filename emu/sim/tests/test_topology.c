/* The topology: the wire built from the reference fixtures (exact endpoint handles and links),
 * IB switch forwarding by DLID (LMC ranges, multi-hop, drops), and the determinism proof:
 * a fixture with faults, driven by timer-paced RC traffic on every link and between every pair
 * of IB ports, gives byte-identical pcap files for the same seed and different ones for
 * another seed. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/topology.h"
#include "frames.h"

/* ---------- fixtures and scratch files ---------- */

static const char *fixture_dir(void)
{
	static char buf[1024];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");

	snprintf(buf, sizeof(buf), "%s/fixtures", top && *top ? top : RDMAEMU_SRCDIR);
	return buf;
}

static struct emu_fabric *load_fixture(const char *name)
{
	char path[1200];
	struct emu_error err;
	struct emu_fabric *f;

	snprintf(path, sizeof(path), "%s/%s", fixture_dir(), name);
	f = emu_fabric_load(path, &err);
	if (!f)
		fail_msg("%s: %s:%u: %s", name, err.file, err.line, err.msg);
	return f;
}

/* Fabric text whose includes resolve in fixtures/. */
static struct emu_fabric *load_text(const char *text)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(text, "t.fabric", fixture_dir(), &err);

	if (!f)
		fail_msg("load failed: %s:%u: %s", err.file, err.line, err.msg);
	return f;
}

static char scratch[64];

static const char *scratch_dir(void)
{
	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/rdmaemu-topo-test.XXXXXX");
		assert_non_null(mkdtemp(scratch));
	}
	return scratch;
}

static char *scratch_path(const char *name)
{
	static char buf[4][128];
	static int which;
	char *p = buf[which++ % 4];

	snprintf(p, 128, "%s/%s", scratch_dir(), name);
	return p;
}

static void remove_if_exists(const char *path)
{
	if (unlink(path) && errno != ENOENT)
		fail_msg("unlink %s: %s", path, strerror(errno));
}

static void scratch_cleanup(void)
{
	static const char *names[] = { "a-eth.pcap", "a-ib.pcap", "b-eth.pcap", "b-ib.pcap",
				       "c-eth.pcap", "c-ib.pcap", "x-eth.pcap", "x-ib.pcap" };

	if (!scratch[0])
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		remove_if_exists(scratch_path(names[i]));
	assert_int_equal(rmdir(scratch), 0);
	scratch[0] = 0;
}

/* After every test, passed or failed: nothing is left in /tmp. */
static int teardown(void **state)
{
	(void)state;
	if (scratch[0]) {
		static const char *names[] = { "a", "b", "c", "x" };
		char path[128];

		for (size_t i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "%s/%s-eth.pcap", scratch, names[i]);
			unlink(path);
			snprintf(path, sizeof(path), "%s/%s-ib.pcap", scratch, names[i]);
			unlink(path);
		}
		rmdir(scratch);
		scratch[0] = 0;
	}
	return 0;
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!fp)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n >= 24);
	rewind(fp);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* ---------- fabric lookups ---------- */

static size_t host_idx(const struct emu_fabric *f, const char *name)
{
	const struct emu_host *h = emu_fabric_find_host(f, name);

	assert_non_null(h);
	return (size_t)(h - f->hosts);
}

static size_t dev_idx(const struct emu_fabric *f, size_t host, const char *name)
{
	for (size_t d = 0; d < f->hosts[host].ndevices; d++)
		if (!strcmp(f->hosts[host].devices[d].name, name))
			return d;
	fail_msg("no device %s", name);
	return 0;
}

static int port_ep(const struct emu_topology *t, const char *host, const char *dev,
		   unsigned port)
{
	const struct emu_fabric *f = emu_topology_fabric(t);
	size_t h = host_idx(f, host);

	return emu_topology_port_endpoint(t, h, dev_idx(f, h, dev), port);
}

static int ep_of(const struct emu_topology *t, const struct emu_endpoint *e)
{
	if (e->kind == EMU_EP_SWITCH_PORT)
		return emu_topology_switch_endpoint(t, (size_t)e->node, e->port);
	return emu_topology_port_endpoint(t, (size_t)e->node, (size_t)e->device, e->port);
}

/* Direction of link `link` that endpoint `ep` sends on. */
static enum emu_wire_dir dir_from(const struct emu_topology *t, int link, int ep)
{
	const struct emu_link *lk = &emu_topology_fabric(t)->links[link];

	return ep_of(t, &lk->a) == ep ? EMU_WIRE_A_TO_B : EMU_WIRE_B_TO_A;
}

/* Every fabric link is the wire link of the same index between exactly its two ports, with
 * its link layer and faults; every other endpoint is unconnected; info round-trips. */
static void check_links(const struct emu_topology *t)
{
	const struct emu_fabric *f = emu_topology_fabric(t);
	struct emu_wire *w = emu_topology_wire(t);
	size_t n = emu_topology_nendpoints(t);
	int *seen = calloc(n, sizeof(*seen));

	assert_non_null(seen);
	assert_int_equal(emu_wire_nendpoints(w), n);
	assert_int_equal(emu_wire_nlinks(w), f->nlinks);
	for (size_t i = 0; i < f->nlinks; i++) {
		const struct emu_link *lk = &f->links[i];
		int a = ep_of(t, &lk->a), b = ep_of(t, &lk->b);
		struct emu_faults ft;

		assert_true(a >= 0 && b >= 0 && a != b);
		assert_int_equal(emu_wire_endpoint_link(w, a), (int)i);
		assert_int_equal(emu_wire_endpoint_link(w, b), (int)i);
		seen[a]++;
		seen[b]++;
		assert_int_equal(emu_wire_get_faults(w, (int)i, &ft), 0);
		assert_memory_equal(&ft, &lk->faults, sizeof(ft));
		if (lk->a.kind == EMU_EP_HOST_PORT)
			assert_int_equal(emu_wire_link_layer(w, (int)i),
					 f->hosts[lk->a.node].devices[lk->a.device]
						 .ports[lk->a.port - 1].link_layer);
		else
			assert_int_equal(emu_wire_link_layer(w, (int)i), EMU_LL_INFINIBAND);
	}
	for (size_t ep = 0; ep < n; ep++) {
		struct emu_endpoint e;

		assert_int_equal(emu_topology_endpoint_info(t, (int)ep, &e), 0);
		assert_int_equal(ep_of(t, &e), (int)ep);
		if (!seen[ep])
			assert_int_equal(emu_wire_endpoint_link(w, (int)ep), -1);
		assert_true(seen[ep] <= 1);
	}
	free(seen);
}

/* ---------- (a) endpoints and links of the fixtures ---------- */

static void test_rxe_ref2_endpoints(void **state)
{
	struct emu_fabric *f = load_fixture("rxe-ref2.fabric");
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_error err;
	struct emu_endpoint e;
	static const struct emu_faults perfect;
	struct emu_faults ft;

	(void)state;
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, scratch_path("x"), &err);
	assert_non_null(t);
	assert_int_equal(emu_topology_nendpoints(t), 2);
	assert_int_equal(port_ep(t, "A", "rxe0", 1), 0);
	assert_int_equal(port_ep(t, "B", "rxe0", 1), 1);
	assert_int_equal(emu_topology_port_endpoint(t, 0, 0, 2), -ENOENT);
	assert_int_equal(emu_topology_port_endpoint(t, 0, 1, 1), -ENOENT);
	assert_int_equal(emu_topology_port_endpoint(t, 2, 0, 1), -ENOENT);
	assert_int_equal(emu_topology_port_endpoint(t, 0, 0, 0), -ENOENT);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 1), -ENOENT);
	assert_int_equal(emu_topology_endpoint_info(t, 2, &e), -EINVAL);
	assert_int_equal(emu_topology_endpoint_info(t, -1, &e), -EINVAL);
	assert_int_equal(emu_topology_endpoint_info(t, 1, &e), 0);
	assert_int_equal(e.kind, EMU_EP_HOST_PORT);
	assert_int_equal(e.node, 1);
	assert_int_equal(e.device, 0);
	assert_int_equal(e.port, 1);
	assert_int_equal(emu_wire_nlinks(emu_topology_wire(t)), 1);
	assert_int_equal(emu_wire_endpoint_link(emu_topology_wire(t), 0), 0);
	assert_int_equal(emu_wire_endpoint_link(emu_topology_wire(t), 1), 0);
	assert_int_equal(emu_wire_link_layer(emu_topology_wire(t), 0), EMU_LL_ETHERNET);
	assert_int_equal(emu_wire_get_faults(emu_topology_wire(t), 0, &ft), 0);
	assert_memory_equal(&ft, &perfect, sizeof(ft));
	assert_int_equal(dir_from(t, 0, 0), EMU_WIRE_A_TO_B);
	assert_int_equal(dir_from(t, 0, 1), EMU_WIRE_B_TO_A);
	check_links(t);
	/* switch-only calls refuse a fabric without switches */
	assert_int_equal(emu_topology_switch_route(t, 0, 1), -EINVAL);
	assert_int_equal(emu_topology_set_switch_local_rx(t, 0, NULL, NULL), -EINVAL);
	assert_int_equal(emu_topology_switch_send(t, 0, "x", 1), -EINVAL);
	/* captures: Ethernet only, the fabric has no IB link */
	assert_non_null(emu_topology_tap(t, EMU_LL_ETHERNET));
	assert_null(emu_topology_tap(t, EMU_LL_INFINIBAND));
	assert_true(file_exists(scratch_path("x-eth.pcap")));
	assert_false(file_exists(scratch_path("x-ib.pcap")));
	assert_int_equal(emu_topology_flush(t), 0);
	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	scratch_cleanup();
}

static void test_mixed4_endpoints(void **state)
{
	struct emu_fabric *f = load_fixture("mixed4.fabric");
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_wire *w;
	struct emu_faults ft;

	(void)state;
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, scratch_path("x"), NULL);
	assert_non_null(t);
	w = emu_topology_wire(t);
	/* 5 host ports, then the switch's 8 ports */
	assert_int_equal(emu_topology_nendpoints(t), 13);
	assert_int_equal(port_ep(t, "roce-a", "rxe0", 1), 0);
	assert_int_equal(port_ep(t, "gw", "rxe0", 1), 1);
	assert_int_equal(port_ep(t, "gw", "mlx5_0", 1), 2);
	assert_int_equal(port_ep(t, "ib-a", "mlx5_0", 1), 3);
	assert_int_equal(port_ep(t, "ib-b", "mlx5_0", 1), 4);
	for (unsigned p = 1; p <= 8; p++)
		assert_int_equal(emu_topology_switch_endpoint(t, 0, p), 4 + (int)p);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 9), -ENOENT);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 0), -ENOENT);
	assert_int_equal(emu_topology_switch_endpoint(t, 1, 1), -ENOENT);
	/* the four links, in file order */
	assert_int_equal(emu_wire_nlinks(w), 4);
	assert_int_equal(emu_wire_endpoint_link(w, 0), 0);
	assert_int_equal(emu_wire_endpoint_link(w, 1), 0);
	assert_int_equal(emu_wire_endpoint_link(w, 2), 1);
	assert_int_equal(emu_wire_endpoint_link(w, 5), 1);
	assert_int_equal(emu_wire_endpoint_link(w, 3), 2);
	assert_int_equal(emu_wire_endpoint_link(w, 6), 2);
	assert_int_equal(emu_wire_endpoint_link(w, 4), 3);
	assert_int_equal(emu_wire_endpoint_link(w, 7), 3);
	for (int ep = 8; ep <= 12; ep++)
		assert_int_equal(emu_wire_endpoint_link(w, ep), -1);
	assert_int_equal(emu_wire_link_layer(w, 0), EMU_LL_ETHERNET);
	for (int l = 1; l <= 3; l++)
		assert_int_equal(emu_wire_link_layer(w, l), EMU_LL_INFINIBAND);
	assert_int_equal(dir_from(t, 1, 2), EMU_WIRE_A_TO_B); /* gw/mlx5_0/1 is link 1's a */
	assert_int_equal(emu_wire_get_faults(w, 0, &ft), 0);
	assert_int_equal(ft.delay_ns, 2000); /* delay=2us */
	assert_int_equal(emu_wire_get_faults(w, 1, &ft), 0);
	assert_int_equal(ft.delay_ns, 0);
	check_links(t);
	/* forwarding table of ibsw (LID 1): CA LIDs 2, 3, 4 in file order behind ports 1, 2, 3 */
	assert_int_equal(emu_topology_switch_route(t, 0, 1), 0);
	assert_int_equal(emu_topology_switch_route(t, 0, 2), 1);
	assert_int_equal(emu_topology_switch_route(t, 0, 3), 2);
	assert_int_equal(emu_topology_switch_route(t, 0, 4), 3);
	assert_int_equal(emu_topology_switch_route(t, 0, 5), -ENOENT);
	assert_int_equal(emu_topology_switch_route(t, 0, 0), -ENOENT);
	assert_int_equal(emu_topology_switch_route(t, 0, 0xc000), -ENOENT);
	/* both captures */
	assert_true(file_exists(scratch_path("x-eth.pcap")));
	assert_true(file_exists(scratch_path("x-ib.pcap")));
	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	scratch_cleanup();
}

static void test_ib_endpoints(void **state)
{
	struct emu_fabric *f = load_fixture("ib.fabric");
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_wire *w;

	(void)state;
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, scratch_path("x"), NULL);
	assert_non_null(t);
	w = emu_topology_wire(t);
	/* 3 CA ports, then the 36-port switch */
	assert_int_equal(emu_topology_nendpoints(t), 3 + 36);
	assert_int_equal(port_ep(t, "ib-a", "mlx5_0", 1), 0);
	assert_int_equal(port_ep(t, "ib-b", "mlx5_0", 1), 1);
	assert_int_equal(port_ep(t, "ib-c", "mlx5_0", 1), 2);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 1), 3);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 36), 38);
	/* ib.topo: switch ports 1, 2, 3 to ib-a, ib-b, ib-c */
	assert_int_equal(emu_wire_nlinks(w), 3);
	for (int i = 0; i < 3; i++) {
		int l = emu_wire_endpoint_link(w, i);

		assert_true(l >= 0);
		assert_int_equal(emu_wire_endpoint_link(w, 3 + i), l);
		assert_int_equal(emu_wire_link_layer(w, l), EMU_LL_INFINIBAND);
	}
	for (int ep = 6; ep <= 38; ep++)
		assert_int_equal(emu_wire_endpoint_link(w, ep), -1);
	check_links(t);
	assert_int_equal(emu_topology_switch_route(t, 0, 1), 0);
	assert_int_equal(emu_topology_switch_route(t, 0, 2), 1);
	assert_int_equal(emu_topology_switch_route(t, 0, 3), 2);
	assert_int_equal(emu_topology_switch_route(t, 0, 4), 3);
	assert_false(file_exists(scratch_path("x-eth.pcap")));
	assert_true(file_exists(scratch_path("x-ib.pcap")));
	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	scratch_cleanup();
}

static void test_build_errors(void **state)
{
	struct emu_fabric *f = load_fixture("rxe-ref2.fabric");
	struct emu_clock clk;
	struct emu_error err;

	(void)state;
	emu_clock_init(&clk, 0);
	errno = 0;
	assert_null(emu_topology_build(NULL, &clk, NULL, &err));
	assert_int_equal(errno, EINVAL);
	assert_null(emu_topology_build(f, NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	/* a capture that cannot be created: the error names it */
	assert_null(emu_topology_build(f, &clk, "/nonexistent-dir/x", &err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/x-eth.pcap"));
	assert_non_null(strstr(err.file, "rxe-ref2.fabric"));
	assert_int_equal(emu_clock_pending(&clk), 0);
	assert_int_equal(emu_topology_free(NULL), 0);
	assert_null(emu_topology_wire(NULL));
	assert_int_equal(emu_topology_nendpoints(NULL), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
}

/* ---------- (b) IB forwarding ---------- */

struct rec {
	int n;
	uint8_t last[256];
	size_t last_len;
	uint64_t last_time;
};

static void rec_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct rec *r = ctx;

	r->n++;
	r->last_len = len;
	r->last_time = now;
	memcpy(r->last, frame, len < sizeof(r->last) ? len : sizeof(r->last));
}

static size_t ib_frame(uint8_t *buf, size_t cap, uint16_t slid, uint16_t dlid, uint32_t psn)
{
	struct frame_ib_addr a = { .slid = slid, .dlid = dlid };
	struct frame_bth bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = 0x12,
				 .psn = psn };
	static const char payload[] = "through the switch";
	size_t len = frame_build_ib(buf, cap, &a, &bth, NULL, 0, payload, sizeof(payload));

	assert_true(len > 0);
	return len;
}

static void assert_link_ctr(struct emu_wire *w, int link, enum emu_wire_dir d, uint64_t sent,
			    uint64_t delivered)
{
	struct emu_wire_counters c;

	assert_int_equal(emu_wire_counters(w, link, d, &c), 0);
	assert_int_equal(c.sent, sent);
	assert_int_equal(c.delivered, delivered);
	assert_int_equal(c.dropped_loss + c.dropped_down + c.duplicated + c.reordered, 0);
}

static void test_ib_forwarding(void **state)
{
	struct emu_fabric *f = load_fixture("ib.fabric");
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_wire *w;
	struct rec ca[3], local;
	struct emu_topology_switch_counters sc;
	struct emu_topology_port_counters pc;
	int la, lb, lc;
	uint8_t buf[128];
	size_t len;

	(void)state;
	memset(ca, 0, sizeof(ca));
	memset(&local, 0, sizeof(local));
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, NULL, NULL);
	assert_non_null(t);
	w = emu_topology_wire(t);
	for (int i = 0; i < 3; i++)
		assert_int_equal(emu_topology_set_rx(t, i, rec_rx, &ca[i]), 0);
	assert_int_equal(emu_topology_set_rx(t, 3, rec_rx, &local), -EINVAL); /* switch port */
	assert_int_equal(emu_topology_set_rx(t, 39, rec_rx, &local), -EINVAL);
	la = emu_wire_endpoint_link(w, 0);
	lb = emu_wire_endpoint_link(w, 1);
	lc = emu_wire_endpoint_link(w, 2);
	assert_int_equal(f->hosts[0].devices[0].ports[0].lid, 2);
	assert_int_equal(f->hosts[1].devices[0].ports[0].lid, 3);
	assert_int_equal(f->hosts[2].devices[0].ports[0].lid, 4);

	/* ib-a (LID 2) -> LID 3: exactly at ib-b, unchanged, at once (no delay on ib.fabric) */
	len = ib_frame(buf, sizeof(buf), 2, 3, 1);
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(ca[0].n, 0);
	assert_int_equal(ca[1].n, 1);
	assert_int_equal(ca[2].n, 0);
	assert_int_equal(ca[1].last_len, len);
	assert_memory_equal(ca[1].last, buf, len);
	assert_int_equal(ca[1].last_time, 0);
	assert_link_ctr(w, la, dir_from(t, la, 0), 1, 1);
	assert_link_ctr(w, la, dir_from(t, la, 3), 0, 0);
	assert_link_ctr(w, lb, dir_from(t, lb, 4), 1, 1);
	assert_link_ctr(w, lb, dir_from(t, lb, 1), 0, 0);
	assert_link_ctr(w, lc, EMU_WIRE_A_TO_B, 0, 0);
	assert_link_ctr(w, lc, EMU_WIRE_B_TO_A, 0, 0);
	assert_int_equal(emu_topology_switch_counters(t, 0, &sc), 0);
	assert_int_equal(sc.received, 1);
	assert_int_equal(sc.forwarded, 1);
	assert_int_equal(emu_topology_port_counters(t, 1, &pc), 0);
	assert_int_equal(pc.received, 1);
	assert_int_equal(pc.unclaimed, 0);
	assert_int_equal(emu_topology_port_counters(t, 3, &pc), -EINVAL);

	/* dropped by the switch, each counted in its class; nothing reaches a CA */
	len = ib_frame(buf, sizeof(buf), 2, 0x99, 2); /* unassigned LID */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 2, 0, 3); /* LID 0: reserved */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 2, 0xc001, 4); /* multicast */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 2, 0xffff, 5); /* permissive */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 2, 2, 6); /* its own LID: back out its arrival port */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 2, 1, 7); /* the switch, no local receiver */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	buf[0] |= 1; /* LVer 1 */
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	assert_int_equal(emu_wire_send(w, 0, buf, 7), 0); /* shorter than an LRH */
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(ca[0].n + ca[1].n + ca[2].n, 1);
	assert_int_equal(emu_topology_switch_counters(t, 0, &sc), 0);
	assert_int_equal(sc.received, 9);
	assert_int_equal(sc.forwarded, 1);
	assert_int_equal(sc.dropped_unknown, 2);
	assert_int_equal(sc.dropped_mcast, 1);
	assert_int_equal(sc.dropped_permissive, 1);
	assert_int_equal(sc.dropped_loop, 1);
	assert_int_equal(sc.dropped_local, 1);
	assert_int_equal(sc.dropped_malformed, 2);
	assert_int_equal(sc.local + sc.sent_local + sc.dropped_send, 0);
	assert_link_ctr(w, la, dir_from(t, la, 0), 9, 9);
	assert_link_ctr(w, la, dir_from(t, la, 3), 0, 0);

	/* the switch's own LID with a local receiver; the local port sends to ib-c (LID 4) */
	assert_int_equal(emu_topology_set_switch_local_rx(t, 0, rec_rx, &local), 0);
	len = ib_frame(buf, sizeof(buf), 3, 1, 8);
	assert_int_equal(emu_wire_send(w, 1, buf, len), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(local.n, 1);
	assert_memory_equal(local.last, buf, len);
	len = ib_frame(buf, sizeof(buf), 1, 4, 9);
	assert_int_equal(emu_topology_switch_send(t, 0, buf, len), 0);
	len = ib_frame(buf, sizeof(buf), 1, 1, 10); /* to itself: dropped (loop) */
	assert_int_equal(emu_topology_switch_send(t, 0, buf, len), 0);
	assert_int_equal(emu_topology_switch_send(t, 0, NULL, 8), -EINVAL);
	assert_int_equal(emu_topology_switch_send(t, 0, buf, 0), -EINVAL);
	assert_int_equal(emu_topology_switch_send(t, 1, buf, len), -EINVAL);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(ca[2].n, 1);
	assert_int_equal(ca[2].last[3], 4);
	assert_int_equal(ca[0].n + ca[1].n, 1);
	assert_int_equal(emu_topology_switch_counters(t, 0, &sc), 0);
	assert_int_equal(sc.received, 10);
	assert_int_equal(sc.forwarded, 2);
	assert_int_equal(sc.local, 1);
	assert_int_equal(sc.sent_local, 2);
	assert_int_equal(sc.dropped_loop, 2);
	assert_link_ctr(w, lc, dir_from(t, lc, 5), 1, 1);
	assert_link_ctr(w, lb, dir_from(t, lb, 1), 1, 1);

	/* a CA port without a receiver counts what it is not given */
	assert_int_equal(emu_topology_set_rx(t, 2, NULL, NULL), 0);
	len = ib_frame(buf, sizeof(buf), 2, 4, 11);
	assert_int_equal(emu_wire_send(w, 0, buf, len), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(ca[2].n, 1);
	assert_int_equal(emu_topology_port_counters(t, 2, &pc), 0);
	assert_int_equal(pc.received, 2);
	assert_int_equal(pc.unclaimed, 1);

	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
}

/* Two switches cabled twice, CAs with LMC 2 on each side: ranges, shortest paths, ties. */
static const char two_switch_text[] =
	"seed 3\n"
	"switch s1 ports=4 lid=1\n"
	"switch s2 ports=4 lid=2\n"
	"host a\n"
	"  device mlx5_0 link=ib\n"
	"  port 1 lid=4 lmc=2\n"
	"host b\n"
	"  device mlx5_0 link=ib\n"
	"  port 1 lid=8 lmc=2\n"
	"host c\n"
	"  device mlx5_0 link=ib ports=2\n"
	"  port 1 lid=12\n"
	"  port 2 lid=13\n"
	"link a/mlx5_0/1 s1/2\n"
	"link s1/4 s2/3\n"
	"link s1/3 s2/4\n"
	"link b/mlx5_0/1 s2/1\n"
	"link c/mlx5_0/1 c/mlx5_0/2\n"
	"sm lid=1\n";

static void test_two_switches_lmc(void **state)
{
	struct emu_fabric *f = load_text(two_switch_text);
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_wire *w;
	struct rec ra, rb;
	struct emu_topology_switch_counters s1, s2;
	int a, b;
	uint8_t buf[128];
	size_t len;

	(void)state;
	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, NULL, NULL);
	assert_non_null(t);
	w = emu_topology_wire(t);
	check_links(t);
	a = port_ep(t, "a", "mlx5_0", 1);
	b = port_ep(t, "b", "mlx5_0", 1);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(port_ep(t, "c", "mlx5_0", 2), 3);
	assert_int_equal(emu_topology_switch_endpoint(t, 0, 1), 4);
	assert_int_equal(emu_topology_switch_endpoint(t, 1, 4), 11);
	/* s1: itself 0, s2 and b's range 8..11 through port 3 (the lower of the two cables),
	 * a's range 4..7 through port 2; c's ports (cabled to each other) are no switch's */
	assert_int_equal(emu_topology_switch_route(t, 0, 1), 0);
	assert_int_equal(emu_topology_switch_route(t, 0, 2), 3);
	for (uint16_t lid = 4; lid <= 7; lid++)
		assert_int_equal(emu_topology_switch_route(t, 0, lid), 2);
	for (uint16_t lid = 8; lid <= 11; lid++)
		assert_int_equal(emu_topology_switch_route(t, 0, lid), 3);
	assert_int_equal(emu_topology_switch_route(t, 0, 3), -ENOENT);
	assert_int_equal(emu_topology_switch_route(t, 0, 12), -ENOENT);
	assert_int_equal(emu_topology_switch_route(t, 0, 13), -ENOENT);
	/* s2: s1 and a's range through port 3 (its cable to s1/4 is its lower port) */
	assert_int_equal(emu_topology_switch_route(t, 1, 2), 0);
	assert_int_equal(emu_topology_switch_route(t, 1, 1), 3);
	for (uint16_t lid = 4; lid <= 7; lid++)
		assert_int_equal(emu_topology_switch_route(t, 1, lid), 3);
	for (uint16_t lid = 8; lid <= 11; lid++)
		assert_int_equal(emu_topology_switch_route(t, 1, lid), 1);

	assert_int_equal(emu_topology_set_rx(t, a, rec_rx, &ra), 0);
	assert_int_equal(emu_topology_set_rx(t, b, rec_rx, &rb), 0);
	/* a -> every LID of b's range: two hops each; b's LID + 4 is nobody's */
	for (uint16_t lid = 8; lid <= 12; lid++) {
		len = ib_frame(buf, sizeof(buf), 4, lid, lid);
		assert_int_equal(emu_wire_send(w, a, buf, len), 0);
	}
	/* b -> a's last LID */
	len = ib_frame(buf, sizeof(buf), 9, 7, 1);
	assert_int_equal(emu_wire_send(w, b, buf, len), 0);
	assert_int_equal(emu_clock_run_idle(&clk, 1000, NULL), 0);
	assert_int_equal(rb.n, 4);
	assert_int_equal(ra.n, 1);
	assert_memory_equal(ra.last, buf, len);
	assert_int_equal(emu_topology_switch_counters(t, 0, &s1), 0);
	assert_int_equal(emu_topology_switch_counters(t, 1, &s2), 0);
	assert_int_equal(s1.received, 6);
	assert_int_equal(s1.forwarded, 5);
	assert_int_equal(s1.dropped_unknown, 1);
	assert_int_equal(s2.received, 5);
	assert_int_equal(s2.forwarded, 5);
	/* s1 -> s2 leaves by s1's port 3 = link 2 (s1/3 -- s2/4); s2 -> s1 by s2's port 3 =
	 * link 1 (s1/4 -- s2/3): each switch picks its own lowest port, so the two directions
	 * use different cables */
	assert_link_ctr(w, 2, EMU_WIRE_A_TO_B, 4, 4);
	assert_link_ctr(w, 2, EMU_WIRE_B_TO_A, 0, 0);
	assert_link_ctr(w, 1, EMU_WIRE_B_TO_A, 1, 1);
	assert_link_ctr(w, 1, EMU_WIRE_A_TO_B, 0, 0);
	assert_int_equal(emu_topology_free(t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
}

/* ---------- (c) the determinism proof ---------- */

#define GEN_SENDS 40    /* SENDs per flow */
#define GEN_MAX_PORTS 16
#define GEN_MAX_LINKS 8
#define GEN_MAX_FLOWS 32

struct gen;

/* A host port as the generator sees it: its addresses and its receive counters. */
struct gen_port {
	struct gen *g;
	int ep;
	int ll;
	uint16_t lid;
	uint8_t mac[6];
	uint32_t ipv4; /* host order */
	uint64_t rx_send, rx_ack, misdelivered;
};

/* One direction of traffic: RC SEND_ONLY from a port to a peer, every `period`. */
struct gen_flow {
	struct gen *g;
	struct gen_port *src, *dst;
	uint32_t dqpn, psn;
	uint64_t period;
	unsigned sent;
	struct emu_timer timer;
};

struct gen {
	struct emu_topology *t;
	struct gen_port ports[GEN_MAX_PORTS];
	size_t nports;
	struct gen_flow flows[GEN_MAX_FLOWS];
	size_t nflows;
	uint64_t hash;
	int err;
};

struct gen_result {
	size_t nlinks, nports;
	uint64_t ll[GEN_MAX_LINKS];
	struct emu_wire_counters ctr[GEN_MAX_LINKS][2];
	struct emu_topology_switch_counters sw;
	uint64_t rx_send[GEN_MAX_PORTS], rx_ack[GEN_MAX_PORTS], misdelivered;
	uint64_t eth_frames, ib_frames, end_ns, fired, hash;
	size_t nflows;
};

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void gen_send(struct gen *g, int ep, const uint8_t *buf, size_t len)
{
	int ret = len ? emu_wire_send(emu_topology_wire(g->t), ep, buf, len) : -EMSGSIZE;

	if (ret && !g->err)
		g->err = ret;
}

/* Builds a frame from port s to port d (addresses from the fabric). */
static size_t gen_build(const struct gen_port *s, const struct gen_port *d,
			const struct frame_bth *bth, const void *ext, size_t extlen,
			const void *payload, size_t plen, uint8_t *buf, size_t cap)
{
	struct frame_roce_addr ra = { .saddr = s->ipv4, .daddr = d->ipv4,
				      .sport = (uint16_t)(0xc000 | (bth->dqpn & 0x3fff)) };
	struct frame_ib_addr ia = { .slid = s->lid, .dlid = d->lid };

	if (s->ll != EMU_LL_ETHERNET)
		return frame_build_ib(buf, cap, &ia, bth, ext, extlen, payload, plen);
	memcpy(ra.smac, s->mac, 6);
	memcpy(ra.dmac, d->mac, 6);
	return frame_build_roce(buf, cap, &ra, bth, ext, extlen, payload, plen);
}

static void flow_fire(struct emu_clock *clk, struct emu_timer *tm, void *arg)
{
	struct gen_flow *fl = arg;
	uint8_t payload[300], buf[512];
	size_t plen = 1 + (fl->psn * 53) % 287, len;
	struct frame_bth bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .ack_req = true,
				 .pkey = 0xffff, .dqpn = fl->dqpn, .psn = fl->psn };

	for (size_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(fl->psn * 7 + i);
	len = gen_build(fl->src, fl->dst, &bth, NULL, 0, payload, plen, buf, sizeof(buf));
	gen_send(fl->g, fl->src->ep, buf, len);
	fl->psn = (fl->psn + 1) & 0xffffff;
	if (++fl->sent < GEN_SENDS)
		emu_timer_arm_in(clk, tm, fl->period);
}

static struct gen_port *port_by_ep(struct gen *g, int ep)
{
	for (size_t i = 0; i < g->nports; i++)
		if (g->ports[i].ep == ep)
			return &g->ports[i];
	return NULL;
}

static struct gen_port *port_by_addr(struct gen *g, int ll, const uint8_t *frame)
{
	for (size_t i = 0; i < g->nports; i++) {
		struct gen_port *p = &g->ports[i];

		if (p->ll != ll)
			continue;
		if (ll == EMU_LL_ETHERNET ? !memcmp(frame + 6, p->mac, 6) :
					    (uint16_t)(frame[6] << 8 | frame[7]) == p->lid)
			return p;
	}
	return NULL;
}

/* A port's receiver: checks the frame is addressed to it, answers SENDs with ACKs. */
static void gen_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct gen_port *p = ctx;
	struct gen *g = p->g;
	size_t off = p->ll == EMU_LL_ETHERNET ? FRAME_ROCE_BTH_OFF : FRAME_IB_BTH_OFF;
	struct gen_port *src = port_by_addr(g, p->ll, frame);
	struct frame_bth in, ack;
	uint8_t aeth[4], buf[96];
	bool mine = p->ll == EMU_LL_ETHERNET ? !memcmp(frame, p->mac, 6) :
					       (uint16_t)(frame[2] << 8 | frame[3]) == p->lid;

	g->hash = fnv1a(g->hash, &p->ep, sizeof(p->ep));
	g->hash = fnv1a(g->hash, &now, sizeof(now));
	g->hash = fnv1a(g->hash, frame, len);
	if (!mine || !src || len < off + FRAME_BTH_LEN) {
		p->misdelivered++;
		return;
	}
	frame_parse_bth(frame + off, &in);
	if (in.opcode != FRAME_OP_RC_SEND_ONLY) {
		p->rx_ack++;
		return;
	}
	p->rx_send++;
	aeth[0] = 0;
	aeth[1] = (uint8_t)((in.psn + 1) >> 16);
	aeth[2] = (uint8_t)((in.psn + 1) >> 8);
	aeth[3] = (uint8_t)(in.psn + 1);
	ack = (struct frame_bth){ .opcode = FRAME_OP_RC_ACK, .pkey = 0xffff,
				  .dqpn = in.dqpn ^ 0x800000, .psn = in.psn };
	gen_send(g, p->ep, buf, gen_build(p, src, &ack, aeth, sizeof(aeth), NULL, 0, buf,
					  sizeof(buf)));
}

/* The port's view of the fabric: link layer, LID, and for RoCE the MAC and first IPv4 address
 * of the netdev bound to it. */
static void gen_port_init(struct gen *g, struct gen_port *gp, int ep)
{
	const struct emu_fabric *f = emu_topology_fabric(g->t);
	struct emu_endpoint e;
	const struct emu_host *h;
	const struct emu_port *po;

	assert_int_equal(emu_topology_endpoint_info(g->t, ep, &e), 0);
	h = &f->hosts[e.node];
	po = &h->devices[e.device].ports[e.port - 1];
	*gp = (struct gen_port){ .g = g, .ep = ep, .ll = po->link_layer, .lid = po->lid };
	for (size_t n = 0; n < h->nnetdevs; n++) {
		const struct emu_netdev *nd = &h->netdevs[n];

		if (nd->device != e.device || nd->port != e.port)
			continue;
		if (nd->hwaddr_len == 6)
			memcpy(gp->mac, nd->hwaddr, 6);
		for (size_t a = 0; a < nd->naddrs && !gp->ipv4; a++)
			if (nd->addrs[a].family == AF_INET)
				gp->ipv4 = ntohl(nd->addrs[a].addr.v4.s_addr);
	}
	assert_int_equal(emu_topology_set_rx(g->t, ep, gen_rx, gp), 0);
}

static void gen_add_flow(struct gen *g, struct gen_port *s, struct gen_port *d,
			 struct emu_clock *clk)
{
	size_t i = g->nflows++;
	struct gen_flow *fl = &g->flows[i];

	assert_true(g->nflows <= GEN_MAX_FLOWS);
	*fl = (struct gen_flow){ .g = g, .src = s, .dst = d, .dqpn = 0x100 + (uint32_t)i,
				 .psn = 0x1000 * (uint32_t)i, .period = 600 + 97 * (uint64_t)i };
	emu_timer_init(&fl->timer, flow_fire, fl);
	emu_timer_arm_at(clk, &fl->timer, 40 * (uint64_t)i);
}

/* Loads `text`, builds the topology with captures at prefix, runs the traffic to the end. */
static void gen_run(const char *text, const char *prefix, struct gen_result *r)
{
	struct emu_fabric *f = load_text(text);
	struct emu_clock clk;
	struct emu_error err;
	struct gen *g = calloc(1, sizeof(*g));
	struct emu_wire *w;
	struct emu_pcap *tap;

	assert_non_null(g);
	memset(r, 0, sizeof(*r));
	emu_clock_init(&clk, 0);
	g->t = emu_topology_build(f, &clk, prefix, &err);
	if (!g->t)
		fail_msg("build: %s", err.msg);
	g->hash = 0xcbf29ce484222325ULL;
	w = emu_topology_wire(g->t);
	/* every host port */
	for (int ep = 0; ep < (int)emu_topology_nendpoints(g->t); ep++) {
		struct emu_endpoint e;

		assert_int_equal(emu_topology_endpoint_info(g->t, ep, &e), 0);
		if (e.kind != EMU_EP_HOST_PORT)
			continue;
		assert_true(g->nports < GEN_MAX_PORTS);
		gen_port_init(g, &g->ports[g->nports++], ep);
	}
	/* Ethernet: both directions of every link */
	for (size_t l = 0; l < f->nlinks; l++) {
		const struct emu_link *lk = &f->links[l];
		struct gen_port *a, *b;

		if (emu_wire_link_layer(w, (int)l) != EMU_LL_ETHERNET)
			continue;
		a = port_by_ep(g, ep_of(g->t, &lk->a));
		b = port_by_ep(g, ep_of(g->t, &lk->b));
		assert_non_null(a);
		assert_non_null(b);
		gen_add_flow(g, a, b, &clk);
		gen_add_flow(g, b, a, &clk);
	}
	/* IB: every ordered pair of CA ports with LIDs, through the switch */
	for (size_t i = 0; i < g->nports; i++)
		for (size_t j = 0; j < g->nports; j++)
			if (i != j && g->ports[i].ll == EMU_LL_INFINIBAND &&
			    g->ports[j].ll == EMU_LL_INFINIBAND && g->ports[i].lid &&
			    g->ports[j].lid)
				gen_add_flow(g, &g->ports[i], &g->ports[j], &clk);

	assert_int_equal(emu_clock_run_idle(&clk, 10000000, &r->fired), 0);
	assert_int_equal(g->err, 0);
	assert_int_equal(emu_wire_in_flight(w), 0);
	r->end_ns = emu_clock_now(&clk);
	r->hash = g->hash;
	r->nflows = g->nflows;
	r->nlinks = f->nlinks;
	r->nports = g->nports;
	assert_true(r->nlinks <= GEN_MAX_LINKS);
	for (size_t l = 0; l < f->nlinks; l++) {
		r->ll[l] = (uint64_t)emu_wire_link_layer(w, (int)l);
		for (int d = 0; d < 2; d++)
			assert_int_equal(emu_wire_counters(w, (int)l, (enum emu_wire_dir)d,
							   &r->ctr[l][d]), 0);
	}
	if (f->nswitches)
		assert_int_equal(emu_topology_switch_counters(g->t, 0, &r->sw), 0);
	for (size_t i = 0; i < g->nports; i++) {
		r->rx_send[i] = g->ports[i].rx_send;
		r->rx_ack[i] = g->ports[i].rx_ack;
		r->misdelivered += g->ports[i].misdelivered;
	}
	tap = emu_topology_tap(g->t, EMU_LL_ETHERNET);
	r->eth_frames = tap ? emu_pcap_frames(tap) : 0;
	tap = emu_topology_tap(g->t, EMU_LL_INFINIBAND);
	r->ib_frames = tap ? emu_pcap_frames(tap) : 0;
	assert_int_equal(emu_topology_free(g->t), 0);
	emu_clock_fini(&clk);
	emu_fabric_free(f);
	free(g);
}

/* Consistency of one run: nothing misdelivered, each capture holds every frame sent on its
 * links, delivered = sent - lost + duplicated on every direction. */
static void gen_check(const struct gen_result *r)
{
	uint64_t eth = 0, ib = 0;

	assert_int_equal(r->misdelivered, 0);
	for (size_t l = 0; l < r->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			const struct emu_wire_counters *c = &r->ctr[l][d];

			assert_int_equal(c->delivered, c->sent - c->dropped_loss + c->duplicated);
			assert_int_equal(c->dropped_down, 0);
			if (r->ll[l] == EMU_LL_ETHERNET)
				eth += c->sent;
			else
				ib += c->sent;
		}
	assert_int_equal(r->eth_frames, eth);
	assert_int_equal(r->ib_frames, ib);
	/* the switch forwards every unicast frame it is given: they are all addressed to CAs */
	assert_int_equal(r->sw.received, r->sw.forwarded);
}

static void assert_same_file(const char *p1, const char *p2, bool same)
{
	size_t n1, n2;
	uint8_t *b1 = read_all(p1, &n1), *b2 = read_all(p2, &n2);

	if (same) {
		assert_int_equal(n1, n2);
		assert_int_equal(memcmp(b1, b2, n1), 0);
	} else {
		assert_true(n1 != n2 || memcmp(b1, b2, n1) != 0);
	}
	free(b1);
	free(b2);
}

static const char mixed4_faults[] =
	"include mixed4.fabric\n"
	"# every link: jitter, loss, duplicates, reordering (the Ethernet link keeps its 2 us)\n"
	"faults delay=500ns jitter=300ns loss=3% duplicate=3% reorder=8%\n";
static const char mixed4_faults_seed[] =
	"include mixed4.fabric\n"
	"faults delay=500ns jitter=300ns loss=3% duplicate=3% reorder=8%\n"
	"seed 8\n";

static void dump(const char *what, const struct gen_result *r)
{
	if (!getenv("TOPO_DUMP"))
		return;
	printf("%s: flows %zu end %llu fired %llu eth %llu ib %llu hash %016llx\n", what, r->nflows,
	       (unsigned long long)r->end_ns, (unsigned long long)r->fired,
	       (unsigned long long)r->eth_frames, (unsigned long long)r->ib_frames,
	       (unsigned long long)r->hash);
	for (size_t l = 0; l < r->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			const struct emu_wire_counters *c = &r->ctr[l][d];

			printf("  link %zu dir %d: sent %llu delivered %llu loss %llu dup %llu "
			       "reord %llu\n", l, d, (unsigned long long)c->sent,
			       (unsigned long long)c->delivered,
			       (unsigned long long)c->dropped_loss,
			       (unsigned long long)c->duplicated, (unsigned long long)c->reordered);
		}
	for (size_t i = 0; i < r->nports; i++)
		printf("  port %zu: send %llu ack %llu\n", i, (unsigned long long)r->rx_send[i],
		       (unsigned long long)r->rx_ack[i]);
	printf("  switch: received %llu forwarded %llu\n", (unsigned long long)r->sw.received,
	       (unsigned long long)r->sw.forwarded);
}

/* Expected wire counters of one link direction. */
struct exp_ctr {
	uint64_t sent, delivered, loss, dup, reord;
};

static void assert_ctrs(const struct gen_result *r, const struct exp_ctr (*exp)[2])
{
	for (size_t l = 0; l < r->nlinks; l++)
		for (int d = 0; d < 2; d++) {
			const struct emu_wire_counters *c = &r->ctr[l][d];

			if (c->sent != exp[l][d].sent || c->delivered != exp[l][d].delivered ||
			    c->dropped_loss != exp[l][d].loss || c->duplicated != exp[l][d].dup ||
			    c->reordered != exp[l][d].reord)
				fail_msg("link %zu dir %d: sent %llu delivered %llu loss %llu dup "
					 "%llu reord %llu", l, d, (unsigned long long)c->sent,
					 (unsigned long long)c->delivered,
					 (unsigned long long)c->dropped_loss,
					 (unsigned long long)c->duplicated,
					 (unsigned long long)c->reordered);
		}
}

static void test_determinism_mixed4(void **state)
{
	struct gen_result r1, r2, r3;

	(void)state;
	gen_run(mixed4_faults, scratch_path("a"), &r1);
	gen_run(mixed4_faults, scratch_path("b"), &r2);
	gen_run(mixed4_faults_seed, scratch_path("c"), &r3);
	dump("seed 7", &r1);
	dump("seed 8", &r3);
	gen_check(&r1);
	gen_check(&r3);

	/* same seed: same counters, same deliveries, byte-identical captures */
	assert_memory_equal(&r1, &r2, sizeof(r1));
	assert_same_file(scratch_path("a-eth.pcap"), scratch_path("b-eth.pcap"), true);
	assert_same_file(scratch_path("a-ib.pcap"), scratch_path("b-ib.pcap"), true);
	/* another seed: other decisions, other bytes */
	assert_true(r1.hash != r3.hash);
	assert_same_file(scratch_path("a-eth.pcap"), scratch_path("c-eth.pcap"), false);
	assert_same_file(scratch_path("a-ib.pcap"), scratch_path("c-ib.pcap"), false);

	/* the exact run of seed 7: 2 Ethernet flows + 6 IB flows (3 CAs, every ordered pair) */
	assert_int_equal(r1.nflows, 8);
	assert_int_equal(r1.nlinks, 4);
	assert_int_equal(r1.nports, 5);
	{
		/* sent, delivered, lost, duplicated, reordered; dir 0 = from the link's a */
		static const struct exp_ctr exp[4][2] = {
			{ { 80, 81, 0, 1, 8 }, { 81, 80, 5, 4, 4 } },         /* roce-a -- gw */
			{ { 160, 157, 6, 3, 15 }, { 161, 159, 5, 3, 11 } },   /* gw -- ibsw/1 */
			{ { 161, 163, 3, 5, 12 }, { 163, 165, 4, 6, 9 } },    /* ib-a -- ibsw/2 */
			{ { 160, 162, 1, 3, 9 }, { 158, 157, 4, 3, 6 } },     /* ib-b -- ibsw/3 */
		};
		/* roce-a, gw rxe0, gw mlx5_0, ib-a, ib-b */
		static const uint64_t sends[5] = { 40, 41, 80, 81, 80 };
		static const uint64_t acks[5] = { 40, 40, 79, 84, 77 };

		assert_ctrs(&r1, exp);
		assert_memory_equal(r1.rx_send, sends, sizeof(sends));
		assert_memory_equal(r1.rx_ack, acks, sizeof(acks));
	}
	assert_int_equal(r1.sw.received, 482);
	assert_int_equal(r1.sw.forwarded, 482);
	assert_int_equal(r1.eth_frames, 161);
	assert_int_equal(r1.ib_frames, 963);
	assert_int_equal(r1.end_ns, 99062);
	assert_int_equal(r1.fired, 1416);
	scratch_cleanup();
}

static const char ref2_faults[] =
	"include rxe-ref2.fabric\n"
	"faults delay=1us jitter=700ns loss=5% duplicate=4% reorder=10%\n";
static const char ref2_faults_seed[] =
	"include rxe-ref2.fabric\n"
	"faults delay=1us jitter=700ns loss=5% duplicate=4% reorder=10%\n"
	"seed 2\n";

static void test_determinism_rxe_ref2(void **state)
{
	struct gen_result r1, r2, r3;

	(void)state;
	gen_run(ref2_faults, scratch_path("a"), &r1);
	gen_run(ref2_faults, scratch_path("b"), &r2);
	gen_run(ref2_faults_seed, scratch_path("c"), &r3);
	dump("ref2 seed 1", &r1);
	dump("ref2 seed 2", &r3);
	gen_check(&r1);
	gen_check(&r3);
	assert_memory_equal(&r1, &r2, sizeof(r1));
	assert_same_file(scratch_path("a-eth.pcap"), scratch_path("b-eth.pcap"), true);
	assert_same_file(scratch_path("a-eth.pcap"), scratch_path("c-eth.pcap"), false);
	assert_false(file_exists(scratch_path("a-ib.pcap")));
	assert_int_equal(r1.nflows, 2);
	{
		static const struct exp_ctr exp[1][2] = {
			{ { 81, 83, 1, 3, 10 }, { 83, 81, 4, 2, 8 } },
		};
		static const uint64_t sends[2] = { 41, 43 }, acks[2] = { 40, 40 };

		assert_ctrs(&r1, exp);
		assert_memory_equal(r1.rx_send, sends, sizeof(sends));
		assert_memory_equal(r1.rx_ack, acks, sizeof(acks));
	}
	assert_int_equal(r1.eth_frames, 164);
	assert_int_equal(r1.ib_frames, 0);
	assert_int_equal(r1.end_ns, 30015);
	assert_int_equal(r1.fired, 239);
	scratch_cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rxe_ref2_endpoints, teardown),
		cmocka_unit_test_teardown(test_mixed4_endpoints, teardown),
		cmocka_unit_test_teardown(test_ib_endpoints, teardown),
		cmocka_unit_test_teardown(test_build_errors, teardown),
		cmocka_unit_test_teardown(test_ib_forwarding, teardown),
		cmocka_unit_test_teardown(test_two_switches_lmc, teardown),
		cmocka_unit_test_teardown(test_determinism_mixed4, teardown),
		cmocka_unit_test_teardown(test_determinism_rxe_ref2, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
