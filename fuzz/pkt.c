/* Fuzz target: a frame off the wire: the receive demultiplexer's look at it
 * (emu/hca/engine_rx.c), then the packet parser (emu/hca/pkt_parse.c and the header readers of
 * pkt_hdr.c), as every receiver parses it first. Input: one byte of mode (bit 0: InfiniBand,
 * else Ethernet; bit 1: the frame counts as the builder's own, so the CRC checks are skipped
 * and the fuzzer reaches past them), then the frame. A frame that parses must have every
 * header it announces inside the bytes given and the DestQP the demultiplexer saw: the target
 * checks that, then reads each header and recomputes the ICRC over it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/hca/engine_rx.h"
#include "emu/hca/pkt.h"
#include "fuzz/fuzz_env.h"

/* Header lengths as the parser lays them out (IBA 5.2, 9.2-9.3; RFC 791, 8200, 768). */
static const size_t hdr_len[EMU_PKT_H_NUM] = {
	[EMU_PKT_H_RDETH] = 4, [EMU_PKT_H_DETH] = 8, [EMU_PKT_H_RETH] = 16,
	[EMU_PKT_H_ATMETH] = 28, [EMU_PKT_H_AETH] = 4, [EMU_PKT_H_ATMACK] = 8,
	[EMU_PKT_H_IMMDT] = 4, [EMU_PKT_H_IETH] = 4, [EMU_PKT_H_PAYLOAD] = 0,
};

static void inside(uint32_t off, size_t len, size_t size)
{
	if (off != EMU_PKT_NO_HDR && (off > size || len > size - off))
		abort(); /* a parsed header reaches past the frame */
}

static void read_headers(const uint8_t *f, size_t size, const struct emu_pkt_info *pi)
{
	union {
		struct emu_eth eth;
		struct emu_ipv4 ip4;
		struct emu_ipv6 ip6;
		struct emu_udp udp;
		struct emu_lrh lrh;
		struct emu_grh grh;
		struct emu_bth bth;
		struct emu_reth reth;
		struct emu_aeth aeth;
		struct emu_atmeth atm;
		struct emu_deth deth;
	} h;

	inside(pi->eth_off, 14, size);
	inside(pi->lrh_off, 8, size);
	inside(pi->grh_off, 40, size);
	inside(pi->udp_off, 8, size);
	inside(pi->bth_off, 12, size);
	inside(pi->ip_off, pi->net == EMU_PKT_NET_IPV4 ? 20 : 40, size);
	for (int i = 0; i < EMU_PKT_H_NUM; i++)
		inside(pi->hdr_off[i], hdr_len[i], size);
	inside(pi->hdr_off[EMU_PKT_H_PAYLOAD], pi->paylen + pi->pad, size);
	inside(pi->icrc_off, 4, size);
	inside(pi->vcrc_off, 2, size);
	if (pi->eth_off != EMU_PKT_NO_HDR)
		emu_eth_get(f + pi->eth_off, &h.eth);
	if (pi->lrh_off != EMU_PKT_NO_HDR)
		emu_lrh_get(f + pi->lrh_off, &h.lrh);
	if (pi->grh_off != EMU_PKT_NO_HDR)
		emu_grh_get(f + pi->grh_off, &h.grh);
	if (pi->ip_off != EMU_PKT_NO_HDR && pi->net == EMU_PKT_NET_IPV4)
		emu_ipv4_get(f + pi->ip_off, &h.ip4);
	if (pi->ip_off != EMU_PKT_NO_HDR && pi->net == EMU_PKT_NET_IPV6)
		emu_ipv6_get(f + pi->ip_off, &h.ip6);
	if (pi->udp_off != EMU_PKT_NO_HDR)
		emu_udp_get(f + pi->udp_off, &h.udp);
	emu_bth_get(f + pi->bth_off, &h.bth);
	if (pi->hdr_off[EMU_PKT_H_RETH] != EMU_PKT_NO_HDR)
		emu_reth_get(f + pi->hdr_off[EMU_PKT_H_RETH], &h.reth);
	if (pi->hdr_off[EMU_PKT_H_AETH] != EMU_PKT_NO_HDR)
		emu_aeth_get(f + pi->hdr_off[EMU_PKT_H_AETH], &h.aeth);
	if (pi->hdr_off[EMU_PKT_H_ATMETH] != EMU_PKT_NO_HDR)
		emu_atmeth_get(f + pi->hdr_off[EMU_PKT_H_ATMETH], &h.atm);
	if (pi->hdr_off[EMU_PKT_H_DETH] != EMU_PKT_NO_HDR)
		emu_deth_get(f + pi->hdr_off[EMU_PKT_H_DETH], &h.deth);
	(void)emu_pkt_icrc(f, pi);
	(void)emu_pkt_opcode_name(pi->opcode);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_pkt_info pi;
	enum emu_rx_kind kind;
	uint32_t dqpn = 0;
	uint8_t *f;
	int ll, rc;

	if (!size)
		return 0;
	ll = data[0] & 1 ? EMU_LL_INFINIBAND : EMU_LL_ETHERNET;
	/* a copy of exactly the frame's size, so that ASan sees any read past it */
	f = malloc(size - 1 ? size - 1 : 1);
	if (!f)
		return 0;
	memcpy(f, data + 1, size - 1);
	kind = emu_rx_classify(ll, f, size - 1, &dqpn);
	emu_pkt_trust(data[0] & 2);
	rc = emu_pkt_parse(f, size - 1, ll, &pi);
	emu_pkt_trust(false);
	(void)emu_pkt_strerror(-rc);
	if (!rc) {
		if (kind != EMU_RX_KIND_TRANSPORT || dqpn != pi.dqpn)
			abort(); /* the demultiplexer would send it elsewhere than its DestQP says */
		read_headers(f, size - 1, &pi);
	}
	free(f);
	return 0;
}
