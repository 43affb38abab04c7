/* The fake SA's PortInfoRecords, SMInfoRecord and ClassPortInfo on fixtures/ib.fabric (one
 * 36-port switch at LID 1 hosting the SM, CAs at LIDs 2, 3, 4 on switch ports 1-3): which
 * records a query selects, by OpenSM's rules (osm_sa_portinfo_record.c,
 * osm_sa_sminfo_record.c), and the exact bytes of ClassPortInfo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/hca/pkt.h"
#include "emu/ib/tests/sa_test.h"

#define PIR_STRIDE 72

static struct sa_on_fabric ib;

/* One request: the response's status and record count (GetTable: by the RMPP payload). */
static uint8_t *ask(uint8_t method, const struct emu_mad_record_desc *d, uint64_t mask,
		    const void *rec, uint32_t attr_mod, uint16_t *status, size_t *n)
{
	uint8_t mad[EMU_MAD_LEN], *r;
	size_t len;

	sa_req(mad, method, 0x1234, d, mask, rec);
	emu_be32_put(mad + 20, attr_mod);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	*status = emu_be16_get(r + 4);
	if (method == EMU_MAD_METHOD_GET_TABLE)
		*n = *status ? 0 : (len - EMU_SA_HDR_LEN) / (d->attr_offset * 8u);
	else
		*n = *status ? 0 : 1;
	return r;
}

static const uint8_t *rec_at(const uint8_t *r, size_t i)
{
	return r + EMU_SA_HDR_LEN + i * PIR_STRIDE;
}

static void pir_whole_subnet(void **state)
{
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* empty mask: the switch's 37 ports (0 to 36, all with the switch's LID), then ... the
	 * CAs' one port each, in OpenSM's node-table order */
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc, 0, NULL, 0, &status, &n);
	assert_int_equal(status, 0);
	assert_int_equal(n, 37 + 3);
	for (size_t i = 0, sw = 0, ca = 0; i < n; i++) {
		const uint8_t *w = rec_at(r, i);

		if (emu_be16_get(w) == 1) {
			assert_int_equal(w[2], sw++);
		} else {
			assert_int_equal(w[2], 1);
			ca |= 1u << emu_be16_get(w);
		}
		if (i == n - 1) {
			assert_int_equal(sw, 37);
			assert_int_equal(ca, 1u << 2 | 1u << 3 | 1u << 4);
		}
	}
	free(r);
}

static void pir_by_lid_and_port(void **state)
{
	struct emu_sa_portinfo_rec q = { .lid = 3, .port_num = 1 }, got;
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* a CA port: its PortInfo as its SMA gives it */
	r = ask(EMU_MAD_METHOD_GET, &emu_sa_portinfo_rec_desc,
		EMU_PIR_COMP_LID | EMU_PIR_COMP_PORT_NUM, &q, 0, &status, &n);
	assert_int_equal(status, 0);
	assert_int_equal(r[3], EMU_MAD_METHOD_GET_RESP);
	emu_mad_record_unpack(&emu_sa_portinfo_rec_desc, r + EMU_SA_HDR_LEN, &got);
	assert_int_equal(got.lid, 3);
	assert_int_equal(got.port_num, 1);
	assert_int_equal(got.base_lid, 3);
	assert_int_equal(got.sm_lid, 1);
	assert_int_equal(got.local_port, 1);
	assert_int_equal(got.port_state, 4); /* Active */
	assert_int_equal(got.gid_prefix, 0xfe80000000000000ull);
	assert_int_equal(got.m_key, 0);
	free(r);

	/* the switch's LID without a port: all its ports; switch port 2 leads to ib-b */
	q = (struct emu_sa_portinfo_rec){ .lid = 1 };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc, EMU_PIR_COMP_LID, &q, 0,
		&status, &n);
	assert_int_equal(n, 37);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(emu_be16_get(rec_at(r, i)), 1);
		assert_int_equal(rec_at(r, i)[2], i);
	}
	emu_mad_record_unpack(&emu_sa_portinfo_rec_desc, rec_at(r, 2), &got);
	assert_int_equal(got.port_state, 4);
	assert_int_equal(got.base_lid, 0); /* external switch ports have no LID */
	emu_mad_record_unpack(&emu_sa_portinfo_rec_desc, rec_at(r, 5), &got);
	assert_int_equal(got.port_state, 1); /* Down: no link */
	free(r);

	/* Active ports of the switch only: port 0 and the three cabled ones */
	q = (struct emu_sa_portinfo_rec){ .lid = 1, .port_state = 4 };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc,
		EMU_PIR_COMP_LID | (1ull << 15), &q, 0, &status, &n);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rec_at(r, i)[2], i);
	free(r);

	/* a LID nobody has: no records; Get says so with ERR_NO_RECORDS */
	q = (struct emu_sa_portinfo_rec){ .lid = 99 };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc, EMU_PIR_COMP_LID, &q, 0,
		&status, &n);
	assert_int_equal(status, 0);
	assert_int_equal(n, 0);
	free(r);
	r = ask(EMU_MAD_METHOD_GET, &emu_sa_portinfo_rec_desc, EMU_PIR_COMP_LID, &q, 0, &status,
		&n);
	assert_int_equal(status, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);

	/* a CA has no port 0 */
	q = (struct emu_sa_portinfo_rec){ .lid = 2, .port_num = 0 };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc,
		EMU_PIR_COMP_LID | EMU_PIR_COMP_PORT_NUM, &q, 0, &status, &n);
	assert_int_equal(n, 0);
	free(r);
}

static void pir_capability_mask_match(void **state)
{
	/* saquery -s: the IsSM ports, CapabilityMask bit 1 matched by bits set */
	struct emu_sa_portinfo_rec q = { .cap_mask = 1u << 1 };
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc, EMU_PIR_COMP_CAP_MASK, &q,
		EMU_PIR_ENHANCED_MATCH, &status, &n);
	assert_int_equal(status, 0);
	assert_int_equal(n, 1);
	assert_int_equal(emu_be16_get(rec_at(r, 0)), 1);
	assert_int_equal(rec_at(r, 0)[2], 0);
	free(r);
	/* without the modifier's bit 31 the mask must be equal: no port has exactly IsSM */
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_portinfo_rec_desc, EMU_PIR_COMP_CAP_MASK, &q, 0,
		&status, &n);
	assert_int_equal(n, 0);
	free(r);
}

static void pir_methods(void **state)
{
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	/* Get and GetTable only, as OpenSM */
	r = ask(EMU_MAD_METHOD_SET, &emu_sa_portinfo_rec_desc, 0, NULL, 0, &status, &n);
	assert_int_equal(status, EMU_MAD_STATUS_UNSUP_METHOD_ATTR);
	free(r);
	r = ask(EMU_MAD_METHOD_DELETE, &emu_sa_sminfo_rec_desc, 0, NULL, 0, &status, &n);
	assert_int_equal(status, EMU_MAD_STATUS_UNSUP_METHOD_ATTR);
	free(r);
}

static void smir_the_one_sm(void **state)
{
	struct emu_sa_sminfo_rec q = { .lid = 1 }, got;
	uint16_t status;
	size_t n;
	uint8_t *r;

	(void)state;
	r = ask(EMU_MAD_METHOD_GET, &emu_sa_sminfo_rec_desc, EMU_SMIR_COMP_LID, &q, 0, &status,
		&n);
	assert_int_equal(status, 0);
	emu_mad_record_unpack(&emu_sa_sminfo_rec_desc, r + EMU_SA_HDR_LEN, &got);
	assert_int_equal(got.lid, 1);
	assert_int_equal(got.guid, 0x0002c90200000001ull);
	assert_int_equal(got.sm_key, 0);
	assert_int_equal(got.act_count, 0);
	assert_int_equal(got.priority, 0);
	assert_int_equal(got.sm_state, EMU_SM_STATE_MASTER);
	/* the record's bytes end at 25: the rest of the 32-byte stride is zero */
	for (size_t i = 25; i < EMU_MAD_LEN - EMU_SA_HDR_LEN; i++)
		assert_int_equal(r[EMU_SA_HDR_LEN + i], 0);
	free(r);
	/* another port's LID, another GUID, another state: no SM there */
	q = (struct emu_sa_sminfo_rec){ .lid = 2 };
	r = ask(EMU_MAD_METHOD_GET, &emu_sa_sminfo_rec_desc, EMU_SMIR_COMP_LID, &q, 0, &status,
		&n);
	assert_int_equal(status, EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	q = (struct emu_sa_sminfo_rec){ .guid = 0x0002c90300000a01ull };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_sminfo_rec_desc, EMU_SMIR_COMP_GUID, &q, 0,
		&status, &n);
	assert_int_equal(n, 0);
	free(r);
	q = (struct emu_sa_sminfo_rec){ .sm_state = 2 };
	r = ask(EMU_MAD_METHOD_GET_TABLE, &emu_sa_sminfo_rec_desc, EMU_SMIR_COMP_SM_STATE, &q, 0,
		&status, &n);
	assert_int_equal(n, 0);
	free(r);
}

static void class_port_info_bytes(void **state)
{
	static const uint8_t want[72] = {
		1, 2, 0x22, 0x00,                         /* versions, CapabilityMask */
		0x00, 0x02, 0x88, 0x04,                   /* CapabilityMask2 0x1440, RespTimeValue 4 */
		[33] = 0, [34] = 0, [35] = 1,             /* RedirectQP 1 */
		[36] = 0x80, [37] = 0x01, [38] = 0, [39] = 0,
		[68] = 0x80, [69] = 0x01, [70] = 0, [71] = 0,
	};
	uint8_t mad[EMU_MAD_LEN], *r;
	size_t len;

	(void)state;
	sa_req(mad, EMU_MAD_METHOD_GET, 0x99, NULL, 0, NULL);
	emu_be16_put(mad + 16, EMU_SA_ATTR_CLASS_PORT_INFO);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(len, EMU_MAD_LEN);
	assert_int_equal(r[3], EMU_MAD_METHOD_GET_RESP);
	assert_int_equal(emu_be16_get(r + 4), 0);
	assert_int_equal(emu_be16_get(r + 16), EMU_SA_ATTR_CLASS_PORT_INFO);
	assert_memory_equal(r + EMU_SA_HDR_LEN, want, sizeof(want));
	for (size_t i = EMU_SA_HDR_LEN + sizeof(want); i < EMU_MAD_LEN; i++)
		assert_int_equal(r[i], 0);
	free(r);
	/* Set: ERR_REQ_INVALID */
	sa_req(mad, EMU_MAD_METHOD_SET, 0x9a, NULL, 0, NULL);
	emu_be16_put(mad + 16, EMU_SA_ATTR_CLASS_PORT_INFO);
	assert_int_equal(emu_sa_handle(ib.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID));
	free(r);
}

static int setup(void **state)
{
	(void)state;
	if (sa_on_fabric_up(&ib, fixture_path("ib.fabric")))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sa_on_fabric_down(&ib);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pir_whole_subnet),	    cmocka_unit_test(pir_by_lid_and_port),
		cmocka_unit_test(pir_capability_mask_match), cmocka_unit_test(pir_methods),
		cmocka_unit_test(smir_the_one_sm),	    cmocka_unit_test(class_port_info_bytes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
