/* pcap tap: exact file bytes, link types, errors; and the determinism scenario: same seed =>
 * byte-identical captures and identical counters, another seed => different captures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "emu/sim/pcap.h"
#include "emu/sim/wire.h"
#include "frames.h"
#include "traffic.h"

struct membuf {
	char *data;
	size_t len;
	FILE *f;
};

static struct emu_pcap *mem_open(struct membuf *m, int link_layer)
{
	struct emu_pcap *p;

	m->data = NULL;
	m->len = 0;
	m->f = open_memstream(&m->data, &m->len);
	assert_non_null(m->f);
	p = emu_pcap_open_stream(m->f, link_layer);
	assert_non_null(p);
	return p;
}

static uint32_t le32(const char *p)
{
	const uint8_t *u = (const uint8_t *)p;

	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static uint16_t le16(const char *p)
{
	const uint8_t *u = (const uint8_t *)p;

	return (uint16_t)(u[0] | u[1] << 8);
}

/* The file is written in host byte order; the readers use the magic to tell. These checks
 * assume a little-endian host, which the tests run on (x86_64, aarch64). */
static void test_file_layout(void **state)
{
	struct membuf m;
	struct emu_pcap *p = mem_open(&m, EMU_LL_ETHERNET);
	static const uint8_t f1[3] = { 0xaa, 0xbb, 0xcc };
	uint8_t big[EMU_PCAP_SNAPLEN + 10];

	memset(big, 0x5a, sizeof(big));
	assert_int_equal(emu_pcap_link_layer(p), EMU_LL_ETHERNET);
	assert_int_equal(emu_pcap_write(p, 1500000007ULL, f1, sizeof(f1)), 0);
	assert_int_equal(emu_pcap_write(p, 0, big, sizeof(big)), 0);
	assert_int_equal(emu_pcap_write(p, 0, NULL, 1), -EINVAL);
	assert_int_equal(emu_pcap_frames(p), 2);
	assert_int_equal(emu_pcap_close(p), 0);

	assert_int_equal(m.len, 24 + 16 + 3 + 16 + EMU_PCAP_SNAPLEN);
	assert_int_equal(le32(m.data), 0xa1b23c4d); /* nanosecond pcap */
	assert_int_equal(le16(m.data + 4), 2);
	assert_int_equal(le16(m.data + 6), 4);
	assert_int_equal(le32(m.data + 8), 0);  /* thiszone */
	assert_int_equal(le32(m.data + 12), 0); /* sigfigs */
	assert_int_equal(le32(m.data + 16), EMU_PCAP_SNAPLEN);
	assert_int_equal(le32(m.data + 20), 1); /* LINKTYPE_ETHERNET */
	assert_int_equal(le32(m.data + 24), 1);         /* ts seconds */
	assert_int_equal(le32(m.data + 28), 500000007); /* ts nanoseconds */
	assert_int_equal(le32(m.data + 32), 3);         /* caplen */
	assert_int_equal(le32(m.data + 36), 3);         /* len */
	assert_memory_equal(m.data + 40, f1, 3);
	assert_int_equal(le32(m.data + 43 + 8), EMU_PCAP_SNAPLEN); /* truncated... */
	assert_int_equal(le32(m.data + 43 + 12), sizeof(big));    /* ...original length kept */
	free(m.data);
}

/* Byte for byte what libpcap's pcap_dump writes, through a memory stream and through a file,
 * for more records than the tap buffers at once (600 frames of 0..65545 bytes, truncated at
 * the snap length) and a flush in the middle. */
static void test_same_bytes_as_pcap_dump(void **state)
{
	static uint8_t frame[EMU_PCAP_SNAPLEN + 10];
	char path[] = "/tmp/test_pcap.XXXXXX";
	struct membuf m, ref;
	struct emu_pcap *p = mem_open(&m, EMU_LL_ETHERNET), *pf;
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, EMU_PCAP_SNAPLEN,
							    PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d;
	int fd = mkstemp(path);
	char *file;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	pf = emu_pcap_open(path, EMU_LL_ETHERNET);
	assert_non_null(pf);
	ref.data = NULL;
	ref.f = open_memstream(&ref.data, &ref.len);
	assert_non_null(dead);
	d = pcap_dump_fopen(dead, ref.f);
	assert_non_null(d);
	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 31 + 7);
	for (unsigned i = 0; i < 600; i++) {
		size_t len = i == 17 ? sizeof(frame) : (size_t)(i * 997) % 1500;
		uint64_t now = 1000000000ull * i + 12345u * i;
		struct pcap_pkthdr h = { .ts = { .tv_sec = (time_t)(now / 1000000000u),
						 .tv_usec = (suseconds_t)(now % 1000000000u) },
					 .caplen = (bpf_u_int32)(len > EMU_PCAP_SNAPLEN ?
								 EMU_PCAP_SNAPLEN : len),
					 .len = (bpf_u_int32)len };

		assert_int_equal(emu_pcap_write(p, now, frame + i % 7, len - (len ? i % 7 : 0)), 0);
		assert_int_equal(emu_pcap_write(pf, now, frame + i % 7, len - (len ? i % 7 : 0)), 0);
		h.len -= len ? i % 7 : 0;
		if (h.caplen > h.len)
			h.caplen = h.len;
		pcap_dump((u_char *)d, &h, frame + i % 7);
		if (i == 300)
			assert_int_equal(emu_pcap_flush(pf), 0);
	}
	assert_int_equal(emu_pcap_frames(p), 600);
	assert_int_equal(emu_pcap_close(p), 0);
	assert_int_equal(emu_pcap_close(pf), 0);
	pcap_dump_close(d);
	pcap_close(dead);
	assert_true(m.len > 256 * 1024);
	assert_int_equal(m.len, ref.len);
	assert_memory_equal(m.data, ref.data, ref.len);
	file = malloc(ref.len + 1);
	assert_non_null(file);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(file, 1, ref.len + 1, f), ref.len);
	fclose(f);
	assert_memory_equal(file, ref.data, ref.len);
	free(file);
	free(m.data);
	free(ref.data);
	unlink(path);
}

/* A pause (emu_pcap_idle) writes the buffered frames out once 4 KiB are waiting, not before;
 * what a file holds is visible to a reader while the tap stays open. */
static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	fclose(f);
	return n;
}

static void test_idle_writes_4k(void **state)
{
	static const uint8_t frame[1000];
	char path[] = "/tmp/test_pcap.XXXXXX";
	int fd = mkstemp(path);
	struct emu_pcap *p;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	p = emu_pcap_open(path, EMU_LL_ETHERNET);
	assert_non_null(p);
	assert_int_equal(file_size(path), 24);
	for (int i = 0; i < 4; i++)
		assert_int_equal(emu_pcap_write(p, 1, frame, sizeof(frame)), 0);
	emu_pcap_idle(p);
	assert_int_equal(file_size(path), 24); /* 4064 bytes waiting */
	assert_int_equal(emu_pcap_write(p, 2, frame, sizeof(frame)), 0);
	emu_pcap_idle(p);
	assert_int_equal(file_size(path), 24 + 5 * 1016);
	emu_pcap_idle(NULL);
	assert_int_equal(emu_pcap_write(p, 3, frame, 10), 0);
	assert_int_equal(emu_pcap_close(p), 0);
	assert_int_equal(file_size(path), 24 + 5 * 1016 + 26);
	unlink(path);
}

static void test_ib_linktype(void **state)
{
	struct membuf m;
	struct emu_pcap *p = mem_open(&m, EMU_LL_INFINIBAND);

	assert_int_equal(emu_pcap_close(p), 0);
	assert_int_equal(m.len, 24);
	assert_int_equal(le32(m.data + 20), 247); /* LINKTYPE_INFINIBAND */
	free(m.data);
}

static void test_open_errors(void **state)
{
	char path[] = "/tmp/test_pcap.XXXXXX";
	int fd = mkstemp(path);
	struct emu_pcap *p;
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	errno = 0;
	assert_null(emu_pcap_open(path, 3));
	assert_int_equal(errno, EINVAL);
	assert_null(emu_pcap_open(NULL, EMU_LL_ETHERNET));
	assert_int_equal(errno, EINVAL);
	assert_null(emu_pcap_open("/nonexistent-dir/x.pcap", EMU_LL_ETHERNET));
	assert_int_equal(errno, ENOENT);
	assert_null(emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, 0x10000));
	assert_int_equal(errno, EINVAL);
	/* a DLT libpcap has no LINKTYPE for: refused, and the file is left as it was */
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs("kept", f) >= 0, 1);
	fclose(f);
	assert_null(emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, 0x1234));
	assert_int_equal(errno, EINVAL);
	{
		char kept[8] = { 0 };

		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fread(kept, 1, sizeof(kept), f), 4);
		fclose(f);
		assert_string_equal(kept, "kept");
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_null(emu_pcap_open_stream(f, 0)); /* closes f */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(emu_pcap_close(NULL), 0);

	/* A real file: the DLT override changes the link type field only. */
	p = emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, 147);
	assert_non_null(p);
	assert_int_equal(emu_pcap_write(p, 5, "\x01\x02", 2), 0);
	assert_int_equal(emu_pcap_flush(p), 0);
	assert_int_equal(emu_pcap_close(p), 0);
	{
		char buf[64];
		FILE *r = fopen(path, "rb");

		assert_non_null(r);
		assert_int_equal(fread(buf, 1, sizeof(buf), r), 24 + 16 + 2);
		fclose(r);
		assert_int_equal(le32(buf + 20), 147);
		assert_int_equal(le32(buf + 28), 5);
	}
	unlink(path);
}

static void test_frame_builder(void **state)
{
	uint8_t buf[256], payload[7] = { 1, 2, 3, 4, 5, 6, 7 };
	struct frame_roce_addr ra = { .smac = { 2, 0, 0, 0, 0, 1 }, .dmac = { 2, 0, 0, 0, 0, 2 },
				      .saddr = 0xc0000241, .daddr = 0xc0000242, .sport = 0xc011 };
	struct frame_ib_addr ia = { .slid = 1, .dlid = 2 };
	struct frame_bth bth = { .opcode = FRAME_OP_RC_SEND_ONLY, .pkey = 0xffff,
				 .dqpn = 0x123456, .psn = 0xabcdef, .ack_req = true }, back;
	size_t len;

	len = frame_build_roce(buf, sizeof(buf), &ra, &bth, NULL, 0, payload, sizeof(payload));
	assert_int_equal(len, 14 + 20 + 8 + 12 + 7 + 1 + 4);
	assert_int_equal(frame_inet_csum(buf + 14, 20), 0); /* header checksum is right */
	assert_int_equal(buf[14 + 2] << 8 | buf[14 + 3], len - 14);
	assert_int_equal(buf[34 + 2] << 8 | buf[34 + 3], 4791);
	assert_int_equal(buf[34 + 4] << 8 | buf[34 + 5], len - 34);
	assert_int_equal(buf[FRAME_ROCE_BTH_OFF + 1], 0x10); /* PadCnt 1 */
	frame_parse_bth(buf + FRAME_ROCE_BTH_OFF, &back);
	assert_int_equal(back.dqpn, 0x123456);
	assert_int_equal(back.psn, 0xabcdef);
	assert_true(back.ack_req);
	assert_int_equal(frame_build_roce(buf, 60, &ra, &bth, NULL, 0, payload, 7), 0);

	len = frame_build_ib(buf, sizeof(buf), &ia, &bth, NULL, 0, payload, sizeof(payload));
	assert_int_equal(len, 8 + 12 + 8 + 4 + 2);
	assert_int_equal(buf[1], 0x02);                      /* LNH: BTH follows */
	assert_int_equal(buf[4] << 8 | buf[5], (len - 2) / 4); /* PktLen in words, no VCRC */
}

static uint64_t fnv1a(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t k = 0; k < len; k++) {
		h ^= p[k];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void run_scenario(uint64_t seed, struct membuf *eth, struct membuf *ib,
			 struct traffic_result *res)
{
	struct emu_pcap *pe = mem_open(eth, EMU_LL_ETHERNET);
	struct emu_pcap *pi = mem_open(ib, EMU_LL_INFINIBAND);

	assert_int_equal(traffic_run(seed, pe, pi, res), 0);
	assert_int_equal(emu_pcap_close(pe), 0);
	assert_int_equal(emu_pcap_close(pi), 0);
}

static void test_same_seed_same_bytes(void **state)
{
	struct membuf e1, i1, e2, i2, e3, i3;
	struct traffic_result r1, r2, r3;

	run_scenario(1, &e1, &i1, &r1);
	run_scenario(1, &e2, &i2, &r2);
	assert_int_equal(e1.len, e2.len);
	assert_int_equal(i1.len, i2.len);
	assert_memory_equal(e1.data, e2.data, e1.len);
	assert_memory_equal(i1.data, i2.data, i1.len);
	assert_memory_equal(&r1, &r2, sizeof(r1));

	run_scenario(2, &e3, &i3, &r3);
	assert_true(e3.len != e1.len || memcmp(e3.data, e1.data, e1.len) != 0);
	assert_true(i3.len != i1.len || memcmp(i3.data, i1.data, i1.len) != 0);
	assert_int_not_equal(r3.rx_hash, r1.rx_hash);
	free(e1.data);
	free(i1.data);
	free(e2.data);
	free(i2.data);
	free(e3.data);
	free(i3.data);
}

/* Exact results for seed 1: any change to the engine's decisions shows up here. */
static void test_seed1_exact(void **state)
{
	struct membuf e, i;
	struct traffic_result r;

	static const struct emu_wire_counters want[TRAFFIC_LINKS][2] = {
		/* sent, delivered, lost, down, duplicated, reordered, corrupted */
		{ { 200, 186, 22, 0, 8, 17, 0 }, { 186, 174, 24, 0, 12, 11, 0 } },
		{ { 200, 179, 4, 17, 0, 0, 0 }, { 179, 174, 4, 1, 0, 0, 0 } },
		{ { 200, 201, 11, 0, 12, 11, 0 }, { 201, 199, 7, 0, 5, 22, 0 } },
	};
	static const uint64_t want_rx[TRAFFIC_EPS] = { 174, 186, 174, 179, 199, 201 };

	run_scenario(1, &e, &i, &r);
	for (int l = 0; l < TRAFFIC_LINKS; l++) {
		for (int d = 0; d < 2; d++) {
			const struct emu_wire_counters *c = &r.ctr[l][d];

			assert_int_equal(c->sent, want[l][d].sent);
			assert_int_equal(c->delivered, want[l][d].delivered);
			assert_int_equal(c->dropped_loss, want[l][d].dropped_loss);
			assert_int_equal(c->dropped_down, want[l][d].dropped_down);
			assert_int_equal(c->duplicated, want[l][d].duplicated);
			assert_int_equal(c->reordered, want[l][d].reordered);
			/* Conservation: every frame sent is delivered (once, or twice when
			 * duplicated) or dropped. */
			assert_int_equal(c->sent + c->duplicated,
					 c->delivered + c->dropped_loss + c->dropped_down);
		}
	}
	for (int k = 0; k < TRAFFIC_EPS; k++)
		assert_int_equal(r.rx[k], want_rx[k]);
	assert_int_equal(r.end_ns, 262800);
	assert_int_equal(r.timers_fired, 1681);
	assert_int_equal(r.rx_hash, 0x78bb7da2941c3a78ULL);
	/* Every frame put on a link that was up is in the capture, lost ones included. */
	assert_int_equal(e.len, 108570);
	assert_int_equal(i.len, 44770);
	assert_int_equal(fnv1a(e.data, e.len), 0x66f0dc8de37ac18dULL);
	assert_int_equal(fnv1a(i.data, i.len), 0x250f7817fe3f6cc4ULL);
	free(e.data);
	free(i.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_layout),
		cmocka_unit_test(test_ib_linktype),
		cmocka_unit_test(test_same_bytes_as_pcap_dump),
		cmocka_unit_test(test_idle_writes_4k),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_frame_builder),
		cmocka_unit_test(test_same_seed_same_bytes),
		cmocka_unit_test(test_seed1_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
