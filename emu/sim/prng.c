/* xoshiro256** and splitmix64, written from the published descriptions
 * (https://prng.di.unimi.it/ and Steele, Lea & Flood, "Fast splittable pseudorandom number
 * generators", 2014). */
#include "emu/sim/prng.h"

#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* The splitmix64 output function: a bijection on 64-bit values with full avalanche. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t emu_splitmix64(uint64_t *state)
{
	*state += SPLITMIX_GAMMA;
	return mix64(*state);
}

void emu_prng_seed(struct emu_prng *p, uint64_t seed)
{
	uint64_t sm = seed;

	/* splitmix64 never yields four zero words in a row (mix64 is a bijection, so zero comes
	 * from one input only), hence the all-zero state xoshiro forbids cannot occur. */
	for (int i = 0; i < 4; i++)
		p->s[i] = emu_splitmix64(&sm);
	p->seed = seed;
}

void emu_prng_fork(const struct emu_prng *parent, uint64_t stream, struct emu_prng *child)
{
	/* For a fixed parent seed, stream -> child seed is a bijection (mix64, xor with a
	 * constant, mix64), so distinct streams of one parent never share a seed. */
	emu_prng_seed(child, mix64(parent->seed ^ mix64(stream + SPLITMIX_GAMMA)));
}

uint64_t emu_prng_u64(struct emu_prng *p)
{
	uint64_t *s = p->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t emu_prng_below(struct emu_prng *p, uint64_t n)
{
	unsigned __int128 m;
	uint64_t low, threshold;

	if (n == 0)
		return 0;
	m = (unsigned __int128)emu_prng_u64(p) * n;
	low = (uint64_t)m;
	if (low < n) {
		/* 2^64 mod n: products whose low half falls below it belong to an incomplete
		 * last bucket and are redrawn. */
		threshold = -n % n;
		while (low < threshold) {
			m = (unsigned __int128)emu_prng_u64(p) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double emu_prng_double(struct emu_prng *p)
{
	return (double)(emu_prng_u64(p) >> 11) * 0x1p-53;
}

bool emu_prng_chance(struct emu_prng *p, double prob)
{
	/* Compare 53 random bits against prob scaled by 2^53 (exact: a power-of-two scale).
	 * For 0 < prob < 1 the probability is ceil(prob * 2^53) / 2^53. */
	double r = (double)(emu_prng_u64(p) >> 11);

	if (!(prob > 0.0))
		return false;
	if (prob >= 1.0)
		return true;
	return r < prob * 0x1p53;
}
