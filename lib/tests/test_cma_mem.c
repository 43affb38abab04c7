/* The library's record memory (lib/cma_mem.c, built into this program): zeroing after reuse,
 * records on cache lines, the last freed handed out first, distinct records across chunks,
 * sizes beyond the classes, and a thread's cache given back when the thread exits. Under
 * valgrind or a sanitizer the pool is plain malloc and the pool checks are skipped. */
#include "config.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/cma.h"

/* The pool hands a freed record straight back; malloc need not. */
static bool pool_mode(void)
{
	void *p = cma_mem_alloc(200), *q;
	bool pool;

	cma_mem_free(p, 200);
	q = cma_mem_alloc(200);
	pool = p == q && ((uintptr_t)q & 63) == 0;
	cma_mem_free(q, 200);
	return pool;
}

#define NEED_POOL()                                                                      \
	do {                                                                             \
		if (!pool_mode())                                                        \
			skip();                                                          \
	} while (0)

static void test_zeroed_after_reuse(void **state)
{
	uint8_t *p, *q;

	(void)state;
	NEED_POOL();
	p = cma_mem_alloc(512);
	assert_non_null(p);
	memset(p, 0xa5, 512);
	cma_mem_free(p, 512);
	q = cma_mem_zalloc(512);
	assert_ptr_equal(q, p); /* the last freed first */
	for (size_t i = 0; i < 512; i++)
		assert_int_equal(q[i], 0);
	cma_mem_free(q, 512);
}

static void test_classes_and_lines(void **state)
{
	static const size_t sizes[] = { 1, 64, 65, 128, 200, 256, 352, 384, 500, 512 };
	void *p[sizeof sizes / sizeof sizes[0]];

	(void)state;
	NEED_POOL();
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		p[i] = cma_mem_zalloc(sizes[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] & 63, 0);
		memset(p[i], (int)i + 1, sizes[i]);
	}
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		for (size_t k = 0; k < sizes[i]; k++)
			assert_int_equal(((uint8_t *)p[i])[k], i + 1);
		cma_mem_free(p[i], sizes[i]);
	}
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* 20,000 ids: ~10 MiB, several chunks and many trips through the shared pool; no two
 * records overlap, and they come back after a free of all. */
static void test_many_distinct(void **state)
{
	enum { N = 20000 };
	uintptr_t *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t round = 0; round < 2; round++) {
		uintptr_t *v = round ? b : a;

		for (size_t i = 0; i < N; i++) {
			v[i] = (uintptr_t)cma_mem_zalloc(512);
			assert_true(v[i]);
			*(size_t *)v[i] = i;
		}
		for (size_t i = 0; i < N; i++) {
			assert_int_equal(*(size_t *)v[i], i);
			cma_mem_free((void *)v[i], 512);
		}
		qsort(v, N, sizeof *v, cmp_ptr);
		for (size_t i = 1; i < N; i++)
			assert_true(v[i] - v[i - 1] >= 512);
	}
	if (pool_mode())
		assert_memory_equal(a, b, N * sizeof *a); /* the same records again */
	free(a);
	free(b);
}

static void test_beyond_classes(void **state)
{
	uint8_t *p = cma_mem_zalloc(4096);

	(void)state;
	assert_non_null(p);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(p[i], 0);
	cma_mem_free(p, 4096);
	cma_mem_free(NULL, 512);
}

static void *free_all(void *arg)
{
	void **v = arg;

	for (size_t i = 0; v[i]; i++)
		cma_mem_free(v[i], 384);
	return NULL;
}

/* Records freed by a thread that then exits are not lost: they come back here (after the
 * few this thread's cache still holds). */
static void test_thread_exit_gives_back(void **state)
{
	enum { N = 300, W = N + 64 };
	void *v[N + 1] = { NULL };
	void *w[W];
	pthread_t t;
	size_t found = 0;

	(void)state;
	NEED_POOL();
	for (size_t i = 0; i < N; i++)
		v[i] = cma_mem_alloc(384);
	assert_int_equal(pthread_create(&t, NULL, free_all, v), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (size_t i = 0; i < W; i++)
		w[i] = cma_mem_alloc(384);
	for (size_t k = 0; k < N; k++)
		for (size_t i = 0; i < W; i++)
			if (w[i] == v[k]) {
				found++;
				break;
			}
	assert_int_equal(found, N);
	for (size_t i = 0; i < W; i++)
		cma_mem_free(w[i], 384);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeroed_after_reuse),
		cmocka_unit_test(test_classes_and_lines),
		cmocka_unit_test(test_many_distinct),
		cmocka_unit_test(test_beyond_classes),
		cmocka_unit_test(test_thread_exit_gives_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
