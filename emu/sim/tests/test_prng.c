/* PRNG: known-answer vectors, stream independence, exact edge cases, distribution sanity. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/prng.h"

/* splitmix64 from state 0: the values published with the algorithm (prng.di.unimi.it). */
static void test_splitmix64_kat(void **state)
{
	static const uint64_t want[4] = { 0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
					  0x06c45d188009454fULL, 0xf88bb8a8724c81ecULL };
	uint64_t s = 0;

	for (int i = 0; i < 4; i++)
		assert_int_equal(emu_splitmix64(&s), want[i]);
	assert_int_equal(s, 4 * 0x9e3779b97f4a7c15ULL);
}

/* xoshiro256** seeded with four splitmix64 outputs; computed once and cross-checked against an
 * independent implementation of the reference algorithm. */
static void test_xoshiro_kat(void **state)
{
	static const struct {
		uint64_t seed;
		uint64_t out[6];
	} kat[] = {
		{ 0, { 0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL, 0x1a5f849d4933e6e0ULL,
		       0x6aa594f1262d2d2cULL, 0xbba5ad4a1f842e59ULL, 0xffef8375d9ebcacaULL } },
		{ 1, { 0xb3f2af6d0fc710c5ULL, 0x853b559647364ceaULL, 0x92f89756082a4514ULL,
		       0x642e1c7bc266a3a7ULL, 0xb27a48e29a233673ULL, 0x24c123126ffda722ULL } },
		{ 42, { 0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL, 0xae17533239e499a1ULL,
			0xecb8ad4703b360a1ULL, 0xfde6dc7fe2ec5e64ULL, 0xc50da53101795238ULL } },
	};
	struct emu_prng p;

	for (size_t k = 0; k < sizeof(kat) / sizeof(kat[0]); k++) {
		emu_prng_seed(&p, kat[k].seed);
		assert_int_equal(p.seed, kat[k].seed);
		for (int i = 0; i < 6; i++)
			assert_int_equal(emu_prng_u64(&p), kat[k].out[i]);
	}
}

static void test_below_kat_and_edges(void **state)
{
	static const uint64_t want[8] = { 83, 378, 680, 924, 991, 769, 719, 850 };
	struct emu_prng p, q;

	emu_prng_seed(&p, 42);
	for (int i = 0; i < 8; i++)
		assert_int_equal(emu_prng_below(&p, 1000), want[i]);

	/* below(0) is 0 and draws nothing; below(1) is 0 and draws exactly one value. */
	emu_prng_seed(&p, 5);
	emu_prng_seed(&q, 5);
	assert_int_equal(emu_prng_below(&p, 0), 0);
	assert_memory_equal(p.s, q.s, sizeof(p.s));
	assert_int_equal(emu_prng_below(&p, 1), 0);
	emu_prng_u64(&q);
	assert_memory_equal(p.s, q.s, sizeof(p.s));
	for (int i = 0; i < 1000; i++)
		assert_true(emu_prng_below(&p, UINT64_MAX) < UINT64_MAX);
}

/* Chi-square of below(6) and below(2^63 + 1) (the worst case for a biased modulo reduction,
 * whose low half would be twice as likely): counts must match uniformity. */
static void test_below_uniform(void **state)
{
	struct emu_prng p;
	uint64_t counts[6] = { 0 };
	const int n = 600000;
	double chi = 0;
	uint64_t low_half = 0;

	emu_prng_seed(&p, 7);
	for (int i = 0; i < n; i++)
		counts[emu_prng_below(&p, 6)]++;
	for (int i = 0; i < 6; i++)
		chi += ((double)counts[i] - n / 6.0) * ((double)counts[i] - n / 6.0) / (n / 6.0);
	/* 5 degrees of freedom: P(chi2 > 20.5) = 0.001. */
	assert_true(chi < 20.5);

	for (int i = 0; i < 100000; i++)
		low_half += emu_prng_below(&p, (1ULL << 63) + 1) < (1ULL << 62);
	/* Uniform: half of the draws, +- 5 sigma (sigma = 158). */
	assert_true(low_half > 50000 - 800 && low_half < 50000 + 800);
}

static void test_chance_exact_edges(void **state)
{
	struct emu_prng p, q;

	emu_prng_seed(&p, 99);
	emu_prng_seed(&q, 99);
	for (int i = 0; i < 100000; i++) {
		assert_false(emu_prng_chance(&p, 0.0));
		assert_false(emu_prng_chance(&p, -0.5));
		assert_false(emu_prng_chance(&p, NAN));
		assert_true(emu_prng_chance(&p, 1.0));
		assert_true(emu_prng_chance(&p, 2.0));
		assert_true(emu_prng_chance(&p, INFINITY));
	}
	/* Each chance() drew exactly one value whatever the probability. */
	for (int i = 0; i < 600000; i++)
		emu_prng_u64(&q);
	assert_memory_equal(p.s, q.s, sizeof(p.s));
	/* The smallest positive double is (almost) never true but is not 0: 2^-53. */
	for (int i = 0; i < 10000; i++)
		assert_false(emu_prng_chance(&p, 5e-324));
}

static void test_chance_rate(void **state)
{
	struct emu_prng p;
	int hits = 0, hits01 = 0;

	emu_prng_seed(&p, 2024);
	for (int i = 0; i < 1000000; i++) {
		hits += emu_prng_chance(&p, 0.25);
		hits01 += emu_prng_chance(&p, 0.01);
	}
	/* +- 5 sigma: sigma(0.25) = 433, sigma(0.01) = 99.5. */
	assert_true(hits > 250000 - 2165 && hits < 250000 + 2165);
	assert_true(hits01 > 10000 - 500 && hits01 < 10000 + 500);
	/* Exact for this seed: the stream is part of the reproducibility contract. */
	emu_prng_seed(&p, 2024);
	hits = 0;
	for (int i = 0; i < 1000; i++)
		hits += emu_prng_chance(&p, 0.5);
	assert_int_equal(hits, 507);
}

static void test_double_range(void **state)
{
	struct emu_prng p;
	double sum = 0;

	emu_prng_seed(&p, 3);
	for (int i = 0; i < 100000; i++) {
		double d = emu_prng_double(&p);

		assert_true(d >= 0.0 && d < 1.0);
		sum += d;
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_fork(void **state)
{
	static const uint64_t want[4] = { 0x8d8c3d4ddaadc08cULL, 0xcb1d131f45e8e1e2ULL,
					  0x8f1557b246dcc742ULL, 0x96e9a4ba277fff9aULL };
	struct emu_prng parent, saved, a, b, c;

	emu_prng_seed(&parent, 42);
	saved = parent;
	emu_prng_fork(&parent, 7, &a);
	assert_memory_equal(&parent, &saved, sizeof(parent)); /* parent untouched */
	assert_int_equal(a.seed, 0xd56fd4491d82a4ddULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(emu_prng_u64(&a), want[i]);

	/* Independent of how far the parent has run. */
	for (int i = 0; i < 100; i++)
		emu_prng_u64(&parent);
	emu_prng_fork(&parent, 7, &b);
	emu_prng_fork(&saved, 7, &a);
	assert_memory_equal(&a, &b, sizeof(a));

	/* Distinct streams give distinct seeds and outputs; forks of forks work too. */
	emu_prng_fork(&parent, 8, &c);
	assert_int_not_equal(c.seed, a.seed);
	assert_int_not_equal(emu_prng_u64(&c), emu_prng_u64(&a));
	emu_prng_fork(&a, 0, &b);
	emu_prng_fork(&a, 1, &c);
	assert_int_not_equal(b.seed, c.seed);
	assert_int_not_equal(b.seed, a.seed);

	/* Streams 0..9999 of one parent: no seed collision (bijection), no equal first output. */
	{
		static uint64_t seeds[10000];

		for (uint64_t s = 0; s < 10000; s++) {
			emu_prng_fork(&saved, s, &c);
			seeds[s] = c.seed;
		}
		qsort(seeds, 10000, sizeof(seeds[0]), cmp_u64);
		for (int i = 1; i < 10000; i++)
			assert_true(seeds[i - 1] != seeds[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splitmix64_kat),
		cmocka_unit_test(test_xoshiro_kat),
		cmocka_unit_test(test_below_kat_and_edges),
		cmocka_unit_test(test_below_uniform),
		cmocka_unit_test(test_chance_exact_edges),
		cmocka_unit_test(test_chance_rate),
		cmocka_unit_test(test_double_range),
		cmocka_unit_test(test_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
