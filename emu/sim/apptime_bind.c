/* The time layer's binding into the program (emu/sim/apptime.h): the table of the program's
 * functions it takes over, and the engine creation hook that binds them. */
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "emu/sim/apptime_priv.h"
#include "emu/sim/bind.h"
#include "emu/sim/engine.h"

/* Objects loaded later are bound at the program's next wait: the layer does not take over
 * dlopen, whose search path (DT_RUNPATH, $ORIGIN) is the caller's. Counting what the loader
 * added and removed costs one step of dl_iterate_phdr. */
static unsigned long long loaded_seen;

static int loaded_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

void emu_apptime_rescan(void)
{
	unsigned long long n = 0;

	if (!emu_apptime_bound())
		return;
	dl_iterate_phdr(loaded_count, &n);
	if (n == __atomic_load_n(&loaded_seen, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&loaded_seen, n, __ATOMIC_RELAXED);
	emu_bind_rescan();
}

#define SYM(name, fn, field) { #name, (void *)fn, (void **)&emu_apptime_real.field }
static struct emu_bind_sym syms[] = {
	SYM(clock_gettime, emu_apptime_clock_gettime, clock_gettime),
	SYM(gettimeofday, emu_apptime_gettimeofday, gettimeofday),
	SYM(time, emu_apptime_time, time),
	SYM(nanosleep, emu_apptime_nanosleep, nanosleep),
	SYM(clock_nanosleep, emu_apptime_clock_nanosleep, clock_nanosleep),
	SYM(usleep, emu_apptime_usleep, usleep),
	SYM(sleep, emu_apptime_sleep, sleep),
	SYM(poll, emu_apptime_poll, poll),
	SYM(ppoll, emu_apptime_ppoll, ppoll),
	SYM(select, emu_apptime_select, select),
	SYM(pselect, emu_apptime_pselect, pselect),
	SYM(epoll_wait, emu_apptime_epoll_wait, epoll_wait),
	SYM(epoll_pwait, emu_apptime_epoll_pwait, epoll_pwait),
	SYM(epoll_pwait2, emu_apptime_epoll_pwait2, epoll_pwait2),
	SYM(pthread_cond_timedwait, emu_apptime_cond_timedwait, cond_timedwait),
	SYM(pthread_cond_clockwait, emu_apptime_cond_clockwait, cond_clockwait),
	SYM(sem_timedwait, emu_apptime_sem_timedwait, sem_timedwait),
	SYM(sem_clockwait, emu_apptime_sem_clockwait, sem_clockwait),
	SYM(pthread_mutex_timedlock, emu_apptime_mutex_timedlock, mutex_timedlock),
	SYM(pthread_mutex_clocklock, emu_apptime_mutex_clocklock, mutex_clocklock),
	SYM(alarm, emu_apptime_alarm, alarm),
	SYM(setitimer, emu_apptime_setitimer, setitimer),
	SYM(getitimer, emu_apptime_getitimer, getitimer),
	SYM(sigaction, emu_apptime_sigaction, sigaction),
	SYM(signal, emu_apptime_signal, signal),
};
#undef SYM

/* The emulator's own objects run the emulated kernel and hardware, whose time is the engine's
 * and the machine's, never the program's. */
static bool skip_object(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return emu_bind_is_system(path) || !strncmp(b, "librdmaemu", 10) ||
	       !strncmp(b, "libibverbs.so", 13) || !strncmp(b, "librspreload", 12) ||
	       !strncmp(b, "rdmaemud", 8);
}

/* An address the C library defines, not another interposer: left alone otherwise. */
static bool from_libc(void *fn)
{
	Dl_info info;

	if (!fn || !dladdr(fn, &info) || !info.dli_fname)
		return false;
	return emu_bind_is_system(info.dli_fname);
}

static void bind_once(void)
{
	/* the binder keeps the table for later objects */
	static struct emu_bind_sym use[sizeof(syms) / sizeof(syms[0])];
	size_t n = 0;
	int rc;

	/* every original first: the waits need the C library's even where nothing imports
	 * them (cond_wait) */
	emu_apptime_real.cond_wait = (int (*)(pthread_cond_t *, pthread_mutex_t *))
		dlsym(RTLD_DEFAULT, "pthread_cond_wait");
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].orig = dlsym(RTLD_DEFAULT, syms[i].name);
		if (from_libc(*syms[i].orig))
			use[n++] = syms[i];
	}
	if (!emu_apptime_real.clock_gettime || !emu_apptime_real.ppoll ||
	    !emu_apptime_real.cond_wait) {
		fprintf(stderr, "rdmaemu: time: the C library's clock and waits not found: the "
				"program keeps the machine's clock\n");
		return;
	}
	rc = emu_bind_install(use, n, skip_object);
	if (rc) {
		fprintf(stderr, "rdmaemu: time: cannot bind the program's clock and waits (%s): "
				"the program keeps the machine's clock\n", strerror(-rc));
		return;
	}
	dl_iterate_phdr(loaded_count, &loaded_seen);
	emu_apptime_start();
	emu_apptime_wrap_handlers();
	emu_engine_set_signal_counter(emu_apptime_signal_counts);
}

/* Every engine's creation: RDMAEMU_TIME=real makes it follow the machine's clock, as under
 * rdmaemud; otherwise (and unless it is real-time already: attached through rdmaemud) the
 * program's clock and waits join its virtual one. */
static int engine_created(struct emu_engine *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!emu_engine_is_realtime(e) && emu_apptime_mode() == EMU_APPTIME_REAL)
		emu_engine_set_realtime(e, NULL, NULL);
	if (!emu_apptime_wanted(e))
		return 0;
	emu_apptime_set_bases(e);
	pthread_once(&once, bind_once);
	return 0;
}

/* After every other layer's hook: the link's decides whether the engine is real-time. */
static struct emu_engine_hook engine_hook = { .order = 100, .created = engine_created };

__attribute__((constructor)) static void install(void)
{
	emu_engine_on_create(&engine_hook);
}
