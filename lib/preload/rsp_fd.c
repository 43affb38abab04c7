/* The fd table: the /dev/null descriptors the program holds for the sockets this library took,
 * and what stands behind each (lib/preload/rsp.h). A sparse array of 64 chunks of 1024 slots,
 * allocated on first use and read without a lock, as rdma-core's index map: descriptors from
 * 65536 up cannot be entered (ENOMEM), and such a socket stays a real one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/preload/rsp.h"

#define CHUNK_BITS 10
#define CHUNK_SLOTS (1 << CHUNK_BITS)
#define CHUNKS 64
#define INDEX_MAX (CHUNKS * CHUNK_SLOTS - 1)

static struct rsp_fd **chunks[CHUNKS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct rsp_fd *rsp_fd_lookup(int index)
{
	struct rsp_fd **c;

	if (index < 0 || index > INDEX_MAX)
		return NULL;
	c = __atomic_load_n(&chunks[index >> CHUNK_BITS], __ATOMIC_ACQUIRE);
	return c ? __atomic_load_n(&c[index & (CHUNK_SLOTS - 1)], __ATOMIC_ACQUIRE) : NULL;
}

int rsp_fd_insert(int index, struct rsp_fd *e)
{
	struct rsp_fd **c;

	if (index < 0 || index > INDEX_MAX) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&table_lock);
	c = chunks[index >> CHUNK_BITS];
	if (!c) {
		c = calloc(CHUNK_SLOTS, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&table_lock);
			errno = ENOMEM;
			return -1;
		}
		__atomic_store_n(&chunks[index >> CHUNK_BITS], c, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&c[index & (CHUNK_SLOTS - 1)], e, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&table_lock);
	return 0;
}

void rsp_fd_clear(int index)
{
	struct rsp_fd **c;

	if (index < 0 || index > INDEX_MAX)
		return;
	pthread_mutex_lock(&table_lock);
	c = chunks[index >> CHUNK_BITS];
	if (c)
		__atomic_store_n(&c[index & (CHUNK_SLOTS - 1)], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&table_lock);
}

/* The descriptor is /dev/null's: a real, unique number the kernel keeps for the program (it
 * passes through exec and fork as any descriptor), which no socket call can mistake for a
 * socket of the machine. */
int rsp_fd_open(void)
{
	struct rsp_fd *e = calloc(1, sizeof(*e));
	int index, err;

	if (!e) {
		errno = ENOMEM;
		return -1;
	}
	index = open("/dev/null", O_RDONLY);
	if (index < 0) {
		free(e);
		return -1;
	}
	e->fd = -1;
	e->dupfd = -1;
	atomic_store(&e->refcnt, 1);
	if (rsp_fd_insert(index, e)) {
		err = errno;
		rsp_real.api.close(index);
		free(e);
		errno = err;
		return -1;
	}
	return index;
}

void rsp_fd_store(int index, int fd, enum rsp_kind kind, enum rsp_fork_state state)
{
	struct rsp_fd *e = rsp_fd_lookup(index);

	e->fd = fd;
	e->kind = kind;
	e->state = state;
}

enum rsp_kind rsp_fd_get(int index, int *fd)
{
	struct rsp_fd *e = rsp_fd_lookup(index);

	*fd = e ? e->fd : index;
	return e ? e->kind : RSP_NORMAL;
}

int rsp_fd_getd(int index)
{
	struct rsp_fd *e = rsp_fd_lookup(index);

	return e ? e->fd : index;
}

enum rsp_fork_state rsp_fd_state(int index)
{
	struct rsp_fd *e = rsp_fd_lookup(index);

	return e ? e->state : RSP_READY;
}

void rsp_fd_drop(int index)
{
	struct rsp_fd *e = rsp_fd_lookup(index);

	if (!e)
		return;
	rsp_fd_clear(index);
	rsp_real.api.close(index);
	free(e);
}
