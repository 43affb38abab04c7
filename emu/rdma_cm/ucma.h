/* The emulated kernel rdma_cm: ucma's files, commands and event queues on top of the CM ids of
 * emu/rdma_cm/cma.h (Linux 6.1's drivers/infiniband/core/ucma.c). Internal to emu/rdma_cm/ucma*.c and
 * emu/rdma_cm/cma*.c, and for tests of the command interface. */
#ifndef RDMAEMU_EMU_UCMA_H
#define RDMAEMU_EMU_UCMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"

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

/* A push file (protocol 6, docs/daemon.md "rdma_cm files"): its client keeps a copy of the
 * event queue. push() hears, at once and in queue order, of every event that joins the queue
 * (EVENT: its sequence number and bytes) and of every one that leaves it unread (DROP: its
 * sequence number; MOVED, seq 0: a MIGRATE_ID took this file's events of an id, the DROPs
 * are over). fd is the file's. Engine lock held; push() must not take it, and may run
 * read-only commands of the file with emu_ucma_write_locked (rdmaemud's kept answers). */
enum emu_ucma_push_kind {
	EMU_UCMA_PUSH_EVENT,
	EMU_UCMA_PUSH_DROP,
	EMU_UCMA_PUSH_MOVED,
	/* seq: an id whose state changed with no event the application will see (a request not
	 * accepted yet: its events are dropped); what the client kept of it goes */
	EMU_UCMA_PUSH_FORGET,
};
typedef void (*emu_ucma_push_fn)(void *ctx, int fd, enum emu_ucma_push_kind kind, uint32_t seq,
				 const struct rdma_ucm_event_resp *resp);
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
/* id's state changed and no event says so (emu_ucma_push_kind FORGET). Engine lock held. */
void emu_ucma_forget(const struct emu_cma_id *id);
/* Whether id handle of file fd is as CREATE_ID left it (IDLE, no option, no bind, ...) and
 * its host's ports are plentiful: a RESOLVE_ADDR that returns 0 on it returns 0 on any such
 * id of the file (same port space and QP type: *ps, *qp_type) while the host's addresses,
 * links and devices stay (rdmaemud's verdicts). */
bool emu_ucma_id_pristine(int fd, uint32_t handle, uint16_t *ps, uint8_t *qp_type);
/* A posted RESOLVE_ADDR failed where its process answered 0: the ADDR_ERROR (status) the
 * kernel gives when the resolution fails after the call returned. */
void emu_ucma_addr_error(int fd, uint32_t handle, int status);
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

/* ---- internal to emu/rdma_cm/ucma*.c and emu/rdma_cm/cma*.c ------------------------------------------- */

/* A queued event keeps the response GET_EVENT copies out without its zeros: the header
 * fields, then in data[] the param_len bytes of the response from EMU_UCMA_EV_PARAM and, if
 * tail, the bytes from EMU_UCMA_EV_TAIL to the end (the conn flags, the UD private data's end,
 * the ECE); every other byte of the response is zero. Events come in bursts (an application
 * resolves N addresses, then reads N ADDR_RESOLVED): a whole 336-byte response in each made a
 * burst of 10,000 nearly 4 MiB, written cold and read cold; most events are 64-byte records. */
#define EMU_UCMA_EV_PARAM offsetof(struct rdma_ucm_event_resp, param)
#define EMU_UCMA_EV_TAIL offsetof(struct rdma_ucm_event_resp, param.conn.private_data_len)
#define EMU_UCMA_EV_TAIL_LEN (sizeof(struct rdma_ucm_event_resp) - EMU_UCMA_EV_TAIL)

struct emu_ucma_event {
	struct emu_list node;
	struct emu_cma_id *id;
	struct emu_cma_mc *mc;
	uint64_t uid;
	uint32_t handle;
	uint32_t event;
	uint32_t status;
	uint32_t seq; /* push files: its sequence number on the file (0 elsewhere) */
	uint16_t param_len;
	bool tail;
	uint8_t data[];
};

struct emu_ucma_file {
	int fd;
	const struct emu_host *host;
	struct emu_list events;
	struct emu_list ids;
	size_t nevents;
	/* push files (emu_ucma_open_push); push is NULL for the others */
	emu_ucma_push_fn push;
	void *push_ctx;
	uint32_t push_seq; /* the last sequence number given */
	/* in a posted DESTROY_ID (emu_ucma_post_locked): the client dropped its copies of the
	 * id's events and took their 1s off the eventfd itself, so events leave unpushed */
	bool quiet;
};

/* An event record for file f with room for data bytes of response, from kmem (not zeroed:
 * the caller sets every field), and back. Engine lock held. */
struct emu_ucma_event *emu_ucma_event_get(struct emu_ucma_file *f, size_t data);
/* The whole response of ev, as GET_EVENT copies it out. */
void emu_ucma_event_resp(const struct emu_ucma_event *ev, struct rdma_ucm_event_resp *resp);
void emu_ucma_event_put(struct emu_ucma_file *f, struct emu_ucma_event *ev);
/* ev joins the tail of f's queue / leaves it unread: the count, the fd and, for a push
 * file, the push. Engine lock held. */
void emu_ucma_event_queue(struct emu_ucma_file *f, struct emu_ucma_event *ev);
void emu_ucma_event_unqueue(struct emu_ucma_file *f, struct emu_ucma_event *ev);

struct emu_cma_id *emu_cma_id_new(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				  uint8_t qp_type);
/* Destroys the id (kernel rdma_destroy_id + ucma_destroy_private_ctx): cancels network work,
 * drops its queued events and the ids of unread CONNECT_REQUESTs, releases its port. */
void emu_cma_id_destroy(struct emu_cma_id *id);
struct emu_cma_id *emu_cma_id_lookup(uint32_t handle);
/* A handle taken ahead for a posted CREATE_ID of rdmaemud (the lowest free, as any), or
 * UINT32_MAX; emu_cma_id_new_at creates the id there, emu_cma_id_unreserve gives it back.
 * Lookups see no id at a reserved handle. */
uint32_t emu_cma_id_reserve(void);
void emu_cma_id_unreserve(uint32_t handle);
/* emu_cma_id_new at reserved handle (UINT32_MAX: the lowest free); NULL when handle is not
 * reserved or memory runs out. */
struct emu_cma_id *emu_cma_id_new_at(struct emu_ucma_file *f, uint64_t uid, uint16_t ps,
				     uint8_t qp_type, uint32_t handle);
/* Handles are below this bound (for walks over every id). */
uint32_t emu_cma_id_limit(void);
/* What rdma_destroy_id does to the kernel state (_destroy_id): cancels address, route and
 * service resolution, destroys the IB CM id (REJ, DREQ, ... as its state demands), leaves the
 * multicast groups (the memberships stay allocated) and releases the port. The ucma context,
 * its queued events and memberships stay: emu_cma_id_destroy frees them. */
void emu_cma_id_teardown(struct emu_cma_id *id);
/* RDMA device `dev` of host h is being unregistered (emu/rdma_cm/cma_devrm.c, cma_remove_one): one
 * DEVICE_REMOVAL per attached id, in attach order, then ucma's close_work on each. 0 or
 * -ENOMEM (nothing done). */
int emu_cma_device_remove(const struct emu_host *h, size_t dev);
/* `rdma link delete dev` on host h (emu/rdma_cm/devrm_ctl.c), engine lock held: the device leaves the
 * lists, then emu_cma_device_remove. 0 with *idx its index, -ENOENT (no such device, or
 * removed already), -ENOMEM (nothing done). Where the fabric lives: the in-process engine, or
 * rdmaemud's. */
int emu_device_remove_locked(struct emu_host *h, const char *dev, size_t *idx);

int emu_cma_bind(struct emu_cma_id *id, const struct sockaddr *addr);
int emu_cma_listen(struct emu_cma_id *id, int backlog);
/* The CM module's listen (emu_cma_cm_ops.listen), 0 without one. */
int emu_cma_cm_listen(struct emu_cma_id *id);
/* The CM module's drop_dev (emu_cma_cm_ops.drop_dev), nothing without one. */
void emu_cma_cm_drop_dev(struct emu_cma_id *id, size_t dev);
int emu_cma_resolve_addr(struct emu_cma_id *id, const struct sockaddr *src,
			 const struct sockaddr *dst, uint32_t timeout_ms);
int emu_cma_resolve_route(struct emu_cma_id *id, uint32_t timeout_ms);
/* Whether RESOLVE_ROUTE on id (its file's command, with a timeout) would return 0 now: the
 * verdict rdmaemud sends with ADDR_RESOLVED so that its client may post the command. */
bool emu_cma_resolve_route_sure(const struct emu_cma_id *id);
/* Whether CONNECT, ACCEPT or DISCONNECT on id would return 0 now, and for which commands
 * (*sub: emu_cma_cm_ops.sure). */
bool emu_cma_cm_sure(const struct emu_cma_id *id, uint32_t cmd, uint32_t *sub);
/* The same for id handle of file fd. */
bool emu_ucma_cm_sure(int fd, uint32_t handle, uint32_t cmd, uint32_t *sub);
int emu_cma_set_option(struct emu_cma_id *id, uint32_t level, uint32_t optname,
		       const void *optval, uint32_t optlen);
int emu_cma_init_qp_attr(struct emu_cma_id *id, struct ib_uverbs_qp_attr *attr);
int emu_cma_connect(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		    const struct rdma_ucm_ece *ece);
int emu_cma_accept(struct emu_cma_id *id, const struct rdma_ucm_conn_param *p,
		   const struct rdma_ucm_ece *ece);
int emu_cma_reject(struct emu_cma_id *id, const void *pdata, uint8_t len, uint8_t reason);
int emu_cma_disconnect(struct emu_cma_id *id);
int emu_cma_notify(struct emu_cma_id *id, uint32_t event);
int emu_cma_join(struct emu_cma_id *id, struct emu_cma_mc *mc);
void emu_cma_leave(struct emu_cma_id *id, struct emu_cma_mc *mc);
void emu_cma_release_port(struct emu_cma_id *id);

#endif
