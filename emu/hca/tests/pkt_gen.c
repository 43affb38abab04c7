/* Writes one packet per BTH opcode in the table for pkt-tshark.sh, and for looking at them in
 * Wireshark: pkt_gen [-u] DIR.
 *   DIR/roce.pcap  Ethernet: each opcode as RoCEv2 over IPv4, then over IPv6
 *   DIR/ib.pcap    InfiniBand (LINKTYPE 247): each opcode without, then with a GRH
 *                  (-u: DIR/ib-user0.pcap with DLT_USER0, which Wireshark 4.0 can be told to
 *                  decode as IB; it cannot open 247)
 * followed in both by ACKs carrying each kind of AETH syndrome. RD opcodes are left out:
 * Wireshark 4.0 decodes several of them with the wrong header sequence (RD ACKNOWLEDGE without
 * its RDETH, RD RDMA READ REQUEST and ATOMIC ACKNOWLEDGE at wrong offsets); their layouts are
 * checked against IBTA/rxe in test_pkt instead. Prints one line per frame:
 * "FILE FRAME OPCODE NAME", the manifest the script checks tshark's decoding against. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcap/dlt.h>

#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"

static const uint8_t payload[] = { 0xa5, 0x5a, 0x01, 0x02, 0x03 }; /* 5 bytes: PadCnt 3 */

static const uint8_t acks[] = {
	0x1f, /* ACK, credits invalid */
	0x20 | 0x0e, /* RNR NAK, timer 14 */
	EMU_AETH_NAK_PSN_SEQ, EMU_AETH_NAK_INVALID_REQ, EMU_AETH_NAK_REM_ACCESS,
	EMU_AETH_NAK_REM_OP, EMU_AETH_NAK_INVALID_RD_REQ,
};

static void addr_init(struct emu_pkt_addr *a, int ll, bool v6_or_grh)
{
	static const uint8_t v4a[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 65 };
	static const uint8_t v4b[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 66 };
	static const uint8_t v6a[16] = { 0xfe, 0x80, [8] = 0x02, 0x00, 0x5e, 0xff, 0xfe, 0, 0, 0x41 };
	static const uint8_t v6b[16] = { 0xfe, 0x80, [8] = 0x02, 0x00, 0x5e, 0xff, 0xfe, 0, 0, 0x42 };

	memset(a, 0, sizeof(*a));
	a->link_layer = ll;
	memcpy(a->smac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0, 0, 0x41 }, 6);
	memcpy(a->dmac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0, 0, 0x42 }, 6);
	memcpy(a->sgid, ll == EMU_LL_ETHERNET && !v6_or_grh ? v4a : v6a, 16);
	memcpy(a->dgid, ll == EMU_LL_ETHERNET && !v6_or_grh ? v4b : v6b, 16);
	a->ip_id = 0x1234;
	a->sport = emu_roce_sport_rxe(0x11);
	a->slid = 1;
	a->dlid = 2;
	a->grh = ll == EMU_LL_INFINIBAND && v6_or_grh;
}

static void ext_init(struct emu_pkt_ext *x, uint8_t syndrome)
{
	memset(x, 0, sizeof(*x));
	x->reth = (struct emu_reth){ .va = 0x00007f0012345000ull, .rkey = 0x1234, .dma_len = 5 };
	x->aeth = (struct emu_aeth){ .syndrome = syndrome, .msn = 7 };
	x->atmeth = (struct emu_atmeth){ .va = 0x00007f0012345008ull, .rkey = 0x1234,
					 .swap_add = 0x1111111111111111ull,
					 .compare = 0x2222222222222222ull };
	x->atmack = 0x3333333333333333ull;
	x->imm = 0x04030201;
	x->ieth_rkey = 0x5678;
	x->deth = (struct emu_deth){ .qkey = 0x11111111, .sqpn = 0x12 };
	x->rdeth_een = 0x21;
}

static int emit(struct emu_pcap *p, const char *file, unsigned *n, const struct emu_pkt_addr *a,
		uint8_t op, uint8_t syndrome)
{
	uint8_t buf[256];
	struct emu_bth bth = { .opcode = op, .pkey = EMU_PKEY_DEFAULT, .dqpn = 0x11, .psn = 100,
			       .ackreq = true };
	struct emu_pkt_ext x;
	size_t plen = emu_pkt_opcode[op].mask & EMU_PKT_PAYLOAD ? sizeof(payload) : 0;
	ssize_t len;

	if (op == EMU_OP_CNP)
		bth = (struct emu_bth){ .opcode = op, .pkey = EMU_PKEY_DEFAULT, .becn = true,
					.dqpn = 0x11 };
	ext_init(&x, syndrome);
	len = emu_pkt_build(buf, sizeof(buf), a, &bth, &x, payload, plen, NULL);
	if (len < 0) {
		fprintf(stderr, "pkt_gen: %s: %s\n", emu_pkt_opcode_name(op), emu_pkt_strerror((int)len));
		return -1;
	}
	if (emu_pcap_write(p, (uint64_t)*n * 1000, buf, (size_t)len))
		return -1;
	printf("%s %u %u %s\n", file, ++*n, op, emu_pkt_opcode_name(op));
	return 0;
}

static int gen(struct emu_pcap *p, const char *file, int ll)
{
	struct emu_pkt_addr a0, a1;
	unsigned n = 0;
	int ret = 0;

	addr_init(&a0, ll, false);
	addr_init(&a1, ll, true);
	for (unsigned op = 0; op < 256; op++) {
		if (!emu_pkt_opcode_valid((uint8_t)op) || emu_pkt_opcode[op].mask & EMU_PKT_RD)
			continue;
		ret |= emit(p, file, &n, &a0, (uint8_t)op, acks[0]);
		ret |= emit(p, file, &n, &a1, (uint8_t)op, acks[0]);
	}
	for (size_t i = 1; i < sizeof(acks); i++)
		ret |= emit(p, file, &n, &a0, EMU_OP_RC | EMU_OP_ACK, acks[i]);
	return ret;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct emu_pcap *p;
	bool user0 = false;
	int ret;

	if (argc > 1 && strcmp(argv[1], "-u") == 0) {
		user0 = true;
		argc--;
		argv++;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: pkt_gen [-u] DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/roce.pcap", argv[1]);
	p = emu_pcap_open(path, EMU_LL_ETHERNET);
	if (!p) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	ret = gen(p, "roce", EMU_LL_ETHERNET);
	ret |= emu_pcap_close(p);
	snprintf(path, sizeof(path), "%s/%s", argv[1], user0 ? "ib-user0.pcap" : "ib.pcap");
	p = emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, user0 ? DLT_USER0 : -1);
	if (!p) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	ret |= gen(p, "ib", EMU_LL_INFINIBAND);
	ret |= emu_pcap_close(p);
	return ret ? 1 : 0;
}
