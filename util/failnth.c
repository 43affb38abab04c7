/* failnth: the counters and the RDMAEMU_FAIL_NTH / RDMAEMU_FAIL_COUNT switches (failnth.h). */
#include "failnth.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[EMU_FAIL_KINDS] = {
	"alloc", "mmap", "eventfd", "socket", "thread",
};

static atomic_ulong counts[EMU_FAIL_KINDS];
static pthread_once_t fail_once = PTHREAD_ONCE_INIT;
/* the kind to fail (-1: none) and the count of the call that fails, set by RDMAEMU_FAIL_NTH
 * or emu_fail_arm; read by every counted call without a lock, so atomics */
static atomic_int fail_kind = -1;
static atomic_ulong fail_at;
static int trace; /* RDMAEMU_FAIL_TRACE=1: the injected call's stack on stderr */
static atomic_int fired;
static const char *_Atomic lost;

const char *emu_fail_kind_name(enum emu_fail_kind kind)
{
	return (unsigned)kind < EMU_FAIL_KINDS ? kind_names[kind] : "?";
}

static void print_counts(void)
{
	fprintf(stderr, "rdmaemu-fail: alloc=%lu mmap=%lu eventfd=%lu socket=%lu thread=%lu\n",
		atomic_load(&counts[EMU_FAIL_ALLOC]), atomic_load(&counts[EMU_FAIL_MMAP]),
		atomic_load(&counts[EMU_FAIL_EVENTFD]), atomic_load(&counts[EMU_FAIL_SOCKET]),
		atomic_load(&counts[EMU_FAIL_THREAD]));
}

/* "kind:N" with N >= 1; anything else injects nothing (a typo must not pass as a sweep). */
static void parse_nth(const char *s)
{
	const char *colon = strchr(s, ':');
	char *end;
	unsigned long n;

	if (!colon)
		return;
	n = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || n == 0)
		return;
	for (int k = 0; k < EMU_FAIL_KINDS; k++) {
		if (strlen(kind_names[k]) == (size_t)(colon - s) &&
		    !strncmp(kind_names[k], s, (size_t)(colon - s))) {
			atomic_store(&fail_at, n);
			atomic_store(&fail_kind, k);
		}
	}
}

static void fail_init(void)
{
	const char *nth = getenv("RDMAEMU_FAIL_NTH");
	const char *count = getenv("RDMAEMU_FAIL_COUNT");

	if (nth && *nth)
		parse_nth(nth);
	const char *tr = getenv("RDMAEMU_FAIL_TRACE");

	if (count && !strcmp(count, "1"))
		atexit(print_counts);
	trace = tr && !strcmp(tr, "1");
}

/* The call that fails, for finding it in the code: its kind, number and stack. */
static void print_site(enum emu_fail_kind kind, unsigned long n)
{
	void *pcs[24];
	int depth = backtrace(pcs, 24);

	fprintf(stderr, "rdmaemu-fail: %s:%lu injected at\n", kind_names[kind], n);
	backtrace_symbols_fd(pcs, depth, 2);
}

int emu_fail_nth(enum emu_fail_kind kind)
{
	unsigned long n;

	if ((unsigned)kind >= EMU_FAIL_KINDS)
		return 0;
	pthread_once(&fail_once, fail_init);
	n = atomic_fetch_add(&counts[kind], 1) + 1;
	if ((int)kind != atomic_load(&fail_kind) || n != atomic_load(&fail_at))
		return 0;
	if (trace)
		print_site(kind, n);
	atomic_store(&fired, 1);
	return 1;
}

void emu_fail_arm(enum emu_fail_kind kind, unsigned long n)
{
	pthread_once(&fail_once, fail_init);
	atomic_store(&fail_kind, -1);
	atomic_store(&fired, 0);
	atomic_store(&lost, NULL);
	if ((unsigned)kind >= EMU_FAIL_KINDS || n == 0)
		return;
	atomic_store(&fail_at, atomic_load(&counts[kind]) + n);
	atomic_store(&fail_kind, (int)kind);
}

unsigned long emu_fail_count(enum emu_fail_kind kind)
{
	return (unsigned)kind < EMU_FAIL_KINDS ? atomic_load(&counts[kind]) : 0;
}

int emu_fail_fired(void)
{
	return atomic_load(&fired);
}

void emu_fail_lost(const char *what)
{
	if (atomic_load(&fired))
		atomic_store(&lost, what);
}

const char *emu_fail_lost_what(void)
{
	return atomic_load(&lost);
}
