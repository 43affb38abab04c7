/* Writes the determinism scenario's captures (DIR/eth.pcap, DIR/ib.pcap) for pcap-tshark.sh
 * and for looking at them in Wireshark: pcap_gen [-u] DIR [SEED]. With -u the IB capture is
 * written as DLT_USER0 (DIR/ib-user0.pcap), which Wireshark can be told to decode as IB. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/dlt.h>

#include "traffic.h"

int main(int argc, char **argv)
{
	char path[4096];
	struct emu_pcap *eth, *ib;
	struct traffic_result res;
	uint64_t seed;
	bool user0 = false;
	int ret;

	if (argc > 1 && strcmp(argv[1], "-u") == 0) {
		user0 = true;
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: pcap_gen [-u] DIR [SEED]\n");
		return 2;
	}
	seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	snprintf(path, sizeof(path), "%s/eth.pcap", argv[1]);
	eth = emu_pcap_open(path, EMU_LL_ETHERNET);
	if (!eth) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[1], user0 ? "ib-user0.pcap" : "ib.pcap");
	ib = emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, user0 ? DLT_USER0 : -1);
	if (!ib) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		emu_pcap_close(eth);
		return 1;
	}
	ret = traffic_run(seed, eth, ib, &res);
	printf("seed %" PRIu64 ": %" PRIu64 " ethernet frames, %" PRIu64 " ib frames, end %" PRIu64
	       " ns\n", seed, emu_pcap_frames(eth), emu_pcap_frames(ib), res.end_ns);
	if (emu_pcap_close(eth) || emu_pcap_close(ib) || ret) {
		fprintf(stderr, "pcap_gen: %s\n", strerror(ret ? -ret : EIO));
		return 1;
	}
	return 0;
}
