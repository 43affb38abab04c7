/* CM wire formats: golden bytes of REQ, MRA, REP, RTU, REJ, DREQ, DREP, SIDR_REQ and SIDR_REP
 * written out by hand from IBTA tables 106-120 (not from the layout tables), round trips,
 * every field's range check, header and length errors, REJ reason names, private-data sizes,
 * the CMA IP header for IPv4 and IPv6, and the IP service IDs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cm_samples.h"
#include "emu/ib/cm_mad.h"

/* A golden MAD: the non-zero runs at their MAD offsets (header at 0, data at 24). */
struct run {
	unsigned off, len;
	const uint8_t *b;
};
#define RUN(o, ...) { o, sizeof((const uint8_t[]){ __VA_ARGS__ }), (const uint8_t[]){ __VA_ARGS__ } }
#define HDR(attr_lo, ...) RUN(0, 0x01, 0x07, 0x02, 0x03, 0, 0, 0, 0, __VA_ARGS__, 0x00, attr_lo)

static void golden(uint8_t out[256], const struct run *r, size_t n)
{
	memset(out, 0, 256);
	for (size_t i = 0; i < n; i++)
		memcpy(out + r[i].off, r[i].b, r[i].len);
}

#define TID1 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x12, 0x34
#define TID2 0x00, 0x00, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44

static const struct run gold_req[] = {
	HDR(0x10, TID1), RUN(20, 0x00, 0x00, 0x00, 0x03), /* attr mod = ECE options */
	RUN(24, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x02, 0xc9), /* comm ID, vendor ID */
	RUN(32, 0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x4e, 0x20), /* service ID */
	RUN(40, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3), /* CA GUID */
	RUN(56, 0x00, 0x00, 0x11, 0x04), /* QPN 0x11, responder resources 4 */
	RUN(60, 0x00, 0x00, 0x00, 0x04), /* EECN 0, initiator depth 4 */
	RUN(64, 0x00, 0x00, 0x00, 0xa1), /* remote EECN; timeout 20 << 3 | RC << 1 | E2E */
	RUN(68, 0xab, 0xcd, 0xef, 0xa7), /* PSN; local timeout 20 << 3 | retry 7 */
	RUN(72, 0xff, 0xff, 0x37, 0xf0), /* P_Key; MTU 3 << 4 | RNR 7; max retries 15 << 4 */
	RUN(90, 0xff, 0xff, 0xc0, 0x00, 0x02, 0x41), /* primary local GID ::ffff:192.0.2.65 */
	RUN(106, 0xff, 0xff, 0xc0, 0x00, 0x02, 0x42),
	RUN(115, 0x03), /* packet rate */
	RUN(117, 0x40, 0x00, 0x88), /* hop limit 64; SL 0; ACK timeout 17 << 3 */
	/* private data at 164: CMA header 0x00, IPv4 << 4, port 0xc000, src, dst; "hello" */
	RUN(164, 0x00, 0x40, 0xc0, 0x00), RUN(180, 0xc0, 0x00, 0x02, 0x41),
	RUN(196, 0xc0, 0x00, 0x02, 0x42), RUN(200, 'h', 'e', 'l', 'l', 'o'),
};

static const struct run gold_mra[] = {
	HDR(0x11, TID1),
	RUN(24, 0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44, 0x00, 0xc0), /* MRAed REQ, 24 << 3 */
};

static const struct run gold_rep[] = {
	HDR(0x13, TID1), RUN(20, 0x00, 0x00, 0x00, 0x03),
	RUN(24, 0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44), /* comm IDs; Q_Key 0 */
	RUN(36, 0x00, 0x00, 0x12, 0x00), /* QPN, vendor ID[23:16] */
	RUN(40, 0x00, 0x00, 0x00, 0x02), /* EECN, vendor ID[15:8] */
	RUN(44, 0x12, 0x34, 0x56, 0xc9), /* PSN, vendor ID[7:0] */
	RUN(48, 0x04, 0x04, 0x79, 0xe0), /* resources, depth, ack delay 15 << 3 | E2E, RNR 7 << 5 */
	RUN(52, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xd4, 0xe5, 0xf6),
	RUN(60, 'w', 'o', 'r', 'l', 'd'),
};

static const struct run gold_rtu[] = {
	HDR(0x14, TID1), RUN(24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88),
};

static const struct run gold_rej[] = {
	HDR(0x12, TID1), RUN(24, 0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44),
	RUN(32, 0x80, 0x10, 0x00, 0x04), /* REJected OTHER << 6, ARI length 8 << 1, reason 4 */
	RUN(36, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3), /* ARI */
	RUN(108, 'n', 'o'),
};

static const struct run gold_dreq[] = {
	HDR(0x15, TID2), RUN(24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0x12),
};

static const struct run gold_drep[] = {
	HDR(0x16, TID2), RUN(24, 0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44),
};

static const struct run gold_sidr_req[] = {
	HDR(0x17, TID1),
	RUN(24, 0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11,
	    0x4e, 0x21),
	RUN(40, 0x00, 0x60, 0x12, 0x34, 0xfe, 0x80), RUN(59, 0x01), /* IPv6 CMA header */
	RUN(60, 0xfe, 0x80), RUN(75, 0x02),
};

static const struct run gold_sidr_rep[] = {
	HDR(0x18, TID1),
	RUN(24, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0xc9, 0x00, 0x00, 0x13, 0xab, 0x00, 0x00,
	    0x00, 0x00, 0x01, 0x11, 0x4e, 0x21, 0x01, 0x23, 0x45, 0x67),
};

static const struct {
	uint16_t attr;
	const struct run *r;
	size_t n;
} goldens[] = {
#define G(a, x) { a, x, sizeof(x) / sizeof(x[0]) }
	G(EMU_CM_ATTR_REQ, gold_req),	    G(EMU_CM_ATTR_MRA, gold_mra),
	G(EMU_CM_ATTR_REP, gold_rep),	    G(EMU_CM_ATTR_RTU, gold_rtu),
	G(EMU_CM_ATTR_REJ, gold_rej),	    G(EMU_CM_ATTR_DREQ, gold_dreq),
	G(EMU_CM_ATTR_DREP, gold_drep),	    G(EMU_CM_ATTR_SIDR_REQ, gold_sidr_req),
	G(EMU_CM_ATTR_SIDR_REP, gold_sidr_rep),
};
#define NGOLD (sizeof(goldens) / sizeof(goldens[0]))

static void dump_diff(const uint8_t *a, const uint8_t *b)
{
	for (unsigned i = 0; i < 256; i++)
		if (a[i] != b[i])
			print_message("  byte %u: got 0x%02x want 0x%02x\n", i, a[i], b[i]);
}

static void test_golden_bytes(void **state)
{
	(void)state;
	for (size_t i = 0; i < NGOLD; i++) {
		struct emu_cm_msg m;
		uint8_t got[256], want[256];

		cm_sample(goldens[i].attr, &m);
		assert_int_equal(emu_cm_pack(goldens[i].attr, &m, got), 0);
		golden(want, goldens[i].r, goldens[i].n);
		if (memcmp(got, want, 256)) {
			print_message("%s differs\n", emu_cm_attr_name(goldens[i].attr));
			dump_diff(got, want);
			fail();
		}
	}
}

/* Unpacking the golden bytes gives the sample back, with the private data length reported as
 * the field's size and the rest of the field zero. */
static void test_unpack_golden(void **state)
{
	(void)state;
	for (size_t i = 0; i < NGOLD; i++) {
		struct emu_cm_msg m, want;
		uint8_t mad[300];
		uint16_t attr = 0;

		golden(mad, goldens[i].r, goldens[i].n);
		memset(mad + 256, 0xee, 44); /* a longer UD payload: the tail is ignored */
		assert_int_equal(emu_cm_unpack(mad, sizeof(mad), &attr, &m), 0);
		assert_int_equal(attr, goldens[i].attr);
		cm_sample(goldens[i].attr, &want);
		assert_int_equal(m.private_data_len, emu_cm_private_data_size(attr));
		want.private_data_len = m.private_data_len;
		assert_memory_equal(&m, &want, sizeof(m));
	}
}

/* `width` bits from bit `pos` of d (0 = the MSB of d[0]), one at a time. */
static uint64_t wire_bits(const uint8_t *d, unsigned pos, unsigned width)
{
	uint64_t v = 0;

	for (unsigned b = pos; b < pos + width; b++)
		v = v << 1 | (d[b / 8] >> (7 - b % 8) & 1u);
	return v;
}

/* Every field of every layout, set to its maximum then to one past it, packs and unpacks; one
 * past fails with the field's name. Arrays are filled with a pattern. */
static void test_round_trip_all_fields(void **state)
{
	static const uint16_t attrs[] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
					  0x16, 0x17, 0x18, 0x19, 0x1a };
	(void)state;
	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
		const struct emu_cm_layout *l = emu_cm_layout(attrs[a]);
		assert_non_null(l);
		assert_int_equal(l->attr_id, attrs[a]);
		assert_int_equal(l->private_off + l->private_size, EMU_MAD_DATA_LEN);
		for (const struct emu_cm_field *f = l->fields; f->name; f++) {
			struct emu_cm_msg m, back;
			uint8_t mad[256];
			const char *bad = NULL;
			uint16_t attr;
			uint8_t *p;

			memset(&m, 0, sizeof(m));
			p = (uint8_t *)&m + f->member;
			if (f->size > 8) {
				for (unsigned i = 0; i < f->size; i++)
					p[i] = (uint8_t)(0xa0 + i);
				/* counted arrays need their count */
				if (!strcmp(f->name, "ARI"))
					m.reject_info_len = EMU_CM_REJ_ARI_LENGTH;
				if (!strcmp(f->name, "Additional Information"))
					m.info_len = EMU_CM_SIDR_REP_INFO_LENGTH;
			} else {
				uint64_t max = f->width >= 64 ? UINT64_MAX
							      : ((1ull << f->width) - 1) << f->shift;
				if (!strcmp(f->name, "Message MRAed") ||
				    !strcmp(f->name, "Message REJected"))
					max = 2;
				if (strstr(f->name, "Length"))
					max = 72;
				memcpy(p, &max, f->size); /* little-endian host assumed */
			}
			assert_int_equal(emu_cm_pack_ex(attrs[a], &m, mad, &bad), 0);
			/* the bits sit where the row says, read a bit at a time (the codec is
			 * straight-line code expanded from the rows, not a walk of this table) */
			if (f->size > 8) {
				assert_memory_equal(mad + EMU_MAD_HDR_LEN + f->byte, p, f->size);
			} else {
				uint64_t v = 0;

				memcpy(&v, p, f->size);
				v = v >> f->shift & (f->width >= 64 ? UINT64_MAX
								  : (1ull << f->width) - 1);
				assert_int_equal(wire_bits(mad + EMU_MAD_HDR_LEN,
							   8u * f->byte + f->bit, f->width),
						 v);
			}
			assert_int_equal(emu_cm_unpack(mad, 256, &attr, &back), 0);
			back.private_data_len = 0;
			assert_memory_equal(&m, &back, sizeof(m));

			if (f->size > 8 || f->width >= 64 || f->size * 8 == f->width + f->shift)
				continue; /* nothing is one past the maximum */
			uint64_t over = 0;
			memcpy(&over, p, f->size);
			over = f->shift ? over | 1ull << (f->width + f->shift)
					: over + 1;
			memcpy(p, &over, f->size);
			if (emu_cm_pack_ex(attrs[a], &m, mad, &bad) == 0) {
				/* a lower part of a split member: the next part carries it */
				assert_non_null(strstr(f->name, "Vendor ID["));
				continue;
			}
			assert_string_equal(bad, f->name);
		}
	}
}

static void test_range_errors(void **state)
{
	struct emu_cm_msg m;
	uint8_t mad[256];
	const char *bad;

	(void)state;
	cm_sample(EMU_CM_ATTR_REQ, &m);
	m.local_qpn = 0x1000000;
	assert_int_equal(emu_cm_pack_ex(EMU_CM_ATTR_REQ, &m, mad, &bad), -EMU_CM_ERANGE);
	assert_string_equal(bad, "Local QPN");
	cm_sample(EMU_CM_ATTR_REQ, &m);
	m.primary.flow_label = 0x100000;
	assert_int_equal(emu_cm_pack_ex(EMU_CM_ATTR_REQ, &m, mad, &bad), -EMU_CM_ERANGE);
	assert_string_equal(bad, "Primary Flow Label");
	cm_sample(EMU_CM_ATTR_REQ, &m);
	m.vendor_id = 0x1000000; /* 24 bits in REQ */
	assert_int_equal(emu_cm_pack_ex(EMU_CM_ATTR_REQ, &m, mad, &bad), -EMU_CM_ERANGE);
	assert_string_equal(bad, "Vendor ID");
	cm_sample(EMU_CM_ATTR_SIDR_REP, &m);
	m.vendor_id = 0x10000; /* 16 bits in SIDR_REP */
	assert_int_equal(emu_cm_pack_ex(EMU_CM_ATTR_SIDR_REP, &m, mad, &bad), -EMU_CM_ERANGE);
	cm_sample(EMU_CM_ATTR_MRA, &m);
	m.message_mraed = 3;
	assert_int_equal(emu_cm_pack_ex(EMU_CM_ATTR_MRA, &m, mad, &bad), -EMU_CM_ERANGE);
	assert_string_equal(bad, "Message MRAed");
	cm_sample(EMU_CM_ATTR_REJ, &m);
	m.reject_info_len = 73;
	assert_int_not_equal(emu_cm_pack_ex(EMU_CM_ATTR_REJ, &m, mad, &bad), 0);
	assert_string_equal(bad, "Reject Info Length");
	/* the ARI is copied only as far as its length: the rest stays zero */
	cm_sample(EMU_CM_ATTR_REJ, &m);
	m.ari[8] = 0xff;
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_REJ, &m, mad), 0);
	assert_int_equal(mad[24 + 12 + 8], 0);
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_CLASSPORTINFO, &m, mad), -EMU_CM_EATTR);
	assert_int_equal(emu_cm_pack(0x1b, &m, mad), -EMU_CM_EATTR);
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_REQ, NULL, mad), -EINVAL);
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_REQ, &m, NULL), -EINVAL);
}

/* spec §9: the field sizes, and the private data limit of each message. */
static void test_private_data_sizes(void **state)
{
	static const struct {
		uint16_t attr;
		int size;
	} sizes[] = { { 0x10, 92 },  { 0x11, 222 }, { 0x12, 148 }, { 0x13, 196 },
		      { 0x14, 224 }, { 0x15, 220 }, { 0x16, 224 }, { 0x17, 216 },
		      { 0x18, 136 }, { 0x19, 168 }, { 0x1a, 148 } };
	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct emu_cm_msg m;
		uint8_t mad[256];
		const char *bad;

		assert_int_equal(emu_cm_private_data_size(sizes[i].attr), sizes[i].size);
		memset(&m, 0, sizeof(m));
		memset(m.private_data, 0x5a, sizeof(m.private_data));
		m.private_data_len = (uint8_t)sizes[i].size;
		assert_int_equal(emu_cm_pack(sizes[i].attr, &m, mad), 0);
		assert_int_equal(mad[255], 0x5a); /* private data ends the MAD */
		m.private_data_len = (uint8_t)(sizes[i].size + 1);
		assert_int_equal(emu_cm_pack_ex(sizes[i].attr, &m, mad, &bad), -EMU_CM_EPRIVLEN);
		assert_string_equal(bad, "PrivateData");
	}
	assert_int_equal(emu_cm_private_data_size(EMU_CM_ATTR_CLASSPORTINFO), -1);
	assert_int_equal(EMU_CMA_REQ_USER_PRIVATE_DATA, 56);
	assert_int_equal(EMU_CMA_SIDR_REQ_USER_PRIVATE_DATA, 180);
}

static void test_unpack_errors(void **state)
{
	struct emu_cm_msg m, s;
	uint8_t mad[256], bad_mad[256];
	uint16_t attr;
	const char *bad;

	(void)state;
	cm_sample(EMU_CM_ATTR_REJ, &s);
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_REJ, &s, mad), 0);
	assert_int_equal(emu_cm_unpack(mad, 255, &attr, &m), -EMU_CM_ETRUNC);
	assert_int_equal(emu_cm_unpack(NULL, 256, &attr, &m), -EINVAL);
	assert_int_equal(emu_cm_unpack(mad, 256, &attr, NULL), -EINVAL);
#define CORRUPT(off, val, err)                                            \
	do {                                                              \
		memcpy(bad_mad, mad, 256);                                \
		bad_mad[off] = val;                                       \
		assert_int_equal(emu_cm_unpack_ex(bad_mad, 256, &attr, &m, &bad), err); \
	} while (0)
	CORRUPT(0, 2, -EMU_CM_ECLASS);	 /* base version */
	CORRUPT(1, 0x03, -EMU_CM_ECLASS); /* SA class */
	CORRUPT(2, 1, -EMU_CM_EVERSION);
	CORRUPT(3, EMU_MAD_METHOD_GET, -EMU_CM_EMETHOD);
	CORRUPT(17, 0x01, -EMU_CM_EATTR); /* ClassPortInfo has no message layout */
	assert_int_equal(attr, EMU_CM_ATTR_CLASSPORTINFO);
	CORRUPT(17, 0x1b, -EMU_CM_EATTR);
	CORRUPT(32, 0xc0, -EMU_CM_ERANGE); /* REJected = 3 */
	assert_string_equal(bad, "Message REJected");
	CORRUPT(33, 73 << 1, -EMU_CM_EINFOLEN); /* ARI length 73 */
	assert_string_equal(bad, "Reject Info Length");
	/* reserved bits are ignored */
	CORRUPT(32, 0x3f, 0);
	CORRUPT(33, 0x11, 0);
	assert_int_equal(m.reject_info_len, 8);
	for (int e = 1; e < 140; e++)
		assert_non_null(emu_cm_strerror(-e));
	assert_string_equal(emu_cm_strerror(-EMU_CM_EPRIVLEN),
			    "CM private data longer than the message allows");
}

static void test_header(void **state)
{
	struct emu_cm_msg m;
	uint8_t mad[256];
	struct emu_mad_hdr h;

	(void)state;
	cm_sample(EMU_CM_ATTR_DREQ, &m);
	m.status = 0x1234;
	assert_int_equal(emu_cm_pack(EMU_CM_ATTR_DREQ, &m, mad), 0);
	emu_mad_hdr_get(mad, &h);
	assert_int_equal(h.base_version, 1);
	assert_int_equal(h.mgmt_class, 0x07);
	assert_int_equal(h.class_version, 2);
	assert_int_equal(h.method, 0x03);
	assert_int_equal(h.status, 0x1234);
	assert_int_equal(h.tid, 0x0000000111223344ull);
	assert_int_equal(h.attr_id, 0x15);
	assert_int_equal(h.attr_mod, 0);
	uint8_t again[256] = { 0 };
	emu_mad_hdr_put(again, &h);
	assert_memory_equal(again, mad, 24);
}

/* Names: every REJ reason the kernel has, by number, and its message. */
static void test_rej_reasons(void **state)
{
	static const char *const names[] = {
		NULL, "NO_QP", "NO_EEC", "NO_RESOURCES", "TIMEOUT", "UNSUPPORTED",
		"INVALID_COMM_ID", "INVALID_COMM_INSTANCE", "INVALID_SERVICE_ID",
		"INVALID_TRANSPORT_TYPE", "STALE_CONN", "RDC_NOT_EXIST", "INVALID_GID",
		"INVALID_LID", "INVALID_SL", "INVALID_TRAFFIC_CLASS", "INVALID_HOP_LIMIT",
		"INVALID_PACKET_RATE", "INVALID_ALT_GID", "INVALID_ALT_LID", "INVALID_ALT_SL",
		"INVALID_ALT_TRAFFIC_CLASS", "INVALID_ALT_HOP_LIMIT", "INVALID_ALT_PACKET_RATE",
		"PORT_CM_REDIRECT", "PORT_REDIRECT", "INVALID_MTU", "INSUFFICIENT_RESP_RESOURCES",
		"CONSUMER_DEFINED", "INVALID_RNR_RETRY", "DUPLICATE_LOCAL_COMM_ID",
		"INVALID_CLASS_VERSION", "INVALID_FLOW_LABEL", "INVALID_ALT_FLOW_LABEL", NULL,
		"VENDOR_OPTION_NOT_SUPPORTED",
	};
	(void)state;
	for (unsigned r = 0; r < sizeof(names) / sizeof(names[0]); r++) {
		if (names[r])
			assert_string_equal(emu_cm_rej_reason_name(r), names[r]);
		else
			assert_null(emu_cm_rej_reason_name(r));
	}
	assert_null(emu_cm_rej_reason_name(36));
	assert_null(emu_cm_rej_reason_name(65535));
	assert_string_equal(emu_cm_rej_reason_msg(8), "invalid service ID");
	assert_string_equal(emu_cm_rej_reason_msg(28), "consumer defined");
	assert_string_equal(emu_cm_rej_reason_msg(35), "vendor option is not supported");
	assert_string_equal(emu_cm_rej_reason_msg(34), "unrecognized reason");
	assert_string_equal(emu_cm_rej_reason_msg(0), "unrecognized reason");
	assert_int_equal(EMU_CM_REJ_CONSUMER_DEFINED, 28);
	assert_int_equal(EMU_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED, 35);
	assert_string_equal(emu_cm_sidr_status_name(1), "UNSUPPORTED");
	assert_string_equal(emu_cm_sidr_status_name(5), "UNSUPPORTED_VERSION");
	assert_null(emu_cm_sidr_status_name(6));
	assert_string_equal(emu_cm_msg_response_name(1), "REP");
	assert_null(emu_cm_msg_response_name(3));
	assert_string_equal(emu_cm_attr_name(0x1a), "APR");
	assert_string_equal(emu_cm_attr_name(0x01), "ClassPortInfo");
	assert_null(emu_cm_attr_name(0x02));
	assert_null(emu_cm_attr_name(0x1b));
}

static void test_cma_hdr(void **state)
{
	static const uint8_t v4[36] = { 0x00, 0x40, 0x12, 0x34, [16] = 10, 0, 0, 1,
					[32] = 10, 0, 0, 2 };
	static const uint8_t v6[36] = { 0x00, 0x60, 0xab, 0xcd, 0x20, 0x01, 0x0d, 0xb8,
					[19] = 1, 0x20, 0x01, 0x0d, 0xb8, [35] = 2 };
	struct emu_cma_hdr h = { 0, 4, 0x1234, { 0 }, { 0 } }, back;
	uint8_t p[36];

	(void)state;
	memcpy(h.src + 12, (const uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(h.dst + 12, (const uint8_t[]){ 10, 0, 0, 2 }, 4);
	h.src[0] = 0xff; /* ignored for IPv4: the pad goes out zero */
	assert_int_equal(emu_cma_hdr_pack(p, &h), 0);
	assert_memory_equal(p, v4, 36);
	assert_int_equal(emu_cma_hdr_unpack(p, 36, &back), 0);
	h.src[0] = 0;
	assert_memory_equal(&back, &h, sizeof(h));

	h = (struct emu_cma_hdr){ 0, 6, 0xabcd, { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
				  { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 } };
	assert_int_equal(emu_cma_hdr_pack(p, &h), 0);
	assert_memory_equal(p, v6, 36);
	assert_int_equal(emu_cma_hdr_unpack(p, 36, &back), 0);
	assert_memory_equal(&back, &h, sizeof(h));

	h.ip_version = 5;
	assert_int_equal(emu_cma_hdr_pack(p, &h), -EAFNOSUPPORT);
	h.ip_version = 6;
	h.cma_version = 1;
	assert_int_equal(emu_cma_hdr_pack(p, &h), -EINVAL);
	assert_int_equal(emu_cma_hdr_pack(NULL, &h), -EINVAL);
	memcpy(p, v4, 36);
	p[0] = 0x10;
	assert_int_equal(emu_cma_hdr_unpack(p, 36, &back), -EINVAL);
	p[0] = 0;
	p[1] = 0x50;
	assert_int_equal(emu_cma_hdr_unpack(p, 36, &back), -EAFNOSUPPORT);
	assert_int_equal(emu_cma_hdr_unpack(v4, 35, &back), -EINVAL);
	p[1] = 0x4f; /* the low nibble is reserved */
	assert_int_equal(emu_cma_hdr_unpack(p, 36, &back), 0);
	assert_int_equal(back.ip_version, 4);
}

static void test_service_ids(void **state)
{
	(void)state;
	assert_int_equal(emu_cma_service_id(EMU_RDMA_PS_TCP, 7471), 0x0000000001061d2full);
	assert_int_equal(emu_cma_service_id(EMU_RDMA_PS_UDP, 0), EMU_RDMA_IB_IP_PS_UDP);
	assert_int_equal(emu_cma_service_id(EMU_RDMA_PS_IB, 1), 0x00000000013f0001ull);
	assert_int_equal(emu_cma_service_id_ps(0x0000000001064e20ull), EMU_RDMA_PS_TCP);
	assert_int_equal(emu_cma_service_id_ps(0x000000000111ffffull), EMU_RDMA_PS_UDP);
	assert_int_equal(emu_cma_service_id_ps(0x00000000013f0000ull), EMU_RDMA_PS_IB);
	assert_int_equal(emu_cma_service_id_ps(0x0000000000020001ull), EMU_RDMA_PS_IPOIB);
	assert_int_equal(emu_cma_service_id_ps(0x1000000001064e20ull), 0);
	assert_int_equal(emu_cma_service_id_ps(0x0000000001070000ull), 0);
	assert_int_equal(emu_cma_service_id_port(0x0000000001064e20ull), 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_bytes),
		cmocka_unit_test(test_unpack_golden),
		cmocka_unit_test(test_round_trip_all_fields),
		cmocka_unit_test(test_range_errors),
		cmocka_unit_test(test_private_data_sizes),
		cmocka_unit_test(test_unpack_errors),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_rej_reasons),
		cmocka_unit_test(test_cma_hdr),
		cmocka_unit_test(test_service_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
