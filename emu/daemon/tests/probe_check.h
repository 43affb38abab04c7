/* The check of the daemon tests' C probes (evpush_probe, ring_probe): a failed condition
 * prints "FAIL line N: condition: " and the details, and sets probe_failed, the exit status.
 * One translation unit a probe: the flag is that program's. */
#ifndef RDMAEMU_DAEMON_TESTS_PROBE_CHECK_H
#define RDMAEMU_DAEMON_TESTS_PROBE_CHECK_H

#include <stdio.h>

static int probe_failed;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			printf("FAIL line %d: %s: ", __LINE__, #cond);      \
			printf(__VA_ARGS__);                                \
			printf("\n");                                       \
			probe_failed = 1;                                   \
		}                                                           \
	} while (0)

#endif
