/* cpu_anchor: the latency anchor of bench/run-all's two-process rows: one cache line passed
 * back and forth between two threads on two CPUs, the least any message between two
 * processes on those CPUs takes (a ring's record and its index are such lines).
 *
 *   cpu_anchor
 *
 * The threads are pinned to the first two CPUs this process may run on; each waits for the
 * other's write and answers it, 1,000,000 times, after 100,000 to warm up. One line:
 *   cpu_anchor cpus=A,B line_one_way_ns=X
 * (half the round trip). With one CPU only it says so and exits 0 with no figure. */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/bench_clock.h"

#define WARM 100000
#define ROUNDS 1000000

static struct {
	_Alignas(64) volatile uint64_t line;
} shared;

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *answer(void *arg)
{
	if (pin(*(int *)arg))
		return NULL;
	for (uint64_t i = 1; i < 2ull * (WARM + ROUNDS); i += 2) {
		while (shared.line != i)
			;
		shared.line = i + 1;
	}
	return NULL;
}

int main(void)
{
	int cpus[2], n = 0;
	uint64_t t0 = 0, t1;
	cpu_set_t mine;
	pthread_t thr;

	if (sched_getaffinity(0, sizeof(mine), &mine))
		return 1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &mine))
			cpus[n++] = c;
	if (n < 2) {
		printf("cpu_anchor: one CPU only: no figure\n");
		return 0;
	}
	if (pin(cpus[0]) || pthread_create(&thr, NULL, answer, &cpus[1]))
		return 1;
	for (uint64_t i = 0; i < 2ull * (WARM + ROUNDS); i += 2) {
		if (i == 2ull * WARM)
			t0 = bench_clock_ns();
		shared.line = i + 1;
		while (shared.line != i + 2)
			;
	}
	t1 = bench_clock_ns();
	pthread_join(thr, NULL);
	printf("cpu_anchor cpus=%d,%d line_one_way_ns=%.1f\n", cpus[0], cpus[1],
	       (double)(t1 - t0) / (2.0 * ROUNDS));
	return 0;
}
