/* Between the time layer's clock and binding (apptime.c) and its waits (apptime_wait.c). */
#ifndef RDMAEMU_EMU_APPTIME_PRIV_H
#define RDMAEMU_EMU_APPTIME_PRIV_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <time.h>

#include "emu/sim/apptime.h"

/* The functions the program's imports resolved to before binding (the C library's). */
struct emu_apptime_real {
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*gettimeofday)(struct timeval *, void *);
	time_t (*time)(time_t *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
	int (*usleep)(useconds_t);
	unsigned (*sleep)(unsigned);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	unsigned (*alarm)(unsigned);
	int (*setitimer)(int, const struct itimerval *, struct itimerval *);
	int (*getitimer)(int, struct itimerval *);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
};
extern struct emu_apptime_real emu_apptime_real;

/* The engine when the calling thread's clock is virtual (bound, engine on the virtual clock,
 * not a child forked from an engine's process), else NULL: call the real function. */
struct emu_engine *emu_apptime_engine(void);

/* The virtual instant at which the program's clock c reads the absolute time ts; false for a
 * clock the layer leaves alone. Instants before the engine's start are 0. */
bool emu_apptime_instant(clockid_t c, const struct timespec *ts, uint64_t *vns);

static inline uint64_t emu_ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static inline struct timespec emu_ns_ts(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	return ts;
}

/* The program's clock (apptime.c). */
int emu_apptime_clock_gettime(clockid_t c, struct timespec *ts);
int emu_apptime_gettimeofday(struct timeval *tv, void *tz);
time_t emu_apptime_time(time_t *t);
/* Whether a new engine takes the layer (not disabled, not real-time). */
bool emu_apptime_wanted(const struct emu_engine *e);
/* Fixes the program's clocks' bases at the machine's now (a new engine is at virtual 0). */
void emu_apptime_set_bases(const struct emu_engine *e);
/* Binds the objects the program loaded since the last look (before each wait). */
void emu_apptime_rescan(void);
/* The imports are bound: the layer takes over (and forks are watched). */
void emu_apptime_start(void);

/* The waits (apptime_wait.c), each the program's function of that name. */
int emu_apptime_nanosleep(const struct timespec *req, struct timespec *rem);
int emu_apptime_clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
				struct timespec *rem);
int emu_apptime_usleep(useconds_t us);
unsigned emu_apptime_sleep(unsigned s);
int emu_apptime_poll(struct pollfd *fds, nfds_t n, int timeout);
int emu_apptime_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		      const sigset_t *mask);
int emu_apptime_select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv);
int emu_apptime_pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *tmo,
			const sigset_t *mask);
int emu_apptime_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout);
int emu_apptime_epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			    const sigset_t *mask);
int emu_apptime_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			     const struct timespec *tmo, const sigset_t *mask);
int emu_apptime_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *m,
			       const struct timespec *abs);
int emu_apptime_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *m, clockid_t c,
			       const struct timespec *abs);
int emu_apptime_sem_timedwait(sem_t *sem, const struct timespec *abs);
int emu_apptime_sem_clockwait(sem_t *sem, clockid_t c, const struct timespec *abs);
int emu_apptime_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs);
int emu_apptime_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *abs);

/* The program's handlers behind the counting trampoline (apptime_signal.c). */
int emu_apptime_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t emu_apptime_signal(int sig, sighandler_t fn);
/* Puts the handlers installed before binding behind the trampoline. */
void emu_apptime_wrap_handlers(void);

/* The alarm (apptime_alarm.c). */
unsigned emu_apptime_alarm(unsigned s);
int emu_apptime_setitimer(int which, const struct itimerval *nv, struct itimerval *ov);
int emu_apptime_getitimer(int which, struct itimerval *cur);

#endif
