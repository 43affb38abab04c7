/* Socket numbers to rsockets. A socket number is an fd the rsocket holds (its CM event
 * channel's, its UDP socket's), so the kernel keeps numbers unique and the index is a sparse
 * array: 64 chunks of 1024 slots, allocated on first use, read without a lock (the calls on
 * one rsocket are the application's to serialise, as with rdma-core). Numbers from 65536 up
 * cannot be indexed: ENOMEM, as rdma-core's index map. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "rs_sock.h"
#include "util/failcall.h"

#define RS_CHUNK_BITS 10
#define RS_CHUNK_SLOTS (1 << RS_CHUNK_BITS)
#define RS_CHUNKS 64
#define RS_INDEX_MAX (RS_CHUNKS * RS_CHUNK_SLOTS - 1)

static struct rs_sock **chunks[RS_CHUNKS];
static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;

int rs_index_insert(int index, struct rs_sock *s)
{
	struct rs_sock **c;

	if (index < 0 || index > RS_INDEX_MAX) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&index_lock);
	c = chunks[index >> RS_CHUNK_BITS];
	if (!c) {
		c = emu_calloc(RS_CHUNK_SLOTS, sizeof *c);
		if (!c) {
			pthread_mutex_unlock(&index_lock);
			errno = ENOMEM;
			return -1;
		}
		__atomic_store_n(&chunks[index >> RS_CHUNK_BITS], c, __ATOMIC_RELEASE);
	}
	s->index = index;
	__atomic_store_n(&c[index & (RS_CHUNK_SLOTS - 1)], s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&index_lock);
	return index;
}

void rs_index_remove(int index)
{
	struct rs_sock **c;

	if (index < 0 || index > RS_INDEX_MAX)
		return;
	pthread_mutex_lock(&index_lock);
	c = chunks[index >> RS_CHUNK_BITS];
	if (c)
		__atomic_store_n(&c[index & (RS_CHUNK_SLOTS - 1)], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&index_lock);
}

struct rs_sock *rs_index_get(int index)
{
	struct rs_sock **c;

	if (index < 0 || index > RS_INDEX_MAX)
		return NULL;
	c = __atomic_load_n(&chunks[index >> RS_CHUNK_BITS], __ATOMIC_ACQUIRE);
	return c ? __atomic_load_n(&c[index & (RS_CHUNK_SLOTS - 1)], __ATOMIC_ACQUIRE) : NULL;
}
