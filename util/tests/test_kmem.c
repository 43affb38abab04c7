/* kmem: zeroing, alignment, objects on cache lines, reuse per size class, huge-page chunks,
 * thread caches given back at thread exit, double-free and bad-pointer detection, and the
 * libc mode (RDMAEMU_KMEM=0). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/kmem.h"

static bool pool_mode(void)
{
	struct emu_kmem_stats s;

	emu_kmem_get_stats(&s);
	return s.mode == EMU_KMEM_POOL;
}

/* Pool tests need the pool: a sanitizer build (or valgrind) runs plain malloc. */
#define NEED_POOL()                                                                      \
	do {                                                                             \
		if (!pool_mode())                                                        \
			skip();                                                          \
	} while (0)

static void test_mode_default(void **state)
{
	struct emu_kmem_stats s;

	(void)state;
	emu_kmem_get_stats(&s);
#if defined(__SANITIZE_ADDRESS__)
	assert_int_equal(s.mode, EMU_KMEM_LIBC);
#else
	if (!getenv("RDMAEMU_KMEM") && !strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "",
						"vgpreload"))
		assert_int_equal(s.mode, EMU_KMEM_POOL);
#endif
}

static void test_zeroed_after_reuse(void **state)
{
	uint8_t *p, *q;

	(void)state;
	NEED_POOL();
	p = emu_kmem_alloc(960);
	assert_non_null(p);
	memset(p, 0xff, 960);
	emu_kmem_free(p);
	q = emu_kmem_zalloc(960);
	/* the thread cache is LIFO: the same object comes back, cleared */
	assert_ptr_equal(q, p);
	for (size_t i = 0; i < 960; i++)
		assert_int_equal(q[i], 0);
	emu_kmem_free(q);
}

static void test_alignment_and_sizes(void **state)
{
	static const size_t sizes[] = {0, 1, 15, 16, 17, 32, 33, 100, 255, 256, 257, 960,
				       2048, 2049, 4095, 4096, 4097, 20000};
	void *p[sizeof sizes / sizeof sizes[0]];

	(void)state;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		p[i] = emu_kmem_zalloc(sizes[i]);
		assert_non_null(p[i]);
		assert_int_equal((uintptr_t)p[i] % 16, 0);
		/* every byte asked for is there and zero; write it to catch overlaps below */
		for (size_t k = 0; k < sizes[i]; k++)
			assert_int_equal(((uint8_t *)p[i])[k], 0);
		memset(p[i], (int)i + 1, sizes[i]);
	}
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		for (size_t k = 0; k < sizes[i]; k++)
			assert_int_equal(((uint8_t *)p[i])[k], (uint8_t)(i + 1));
		emu_kmem_free(p[i]);
	}
	emu_kmem_free(NULL);
}

/* No header: an object of a class of 64 bytes or more starts a cache line and spans no
 * more lines than its size needs; the 96-byte class keeps 32-byte alignment. Sizes from
 * classes the tests above do not use, so the objects are fresh from their slabs. */
static void test_objects_start_lines(void **state)
{
	static const struct {
		size_t size, align;
	} rows[] = {{64, 64}, {96, 32}, {128, 64}, {192, 64}, {256, 64}, {384, 128},
		    {512, 512}, {1536, 512}, {3072, 1024}};
	void *p[sizeof rows / sizeof rows[0]][40];

	(void)state;
	NEED_POOL();
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
		for (size_t i = 0; i < 40; i++) {
			p[r][i] = emu_kmem_alloc(rows[r].size);
			assert_non_null(p[r][i]);
			assert_int_equal((uintptr_t)p[r][i] % rows[r].align, 0);
		}
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
		for (size_t i = 0; i < 40; i++)
			emu_kmem_free(p[r][i]);
}

static void test_reuse_carves_nothing(void **state)
{
	enum { N = 1000 };
	struct emu_kmem_stats a, b;
	void **p;

	(void)state;
	NEED_POOL(); /* before the calloc: skip() leaves the function */
	p = calloc(N, sizeof *p);
	assert_non_null(p);
	for (int round = 0; round < 2; round++) {
		emu_kmem_get_stats(&a);
		for (int i = 0; i < N; i++)
			assert_non_null(p[i] = emu_kmem_zalloc(928));
		for (int i = 0; i < N; i++)
			emu_kmem_free(p[i]);
		emu_kmem_get_stats(&b);
		if (round == 1) /* the second round takes only freed objects */
			assert_int_equal(b.carved, a.carved);
	}
	/* another class does not take them: 700 bytes (the 768 class, which no test before
	 * uses) carve every object, 32 at a time: 1,024 for 1,000 */
	emu_kmem_get_stats(&a);
	for (int i = 0; i < N; i++)
		assert_non_null(p[i] = emu_kmem_alloc(700));
	emu_kmem_get_stats(&b);
	assert_int_equal(b.carved, a.carved + 1024);
	for (int i = 0; i < N; i++)
		emu_kmem_free(p[i]);
	free(p);
}

/* More than a chunk of objects maps a second 2 MiB chunk. */
static void test_chunks(void **state)
{
	enum { N = 4000 }; /* 4000 x 1024 bytes > 2 MiB: at least one chunk carved new */
	struct emu_kmem_stats a, b;
	void **p;

	(void)state;
	NEED_POOL();
	p = calloc(N, sizeof *p);
	assert_non_null(p);
	emu_kmem_get_stats(&a);
	for (int i = 0; i < N; i++)
		assert_non_null(p[i] = emu_kmem_alloc(1024));
	emu_kmem_get_stats(&b);
	assert_true(b.chunks >= a.chunks + 1);
	assert_true(b.chunks >= 2);
	for (int i = 0; i < N; i++)
		emu_kmem_free(p[i]);
	free(p);
}

enum { THREAD_N = 200 };

static void *thread_alloc_free(void *arg)
{
	void *p[THREAD_N];

	(void)arg;
	for (int i = 0; i < THREAD_N; i++)
		p[i] = emu_kmem_alloc(3000);
	for (int i = 0; i < THREAD_N; i++)
		emu_kmem_free(p[i]);
	return NULL;
}

/* What a thread kept in its cache goes back to the shared pool when it exits. */
static void test_thread_cache_given_back(void **state)
{
	void *p[THREAD_N];
	struct emu_kmem_stats a, b;
	pthread_t t;

	(void)state;
	NEED_POOL();
	assert_int_equal(pthread_create(&t, NULL, thread_alloc_free, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	emu_kmem_get_stats(&a);
	for (int i = 0; i < THREAD_N; i++)
		assert_non_null(p[i] = emu_kmem_alloc(3000));
	emu_kmem_get_stats(&b);
	assert_int_equal(b.carved, a.carved);
	for (int i = 0; i < THREAD_N; i++)
		emu_kmem_free(p[i]);
}

/* A key created after kmem's: its destructor runs after kmem's has flushed the thread's
 * cache (glibc runs them in key order) and frees an object there. */
static pthread_key_t late_key;

static void late_free(void *p)
{
	emu_kmem_free(p);
}

static void *thread_late_free(void *arg)
{
	(void)arg;
	/* the thread's first use registers its cache (kmem's key exists since the first
	 * test) */
	emu_kmem_free(emu_kmem_alloc(2000));
	assert_int_equal(pthread_setspecific(late_key, emu_kmem_alloc(2000)), 0);
	return NULL;
}

/* What a later destructor frees still reaches the shared pool: kmem's destructor leaves
 * the thread unregistered, so that free registers again and the next round flushes. */
static void test_free_after_thread_cache_flush(void **state)
{
	struct emu_kmem_stats a, b;
	pthread_t t;

	(void)state;
	NEED_POOL();
	assert_int_equal(pthread_key_create(&late_key, late_free), 0);
	emu_kmem_get_stats(&a);
	assert_int_equal(pthread_create(&t, NULL, thread_late_free, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	emu_kmem_get_stats(&b);
	/* every object the thread took (a batch from the shared pool, or fresh ones carved)
	 * is cached again, the late one too: none stayed in its dead cache */
	assert_int_equal(b.cached, a.cached + (b.carved - a.carved));
	assert_int_equal(pthread_key_delete(late_key), 0);
}

/* Runs body(arg) in a child with stderr sent to /dev/null; the child must die of SIGABRT. */
static void assert_child_aborts(void (*body)(int), int arg)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(3);
		body(arg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
}

static void free_twice(int arg)
{
	void *p = emu_kmem_alloc(64);

	(void)arg;
	emu_kmem_free(p);
	emu_kmem_free(p);
}

static void test_double_free_aborts(void **state)
{
	(void)state;
	NEED_POOL();
	assert_child_aborts(free_twice, 0);
}

static void free_twice_past_the_cache(int arg)
{
	enum { K = 200 }; /* > the thread cache's 64: frees are flushed */
	void *p[K], *q[K];

	(void)arg;
	for (int i = 0; i < K; i++) {
		p[i] = emu_kmem_alloc(192);
		q[i] = emu_kmem_alloc(192);
	}
	for (int i = 0; i < K; i++)
		emu_kmem_free(p[i]);
	emu_kmem_free(p[0]); /* p[0] went to the shared pool; now on the cache's top */
	for (int i = 0; i < K; i++) /* push it down and out of the cache */
		emu_kmem_free(q[i]);
}

/* A double free is caught once the second free leaves the thread's cache too: the object's
 * bit in its slab's table of free objects is already set (the first free went there). */
static void test_double_free_in_shared_pool_aborts(void **state)
{
	(void)state;
	NEED_POOL();
	assert_child_aborts(free_twice_past_the_cache, 0);
}

/* Freed objects come back lowest address first, whatever order they were freed in: after
 * the thread's cache (the last 64 freed, most recent first), every object is above the one
 * before it. A stack of frees would give them back in a shuffled order. */
static void test_reuse_in_address_order(void **state)
{
	enum { N = 3000, CACHE = 64 };
	void **p;
	uint64_t r = 88172645463325252ull;

	(void)state;
	NEED_POOL();
	p = calloc(N, sizeof *p);
	assert_non_null(p);
	for (int i = 0; i < N; i++)
		assert_non_null(p[i] = emu_kmem_alloc(1500)); /* the 1536 class */
	for (int i = N - 1; i > 0; i--) { /* Fisher-Yates with xorshift64 */
		int j;
		void *t;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		j = (int)(r % (uint64_t)(i + 1));
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	for (int i = 0; i < N; i++)
		emu_kmem_free(p[i]);
	for (int i = 0; i < N; i++)
		assert_non_null(p[i] = emu_kmem_alloc(1500));
	for (int i = CACHE + 1; i < N; i++)
		assert_true((uintptr_t)p[i - 1] < (uintptr_t)p[i]);
	for (int i = 0; i < N; i++)
		emu_kmem_free(p[i]);
	free(p);
}

/* Tables: zeroed and writable over their whole size; from EMU_KMEM_TABLE_MIN up (pool mode)
 * on 2 MiB boundaries, where transparent huge pages can back them; given back by size. */
static void test_tables(void **state)
{
	static const size_t sizes[] = {1, 4096, EMU_KMEM_TABLE_MIN - 8, EMU_KMEM_TABLE_MIN,
				       300 * 1024, (2u << 20) + 16};

	(void)state;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t n = sizes[i];
		unsigned char *p = emu_kmem_table_zalloc(n);

		assert_non_null(p);
		for (size_t j = 0; j < n; j += 4096)
			assert_int_equal(p[j], 0);
		assert_int_equal(p[n - 1], 0);
		memset(p, 0xa5, n);
		if (pool_mode() && n >= EMU_KMEM_TABLE_MIN)
			assert_int_equal((uintptr_t)p % (n < (2u << 20) ? 65536 : 2u << 20), 0);
		emu_kmem_table_free(p, n);
	}
	emu_kmem_table_free(NULL, 1 << 20);
}

/* A table below 2 MiB is a run of slabs: freed, it is the next table of its length, zeroed
 * again, and no class object is carved from it. */
static void test_table_runs(void **state)
{
	size_t n = 200 * 1024, nonzero = 0; /* 4 slabs */
	unsigned char *p, *q, *o;

	(void)state;
	NEED_POOL();
	assert_non_null(p = emu_kmem_table_zalloc(n));
	memset(p, 0x5a, n);
	emu_kmem_table_free(p, n);
	assert_non_null(o = emu_kmem_alloc(32));
	assert_true(o < p || o >= p + 4 * 65536);
	assert_ptr_equal(q = emu_kmem_table_zalloc(n - 1000), p);
	for (size_t j = 0; j < 4 * 65536; j++)
		nonzero += q[j] != 0;
	assert_int_equal(nonzero, 0);
	emu_kmem_table_free(q, n - 1000);
	emu_kmem_free(o);
}

static void table_misuse(int k)
{
	size_t n = 100 * 1024; /* 2 slabs */
	char *p = emu_kmem_table_zalloc(n);

	if (k == 0) {
		emu_kmem_free(p); /* a table is no object */
	} else if (k == 1) {
		emu_kmem_table_free(p, n);
		emu_kmem_table_free(p, n);
	} else if (k == 2) {
		emu_kmem_table_free(p + 4096, n);
	} else if (k == 3) {
		emu_kmem_table_free(p + 65536, 65536); /* a later slab of the run */
	} else if (k == 4) {
		emu_kmem_table_free(p, 3 * 65536); /* made of 2 slabs, freed as 3 */
	} else {
		emu_kmem_table_free(p, 65536); /* freed as 1 */
	}
}

/* emu_kmem_free of a table, a table freed twice, a pointer into one (within a slab, or at a
 * later slab's start) and a table freed with another size all abort. */
static void test_table_misuse_aborts(void **state)
{
	(void)state;
	NEED_POOL();
	for (int k = 0; k < 6; k++)
		assert_child_aborts(table_misuse, k);
}

static void free_bad_pointer(int k)
{
	static uint64_t not_kmem[4] = {0, 0, 0, 0};
	char *p = emu_kmem_alloc(384);

	emu_kmem_free(k == 0 ? p + 64 : (void *)&not_kmem[2]);
}

/* A pointer into an object (not where one starts) aborts; so does one outside any slab
 * handed out, read as a big object's missing header. */
static void test_bad_pointer_aborts(void **state)
{
	(void)state;
	NEED_POOL();
	for (int k = 0; k < 2; k++)
		assert_child_aborts(free_bad_pointer, k);
}

/* This program's path, from main's argv[0]: not /proc/self/exe, which under valgrind is the
 * valgrind tool rather than the test. */
static const char *self_path;

/* RDMAEMU_KMEM=0: this program again, in a child that must report the libc mode. */
static void test_libc_mode(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("RDMAEMU_KMEM", "0", 1);
		execl(self_path, "test_kmem", "--libc-child", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* The child of test_libc_mode: exit 0 when every call is libc's and nothing is carved. */
static int libc_child(void)
{
	struct emu_kmem_stats s;
	uint8_t *p = emu_kmem_zalloc(500);

	if (!p || p[0] || p[499])
		return 1;
	emu_kmem_free(p);
	emu_kmem_get_stats(&s);
	return s.mode == EMU_KMEM_LIBC && s.chunks == 0 && s.carved == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_default),
		cmocka_unit_test(test_zeroed_after_reuse),
		cmocka_unit_test(test_alignment_and_sizes),
		cmocka_unit_test(test_objects_start_lines),
		cmocka_unit_test(test_reuse_carves_nothing),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_thread_cache_given_back),
		cmocka_unit_test(test_free_after_thread_cache_flush),
		cmocka_unit_test(test_double_free_aborts),
		cmocka_unit_test(test_double_free_in_shared_pool_aborts),
		cmocka_unit_test(test_reuse_in_address_order),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_table_runs),
		cmocka_unit_test(test_table_misuse_aborts),
		cmocka_unit_test(test_bad_pointer_aborts),
		cmocka_unit_test(test_libc_mode),
	};

	if (argc > 1 && !strcmp(argv[1], "--libc-child"))
		return libc_child();
	self_path = argv[0];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
