/* mem_latency: this machine's load-to-use latency by working-set size, and what fresh memory
 * costs, to read cm_bench's figures against. A pointer chase over a random cyclic permutation
 * of 64-byte lines (each load's address comes from the previous load, so nothing overlaps and
 * no prefetcher can guess), in 2 MiB-aligned buffers with transparent huge pages asked for, as
 * kmem's chunks are. Where ns/load jumps is where a cache level ends; the last figures are a
 * miss to memory. One line per size:
 *   mem_latency kib=K ns_per_load=T
 * Then the first touch of fresh anonymous memory (cm_bench's first round in a process pays
 * it for the emulated kernel's objects and tables): a 4 KiB page faulted by a write, the same
 * populated by one MADV_POPULATE_WRITE call, and a 2 MiB transparent huge page, the first time
 * this process maps such memory and again after giving it back (a virtual machine may back
 * guest memory on its first use only):
 *   mem_latency fault=4k us_per_page=T
 *   mem_latency fault=4k-populate us_per_page=T
 *   mem_latency fault=thp-first us_per_2mib=T
 *   mem_latency fault=thp-again us_per_2mib=T
 * Usage: mem_latency [max_mib] (default 256). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64
#define HUGE (2u << 20)
#define PAGE 4096
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* xorshift64*: a fixed sequence, so two runs walk the same permutation */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* len bytes on a 2 MiB boundary, mapped a HUGE more and trimmed, so that munmap(p, len) gives
 * all of it back, with advice (MADV_HUGEPAGE or MADV_NOHUGEPAGE) given. NULL if the mapping
 * fails, or if the advice is refused and required. */
static char *alloc_aligned(size_t len, int advice, bool required)
{
	char *p = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + len, (size_t)(p + HUGE - a));
	if (madvise(a, len, advice) && required) {
		munmap(a, len);
		return NULL;
	}
	return a;
}

/* us per page (4 KiB: huge pages refused) or per 2 MiB (huge) to write the first byte of each
 * page of a fresh len-byte mapping; populate: one MADV_POPULATE_WRITE first. -1 on failure. */
static double first_touch(size_t len, bool huge, bool populate)
{
	char *a = alloc_aligned(len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE, huge);
	double t0, t1;

	if (!a)
		return -1;
	t0 = now_ns();
	if (populate && madvise(a, len, MADV_POPULATE_WRITE)) {
		munmap(a, len);
		return -1;
	}
	for (size_t i = 0; i < len; i += PAGE)
		a[i] = 1;
	t1 = now_ns();
	munmap(a, len);
	return (t1 - t0) / 1e3 / (double)(len / (huge ? HUGE : PAGE));
}

static void faults(void)
{
	size_t len = (size_t)32 << 20;
	double thp_first = first_touch(len, true, false);

	printf("mem_latency fault=4k us_per_page=%.2f\n", first_touch(len, false, false));
	printf("mem_latency fault=4k-populate us_per_page=%.2f\n", first_touch(len, false, true));
	printf("mem_latency fault=thp-first us_per_2mib=%.1f\n", thp_first);
	printf("mem_latency fault=thp-again us_per_2mib=%.1f\n", first_touch(len, true, false));
}

int main(int argc, char **argv)
{
	size_t max_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;

	for (size_t kib = 256; kib <= max_mib * 1024; kib *= 2) {
		size_t n = kib * 1024 / LINE, steps = 20u << 20;
		/* a hint: without THP the walk adds TLB misses */
		char *buf = alloc_aligned(kib * 1024, MADV_HUGEPAGE, false);
		size_t *perm = malloc(n * sizeof *perm);
		uint64_t seed = 0x9e3779b97f4a7c15ull;
		void **p;
		double t0, t1;

		if (!buf || !perm) {
			perror("mem_latency");
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			perm[i] = i;
		for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = (size_t)(next_rand(&seed) % (i + 1)), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		/* line perm[i] points at line perm[i + 1]: one cycle through every line */
		for (size_t i = 0; i < n; i++)
			*(void **)(buf + perm[i] * LINE) = buf + perm[(i + 1) % n] * LINE;
		p = (void **)(buf + perm[0] * LINE);
		for (size_t i = 0; i < n; i++) /* once round, to fault in and warm up */
			p = *p;
		t0 = now_ns();
		for (size_t i = 0; i < steps; i++)
			p = *p;
		t1 = now_ns();
		/* p printed so the chase is not optimised away */
		printf("mem_latency kib=%zu ns_per_load=%.1f%s\n", kib, (t1 - t0) / (double)steps,
		       p ? "" : " (null)");
		free(perm);
		munmap(buf, kib * 1024);
	}
	faults();
	return 0;
}
