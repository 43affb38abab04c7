/* memcpy_anchor: the copy anchors of bench/run-daemon-bench, measured in the same run as the
 * perftest rows beside them.
 *
 *   memcpy_anchor SIZE...
 *
 * For each SIZE: memcpy between two buffers of SIZE bytes (both touched first, warm in the
 * cache as far as they fit, as perftest's buffers are after the first messages), and
 * process_vm_readv of the same SIZE from this process's own memory (the system call the
 * one-copy path between processes makes, docs/daemon.md), repeated for at least 0.2 s each.
 * One line a size, in perftest's unit (MB = 2^20 bytes a second):
 *   memcpy_anchor size=N memcpy_mbps=X process_vm_readv_mbps=Y */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench/bench_clock.h"

static double rate(uint8_t *dst, uint8_t *src, size_t size, int vm)
{
	uint64_t t0 = bench_clock_ns(), t, bytes = 0;
	struct iovec l = { dst, size }, r = { src, size };

	do {
		for (int i = 0; i < 16; i++) {
			if (vm) {
				if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)size)
					return 0;
			} else {
				memcpy(dst, src, size);
			}
			__asm__ __volatile__("" ::: "memory");
			bytes += size;
		}
		t = bench_clock_ns() - t0;
	} while (t < 200000000ull);
	return (double)bytes / ((double)t / 1e9) / (1 << 20);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: memcpy_anchor SIZE...\n");
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		size_t size = strtoul(argv[a], NULL, 0);
		uint8_t *src = size ? malloc(size) : NULL, *dst = size ? malloc(size) : NULL;

		if (!src || !dst) {
			fprintf(stderr, "memcpy_anchor: %s: no memory\n", argv[a]);
			return 1;
		}
		memset(src, 0x5a, size);
		memset(dst, 0xa5, size);
		rate(dst, src, size, 0); /* warm-up */
		printf("memcpy_anchor size=%zu memcpy_mbps=%.2f process_vm_readv_mbps=%.2f\n", size,
		       rate(dst, src, size, 0), rate(dst, src, size, 1));
		free(src);
		free(dst);
	}
	return 0;
}
