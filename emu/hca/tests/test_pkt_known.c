/* emu/hca/pkt_known.c: a frame parsed as this thread built it skips its CRC checks, with the
 * answer a full check gives; anything else (one changed byte, another length, a frame built
 * on another thread, one longer than EMU_PKT_KNOWN_MAX) is checked in full. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "emu/hca/pkt.h"

static void gid_v4(uint8_t gid[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = a;
	gid[13] = b;
	gid[14] = c;
	gid[15] = d;
}

/* A RoCEv2/IPv4 UD SEND of paylen bytes (a GSI MAD is 256) from 192.0.2.65 to .66. */
static ssize_t build_roce(uint8_t *buf, size_t cap, size_t paylen, uint8_t fill)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET, .ip_id = 7,
				  .sport = emu_roce_sport_rxe(1) };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = 0xffff, .dqpn = 1,
			       .psn = 42 };
	struct emu_pkt_ext x = { .deth = { .qkey = 0x80010000, .sqpn = 1 } };
	uint8_t data[2048];

	memset(data, fill, paylen);
	memset(a.smac, 0x41, 6);
	memset(a.dmac, 0x42, 6);
	gid_v4(a.sgid, 192, 0, 2, 65);
	gid_v4(a.dgid, 192, 0, 2, 66);
	return emu_pkt_build(buf, cap, &a, &bth, &x, data, paylen, NULL);
}

static ssize_t build_ib(uint8_t *buf, size_t cap)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_INFINIBAND, .slid = 1, .dlid = 2 };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = 0xffff, .dqpn = 1,
			       .psn = 9 };
	struct emu_pkt_ext x = { .deth = { .qkey = 0x80010000, .sqpn = 1 } };
	uint8_t mad[256];

	memset(mad, 0x5a, sizeof(mad));
	return emu_pkt_build(buf, cap, &a, &bth, &x, mad, sizeof(mad), NULL);
}

static void test_roce_known_and_changed(void **state)
{
	uint8_t buf[512], copy[512];
	ssize_t len = build_roce(buf, sizeof(buf), 256, 0x11);
	struct emu_pkt_info in;

	(void)state;
	/* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8 + 256 + ICRC 4 */
	assert_int_equal(len, 322);
	assert_true(emu_pkt_known(buf, (size_t)len));
	assert_false(emu_pkt_known(buf, (size_t)len - 1));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, &in), 0);
	assert_int_equal(in.icrc_off, 318);
	assert_int_equal(in.paylen, 256);

	/* one payload bit: no longer the built frame, so the ICRC is computed and fails */
	memcpy(copy, buf, (size_t)len);
	copy[100] ^= 0x01;
	assert_false(emu_pkt_known(copy, (size_t)len));
	assert_int_equal(emu_pkt_parse(copy, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
	/* the ICRC itself changed */
	memcpy(copy, buf, (size_t)len);
	copy[318] ^= 0x80;
	assert_int_equal(emu_pkt_parse(copy, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
	/* a field the ICRC masks (TTL) changed without the IPv4 checksum: checked, and caught */
	memcpy(copy, buf, (size_t)len);
	copy[14 + 8] = 1;
	assert_false(emu_pkt_known(copy, (size_t)len));
	assert_int_equal(emu_pkt_parse(copy, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
	/* back to the built bytes: known again */
	memcpy(copy, buf, (size_t)len);
	assert_true(emu_pkt_known(copy, (size_t)len));
	assert_int_equal(emu_pkt_parse(copy, (size_t)len, EMU_LL_ETHERNET, NULL), 0);
}

/* A thread delivering trusted frames (a shared-memory ring's) skips the CRC and IPv4 header
 * checksum checks of any frame, longer than the cache too (the ring's frames carry neither:
 * emu_pkt_addr.no_crc); off again, a changed payload or header is caught. */
static void test_trusted(void **state)
{
	uint8_t buf[1400];
	ssize_t len = build_roce(buf, sizeof(buf), 1024, 0x22);

	(void)state;
	assert_int_equal(len, 1090);
	buf[200] ^= 0x01;
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
	emu_pkt_trust(true);
	assert_true(emu_pkt_known(buf, (size_t)len));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), 0);
	buf[14 + 10] = buf[14 + 11] = 0; /* the IPv4 header checksum, as a ring frame has it */
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), 0);
	emu_pkt_trust(false);
	assert_false(emu_pkt_known(buf, (size_t)len));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
}

static void test_ib_vcrc(void **state)
{
	uint8_t buf[512];
	ssize_t len = build_ib(buf, sizeof(buf));

	(void)state;
	/* LRH 8 + BTH 12 + DETH 8 + 256 + ICRC 4 + VCRC 2 */
	assert_int_equal(len, 290);
	assert_true(emu_pkt_known(buf, (size_t)len));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_INFINIBAND, NULL), 0);
	buf[289] ^= 0x01; /* the VCRC */
	assert_false(emu_pkt_known(buf, (size_t)len));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_EVCRC);
}

static void test_longer_than_cache(void **state)
{
	uint8_t buf[1200];
	ssize_t len = build_roce(buf, sizeof(buf), 1024, 0x22);

	(void)state;
	assert_int_equal(len, 1090);
	assert_true(len > EMU_PKT_KNOWN_MAX);
	assert_false(emu_pkt_known(buf, (size_t)len));
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), 0);
	buf[600] ^= 0x04;
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
}

/* emu_pkt_parse_built (a looped-back frame): the same answer as a full parse for the frame as
 * built, lengths and headers still checked, the CRCs and IPv4 checksum not computed (a
 * changed payload or checksum passes, where emu_pkt_parse catches it); one call only, the
 * next emu_pkt_parse checks in full. */
static void test_built(void **state)
{
	uint8_t buf[1400];
	ssize_t len = build_roce(buf, sizeof(buf), 1024, 0x44);
	struct emu_pkt_info a, b;

	(void)state;
	assert_int_equal(len, 1090);
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, &a), 0);
	assert_int_equal(emu_pkt_parse_built(buf, (size_t)len, EMU_LL_ETHERNET, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(b.paylen, 1024);
	assert_int_equal(b.icrc_off, 1086);
	buf[300] ^= 0x01;
	buf[14 + 10] ^= 0xff; /* IPv4 header checksum */
	assert_int_equal(emu_pkt_parse_built(buf, (size_t)len, EMU_LL_ETHERNET, NULL), 0);
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
	buf[14 + 10] ^= 0xff;
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
	/* lengths are still checked */
	assert_int_equal(emu_pkt_parse_built(buf, (size_t)len - 4, EMU_LL_ETHERNET, NULL),
			 -EMU_PKT_ETRUNC);
	buf[14 + 2] = 0x01; /* IPv4 total length 256 + the low byte, shorter than the frame */
	assert_int_equal(emu_pkt_parse_built(buf, (size_t)len, EMU_LL_ETHERNET, NULL),
			 -EMU_PKT_ELEN);
}

static uint8_t other_buf[512];
static ssize_t other_len;

static void *build_elsewhere(void *arg)
{
	(void)arg;
	other_len = build_roce(other_buf, sizeof(other_buf), 256, 0x33);
	return NULL;
}

static void test_other_thread(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, build_elsewhere, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(other_len, 322);
	/* built by another thread: this one checks it in full (and it is valid) */
	assert_false(emu_pkt_known(other_buf, (size_t)other_len));
	assert_int_equal(emu_pkt_parse(other_buf, (size_t)other_len, EMU_LL_ETHERNET, NULL), 0);
	other_buf[200] ^= 0x10;
	assert_int_equal(emu_pkt_parse(other_buf, (size_t)other_len, EMU_LL_ETHERNET, NULL),
			 -EMU_PKT_EICRC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roce_known_and_changed),
		cmocka_unit_test(test_trusted),
		cmocka_unit_test(test_ib_vcrc),
		cmocka_unit_test(test_longer_than_cache),
		cmocka_unit_test(test_built),
		cmocka_unit_test(test_other_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
