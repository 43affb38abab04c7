/* The event queue of an rdma_cm file (ucma's event list and ucma_event_handler): the records
 * GET_EVENT copies out, the file they queue on and, for rdmaemud's push files, the push of
 * every change to the queue. Internal to emu/rdma_cm: the CM ids queue their events here
 * (emu_cma_event), ucma.c reads them. */
#ifndef RDMAEMU_EMU_UCMA_EVENT_H
#define RDMAEMU_EMU_UCMA_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_cm.h>

#include "emu/rdma_cm/cma.h"

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

/* id's state changed and no event says so (emu_ucma_push_kind FORGET). Engine lock held. */
void emu_ucma_forget(const struct emu_cma_id *id);

#endif
