/* Throughput of the engine core: frames through clock + wire (with and without faults, with the
 * pcap tap), and timer arm + fire rates. Prints one machine-readable line per figure:
 *   bench <name> <unit>=<value> ...
 * Wall time is read here only, to measure; the engine itself never reads it.
 * Usage: wire_bench [scale]  (scale multiplies the iteration counts, default 1). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/sim/clock.h"
#include "emu/sim/pcap.h"
#include "emu/sim/prng.h"
#include "emu/sim/wire.h"

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rx_frames, rx_bytes;

static void count_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	rx_frames++;
	rx_bytes += len;
}

static void bench_wire(const char *name, size_t frame_len, double loss, uint64_t nframes,
		       bool tap)
{
	struct emu_faults f = { .delay_ns = 1000, .jitter_ns = loss > 0 ? 100 : 0, .loss = loss };
	static uint8_t frame[EMU_WIRE_MAX_FRAME];
	struct emu_clock clk;
	struct emu_wire *w;
	struct emu_pcap *pcap = NULL;
	const uint64_t batch = 256;
	double t0, dt;

	memset(frame, 0xa5, sizeof(frame));
	emu_clock_init(&clk, 0);
	w = emu_wire_new(&clk, 1);
	if (!w || emu_wire_add_endpoint(w, 1, count_rx, NULL) != 0 ||
	    emu_wire_add_endpoint(w, 2, count_rx, NULL) != 1 ||
	    emu_wire_connect(w, 0, 1, EMU_LL_ETHERNET, &f) != 0) {
		fprintf(stderr, "wire_bench: setup failed\n");
		exit(1);
	}
	if (tap) {
		pcap = emu_pcap_open("/dev/null", EMU_LL_ETHERNET);
		if (!pcap || emu_wire_set_tap(w, EMU_LL_ETHERNET, pcap)) {
			fprintf(stderr, "wire_bench: /dev/null tap failed\n");
			exit(1);
		}
	}
	rx_frames = rx_bytes = 0;
	t0 = wall_s();
	/* Batches keep `batch` frames in flight, as a busy link would. */
	for (uint64_t sent = 0; sent < nframes; sent += batch) {
		for (uint64_t i = 0; i < batch && sent + i < nframes; i++) {
			frame[0] = (uint8_t)i;
			if (emu_wire_send(w, 0, frame, frame_len)) {
				fprintf(stderr, "wire_bench: send failed\n");
				exit(1);
			}
		}
		emu_clock_run_until(&clk, emu_clock_now(&clk) + 2000, EMU_CLOCK_NO_LIMIT, NULL);
	}
	emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, NULL);
	dt = wall_s() - t0;
	printf("bench %s frames_per_s=%.0f ns_per_frame=%.1f delivered=%" PRIu64 " sent=%" PRIu64
	       " gbit_per_s=%.2f\n", name, (double)nframes / dt, dt * 1e9 / (double)nframes,
	       rx_frames, nframes, (double)rx_bytes * 8 / dt / 1e9);
	emu_wire_free(w);
	emu_pcap_close(pcap);
	emu_clock_fini(&clk);
}

struct btimer {
	struct emu_timer t;
	struct emu_prng *prng;
	uint64_t *left;
};

static void btimer_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct btimer *b = arg;

	if (*b->left) {
		(*b->left)--;
		emu_timer_arm_in(clk, t, 1 + emu_prng_below(b->prng, 10000));
	}
}

/* `npending` timers re-arming themselves at random delays until `total` arms happened: the
 * steady state of a host engine with many QPs and retransmit timers. */
static void bench_timers(const char *name, size_t npending, uint64_t total)
{
	struct emu_clock clk;
	struct emu_prng prng;
	struct btimer *t = calloc(npending, sizeof(*t));
	uint64_t left = total, fired;
	double t0, dt;

	if (!t)
		exit(1);
	emu_clock_init(&clk, 0);
	emu_prng_seed(&prng, 1);
	t0 = wall_s();
	for (size_t i = 0; i < npending; i++) {
		t[i].prng = &prng;
		t[i].left = &left;
		emu_timer_init(&t[i].t, btimer_fire, &t[i]);
		emu_timer_arm_in(&clk, &t[i].t, 1 + emu_prng_below(&prng, 10000));
	}
	emu_clock_run_idle(&clk, EMU_CLOCK_NO_LIMIT, &fired);
	dt = wall_s() - t0;
	printf("bench %s timers_per_s=%.0f ns_per_timer=%.1f pending=%zu fired=%" PRIu64 "\n",
	       name, (double)fired / dt, dt * 1e9 / (double)fired, npending, fired);
	emu_clock_fini(&clk);
	free(t);
}

/* Arm then cancel (a retransmit timer that the ACK stops) among `npending` others. */
static void bench_cancel(const char *name, size_t npending, uint64_t total)
{
	struct emu_clock clk;
	struct emu_prng prng;
	struct btimer *t = calloc(npending + 1, sizeof(*t));
	double t0, dt;

	if (!t)
		exit(1);
	emu_clock_init(&clk, 0);
	emu_prng_seed(&prng, 2);
	for (size_t i = 0; i <= npending; i++)
		emu_timer_init(&t[i].t, btimer_fire, &t[i]);
	for (size_t i = 0; i < npending; i++)
		emu_timer_arm_in(&clk, &t[i].t, 1 + emu_prng_below(&prng, 1000000));
	t0 = wall_s();
	for (uint64_t i = 0; i < total; i++) {
		emu_timer_arm_in(&clk, &t[npending].t, 1 + emu_prng_below(&prng, 1000000));
		emu_timer_cancel(&clk, &t[npending].t);
	}
	dt = wall_s() - t0;
	printf("bench %s arm_cancel_per_s=%.0f ns_per_op=%.1f pending=%zu\n", name,
	       (double)total / dt, dt * 1e9 / (double)total, npending);
	emu_clock_fini(&clk);
	free(t);
}

int main(int argc, char **argv)
{
	uint64_t scale = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;

	if (!scale)
		scale = 1;
	bench_wire("wire_64B", 64, 0, 2000000 * scale, false);
	bench_wire("wire_64B_loss1", 64, 0.01, 2000000 * scale, false);
	bench_wire("wire_4KiB", 4096, 0, 500000 * scale, false);
	bench_wire("wire_4KiB_loss1", 4096, 0.01, 500000 * scale, false);
	bench_wire("wire_64B_pcap", 64, 0, 1000000 * scale, true);
	bench_timers("timers_1k", 1024, 2000000 * scale);
	bench_timers("timers_100k", 100000, 2000000 * scale);
	bench_cancel("timer_cancel_10k", 10000, 2000000 * scale);
	return 0;
}
