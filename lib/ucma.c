/* The emulated /dev/infiniband/rdma_cm as librdmacm uses it: an event channel is an open file
 * of the char device, and every kernel-backed call is one write() of a ucma_abi command to it
 * (emu/rdma_cm/ucma_api.h). Everything else in the library goes through here. */
#include "config.h"

#include <stdlib.h>

#include "lib/cma.h"
#include "util/failcall.h"

int cma_write(int fd, void *cmd, size_t size)
{
	ssize_t ret = emu_ucma_write(fd, cmd, size);

	if (ret == (ssize_t)size)
		return 0;
	if (ret < 0)
		return cma_err((int)-ret);
	return cma_err(ENODATA);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct rdma_event_channel *ch;
	int fd;

	if (cma_init())
		return NULL;
	ch = emu_malloc(sizeof *ch);
	if (!ch)
		return NULL;
	fd = emu_ucma_open();
	if (fd < 0) {
		free(ch);
		errno = -fd;
		return NULL;
	}
	ch->fd = fd;
	return ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	/* close(fd); free() -- no checks, as rdma-core */
	emu_ucma_close(channel->fd);
	free(channel);
}
