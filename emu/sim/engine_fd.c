/* The eventfds behind the fds the application sees. Blocking by default because the kernel's
 * channel fds are (rdma_create_event_channel, ibv_create_comp_channel): an application that
 * wants non-blocking reads sets O_NONBLOCK itself, as it would on the real stack. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emu/sim/engine.h"
#include "util/failcall.h"

int emu_engine_eventfd_new(void)
{
	return emu_eventfd(0, EFD_CLOEXEC);
}

int emu_engine_fd_signal(int fd)
{
	uint64_t one = 1;

	for (;;) {
		if (write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
			return 0;
		if (errno != EINTR)
			return -errno; /* EAGAIN only if the counter is at its maximum */
	}
}

/* Kernels without RWF_NOWAIT on eventfds (before 5.9's read_iter conversion) answer
 * EOPNOTSUPP: those look with poll() first, two syscalls instead of one. */
static bool fd_nowait_unsupported; /* only ever set; atomic: any thread may clear an fd */

static int fd_clear_poll(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	/* Look first: read() on a blocking eventfd at 0 would block the engine. */
	for (;;) {
		int n = poll(&p, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 || !(p.revents & POLLIN))
			return 0;
		if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

int emu_engine_fd_clear(int fd)
{
	uint64_t v;
	struct iovec io = { .iov_base = &v, .iov_len = sizeof(v) };

	/* One non-blocking read whatever O_NONBLOCK the application set on the fd: the counter
	 * is drained, or EAGAIN says it already was (nobody else should read it, but a read
	 * must never block the engine). */
	while (!__atomic_load_n(&fd_nowait_unsupported, __ATOMIC_RELAXED)) {
		if (preadv2(fd, &io, 1, -1, RWF_NOWAIT) == (ssize_t)sizeof(v))
			return 0;
		if (errno == EAGAIN)
			return 0;
		if (errno == EOPNOTSUPP || errno == EINVAL)
			__atomic_store_n(&fd_nowait_unsupported, true, __ATOMIC_RELAXED);
		else if (errno != EINTR)
			return -errno;
	}
	return fd_clear_poll(fd);
}
