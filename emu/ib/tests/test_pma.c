/* The nodes' PMAs (emu/ib/pma.h) on fixtures/ib.fabric, with frames put on the topology's wire
 * by hand: ClassPortInfo, PortCounters and PortCountersExtended bytes, octets as words (VCRC not
 * counted), multicast, saturation, a switch's relay and receive errors, a discard at a down
 * port, Set with select masks, PortSelect rules, bad requests; no PMA on a RoCE port. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/ib/pma.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"

struct fx {
	struct emu_fabric *f;
	struct emu_clock clk;
	struct emu_topology *t;
	size_t a; /* host ib-a */
	struct emu_sma_node ca, sw;
};

static int setup(void **state)
{
	static struct fx x;
	struct emu_error err;

	x.f = emu_fabric_load(fixture_path("ib.fabric"), &err);
	if (!x.f)
		fail_msg("%s:%u: %s", err.file, err.line, err.msg);
	emu_clock_init(&x.clk, 0);
	x.t = emu_topology_build(x.f, &x.clk, NULL, &err);
	assert_non_null(x.t);
	x.a = (size_t)(emu_fabric_find_host(x.f, "ib-a") - x.f->hosts);
	assert_int_equal(emu_sma_find_lid(x.f, 2, &x.ca), 0);
	assert_int_equal(emu_sma_find_lid(x.f, 1, &x.sw), 0);
	*state = &x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	assert_int_equal(emu_topology_free(x->t), 0);
	emu_clock_fini(&x->clk);
	emu_fabric_free(x->f);
	return 0;
}

static void req(uint8_t m[256], uint8_t method, uint16_t attr, uint8_t sel, uint16_t mask)
{
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = EMU_MGMT_CLASS_PERF;
	m[2] = 1;
	m[3] = method;
	m[15] = 0x2a;
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	m[65] = sel;
	m[66] = (uint8_t)(mask >> 8);
	m[67] = (uint8_t)mask;
}

static uint16_t status(const uint8_t *m)
{
	return (uint16_t)(m[4] << 8 | m[5]);
}

static uint32_t be32at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64at(const uint8_t *p)
{
	return (uint64_t)be32at(p) << 32 | be32at(p + 4);
}

/* An IB frame of `len` bytes (VCRC included) from LID slid to dlid, LVer 0 unless lver. */
static void ib_frame(uint8_t *fr, size_t len, uint16_t slid, uint16_t dlid, uint8_t lver)
{
	memset(fr, 0, len);
	fr[0] = lver;
	fr[1] = 0x02; /* LNH: IBA local */
	fr[2] = (uint8_t)(dlid >> 8);
	fr[3] = (uint8_t)dlid;
	fr[6] = (uint8_t)(slid >> 8);
	fr[7] = (uint8_t)slid;
}

static int host_ep(struct fx *x)
{
	return emu_topology_port_endpoint(x->t, x->a, 0, 1);
}

static void test_class_port_info(void **state)
{
	struct fx *x = *state;
	uint8_t m[256], want[192] = { 1, 1, 0x02, 0x00, 0, 0, 0, 18 };

	req(m, 0x01, EMU_PMA_ATTR_CLASS_PORT_INFO, 0, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(m[3], 0x81);
	assert_int_equal(status(m), 0);
	assert_int_equal(m[15], 0x2a); /* the TID stays */
	assert_memory_equal(m + 64, want, 192);
	req(m, 0x01, EMU_PMA_ATTR_CLASS_PORT_INFO, 0, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	want[2] = 0x13; /* AllPortSelect, ExtendedWidth, PortXmitWait */
	assert_memory_equal(m + 64, want, 192);
}

/* ib-a sends a 2078-byte unicast frame (VCRC included) and a 30-byte one to an MLID; the switch
 * forwards the first to ib-b and drops the second (no such group). */
static void test_counters(void **state)
{
	struct fx *x = *state;
	uint8_t fr[2078], m[256], want[192];

	ib_frame(fr, sizeof(fr), 2, 3, 0);
	assert_int_equal(emu_wire_send(emu_topology_wire(x->t), host_ep(x), fr, sizeof(fr)), 0);
	ib_frame(fr, 30, 2, 0xc001, 0);
	assert_int_equal(emu_wire_send(emu_topology_wire(x->t), host_ep(x), fr, 30), 0);
	assert_int_equal(emu_clock_run_idle(&x->clk, 1000, NULL), 0);

	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0);
	memset(want, 0, sizeof(want));
	want[1] = 1;
	/* PortXmitData: (2076 + 28) / 4 = 526 words; PortXmitPkts 2 */
	want[24 + 2] = 526 >> 8;
	want[24 + 3] = 526 & 0xff;
	want[32 + 3] = 2;
	assert_memory_equal(m + 64, want, 192);

	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS_EXT, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(be64at(m + 64 + 8), 526);
	assert_int_equal(be64at(m + 64 + 16), 0);
	assert_int_equal(be64at(m + 64 + 24), 2);
	assert_int_equal(be64at(m + 64 + 40), 1); /* unicast */
	assert_int_equal(be64at(m + 64 + 56), 1); /* multicast */

	/* the switch: port 1 received both, port 2 sent the unicast one; the multicast one has
	 * no group: PortRcvSwitchRelayErrors of port 1 */
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(m[64 + 12] << 8 | m[64 + 13], 1);
	assert_int_equal(be32at(m + 64 + 28), 526);
	assert_int_equal(be32at(m + 64 + 36), 2);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 2, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(be32at(m + 64 + 24), 519);
	assert_int_equal(be32at(m + 64 + 32), 1);
	assert_int_equal(be32at(m + 64 + 28), 0);
	/* all ports */
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 0xff, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(m[64 + 1], 0xff);
	assert_int_equal(be32at(m + 64 + 24), 519);
	assert_int_equal(be32at(m + 64 + 28), 526);

	/* a malformed frame (LVer 1): PortRcvErrors of the switch's port 1 */
	ib_frame(fr, 30, 2, 3, 1);
	assert_int_equal(emu_wire_send(emu_topology_wire(x->t), host_ep(x), fr, 30), 0);
	assert_int_equal(emu_clock_run_idle(&x->clk, 1000, NULL), 0);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(m[64 + 8] << 8 | m[64 + 9], 1);

	/* Set: the switch's every port, PortRcvErrors and PortRcvPkts only (0x8008) */
	req(m, 0x02, EMU_PMA_ATTR_PORT_COUNTERS, 0xff, 0x8008);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(status(m), 0);
	assert_int_equal(m[64 + 2] << 8 | m[64 + 3], 0); /* the Get's answer */
	assert_int_equal(m[64 + 8] << 8 | m[64 + 9], 0);
	assert_int_equal(m[64 + 12] << 8 | m[64 + 13], 1);
	assert_int_equal(be32at(m + 64 + 36), 0);
	assert_int_equal(be32at(m + 64 + 28), 526 + 7);
}

static void test_discard_and_saturation(void **state)
{
	struct fx *x = *state;
	struct emu_wire *w = emu_topology_wire(x->t);
	struct emu_wire_port_counters c;
	uint8_t fr[30], m[256];

	ib_frame(fr, sizeof(fr), 2, 3, 0);
	/* test_counters sent 3 frames from this port */
	assert_int_equal(emu_wire_port_counters(w, host_ep(x), &c), 0);
	assert_int_equal(c.xmit_pkts, 3);
	assert_int_equal(emu_wire_set_endpoint_down(w, host_ep(x), true), 0);
	assert_int_equal(emu_wire_send(w, host_ep(x), fr, sizeof(fr)), 0);
	assert_int_equal(emu_wire_set_endpoint_down(w, host_ep(x), false), 0);
	assert_int_equal(emu_wire_port_counters(w, host_ep(x), &c), 0);
	assert_int_equal(c.xmit_discards, 1);
	assert_int_equal(c.xmit_pkts, 3);

	/* 32-bit and 16-bit fields saturate; the extended ones carry the full count */
	c.xmit_octets = 4ull * 0x100000005ull;
	c.xmit_pkts = 0x100000000ull;
	c.xmit_discards = 0x12345;
	assert_int_equal(emu_wire_port_counters_set(w, host_ep(x), &c), 0);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(m[64 + 14] << 8 | m[64 + 15], 0xffff);
	assert_int_equal(be32at(m + 64 + 24), 0xffffffffu);
	assert_int_equal(be32at(m + 64 + 32), 0xffffffffu);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS_EXT, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_true(be64at(m + 64 + 8) == 0x100000005ull);
	/* the extended Set of PortXmitData: the 32-bit view is cleared too */
	req(m, 0x02, EMU_PMA_ATTR_PORT_COUNTERS_EXT, 1, 0x0001);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_true(be64at(m + 64 + 8) == 0);
	assert_true(be64at(m + 64 + 24) == 0x100000000ull);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(be32at(m + 64 + 24), 0);
	/* perfquery -r: everything */
	req(m, 0x02, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0xffff);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(emu_wire_port_counters(w, host_ep(x), &c), 0);
	assert_int_equal(c.xmit_discards, 0);
	assert_int_equal(c.xmit_pkts, 0);
}

static void test_bad_requests(void **state)
{
	struct fx *x = *state;
	uint8_t m[256];

	/* a CA answers for the port the MAD reached only (port 1; 0xFF is not AllPortSelect) */
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 2, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x001c);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 0xff, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x001c);
	/* a switch: 0..36 and 0xFF; port 0 counts nothing */
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 37, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(status(m), 0x001c);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 0, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->sw, m), 0);
	assert_int_equal(status(m), 0);
	req(m, 0x01, 0x0010 /* PortSamplesControl */, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x000c);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	m[23] = 1; /* an attribute modifier */
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x001c);
	req(m, 0x02, EMU_PMA_ATTR_CLASS_PORT_INFO, 0, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x000c);
	req(m, 0x03 /* Send */, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x0008);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	m[2] = 2;
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), 0);
	assert_int_equal(status(m), 0x0004);
	/* no request: a response, another class */
	req(m, 0x81, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), -EINVAL);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	m[1] = 0x01;
	assert_int_equal(emu_pma_process(x->f, x->t, &x->ca, m), -EINVAL);
	/* no engine: every counter 0 */
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS_EXT, 1, 0);
	assert_int_equal(emu_pma_process(x->f, NULL, &x->ca, m), 0);
	for (int i = 66; i < 256; i++)
		assert_int_equal(m[i], 0);
}

/* rxe has no PMA (no process_mad): a RoCE port's node does not answer. */
static void test_roce_none(void **state)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load(fixture_path("rxe-ref2.fabric"), &err);
	struct emu_sma_node n = { EMU_EP_HOST_PORT, 0, 0, 1 };
	uint8_t m[256];

	(void)state;
	assert_non_null(f);
	req(m, 0x01, EMU_PMA_ATTR_PORT_COUNTERS, 1, 0);
	assert_int_equal(emu_pma_process(f, NULL, &n, m), -ETIMEDOUT);
	emu_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_port_info),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_discard_and_saturation),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_roce_none),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
