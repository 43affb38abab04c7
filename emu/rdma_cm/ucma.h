/* The emulated kernel rdma_cm's char device: ucma's files and commands (Linux 6.1's
 * drivers/infiniband/core/ucma.c) on top of the CM ids of emu/rdma_cm/cma.h and the event queues
 * of emu/rdma_cm/ucma_event.h. For what sits above ucma.c: the link to rdmaemud, rdmaemud
 * itself, tests of the command interface. */
#ifndef RDMAEMU_EMU_UCMA_H
#define RDMAEMU_EMU_UCMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"
#include "emu/rdma_cm/ucma_event.h"

/* The smallest response buffer GET_EVENT takes (ENOSPC below): the resp without the fields
 * newer kernels appended (reserved, ece). A GET_EVENT with at least this much can only wait or
 * return an event, which emu/link/ucma_link.c relies on to sleep before asking. */
#define EMU_UCMA_GET_EVENT_MIN_OUT \
	(sizeof(struct rdma_ucm_event_resp) - sizeof(uint32_t) - sizeof(struct rdma_ucm_ece))

/* ---- the transport of the file interface (emu/rdma_cm/ucma_api.h) -------------------- *
 * emu_ucma_open, write, close and is_file go to one table, chosen when the process attaches:
 * this process's emulated kernel by default; the link to rdmaemud installs the daemon's
 * (emu/link/ucma_link.c) when the process attaches through it. */
struct emu_ucma_transport {
	int (*open)(const struct emu_host *h); /* h: the calling thread's cm host */
	ssize_t (*write)(int fd, const void *buf, size_t len);
	int (*close)(int fd);
	bool (*is_file)(int fd);
};
/* NULL: back to this process's kernel. */
void emu_ucma_set_transport(const struct emu_ucma_transport *t);

/* rdmaemu_ctl_device_remove when the fabric's rdma_cm runs in another process: the link to
 * rdmaemud installs the request that forwards it there (0 or a negative errno, as
 * emu_device_remove_locked); NULL: this process removes the device itself. */
typedef int emu_device_remove_fn(const char *node, const char *dev);
void emu_device_remove_set_remote(emu_device_remove_fn *fn);

/* ---- for rdmaemud (emu/daemon/ucma_srv.c), which serves files for other processes ------ */

/* emu_ucma_open for host h (not the calling process's). */
int emu_ucma_open_host(const struct emu_host *h);

/* emu_ucma_open_host for a push file: its eventfd is EFD_SEMAPHORE and counts the pushed
 * events the client has not read: push() adds 1 for an EVENT before its message goes and
 * takes 1 for a DROP (rdmaemud adds the 1s of a burst of events in one write), the client
 * takes 1 per event it reads. */
int emu_ucma_open_push(const struct emu_host *h, emu_ucma_push_fn push, void *ctx);
/* The client of push file fd handed the count events at the head of the queue, the last of
 * sequence number seq, to its application: the side effects of a GET_EVENT for each
 * (dequeue, events_reported, backlog). 0, -EBADF (no file), -EPROTO (the queue holds fewer,
 * or they end elsewhere: the copies diverged). */
int emu_ucma_consumed(int fd, uint32_t seq, uint32_t count);
/* emu_ucma_write on file fd of this process's files with the engine lock held (rdmaemud
 * sends the answer in the same hold). -EBADF for no file. */
ssize_t emu_ucma_write_locked(int fd, const void *buf, size_t len);
/* The name of a ucma command ("CREATE_ID", ...; "?" for none): traces, the daemon's logs. */
const char *emu_ucma_cmd_name(uint32_t cmd);
/* After emu_ucma_write_locked: how many bytes from resp (a response buffer of len bytes) the
 * command wrote, a prefix (every command writes its response from the start). */
size_t emu_ucma_written(const void *resp, size_t len);
/* rdmaemud's posted commands (docs/daemon.md "Posted commands"), on push file fd, engine lock
 * held: emu_ucma_write_locked, except that CREATE_ID creates its id at handle (reserved by
 * emu_cma_id_reserve; UINT32_MAX: the lowest free) and that the events a command removes
 * from the queue (DESTROY_ID's) leave unpushed and keep their 1 on the eventfd: the client
 * dropped them from its copy and took the 1s itself. */
ssize_t emu_ucma_post_locked(int fd, const void *buf, size_t len, uint32_t handle);
/* Whether id handle of file fd is as CREATE_ID left it (IDLE, no option, no bind, ...) and
 * its host's ports are plentiful: a RESOLVE_ADDR that returns 0 on it returns 0 on any such
 * id of the file (same port space and QP type: *ps, *qp_type) while the host's addresses,
 * links and devices stay (rdmaemud's verdicts). */
bool emu_ucma_id_pristine(int fd, uint32_t handle, uint16_t *ps, uint8_t *qp_type);
/* A posted RESOLVE_ADDR failed where its process answered 0: the ADDR_ERROR (status) the
 * kernel gives when the resolution fails after the call returned. */
void emu_ucma_addr_error(int fd, uint32_t handle, int status);
/* emu_cma_cm_sure for id handle of file fd. */
bool emu_ucma_cm_sure(int fd, uint32_t handle, uint32_t cmd, uint32_t *sub);
/* Whether RESOLVE_ROUTE of id handle on file fd, with a timeout, would return 0 now. */
bool emu_ucma_route_sure(int fd, uint32_t handle);
/* on: a GET_EVENT on an empty file answers EAGAIN even on a blocking fd (the daemon never
 * sleeps for a client). */
void emu_ucma_set_nowait(bool on);
/* Whether fd is an rdma_cm file with at least one event queued. */
bool emu_ucma_file_ready(int fd);
/* How many ids the file holds, how many of them listen, how many multicast memberships they
 * hold (rdmaemud's status). 0 or -EBADF. */
int emu_ucma_file_stats(int fd, unsigned *nids, unsigned *nlisten, unsigned *nmcs);

/* `rdma link delete dev` on host h (emu/rdma_cm/devrm_ctl.c), engine lock held: the device leaves the
 * lists, then emu_cma_device_remove. 0 with *idx its index, -ENOENT (no such device, or
 * removed already), -ENOMEM (nothing done). Where the fabric lives: the in-process engine, or
 * rdmaemud's. */
int emu_device_remove_locked(struct emu_host *h, const char *dev, size_t *idx);

#endif
