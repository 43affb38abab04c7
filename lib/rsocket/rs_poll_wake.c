/* rpoll's wake-ups. The kernel fd an rsocket waits on (its completion channel, its CM
 * channel) carries one notification, which only one blocked thread consumes,
 * yet the state it changes may be what another thread polls for. Every kernel wait also
 * watches one eventfd; a thread that returns from poll() with something processed, or a
 * service thread that changed a state, writes it once, and the threads still in poll() come
 * out and check again. New entrants hold back (yield) until the last one leaving has
 * cleared the signal, so nobody goes back to sleep on a stale state. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rs_sock.h"
#include "util/failcall.h"

static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static int poll_wake_fd = -1;
static unsigned poll_count;
static bool poll_suspended;

int rs_poll_wake_fd(void)
{
	int ret;

	pthread_mutex_lock(&poll_lock);
	if (poll_wake_fd < 0)
		poll_wake_fd = emu_eventfd(0, EFD_NONBLOCK | EFD_SEMAPHORE | EFD_CLOEXEC);
	ret = poll_wake_fd;
	pthread_mutex_unlock(&poll_lock);
	return ret;
}

static void poll_wake_write(void)
{
	uint64_t one = 1;

	if (write(poll_wake_fd, &one, sizeof one) != sizeof one)
		return;
}

static void poll_wake_read(void)
{
	uint64_t v;

	if (read(poll_wake_fd, &v, sizeof v) != sizeof v)
		return;
}

int rs_poll_enter(void)
{
	pthread_mutex_lock(&poll_lock);
	if (poll_suspended) {
		pthread_mutex_unlock(&poll_lock);
		sched_yield();
		return -1;
	}
	poll_count++;
	pthread_mutex_unlock(&poll_lock);
	return 0;
}

/* Leaving after poll() failed: errno stays poll()'s. */
void rs_poll_exit(void)
{
	int save = errno;

	pthread_mutex_lock(&poll_lock);
	if (!--poll_count) {
		poll_wake_read();
		poll_suspended = false;
	}
	pthread_mutex_unlock(&poll_lock);
	errno = save;
}

/* Leaving after poll() returned: the others must look again. */
void rs_poll_stop(void)
{
	int save = errno;

	pthread_mutex_lock(&poll_lock);
	if (!--poll_count) {
		poll_wake_read();
		poll_suspended = false;
	} else if (!poll_suspended) {
		poll_suspended = true;
		poll_wake_write();
	}
	pthread_mutex_unlock(&poll_lock);
	errno = save;
}

void rs_poll_signal(void)
{
	int save = errno;

	pthread_mutex_lock(&poll_lock);
	if (poll_count && !poll_suspended) {
		poll_suspended = true;
		poll_wake_write();
	}
	pthread_mutex_unlock(&poll_lock);
	errno = save;
}

