/* test_bind: binding into import tables (emu/sim/bind.h). The program and its library
 * libbindlazy (lazy binding: PLT stubs in the GOT) call clock_gettime and getpid; libraries
 * opened by the test cover full RELRO (libbindnow), -fno-plt (libbindnoplt), a skipped object
 * (libbindskip) and one opened after install through the bound dlopen (libbindlate). Every
 * call is checked for where it went: the test's replacements give fixed values and count,
 * libc's give the kernel's (compared with raw system calls). Built twice: test_bind_nopie is
 * the program linked without -pie, whose address-taken clock_gettime is its own PLT entry. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu/sim/bind.h"
#include "emu/sim/tests/bind_lib.h"

#define LIBDIR RDMAEMU_BUILDDIR "/emu/sim/tests/.libs/"
#define FAKE_SEC 1234
#define FAKE_NSEC 5678
#define FAKE_PID 4242

typedef int clock_fn(clockid_t, struct timespec *);
typedef pid_t pid_fn(void);
typedef void *dlopen_fn(const char *, int);

static clock_fn *orig_clock;
static pid_fn *orig_pid;
static dlopen_fn *orig_dlopen;
static unsigned long n_clock, n_pid, n_dlopen;

/* Calls the original first: a replacement that reached itself through it would never end. */
static int repl_clock(clockid_t clk, struct timespec *ts)
{
	struct timespec real;

	__atomic_fetch_add(&n_clock, 1, __ATOMIC_RELAXED);
	if (orig_clock(clk, &real))
		return -1;
	ts->tv_sec = FAKE_SEC;
	ts->tv_nsec = FAKE_NSEC;
	return 0;
}

static pid_t repl_pid(void)
{
	__atomic_fetch_add(&n_pid, 1, __ATOMIC_RELAXED);
	return orig_pid() > 0 ? FAKE_PID : -1;
}

/* What the time layer does: the objects a dlopen brings are bound before it returns. */
static void *repl_dlopen(const char *path, int flags)
{
	void *h = orig_dlopen(path, flags);

	n_dlopen++;
	emu_bind_rescan();
	return h;
}

static const struct emu_bind_sym syms[] = {
	{"clock_gettime", (void *)repl_clock, (void **)&orig_clock},
	{"getpid", (void *)repl_pid, (void **)&orig_pid},
	{"dlopen", (void *)repl_dlopen, (void **)&orig_dlopen},
};

/* The emulator's own objects and the test harness are the caller's to skip. */
static bool skip_ours(const char *path)
{
	return strstr(path, "librdmaemu") || strstr(path, "libcmocka") || strstr(path, "libbindskip");
}

static void install(void)
{
	assert_int_equal(emu_bind_install(syms, 3, skip_ours), 0);
}

static uint64_t raw_mono_ns(void)
{
	struct timespec ts;

	assert_int_equal(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool is_fake(const struct timespec *ts)
{
	return ts->tv_sec == FAKE_SEC && ts->tv_nsec == FAKE_NSEC;
}

/* fn reads the kernel's monotonic clock: between two raw readings around it. */
static void assert_real_clock(int (*fn)(struct timespec *))
{
	struct timespec ts;
	uint64_t before = raw_mono_ns(), t, after;

	assert_int_equal(fn(&ts), 0);
	after = raw_mono_ns();
	t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	assert_true(before <= t && t <= after);
}

static void assert_fake_clock(int (*fn)(struct timespec *))
{
	struct timespec ts = {0};
	unsigned long n = n_clock;

	assert_int_equal(fn(&ts), 0);
	assert_int_equal(ts.tv_sec, FAKE_SEC);
	assert_int_equal(ts.tv_nsec, FAKE_NSEC);
	assert_int_equal(n_clock, n + 1);
}

static void assert_fake_pid(pid_t (*fn)(void))
{
	unsigned long n = n_pid;

	assert_int_equal(fn(), FAKE_PID);
	assert_int_equal(n_pid, n + 1);
}

static void assert_real_pid(pid_t (*fn)(void))
{
	unsigned long n = n_pid;

	assert_int_equal(fn(), (pid_t)syscall(SYS_getpid));
	assert_int_equal(n_pid, n);
}

/* The program's own imports: a call, and a call through the address it takes. Not inlined:
 * the compiler takes a function's address for a constant and would reuse one loaded before
 * install. */
static clock_fn *volatile prog_clock_ptr;

__attribute__((noinline)) static int prog_clock(struct timespec *ts)
{
	return clock_gettime(CLOCK_MONOTONIC, ts);
}

__attribute__((noinline)) static int prog_clock_by_addr(struct timespec *ts)
{
	prog_clock_ptr = clock_gettime;
	return prog_clock_ptr(CLOCK_MONOTONIC, ts);
}

__attribute__((noinline)) static pid_t prog_pid(void)
{
	return getpid();
}

/* An opened library's entry points. */
struct lib {
	void *h;
	int (*clock)(struct timespec *);
	pid_t (*pid)(void);
	void *(*clock_addr)(void);
};

static void lib_open(struct lib *l, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), LIBDIR "%s", name);
	l->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(l->h);
	l->clock = (int (*)(struct timespec *))dlsym(l->h, "bind_lib_clock");
	l->pid = (pid_t(*)(void))dlsym(l->h, "bind_lib_pid");
	l->clock_addr = (void *(*)(void))dlsym(l->h, "bind_lib_clock_addr");
	assert_non_null(l->clock);
	assert_non_null(l->pid);
	assert_non_null(l->clock_addr);
}

/* The object's RELRO range and whether it is bound at load (DF_BIND_NOW, DF_1_NOW). */
struct objinfo {
	const char *needle;
	uintptr_t relro_lo, relro_hi;
	bool now, found;
};

static int find_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objinfo *o = arg;

	if (!info->dlpi_name || !strstr(info->dlpi_name, o->needle))
		return 0;
	o->found = true;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO) {
			o->relro_lo = info->dlpi_addr + ph->p_vaddr;
			o->relro_hi = o->relro_lo + ph->p_memsz;
		}
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + ph->p_vaddr); d->d_tag; d++)
			if ((d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_BIND_NOW)) ||
			    (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NOW)))
				o->now = true;
	}
	return 1;
}

static struct objinfo obj_info(const char *needle)
{
	struct objinfo o = {.needle = needle};

	dl_iterate_phdr(find_obj, &o);
	assert_true(o.found);
	return o;
}

/* The permissions /proc/self/maps shows for the page holding addr ("r--p"). */
static void page_perm(uintptr_t addr, char perm[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[1024];
	unsigned long lo, hi;

	assert_non_null(f);
	strcpy(perm, "none");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3 && addr >= lo && addr < hi)
			break;
	fclose(f);
}

/* The last whole page of the RELRO range: the loader made it read-only; it stays so. */
static void assert_relro_readonly(const struct objinfo *o)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t page = (o->relro_hi & ~(pg - 1)) - pg;
	char perm[5];

	assert_true(o->relro_hi > o->relro_lo && page >= (o->relro_lo & ~(pg - 1)));
	page_perm(page, perm);
	assert_string_equal(perm, "r--p");
}

static void assert_origs(void)
{
#ifdef BIND_TEST_NOPIE
	/* dlsym gives the program's PLT entry, the address of clock_gettime in this process; the
	 * original is what that entry stood for, the next definition after the program. */
	void *canonical = dlsym(RTLD_DEFAULT, "clock_gettime");

	assert_ptr_not_equal((void *)orig_clock, canonical);
	assert_ptr_equal((void *)orig_clock, dlsym(RTLD_NEXT, "clock_gettime"));
	assert_ptr_equal((void *)prog_clock_ptr, canonical);
#else
	assert_ptr_equal((void *)orig_clock, dlsym(RTLD_DEFAULT, "clock_gettime"));
#endif
	assert_ptr_equal((void *)orig_pid, dlsym(RTLD_DEFAULT, "getpid"));
	assert_ptr_equal((void *)orig_dlopen, dlsym(RTLD_DEFAULT, "dlopen"));
}

/* The program and its lazily bound library: calls, address-taken calls, the originals, and
 * everything back as it was after uninstall. */
static void test_program_and_library(void **state)
{
	(void)state;
	assert_false(obj_info("libbindlazy").now);
	assert_int_equal(prog_clock_by_addr(&(struct timespec){0}), 0);
	install();
	assert_origs();
	assert_fake_clock(prog_clock);
	assert_fake_clock(prog_clock_by_addr);
#ifndef BIND_TEST_NOPIE
	assert_ptr_equal((void *)prog_clock_ptr, (void *)repl_clock);
#endif
	assert_fake_pid(prog_pid);
	assert_fake_clock(bind_lib_clock); /* first calls: the GOT held PLT stubs */
	assert_fake_pid(bind_lib_pid);
	assert_int_equal(emu_bind_count() > 0, 1);

	emu_bind_uninstall();
	assert_int_equal(emu_bind_count(), 0);
	assert_real_clock(prog_clock);
	assert_real_clock(prog_clock_by_addr);
	assert_ptr_equal((void *)prog_clock_ptr, dlsym(RTLD_DEFAULT, "clock_gettime"));
	assert_real_pid(prog_pid);
	assert_real_clock(bind_lib_clock); /* back to the stubs: the loader resolves them now */
	assert_real_pid(bind_lib_pid);
}

/* A library opened before install with the given flags: bound, and restored. */
static void check_opened(const char *name)
{
	struct lib l;

	lib_open(&l, name);
	install();
	assert_fake_clock(l.clock);
	assert_fake_pid(l.pid);
	assert_ptr_equal(l.clock_addr(), (void *)repl_clock);
	emu_bind_uninstall();
	assert_real_clock(l.clock);
	assert_real_pid(l.pid);
	assert_ptr_equal(l.clock_addr(), dlsym(RTLD_DEFAULT, "clock_gettime"));
	assert_int_equal(dlclose(l.h), 0);
}

/* -z now -z relro: every slot in read-only pages, made writable for the write only. */
static void test_full_relro(void **state)
{
	struct lib l;
	struct objinfo o;

	(void)state;
	lib_open(&l, "libbindnow.so");
	o = obj_info("libbindnow");
	assert_true(o.now);
	assert_relro_readonly(&o);
	install();
	assert_relro_readonly(&o);
	assert_fake_clock(l.clock);
	assert_fake_pid(l.pid);
	assert_ptr_equal(l.clock_addr(), (void *)repl_clock);
	emu_bind_uninstall();
	assert_relro_readonly(&o);
	assert_real_clock(l.clock);
	assert_real_pid(l.pid);
	assert_int_equal(dlclose(l.h), 0);
}

/* -fno-plt: the calls go through GLOB_DAT slots. */
static void test_noplt(void **state)
{
	(void)state;
	check_opened("libbindnoplt.so");
}

/* An object skip() names keeps libc's functions, across rescans too. */
static void test_skip(void **state)
{
	struct lib l;
	size_t n;

	(void)state;
	lib_open(&l, "libbindskip.so");
	install();
	n = emu_bind_count();
	assert_real_clock(l.clock);
	assert_real_pid(l.pid);
	assert_ptr_equal(l.clock_addr(), (void *)orig_clock);
	emu_bind_rescan();
	assert_int_equal(emu_bind_count(), n);
	assert_real_pid(l.pid);
	assert_fake_pid(prog_pid);
	emu_bind_uninstall();
	assert_real_clock(l.clock);
	assert_ptr_equal(l.clock_addr(), dlsym(RTLD_DEFAULT, "clock_gettime"));
	assert_int_equal(dlclose(l.h), 0);
}

/* A library opened after install, through the bound dlopen: bound before dlopen returns, once
 * (rescans change nothing), forgotten when closed, bound again when opened again. */
static void test_late_dlopen(void **state)
{
	struct lib l;
	size_t n0;
	unsigned long d = n_dlopen;

	(void)state;
	install();
	n0 = emu_bind_count();
	lib_open(&l, "libbindlate.so");
	assert_int_equal(n_dlopen, d + 1);
	assert_int_equal(emu_bind_count(), n0 + 2); /* its GLOB_DAT clock_gettime, JUMP_SLOT getpid */
	assert_fake_clock(l.clock);
	assert_fake_pid(l.pid);
	assert_ptr_equal(l.clock_addr(), (void *)repl_clock);
	emu_bind_rescan();
	emu_bind_rescan();
	assert_int_equal(emu_bind_count(), n0 + 2);
	assert_fake_pid(l.pid);

	assert_int_equal(dlclose(l.h), 0);
	emu_bind_rescan();
	assert_int_equal(emu_bind_count(), n0);
	/* Closed and opened again with no scan between: slots the loader wrote anew. */
	lib_open(&l, "libbindlate.so");
	assert_int_equal(dlclose(l.h), 0);
	lib_open(&l, "libbindlate.so");
	assert_int_equal(n_dlopen, d + 3);
	assert_int_equal(emu_bind_count(), n0 + 2);
	assert_fake_clock(l.clock);
	assert_fake_pid(l.pid);

	emu_bind_uninstall();
	assert_int_equal(emu_bind_count(), 0);
	assert_real_clock(l.clock);
	assert_real_pid(l.pid);
	assert_int_equal(dlclose(l.h), 0);
}

static void test_errors(void **state)
{
	static void *orig_none = (void *)1;
	const struct emu_bind_sym none[] = {{"rdmaemu_no_such_function", (void *)repl_pid, &orig_none}};
	const struct emu_bind_sym norepl[] = {{"getpid", NULL, NULL}};
	const struct emu_bind_sym noname[] = {{"", (void *)repl_pid, NULL}};

	(void)state;
	assert_int_equal(emu_bind_install(NULL, 1, NULL), -EINVAL);
	assert_int_equal(emu_bind_install(syms, 0, NULL), -EINVAL);
	assert_int_equal(emu_bind_install(norepl, 1, NULL), -EINVAL);
	assert_int_equal(emu_bind_install(noname, 1, NULL), -EINVAL);
	emu_bind_rescan(); /* not installed: nothing */
	emu_bind_uninstall();
	assert_int_equal(emu_bind_count(), 0);
	assert_real_pid(prog_pid);

	assert_int_equal(emu_bind_install(none, 1, skip_ours), 0);
	assert_null(orig_none);
	assert_int_equal(emu_bind_count(), 0);
	assert_int_equal(emu_bind_install(syms, 3, skip_ours), -EBUSY);
	assert_real_pid(prog_pid);
	emu_bind_uninstall();

	install();
	assert_int_equal(emu_bind_install(syms, 3, skip_ours), -EBUSY);
	assert_fake_pid(prog_pid);
	emu_bind_uninstall();
	assert_real_pid(prog_pid);
}

static void test_is_system(void **state)
{
	static const char *const sys[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", "/lib64/ld-linux-x86-64.so.2",
		"/lib/ld-linux-aarch64.so.1", "linux-vdso.so.1", "libpthread.so.0", "librt.so.1",
		"libdl.so.2", "/lib/x86_64-linux-gnu/libm.so.6", "libresolv.so.2",
		"libnss_files.so.2", "/usr/lib/x86_64-linux-gnu/libasan.so.8", "libubsan.so.1",
		"liblsan.so.0", "libtsan.so.2",
		"/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so",
	};
	static const char *const other[] = {
		"", "libcmocka.so.0", "/x/libmagic.so.1", "librtmp.so.1", "libcrypt.so.1",
		"libcx.so", "/lib/libdlx.so", "libmvecx", "/usr/lib/ld-helper.so",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		assert_true(emu_bind_is_system(sys[i]));
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		assert_false(emu_bind_is_system(other[i]));
	assert_true(emu_bind_is_system("/any/dir/libc.so")); /* the basename counts */
	assert_false(emu_bind_is_system("/lib/libc.so.6/libfoo.so"));
	assert_false(emu_bind_is_system(NULL));
}

/* Calls through a slot while other threads bind and restore it: each lands on one side or
 * the other, whole. */
struct caller {
	unsigned long calls, fakes;
};

static volatile int stop_callers;

static void *call_loop(void *arg)
{
	struct caller *c = arg;

	while (!stop_callers) {
		struct timespec ts;
		uint64_t before = raw_mono_ns(), t;

		if (bind_lib_clock(&ts))
			abort();
		c->calls++;
		t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (is_fake(&ts))
			c->fakes++;
		else if (t < before || t > raw_mono_ns())
			abort();
	}
	return NULL;
}

static void test_threads(void **state)
{
	enum { NT = 2, CYCLES = 40 };
	pthread_t th[NT];
	struct caller c[NT] = {{0}};
	unsigned long n = n_clock, fakes = 0;

	(void)state;
	stop_callers = 0;
	for (int i = 0; i < NT; i++)
		assert_int_equal(pthread_create(&th[i], NULL, call_loop, &c[i]), 0);
	for (int k = 0; k < CYCLES; k++) {
		install();
		emu_bind_rescan();
		emu_bind_uninstall();
	}
	stop_callers = 1;
	for (int i = 0; i < NT; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		fakes += c[i].fakes;
	}
	assert_int_equal(n_clock - n, fakes);
	assert_real_clock(bind_lib_clock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_and_library),
		cmocka_unit_test(test_full_relro),
		cmocka_unit_test(test_noplt),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_late_dlopen),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_is_system),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
