/* ibv_fork_init() and friends, with rdma-core 44's state machine: fork protection can be
 * turned on only before the first MR (afterwards EINVAL), and on Linux >= 5.13 the kernel
 * copies pinned pages on fork by itself, so ibv_is_fork_initialized() says UNNEEDED.
 *
 * The emulator pins nothing (the HCA is this process), so the protection changes no
 * madvise() state: a child after fork() gets its own copy of the emulated HCA. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "emu/verbs/verbs_priv.h"

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fork_enabled; /* rdma-core: mm_root != NULL */
static bool too_late;     /* an MR was registered before ibv_fork_init() */

int ibv_fork_init(void)
{
	int ret = 0;

	pthread_mutex_lock(&fork_lock);
	if (!fork_enabled) {
		if (too_late)
			ret = EINVAL;
		else
			fork_enabled = true;
	}
	pthread_mutex_unlock(&fork_lock);
	return ret;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED; /* the kernel has copy-on-fork for pinned pages (6.1) */
}

int emu_fork_dontfork(void *base, size_t size)
{
	(void)base, (void)size;
	pthread_mutex_lock(&fork_lock);
	if (!fork_enabled)
		too_late = true;
	pthread_mutex_unlock(&fork_lock);
	return 0;
}

int emu_fork_dofork(void *base, size_t size)
{
	return emu_fork_dontfork(base, size);
}

int ibv_dontfork_range(void *base, size_t size)
{
	return emu_fork_dontfork(base, size);
}

int ibv_dofork_range(void *base, size_t size)
{
	return emu_fork_dofork(base, size);
}

/* RDMAV_FORK_SAFE / IBV_FORK_SAFE ask for fork protection at load time (rdma-core's
 * ibverbs_init); the real library does it on the first ibv_get_device_list(), before any MR
 * can exist, so doing it at load time gives the same result. */
__attribute__((constructor)) static void fork_env_init(void)
{
	if (getenv("RDMAV_FORK_SAFE") || getenv("IBV_FORK_SAFE"))
		ibv_fork_init();
}
