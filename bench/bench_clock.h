/* The machine's monotonic clock in ns, for the benchmarks' wall-time figures.
 *
 * Read with the system call itself: on the emulator's virtual clock the time layer binds the
 * program's clock_gettime to virtual time (docs/time.md), and a benchmark measures what the
 * machine spends, in any mode. A few reads per run: the system call's cost (~0.1 us, against
 * the vDSO's ~20 ns) is not in any figure. */
#ifndef RDMAEMU_BENCH_CLOCK_H
#define RDMAEMU_BENCH_CLOCK_H

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t bench_clock_ns(void)
{
	struct timespec ts = { 0, 0 };

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
