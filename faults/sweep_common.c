/* What the failure sweep's cases share (sweep_common.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faults/sweep_common.h"

int sweep_fail_kind = -1;
int sweep_failures;
static unsigned long base[EMU_FAIL_KINDS];

int sweep_expected_errno(void)
{
	switch (sweep_fail_kind) {
	case EMU_FAIL_ALLOC:
	case EMU_FAIL_MMAP:
		return ENOMEM;
	case EMU_FAIL_EVENTFD:
	case EMU_FAIL_SOCKET:
		return EMFILE;
	case EMU_FAIL_THREAD:
		return EAGAIN;
	}
	return 0;
}

void sweep_verdict_fail(const char *step, const char *fmt, ...)
{
	va_list ap;

	printf("sweep-result: FAIL %s: ", step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	_exit(1);
}

static const char *translated_why(const struct sweep_translation *t, size_t n, const char *step,
				  int err)
{
	for (size_t i = 0; i < n; i++)
		if (err == t[i].err && !strncmp(step, t[i].step, strlen(t[i].step)))
			return t[i].why;
	return NULL;
}

static const char *err_name(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "?";
}

void sweep_accept(const char *step, int err, const struct sweep_translation *t, size_t n)
{
	const char *why = err == sweep_expected_errno() ? NULL : translated_why(t, n, step, err);

	if (sweep_fail_kind < 0 || !emu_fail_fired() || (err != sweep_expected_errno() && !why))
		sweep_verdict_fail(step, "failed with %s (%d), injected %s%s", err_name(err), err,
				   sweep_fail_kind < 0 ? "nothing" :
							 emu_fail_kind_name(sweep_fail_kind),
				   emu_fail_fired() ? "" : " (not yet)");
	if (++sweep_failures > 1)
		sweep_verdict_fail(step, "a second failure (%s) after the injected one",
				   err_name(err));
	printf("sweep-injected: %s %s%s%s\n", step, err_name(err), why ? ": " : "",
	       why ? why : "");
}

void sweep_arm_from_env(const char *prog)
{
	const char *s = getenv("SWEEP_FAIL");
	const char *colon = s ? strchr(s, ':') : NULL;

	if (!colon)
		return;
	for (int k = 0; k < EMU_FAIL_KINDS; k++)
		if (strlen(emu_fail_kind_name(k)) == (size_t)(colon - s) &&
		    !strncmp(emu_fail_kind_name(k), s, (size_t)(colon - s)))
			sweep_fail_kind = k;
	if (sweep_fail_kind < 0 || strtoul(colon + 1, NULL, 10) == 0) {
		fprintf(stderr, "%s: SWEEP_FAIL=%s: expected kind:N, N >= 1\n", prog, s);
		exit(2);
	}
	emu_fail_arm(sweep_fail_kind, strtoul(colon + 1, NULL, 10));
}

void sweep_count_begin(void)
{
	for (int k = 0; k < EMU_FAIL_KINDS; k++)
		base[k] = emu_fail_count(k);
}

void sweep_count_print(void)
{
	emu_fail_arm(EMU_FAIL_ALLOC, 0);
	printf("sweep-count: alloc=%lu mmap=%lu eventfd=%lu socket=%lu thread=%lu\n",
	       emu_fail_count(EMU_FAIL_ALLOC) - base[EMU_FAIL_ALLOC],
	       emu_fail_count(EMU_FAIL_MMAP) - base[EMU_FAIL_MMAP],
	       emu_fail_count(EMU_FAIL_EVENTFD) - base[EMU_FAIL_EVENTFD],
	       emu_fail_count(EMU_FAIL_SOCKET) - base[EMU_FAIL_SOCKET],
	       emu_fail_count(EMU_FAIL_THREAD) - base[EMU_FAIL_THREAD]);
}
