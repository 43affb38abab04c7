/* The emulator's seeded PRNG: xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64,
 * as the algorithm's authors recommend.
 *
 * Every random decision of the emulator (fault injection, jitter, anything that must look
 * random) draws from a struct emu_prng derived from the fabric seed, never from rand() or the
 * time, so that the same seed and the same traffic give the same decisions.
 *
 * Streams: emu_prng_fork() derives a child generator from a parent's *seed* and a stream id,
 * without reading or advancing the parent. Each consumer (a link direction, the SA, ...) gets
 * its own stream, so traffic on one link never shifts another link's decisions, and adding a
 * consumer never perturbs the existing ones.
 */
#ifndef RDMAEMU_EMU_PRNG_H
#define RDMAEMU_EMU_PRNG_H

#include <stdbool.h>
#include <stdint.h>

/* Domains for first-level forks of the fabric seed: one per subsystem, so that their stream ids
 * never collide. */
#define EMU_PRNG_DOMAIN_WIRE 0x77697265ULL /* "wire" */
#define EMU_PRNG_DOMAIN_SA 0x5341ULL       /* "SA" */
#define EMU_PRNG_DOMAIN_HOST 0x686f7374ULL /* "host" */

struct emu_prng {
	uint64_t s[4];
	uint64_t seed; /* what the state was seeded from; the input of emu_prng_fork */
};

/* One step of splitmix64 (Vigna): advances *state and returns the next output. Exposed for
 * known-answer tests and for hashing ids into seeds. */
uint64_t emu_splitmix64(uint64_t *state);

void emu_prng_seed(struct emu_prng *p, uint64_t seed);
/* Seeds `child` from (parent->seed, stream). `parent` is not modified; child may not alias it. */
void emu_prng_fork(const struct emu_prng *parent, uint64_t stream, struct emu_prng *child);

uint64_t emu_prng_u64(struct emu_prng *p);
/* Uniform in [0, n), without modulo bias (Lemire's multiply-and-reject). n == 0 returns 0 and
 * draws nothing. Draws one value, rarely more (probability < n / 2^64). */
uint64_t emu_prng_below(struct emu_prng *p, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. Draws one value. */
double emu_prng_double(struct emu_prng *p);
/* True with probability `prob`: prob <= 0 (and NaN) is never, prob >= 1 is always. Always draws
 * exactly one value, whatever prob is, so changing a probability at run time does not shift the
 * rest of the stream. */
bool emu_prng_chance(struct emu_prng *p, double prob);

#endif
