/* The time layer's waits: the program's sleeps, fd waits and timed waits with their deadlines
 * on the virtual clock (emu/sim/apptime.h).
 *
 * A wait with a deadline (or none) registers with the engine (emu_engine_appwait_begin) and
 * then blocks in the kernel without a timeout, on its fds plus the thread's wake eventfd,
 * which the engine writes when the virtual clock reaches the deadline; a condition wait is
 * woken by a broadcast instead. Whatever ends the kernel's wait (an fd, a signal, the
 * deadline), the thread says so at once (emu_engine_appwait_woken) and ends the engine wait.
 * A zero timeout is the kernel's own call: nothing waits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "emu/sim/apptime_priv.h"
#include "emu/sim/clock.h"
#include "emu/sim/engine.h"
#include "util/failcall.h"

/* The thread's wake eventfd, made at its first wait; placed high so that it neither takes the
 * small numbers a program may expect for its own fds nor exceeds select()'s FD_SETSIZE. */
#define WAKEFD_MIN 512

static pthread_key_t wakefd_key;
static pthread_once_t wakefd_once = PTHREAD_ONCE_INIT;
static __thread int tls_wakefd = -1;

static void wakefd_close(void *p)
{
	(void)p;
	if (tls_wakefd >= 0)
		close(tls_wakefd);
	tls_wakefd = -1;
}

static void wakefd_key_make(void)
{
	if (pthread_key_create(&wakefd_key, wakefd_close))
		wakefd_key = 0;
}

/* The thread's wake fd, -1 when none can be made (the wait then runs in real time). */
static int wakefd(void)
{
	int fd, hi;

	if (tls_wakefd >= 0 && fcntl(tls_wakefd, F_GETFD) >= 0)
		return tls_wakefd;
	/* the program may have closed it (closefrom) */
	fd = emu_eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -1;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, WAKEFD_MIN);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	tls_wakefd = fd;
	pthread_once(&wakefd_once, wakefd_key_make);
	pthread_setspecific(wakefd_key, (void *)1);
	return fd;
}

static void wakefd_drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

/* Deadline `rel` from now, virtual; EMU_ENGINE_FOREVER stays. */
static uint64_t after(struct emu_engine *e, uint64_t rel)
{
	uint64_t now = emu_engine_now_relaxed(e);

	return rel == EMU_ENGINE_FOREVER || now + rel < now ? EMU_ENGINE_FOREVER : now + rel;
}

static int begin_fds(struct emu_engine *e, const char *what, uint64_t deadline, int fd,
		     pthread_cond_t *cond, const struct pollfd *fds, nfds_t n)
{
	int rc;

	emu_apptime_rescan();
	emu_engine_lock(e);
	rc = emu_engine_appwait_begin(e, what, deadline, fd, cond);
	if (!rc && n)
		emu_engine_appwait_fds(e, fds, n);
	emu_engine_unlock(e);
	return rc;
}

static int begin(struct emu_engine *e, const char *what, uint64_t deadline, int fd,
		 pthread_cond_t *cond)
{
	return begin_fds(e, what, deadline, fd, cond, NULL, 0);
}

static bool end(struct emu_engine *e)
{
	bool expired;

	emu_engine_appwait_woken(e);
	emu_engine_lock(e);
	expired = emu_engine_appwait_end(e);
	emu_engine_unlock(e);
	return expired;
}

/* The virtual time left until deadline, for a wait's remaining-time results. */
static uint64_t left(struct emu_engine *e, uint64_t deadline)
{
	uint64_t now = emu_engine_now_relaxed(e);

	return deadline > now ? deadline - now : 0;
}

/* The real time a wait that cannot be virtual (no wake fd, a signal handler's wait inside
 * another) gets: what is left of its virtual deadline, or none. */
static struct timespec *fallback_ts(struct emu_engine *e, uint64_t deadline, struct timespec *ts)
{
	if (deadline == EMU_ENGINE_FOREVER)
		return NULL;
	*ts = emu_ns_ts(left(e, deadline));
	return ts;
}

/* poll on fds[0..n) until one is ready, a signal, or the virtual deadline: the count of
 * ready fds (0 at the deadline) or -1 with errno. */
static int fd_wait_once(struct emu_engine *e, const char *what, struct pollfd *fds, nfds_t n,
			uint64_t deadline, const sigset_t *mask);

/* The kernel's calls leave errno alone when they succeed; the engine's and the wake fd's own
 * calls on the way (a drained eventfd's EAGAIN) must not show. */
static int fd_wait(struct emu_engine *e, const char *what, struct pollfd *fds, nfds_t n,
		   uint64_t deadline, const sigset_t *mask)
{
	int saved = errno, r = fd_wait_once(e, what, fds, n, deadline, mask);

	if (r >= 0)
		errno = saved;
	return r;
}

static int fd_wait_once(struct emu_engine *e, const char *what, struct pollfd *fds, nfds_t n,
			uint64_t deadline, const sigset_t *mask)
{
	struct pollfd small[16], *all = small;
	struct timespec ts;
	int fd = wakefd(), r, saved;
	bool expired;

	if (fd < 0 || n > (nfds_t)INT32_MAX - 1)
		return emu_apptime_real.ppoll(fds, n, fallback_ts(e, deadline, &ts), mask);
	if (n + 1 > sizeof(small) / sizeof(small[0])) {
		all = emu_malloc((n + 1) * sizeof(*all));
		if (!all)
			return emu_apptime_real.ppoll(fds, n, fallback_ts(e, deadline, &ts), mask);
	}
	if (n)
		memcpy(all, fds, n * sizeof(*all));
	all[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	wakefd_drain(fd);
	/* the program's fds first: they are the ones an event makes ready */
	if (begin_fds(e, what, deadline, fd, NULL, all, n)) {
		r = emu_apptime_real.ppoll(fds, n, fallback_ts(e, deadline, &ts), mask);
		goto out;
	}
	/* without a progress thread nothing else moves time: wake every 10 ms, so that the next
	 * wait's begin tries to start it again */
	r = emu_apptime_real.ppoll(all, n + 1, emu_engine_progress_missing(e) ?
				   &(struct timespec){ 0, 10000000 } : NULL, mask);
	saved = errno;
	expired = end(e);
	wakefd_drain(fd);
	if (r < 0) {
		errno = saved;
		goto out;
	}
	if (all[n].revents)
		r--;
	if (n)
		memcpy(fds, all, n * sizeof(*all));
	/* an fd of the program's became ready: what woke it may come from the time authority's
	 * instant (an rdma_cm event), which the program's clock must show first */
	if (r > 0)
		emu_engine_follow_outside(e);
	if (r == 0 && !expired) {
		/* woken by a stale write: the deadline has not come; the kernel's call would
		 * still be waiting */
		if (all != small)
			free(all);
		return fd_wait_once(e, what, fds, n, deadline, mask);
	}
out:
	if (all != small)
		free(all);
	return r;
}

/* ---- sleeps ---- */

static int sleep_until(struct emu_engine *e, const char *what, uint64_t deadline)
{
	int r = fd_wait(e, what, NULL, 0, deadline, NULL);

	return r < 0 ? -1 : 0;
}

static bool ts_valid(const struct timespec *ts)
{
	return ts && ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

int emu_apptime_nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline;

	if (!e || !ts_valid(req))
		return emu_apptime_real.nanosleep(req, rem);
	deadline = after(e, emu_ts_ns(req));
	if (sleep_until(e, "nanosleep", deadline) == 0)
		return 0;
	if (rem && errno == EINTR)
		*rem = emu_ns_ts(left(e, deadline));
	return -1;
}

int emu_apptime_clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
				struct timespec *rem)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline, unused;
	int saved = errno, rc = 0;

	if (!e || !ts_valid(req) || !emu_apptime_clock_at(c, 0, &unused))
		return emu_apptime_real.clock_nanosleep(c, flags, req, rem);
	if (flags & TIMER_ABSTIME)
		emu_apptime_instant(c, req, &deadline);
	else
		deadline = after(e, emu_ts_ns(req));
	if (deadline > emu_engine_now_relaxed(e) && sleep_until(e, "clock_nanosleep", deadline)) {
		rc = errno;
		if (rc == EINTR && rem && !(flags & TIMER_ABSTIME))
			*rem = emu_ns_ts(left(e, deadline));
	}
	errno = saved; /* clock_nanosleep returns its error, errno untouched */
	return rc;
}

int emu_apptime_usleep(useconds_t us)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e)
		return emu_apptime_real.usleep(us);
	return sleep_until(e, "usleep", after(e, (uint64_t)us * 1000));
}

unsigned emu_apptime_sleep(unsigned s)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline, l;

	if (!e)
		return emu_apptime_real.sleep(s);
	deadline = after(e, (uint64_t)s * EMU_NSEC_PER_SEC);
	if (sleep_until(e, "sleep", deadline) == 0)
		return 0;
	l = left(e, deadline);
	return (unsigned)((l + EMU_NSEC_PER_SEC - 1) / EMU_NSEC_PER_SEC);
}

/* ---- fd waits ---- */

int emu_apptime_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || timeout == 0)
		return emu_apptime_real.poll(fds, n, timeout);
	return fd_wait(e, "poll", fds, n,
		       timeout < 0 ? EMU_ENGINE_FOREVER
				   : after(e, (uint64_t)timeout * EMU_NSEC_PER_MSEC), NULL);
}

int emu_apptime_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
		      const sigset_t *mask)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || (tmo && (!ts_valid(tmo) || !emu_ts_ns(tmo))))
		return emu_apptime_real.ppoll(fds, n, tmo, mask);
	return fd_wait(e, "ppoll", fds, n, tmo ? after(e, emu_ts_ns(tmo)) : EMU_ENGINE_FOREVER,
		       mask);
}

/* select's sets as a poll array and back; fds past FD_SETSIZE are the caller's bug, as in
 * the kernel's select they would be out of the sets' bounds. */
static int sets_to_poll(int nfds, fd_set *r, fd_set *w, fd_set *x, struct pollfd *p)
{
	int n = 0;

	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		short ev = 0;

		if (r && FD_ISSET(fd, r))
			ev |= POLLIN;
		if (w && FD_ISSET(fd, w))
			ev |= POLLOUT;
		if (x && FD_ISSET(fd, x))
			ev |= POLLPRI;
		if (ev)
			p[n++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	return n;
}

/* The kernel's select counts each set's bit; an fd closed meanwhile (POLLNVAL) is EBADF. */
static int poll_to_sets(const struct pollfd *p, int n, fd_set *r, fd_set *w, fd_set *x)
{
	int count = 0;

	for (int i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL) {
			errno = EBADF;
			return -1;
		}
	if (r)
		FD_ZERO(r);
	if (w)
		FD_ZERO(w);
	if (x)
		FD_ZERO(x);
	for (int i = 0; i < n; i++) {
		short re = p[i].revents;

		if (r && (p[i].events & POLLIN) && (re & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(p[i].fd, r);
			count++;
		}
		if (w && (p[i].events & POLLOUT) && (re & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, w);
			count++;
		}
		if (x && (p[i].events & POLLPRI) && (re & POLLPRI)) {
			FD_SET(p[i].fd, x);
			count++;
		}
	}
	return count;
}

static int sel_wait(struct emu_engine *e, const char *what, int nfds, fd_set *r, fd_set *w,
		    fd_set *x, uint64_t deadline, const sigset_t *mask)
{
	struct pollfd *p;
	int n, rc;

	if (nfds < 0) {
		errno = EINVAL;
		return -1;
	}
	p = emu_malloc(((size_t)(nfds < FD_SETSIZE ? nfds : FD_SETSIZE) + 1) * sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	n = sets_to_poll(nfds, r, w, x, p);
	rc = fd_wait(e, what, p, (nfds_t)n, deadline, mask);
	if (rc >= 0)
		rc = poll_to_sets(p, n, r, w, x);
	free(p);
	return rc;
}

int emu_apptime_select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline;
	int rc;

	if (!e || (tv && (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000 ||
			  (!tv->tv_sec && !tv->tv_usec))))
		return emu_apptime_real.select(nfds, r, w, x, tv);
	deadline = tv ? after(e, (uint64_t)tv->tv_sec * EMU_NSEC_PER_SEC +
				     (uint64_t)tv->tv_usec * 1000)
		      : EMU_ENGINE_FOREVER;
	rc = sel_wait(e, "select", nfds, r, w, x, deadline, NULL);
	if (tv) {
		/* Linux's select leaves the time not slept in the timeval */
		uint64_t l = left(e, deadline);

		tv->tv_sec = (time_t)(l / EMU_NSEC_PER_SEC);
		tv->tv_usec = (suseconds_t)(l % EMU_NSEC_PER_SEC / 1000);
	}
	return rc;
}

int emu_apptime_pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *tmo,
			const sigset_t *mask)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || (tmo && (!ts_valid(tmo) || !emu_ts_ns(tmo))))
		return emu_apptime_real.pselect(nfds, r, w, x, tmo, mask);
	return sel_wait(e, "pselect", nfds, r, w, x,
			tmo ? after(e, emu_ts_ns(tmo)) : EMU_ENGINE_FOREVER, mask);
}

/* An epoll fd is readable while it has events: wait for that, then take them. */
static int ep_wait(struct emu_engine *e, const char *what, int epfd, struct epoll_event *ev,
		   int max, uint64_t deadline, const sigset_t *mask)
{
	if (max <= 0) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = epfd, .events = POLLIN };
		int r = fd_wait(e, what, &p, 1, deadline, mask);

		if (r <= 0)
			return r;
		if (p.revents & POLLNVAL) {
			errno = EBADF;
			return -1;
		}
		r = emu_apptime_real.epoll_wait(epfd, ev, max, 0);
		if (r != 0)
			return r;
		/* another thread took the events first: wait on */
	}
}

int emu_apptime_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || timeout == 0)
		return emu_apptime_real.epoll_wait(epfd, ev, max, timeout);
	return ep_wait(e, "epoll_wait", epfd, ev, max,
		       timeout < 0 ? EMU_ENGINE_FOREVER
				   : after(e, (uint64_t)timeout * EMU_NSEC_PER_MSEC), NULL);
}

int emu_apptime_epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			    const sigset_t *mask)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || timeout == 0)
		return emu_apptime_real.epoll_pwait(epfd, ev, max, timeout, mask);
	return ep_wait(e, "epoll_pwait", epfd, ev, max,
		       timeout < 0 ? EMU_ENGINE_FOREVER
				   : after(e, (uint64_t)timeout * EMU_NSEC_PER_MSEC), mask);
}

int emu_apptime_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			     const struct timespec *tmo, const sigset_t *mask)
{
	struct emu_engine *e = emu_apptime_engine();

	if (!e || (tmo && (!ts_valid(tmo) || !emu_ts_ns(tmo))))
		return emu_apptime_real.epoll_pwait2(epfd, ev, max, tmo, mask);
	return ep_wait(e, "epoll_pwait2", epfd, ev, max,
		       tmo ? after(e, emu_ts_ns(tmo)) : EMU_ENGINE_FOREVER, mask);
}

/* ---- timed waits ---- */

/* The clock a condition variable measures its deadlines on: glibc keeps it in the low bits
 * of __wrefs (pthread_condattr_setclock), bit 1 set for CLOCK_MONOTONIC. */
static clockid_t cond_clock(const pthread_cond_t *cond)
{
	return cond->__data.__wrefs & 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

int emu_apptime_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *m, clockid_t c,
			       const struct timespec *abs)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline;
	int r;

	int saved = errno;

	if (!e || !ts_valid(abs) || !emu_apptime_instant(c, abs, &deadline))
		return emu_apptime_real.cond_clockwait(cond, m, c, abs);
	if (deadline <= emu_engine_now_relaxed(e))
		return ETIMEDOUT;
	r = begin(e, "pthread_cond_timedwait", deadline, -1, cond);
	errno = saved;
	if (r) {
		struct timespec rel = emu_ns_ts(left(e, deadline)), now, dl;

		clock_gettime(CLOCK_MONOTONIC, &now);
		dl = emu_ns_ts(emu_ts_ns(&now) + emu_ts_ns(&rel));
		return emu_apptime_real.cond_clockwait(cond, m, CLOCK_MONOTONIC, &dl);
	}
	r = emu_apptime_real.cond_wait(cond, m);
	/* The deadline's broadcast may also have woken the others: a spurious wake-up for
	 * them, which the condition variable's contract allows. */
	if (end(e))
		r = ETIMEDOUT;
	errno = saved; /* a pthread call reports in its return value only */
	return r;
}

int emu_apptime_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *m,
			       const struct timespec *abs)
{
	if (!emu_apptime_engine())
		return emu_apptime_real.cond_timedwait(cond, m, abs);
	return emu_apptime_cond_clockwait(cond, m, cond_clock(cond), abs);
}

/* Semaphores and mutexes have no wake-up to borrow: the wait goes in real slices, asleep in
 * the kernel (so settled) for each, and looks at its virtual deadline between them. */
#define SLICE_NS (1000ull * 1000)

static struct timespec slice_end(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return emu_ns_ts(emu_ts_ns(&now) + SLICE_NS);
}

static int sliced_once(struct emu_engine *e, const char *what, uint64_t deadline,
		       int (*try_once)(void *obj, const struct timespec *until), void *obj);

/* The waits report in their results; errno stays the caller's (sem_clockwait sets it). */
static int sliced(struct emu_engine *e, const char *what, uint64_t deadline,
		  int (*try_once)(void *obj, const struct timespec *until), void *obj)
{
	int saved = errno, r = sliced_once(e, what, deadline, try_once, obj);

	errno = saved;
	return r;
}

static int sliced_once(struct emu_engine *e, const char *what, uint64_t deadline,
		       int (*try_once)(void *obj, const struct timespec *until), void *obj)
{
	for (;;) {
		struct timespec until = slice_end();
		int r;

		if (deadline <= emu_engine_now_relaxed(e))
			return ETIMEDOUT;
		if (begin(e, what, deadline, -1, NULL))
			return try_once(obj, NULL);
		r = try_once(obj, &until);
		if (end(e) && r == ETIMEDOUT)
			return ETIMEDOUT;
		if (r != ETIMEDOUT)
			return r;
	}
}

static int sem_once(void *obj, const struct timespec *until)
{
	int r;

	if (!until)
		return sem_wait(obj) ? errno : 0;
	r = emu_apptime_real.sem_timedwait(obj, until);
	return r ? errno : 0;
}

int emu_apptime_sem_clockwait(sem_t *sem, clockid_t c, const struct timespec *abs)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline;
	int r;

	if (!e || !ts_valid(abs) || !emu_apptime_instant(c, abs, &deadline))
		return emu_apptime_real.sem_clockwait(sem, c, abs);
	if (sem_trywait(sem) == 0)
		return 0;
	r = sliced(e, "sem_timedwait", deadline, sem_once, sem);
	if (!r)
		return 0;
	errno = r;
	return -1;
}

int emu_apptime_sem_timedwait(sem_t *sem, const struct timespec *abs)
{
	if (!emu_apptime_engine())
		return emu_apptime_real.sem_timedwait(sem, abs);
	return emu_apptime_sem_clockwait(sem, CLOCK_REALTIME, abs);
}

static int mutex_once(void *obj, const struct timespec *until)
{
	if (!until)
		return pthread_mutex_lock(obj);
	return emu_apptime_real.mutex_timedlock(obj, until);
}

int emu_apptime_mutex_clocklock(pthread_mutex_t *m, clockid_t c, const struct timespec *abs)
{
	struct emu_engine *e = emu_apptime_engine();
	uint64_t deadline;
	int r;

	if (!e || !ts_valid(abs) || !emu_apptime_instant(c, abs, &deadline))
		return emu_apptime_real.mutex_clocklock(m, c, abs);
	r = pthread_mutex_trylock(m);
	if (r != EBUSY)
		return r;
	return sliced(e, "pthread_mutex_timedlock", deadline, mutex_once, m);
}

int emu_apptime_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
	if (!emu_apptime_engine())
		return emu_apptime_real.mutex_timedlock(m, abs);
	return emu_apptime_mutex_clocklock(m, CLOCK_REALTIME, abs);
}
