/* rdma_cm files of a process attached through rdmaemud (docs/daemon.md, "rdma_cm files"):
 * the emulated kernel rdma_cm runs in the daemon, which runs every host's stacks as the
 * kernel does; emu_ucma_open/write/close (emu/rdma_cm/ucma_api.h) come here through the transport
 * table (emu_link_ucma_transport) that the link installs when the process attaches.
 *
 * Each file is one connection to the daemon (UCMA_OPEN, UCMA_WRITE, UCMA_CLOSE of
 * emu/link/proto.h); its fd, the one the application polls, is the daemon's eventfd for
 * the file, received with SCM_RIGHTS: readable iff an event is queued, O_NONBLOCK shared with
 * the daemon (one open file description), as on the kernel's char device. A blocking
 * GET_EVENT sleeps in poll() on that fd here, never in the daemon. */
#ifndef RDMAEMU_EMU_UCMA_LINK_H
#define RDMAEMU_EMU_UCMA_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "emu/sim/fabric.h"

/* As emu_ucma_open etc. (emu/rdma_cm/ucma_api.h), on the daemon's file for host h. */
int emu_ucma_link_open(const struct emu_host *h);
ssize_t emu_ucma_link_write(int fd, const void *buf, size_t len);
int emu_ucma_link_close(int fd);
bool emu_ucma_link_is_file(int fd);

/* The four as a transport of the file interface (emu_ucma_set_transport, emu/rdma_cm/ucma.h). */
struct emu_ucma_transport;
extern const struct emu_ucma_transport emu_link_ucma_transport;

#endif
