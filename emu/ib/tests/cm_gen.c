/* Writes the sample CM messages (cm_samples.c) for cm-tshark.sh, and for looking at them in
 * Wireshark: cm_gen DIR writes DIR/cm.pcap, Ethernet: each message as a RoCEv2/IPv4 UD
 * SEND_ONLY from QP1 to QP1 with the GSI Q_Key, as the kernel's MAD layer sends them. Prints
 * "FRAME ATTR NAME" per frame, the manifest the script checks against. */
#include <stdio.h>
#include <string.h>

#include "cm_samples.h"
#include "emu/ib/cm_mad.h"
#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"

int main(int argc, char **argv)
{
	static const uint8_t ga[16] = { [10] = 0xff, 0xff, 192, 0, 2, 65 };
	static const uint8_t gb[16] = { [10] = 0xff, 0xff, 192, 0, 2, 66 };
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET };
	struct emu_pcap *p;
	char path[4096];
	int ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: cm_gen DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/cm.pcap", argv[1]);
	p = emu_pcap_open(path, EMU_LL_ETHERNET);
	if (!p) {
		perror(path);
		return 1;
	}
	memcpy(a.smac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0, 0, 0x41 }, 6);
	memcpy(a.dmac, (const uint8_t[6]){ 0x02, 0x00, 0x5e, 0, 0, 0x42 }, 6);
	memcpy(a.sgid, ga, 16);
	memcpy(a.dgid, gb, 16);
	a.sport = emu_roce_sport_rxe(EMU_CM_QP);
	for (unsigned i = 0; i < sizeof(cm_sample_attrs) / sizeof(cm_sample_attrs[0]); i++) {
		uint16_t attr = cm_sample_attrs[i];
		struct emu_cm_msg m;
		struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY,
				       .pkey = EMU_PKEY_DEFAULT, .dqpn = EMU_CM_QP, .psn = i };
		struct emu_pkt_ext x = { .deth = { .qkey = EMU_CM_QKEY, .sqpn = EMU_CM_QP } };
		uint8_t mad[EMU_MAD_LEN], frame[512];
		ssize_t len;
		int r;

		cm_sample(attr, &m);
		r = emu_cm_pack(attr, &m, mad);
		if (r) {
			fprintf(stderr, "pack %s: %s\n", emu_cm_attr_name(attr), emu_cm_strerror(r));
			ret = 1;
			continue;
		}
		a.ip_id = (uint16_t)(0x100 + i);
		len = emu_pkt_build(frame, sizeof(frame), &a, &bth, &x, mad, sizeof(mad), NULL);
		if (len < 0 || emu_pcap_write(p, (uint64_t)(i + 1) * 1000, frame, (size_t)len)) {
			fprintf(stderr, "frame %u failed\n", i + 1);
			ret = 1;
			continue;
		}
		printf("%u %u %s\n", i + 1, attr, emu_cm_attr_name(attr));
	}
	ret |= emu_pcap_close(p) != 0;
	return ret;
}
