/* What the failure sweep's cases share (docs/failure-sweep.md): the injection from SWEEP_FAIL,
 * the real stack's error for it, the verdict lines, and the acceptance of one failure a run
 * (the injected resource's errno, or one rdma-core turns it into, from the case's table). */
#ifndef RDMAEMU_FAULTS_SWEEP_COMMON_H
#define RDMAEMU_FAULTS_SWEEP_COMMON_H

#include <stddef.h>

#include "util/failnth.h"

extern int sweep_fail_kind; /* the injected kind (util/failnth.h), -1 for none */
extern int sweep_failures;  /* failures seen and accepted */

/* An errno rdma-core gives for a resource failure underneath, at the steps whose names start
 * with step, and where it does so. */
struct sweep_translation {
	const char *step;
	int err;
	const char *why;
};

/* The real stack's error for the injected kind. */
int sweep_expected_errno(void);

/* "sweep-result: FAIL STEP: ..." and exit 1. */
_Noreturn void sweep_verdict_fail(const char *step, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A step failed with err: accepted once a run (one call fails) when it is the injected
 * resource's error or a translation of it in t[0..n); a "sweep-injected:" line; otherwise the
 * run fails. */
void sweep_accept(const char *step, int err, const struct sweep_translation *t, size_t n);

/* In a step function returning int: -1 after an accepted failure of a call that returns 0, or
 * -1 with errno (the case's own accept_failure(step, err) judges it). */
#define TRY(step, expr)                                                                        \
	do {                                                                                   \
		errno = 0;                                                                     \
		if ((expr) != 0) {                                                             \
			accept_failure(step, errno);                                           \
			return -1;                                                             \
		}                                                                              \
	} while (0)

/* SWEEP_FAIL=kind:N arms the N-th call of that kind to fail; prog names the program in the
 * message for a malformed setting (exit 2). */
void sweep_arm_from_env(const char *prog);

/* The calls of each kind made since sweep_count_begin, as "sweep-count: ..." (the range of N
 * a sweep covers); disarms the injection. */
void sweep_count_begin(void);
void sweep_count_print(void);

#endif
