/* The time layer: the program's clock, sleeps and timed waits on the engine's virtual clock
 * (docs/time.md).
 *
 * In virtual time, protocol timers and the program's own deadlines must be one order of
 * events: a program waiting 5 s in its own poll() must not see a peer's retries run out that
 * on a real host would still be a minute away, and a program measuring time must see the
 * protocol's timeouts take the time they take. So in a process on the virtual clock the
 * program's calls to the clock (clock_gettime, gettimeofday, time), its sleeps (nanosleep,
 * clock_nanosleep, usleep, sleep), its waits on fds (poll, ppoll, select, pselect, epoll_wait,
 * epoll_pwait, epoll_pwait2), its timed waits (pthread_cond_timedwait/clockwait,
 * sem_timedwait/clockwait, pthread_mutex_timedlock/clocklock) and its alarm (alarm,
 * setitimer/getitimer ITIMER_REAL) go to the functions here: the clock reads virtual time
 * from a base fixed when the engine was created, and every wait with a deadline is an engine
 * wait of the program's own (emu_engine_appwait_begin) whose deadline is a clock timer.
 *
 * The program's imports are bound to these functions in the import tables of every loaded
 * object (emu/sim/bind.h) when the engine is created, except in the emulator's own objects
 * and the C library. A symbol some other preloaded library already interposes (an rsockets
 * preload library's poll, libfaketime) is left to it.
 */
#ifndef RDMAEMU_EMU_APPTIME_H
#define RDMAEMU_EMU_APPTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct emu_engine;

/* What the program's clock is, from $RDMAEMU_TIME: "virtual" (the default of a process on its
 * own: the engine's clock, through the time layer), "real" (the machine's clock; the engine
 * follows it too, as under rdmaemud). A process attached through rdmaemud is real unless the
 * daemon's fabric runs in virtual time. */
enum emu_apptime_mode {
	EMU_APPTIME_VIRTUAL,
	EMU_APPTIME_REAL,
};
enum emu_apptime_mode emu_apptime_mode(void);


/* The program's view of clock c at virtual instant vnow, in ns; false for a clock the layer
 * leaves alone (CPU-time clocks). */
bool emu_apptime_clock_at(clockid_t c, uint64_t vnow, uint64_t *ns);

/* The process is the emulator itself (rdmaemud): its clock is the machine's whatever the mode.
 * Before the first engine. */
void emu_apptime_disable(void);

/* The signal handlers the calling thread has run since the layer was bound, all and those
 * installed without SA_RESTART (the program's handlers run behind a counting trampoline);
 * false when the layer is not bound. Async-signal-safe. */
bool emu_apptime_signal_counts(uint64_t *handled, uint64_t *norestart);

/* For tests: whether the program's imports are bound. */
bool emu_apptime_bound(void);

#endif
