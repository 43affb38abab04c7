/* idtab: keys on every level's edges, set/get/del with their errors, a counter's keys across
 * leaves (as the CM gives local IDs), and a random workload against a plain array. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "emu/sim/idtab.h"

static void test_edges(void **state)
{
	static const uint32_t keys[] = {0, 1, 511, 512, 513, 1023, 1024, (1u << 20) - 1, 1u << 20,
					0x7fffffffu, 0xfffff000u, 0xffffffffu};
	enum { K = sizeof keys / sizeof keys[0] };
	struct emu_idtab t = EMU_IDTAB_INIT;
	int obj[K];

	(void)state;
	assert_null(emu_idtab_get(&t, 0));
	assert_null(emu_idtab_del(&t, 5));
	for (int i = 0; i < K; i++)
		assert_int_equal(emu_idtab_set(&t, keys[i], &obj[i]), 0);
	assert_int_equal(t.n, K);
	for (int i = 0; i < K; i++) {
		assert_ptr_equal(emu_idtab_get(&t, keys[i]), &obj[i]);
		assert_int_equal(emu_idtab_set(&t, keys[i], &obj[0]), -EEXIST);
	}
	assert_int_equal(emu_idtab_set(&t, 77, NULL), -EINVAL);
	assert_null(emu_idtab_get(&t, 2));
	assert_null(emu_idtab_get(&t, 0xfffffffeu));
	for (int i = 0; i < K; i += 2)
		assert_ptr_equal(emu_idtab_del(&t, keys[i]), &obj[i]);
	for (int i = 0; i < K; i++)
		assert_ptr_equal(emu_idtab_get(&t, keys[i]), i % 2 ? &obj[i] : NULL);
	assert_int_equal(t.n, K / 2);
	emu_idtab_destroy(&t);
	assert_int_equal(t.n, 0);
	assert_null(emu_idtab_get(&t, 1));
	assert_int_equal(emu_idtab_set(&t, 1, &obj[1]), 0); /* usable after destroy */
	assert_ptr_equal(emu_idtab_del(&t, 1), &obj[1]);
	assert_int_equal(t.n, 0);
	emu_idtab_destroy(&t);
}

/* A sliding window of 3,000 live keys from a counter that wraps past 2^32: each leaf is
 * emptied (and freed) behind the window; valgrind and ASan see no leak at the end. */
static void test_counter_window(void **state)
{
	enum { W = 3000, STEPS = 20000 };
	struct emu_idtab t = EMU_IDTAB_INIT;
	uint32_t next = 0xffffffffu - 9000;
	static int obj;

	(void)state;
	for (int i = 0; i < STEPS; i++) {
		assert_int_equal(emu_idtab_set(&t, next + (uint32_t)i, &obj), 0);
		if (i >= W)
			assert_ptr_equal(emu_idtab_del(&t, next + (uint32_t)(i - W)), &obj);
		assert_int_equal(t.n, i < W ? (size_t)i + 1 : (size_t)W);
	}
	for (int i = STEPS - W; i < STEPS; i++)
		assert_ptr_equal(emu_idtab_get(&t, next + (uint32_t)i), &obj);
	assert_null(emu_idtab_get(&t, next + (uint32_t)(STEPS - W - 1)));
	for (int i = STEPS - W; i < STEPS; i++)
		assert_ptr_equal(emu_idtab_del(&t, next + (uint32_t)i), &obj);
	assert_int_equal(t.n, 0);
	emu_idtab_destroy(&t);
}

/* Random sets and deletes over keys in a few clusters, against an array of what is set. */
static void test_random_against_model(void **state)
{
	enum { KEYS = 4096, OPS = 200000 };
	static void *model[KEYS];
	static char obj[KEYS];
	struct emu_idtab t = EMU_IDTAB_INIT;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	size_t n = 0;

	(void)state;
	for (int i = 0; i < OPS; i++) {
		unsigned k;
		uint32_t key;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		k = (unsigned)(r % KEYS);
		/* four clusters of 1,024 keys (two leaves each), under three top slots */
		key = (uint32_t)(k % 1024) + (uint32_t[]){0, 5u << 10, 3u << 20, 0xfff00000u}[k / 1024];
		if (model[k]) {
			assert_ptr_equal(emu_idtab_del(&t, key), model[k]);
			model[k] = NULL;
			n--;
		} else {
			assert_int_equal(emu_idtab_set(&t, key, &obj[k]), 0);
			model[k] = &obj[k];
			n++;
		}
		assert_int_equal(t.n, n);
		assert_ptr_equal(emu_idtab_get(&t, key), model[k]);
	}
	for (unsigned k = 0; k < KEYS; k++) {
		uint32_t key = (uint32_t)(k % 1024) +
			       (uint32_t[]){0, 5u << 10, 3u << 20, 0xfff00000u}[k / 1024];

		assert_ptr_equal(emu_idtab_get(&t, key), model[k]);
	}
	emu_idtab_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_counter_window),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
