/* rpoll (RDMACM_1.0): rsocket's poll. Every rdma-core example imports it, and waits with it on
 * ordinary fds (the event channel, completion channels), where rdma-core's rpoll is poll().
 * The emulated library has no rsockets, so every fd is an ordinary one. */
#include "config.h"

#include <poll.h>

#include "lib/cma.h"

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout);

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}
