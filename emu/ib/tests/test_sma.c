/* The nodes' SMAs (emu/ib/sma.h) on fixtures/ib.fabric: SMPs by LID and by directed route,
 * exact attribute bytes, lost routes, unsupported attributes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/ib/sma.h"
#include "emu/sim/topology.h"

struct fx {
	struct emu_fabric *f;
	struct emu_clock clk;
	struct emu_topology *t;
	size_t a; /* host ib-a */
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

static void smp(uint8_t m[256], uint8_t cls, uint16_t attr, uint32_t mod)
{
	memset(m, 0, 256);
	m[0] = 1;
	m[1] = cls;
	m[2] = 1;
	m[3] = 0x01; /* Get */
	m[15] = 0x2a;
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	m[20] = (uint8_t)(mod >> 24);
	m[21] = (uint8_t)(mod >> 16);
	m[22] = (uint8_t)(mod >> 8);
	m[23] = (uint8_t)mod;
	if (cls == EMU_MGMT_CLASS_SUBN_DR)
		memset(m + 32, 0xff, 4); /* DrSLID, DrDLID permissive */
}

static void dr(uint8_t m[256], const uint8_t *path, unsigned hops)
{
	m[7] = (uint8_t)hops;
	memcpy(m + 128, path, hops + 1);
}

static uint16_t status(const uint8_t *m)
{
	return (uint16_t)(m[4] << 8 | m[5]);
}

static void test_nodeinfo_by_lid(void **state)
{
	struct fx *x = *state;
	static const uint8_t want[40] = {
		1, 1, 1, 1,                                     /* versions, CA, 1 port */
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x00, /* SystemImageGUID */
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x00, /* NodeGUID */
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x0b, 0x01, /* PortGUID */
		0x00, 0x40, 0x10, 0x17,                         /* PartitionCap 64, DeviceID */
		0, 0, 0, 0,                                     /* Revision */
		1, 0x00, 0x02, 0xc9,                            /* LocalPortNum, VendorID */
	};
	uint8_t m[256];

	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 3, m), 0);
	assert_int_equal(m[3], 0x81);
	assert_int_equal(status(m), 0);
	assert_int_equal(m[15], 0x2a);
	assert_memory_equal(m + 64, want, sizeof(want));
}

static void test_dr_switch(void **state)
{
	struct fx *x = *state;
	static const uint8_t path[] = { 0, 1 };
	uint8_t m[256];

	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_NODE_INFO, 0);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_int_equal(status(m), 0x8000);   /* direction bit, status 0 */
	assert_int_equal(m[64 + 2], 2);        /* switch */
	assert_int_equal(m[64 + 3], 36);
	assert_int_equal(m[64 + 30], 0xc7);    /* DeviceID 0xc738 from ib.topo */
	assert_int_equal(m[64 + 31], 0x38);
	assert_int_equal(m[64 + 36], 1);       /* arrived at port 1 */

	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_NODE_DESC, 0);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_string_equal((char *)m + 64, "SwitchX -  Mellanox Technologies");
}

static void test_dr_walk(void **state)
{
	struct fx *x = *state;
	static const uint8_t to_c[] = { 0, 1, 3 }, back[] = { 0, 1, 1 }, unplugged[] = { 0, 1, 5 },
			     through_ca[] = { 0, 1, 2, 1 }, big_port[] = { 0, 1, 37 };
	struct emu_sma_node n;

	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, to_c, 2, &n), 0);
	assert_int_equal(n.kind, EMU_EP_HOST_PORT);
	assert_string_equal(x->f->hosts[n.node].name, "ib-c");
	assert_int_equal(n.port, 1);
	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, back, 2, &n), 0);
	assert_string_equal(x->f->hosts[n.node].name, "ib-a");
	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, unplugged, 2, &n), -ETIMEDOUT);
	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, through_ca, 3, &n), -ETIMEDOUT);
	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, big_port, 2, &n), -ETIMEDOUT);
	/* hop count 0: the sender's own node */
	assert_int_equal(emu_sma_walk(x->f, x->a, 0, 1, to_c, 0, &n), 0);
	assert_int_equal((size_t)n.node, x->a);
}

static void test_portinfo(void **state)
{
	struct fx *x = *state;
	static const uint8_t path[] = { 0, 1 };
	uint8_t m[256];

	/* ib-c's port by LID: LID 4, SM LID 1, CapabilityMask, local port 1, 4x QDR, Active,
	 * LinkUp, MTU 4096 */
	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_PORT_INFO, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 4, m), 0);
	assert_int_equal(status(m), 0);
	assert_int_equal(m[64 + 8], 0xfe);
	assert_int_equal(m[64 + 9], 0x80);
	assert_int_equal(m[64 + 17], 4);
	assert_int_equal(m[64 + 19], 1);
	assert_int_equal(m[64 + 21], 0x01);
	assert_int_equal(m[64 + 28], 1);
	assert_int_equal(m[64 + 31], 2);       /* LinkWidthActive 4x */
	assert_int_equal(m[64 + 32], 0x74);    /* speeds supported SDR..QDR, Active */
	assert_int_equal(m[64 + 33], 0x52);    /* LinkUp, down default Polling */
	assert_int_equal(m[64 + 35], 0x47);    /* QDR active, SDR..QDR enabled */
	assert_int_equal(m[64 + 36] >> 4, 5);  /* NeighborMTU 4096 */

	/* the switch's port 2 (cabled to ib-b) and port 4 (no cable) by directed route */
	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_PORT_INFO, 2);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_int_equal(m[64 + 32] & 0xf, 4);
	assert_int_equal(m[64 + 33] >> 4, 5);
	assert_int_equal(m[64 + 28], 1);
	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_PORT_INFO, 4);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_int_equal(m[64 + 32] & 0xf, 1); /* Down */
	assert_int_equal(m[64 + 33] >> 4, 2);  /* Polling */
	/* port 0: the switch's LID 1, IsSM (the SM runs on it) */
	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_PORT_INFO, 0);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_int_equal(m[64 + 17], 1);
	assert_int_equal(m[64 + 23], 0x02);
	/* past the last port */
	smp(m, EMU_MGMT_CLASS_SUBN_DR, EMU_SMP_ATTR_PORT_INFO, 37);
	dr(m, path, 1);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 0, m), 0);
	assert_int_equal(status(m), 0x801c);
}

static void test_switch_tables(void **state)
{
	struct fx *x = *state;
	static const uint8_t want[6] = { 0xff, 0, 1, 2, 3, 0xff };
	uint8_t m[256];

	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_SWITCH_INFO, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 1, m), 0);
	assert_int_equal(status(m), 0);
	assert_int_equal(m[64 + 0] << 8 | m[64 + 1], 0xc000);
	assert_int_equal(m[64 + 6] << 8 | m[64 + 7], 4); /* LinearFDBTop: LID 4 */

	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_LFT, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 1, m), 0);
	assert_memory_equal(m + 64, want, sizeof(want));
	for (unsigned i = 6; i < 64; i++)
		assert_int_equal(m[64 + i], 0xff);
}

static void test_unanswered(void **state)
{
	struct fx *x = *state;
	uint8_t m[256];

	/* a CA has no SwitchInfo; nobody has SMInfo here */
	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_SWITCH_INFO, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 3, m), 0);
	assert_int_equal(status(m), 0x000c);
	smp(m, EMU_MGMT_CLASS_SUBN_LID, 0x0020, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 1, m), 0);
	assert_int_equal(status(m), 0x000c);
	/* no node has LID 9; a response is no request */
	smp(m, EMU_MGMT_CLASS_SUBN_LID, EMU_SMP_ATTR_NODE_INFO, 0);
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 9, m), -ETIMEDOUT);
	m[3] = 0x81;
	assert_int_equal(emu_sma_process(x->f, x->t, x->a, 0, 1, 3, m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nodeinfo_by_lid),
		cmocka_unit_test(test_dr_switch),
		cmocka_unit_test(test_dr_walk),
		cmocka_unit_test(test_portinfo),
		cmocka_unit_test(test_switch_tables),
		cmocka_unit_test(test_unanswered),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
