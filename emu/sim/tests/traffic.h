/* The determinism scenario shared by test_pcap and pcap_gen: three links (two RoCE, one IB)
 * with loss, duplication, reordering, jitter and a down period, carrying RC SENDs answered by
 * ACKs, all driven by timers on one virtual clock. */
#ifndef RDMAEMU_EMU_TESTS_TRAFFIC_H
#define RDMAEMU_EMU_TESTS_TRAFFIC_H

#include <stdint.h>

#include "emu/sim/pcap.h"
#include "emu/sim/wire.h"

#define TRAFFIC_LINKS 3
#define TRAFFIC_EPS 6
#define TRAFFIC_SENDS 200 /* SENDs per requester */

struct traffic_result {
	struct emu_wire_counters ctr[TRAFFIC_LINKS][2];
	uint64_t rx[TRAFFIC_EPS];  /* frames received per endpoint */
	uint64_t end_ns;           /* virtual time when everything was delivered */
	uint64_t timers_fired;
	uint64_t rx_hash;          /* FNV-1a over (endpoint, time, frame) of every delivery */
};

/* Runs the scenario with `seed`, recording into the taps (either may be NULL). 0 or -errno. */
int traffic_run(uint64_t seed, struct emu_pcap *eth, struct emu_pcap *ib,
		struct traffic_result *res);

#endif
