/* The shared-memory loopback path between the processes of one host (docs/daemon.md, "Shared
 * memory between the processes of a host").
 *
 * A frame the HCA hands to itself (a loopback: same device, DestQP of another process of the
 * same host) never touches the wire, so no capture, fault or link delay applies to it: the
 * daemon's forwarder only passes it on. This module passes it on itself: the daemon gives each
 * pair of processes of a host a memfd with two single-producer rings (one per direction) and
 * each process's eventfd; the sender copies the frame into the ring, the receiver's ring thread
 * delivers it in place from the ring into its engine. No system call per frame while both
 * sides are busy; an eventfd write wakes a reader that went to sleep.
 *
 * Everything here runs under the engine lock except the ring thread's sleep. */
#ifndef RDMAEMU_EMU_LINK_SHM_H
#define RDMAEMU_EMU_LINK_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_engine;
struct emu_dmsg;

/* After the daemon's WELCOME on socket fd: creates this process's eventfd and offers it
 * (SHM_HELLO), unless $RDMAEMU_SHM is "0"; then maps the rings to every process of the host
 * (SHM_PEER), answering each (SHM_MAPPED), until the daemon's SHM_READY. 0 or an errno (the
 * daemon path still works). */
int emu_link_shm_start(int fd);
/* The engine exists (emu_link_engine_created; the receive thread handles no message
 * meanwhile): starts the ring thread when rings are mapped. */
void emu_link_shm_engine_created(struct emu_engine *e);
/* The link's receive thread got a message of type >= 16 with nfds descriptors (owned by
 * this call: used or closed). Takes the engine lock itself; e is NULL before the engine
 * exists (then nothing else touches the rings). */
void emu_link_shm_msg(struct emu_engine *e, const struct emu_dmsg *h, const void *body,
		      size_t len, const int *fds, int nfds);
/* Engine lock held. Hands a loopback frame for DestQP dqpn, arriving at topology endpoint ep,
 * to the process of this host owning dqpn: 0 when it took the frame (queued in the ring, or
 * behind it in this process when the ring is full), -ENOENT when no peer known here owns
 * dqpn (the caller uses the daemon). */
int emu_link_shm_send(int ep, uint32_t dqpn, const void *frame, size_t len);
/* The same for a descriptor of the data path's own (the one-copy transfers between processes,
 * emu/verbs/xfast.c): opaque bytes, in order with the frames of the same ring, never to the
 * daemon (-ENOENT when no peer owns dqpn). Inside a burst the doorbell waits for its end.
 * The reader's ring pass hands each to the hook with the writer's pid (engine lock held,
 * emu_link_shm_delivering true); without a hook it is dropped. */
int emu_link_shm_send_desc(int ep, uint32_t dqpn, const void *desc, size_t len);
typedef void emu_link_shm_desc_fn(int ep, int pid, const void *desc, size_t len);
void emu_link_shm_set_desc_hook(emu_link_shm_desc_fn *fn);
/* The pid of the process of this host owning dqpn, joined by rings; 0 when none. */
int emu_link_shm_peer_pid(uint32_t dqpn);
/* The words in shared memory by which the data path's READs to the process owning dqpn let
 * its responder place their data in our memory (emu/verbs/xclaim.c): EMU_LINK_SHM_CLAIMS of
 * them, in the header page of our ring to it, zero in a new pair; NULL when no peer owns
 * dqpn. emu_link_shm_peer_claims: the words peer pid keeps so for its READs to us (NULL when
 * it is not joined). Engine lock held (a pair is unmapped only under it). */
#define EMU_LINK_SHM_CLAIMS 256
uint64_t *emu_link_shm_claims(uint32_t dqpn);
uint64_t *emu_link_shm_peer_claims(int pid);
/* A place in a ring for a frame of at most len bytes, to build it in (no copy of the frame):
 * emu_link_shm_reserve gives its address, or NULL when the frame must take
 * emu_link_shm_send (no peer owns dqpn, the ring is full, or frames wait behind it);
 * emu_link_shm_commit publishes the frame built there (its length <= len) and wakes the
 * reader. Nothing else may touch the rings in between: the engine lock is held across both,
 * and a reservation that is not committed is simply forgotten. */
struct emu_link_shm_resv {
	void *peer;
	uint64_t head; /* where the record starts, past any wrap gap */
	int ep;
};
void *emu_link_shm_reserve(int ep, uint32_t dqpn, size_t len, struct emu_link_shm_resv *rv);
void emu_link_shm_commit(const struct emu_link_shm_resv *rv, size_t len);
/* A burst of commits (the requester's run over a send queue): inside it, emu_link_shm_commit
 * rings a peer's doorbell at every EMU_LINK_SHM_BELL_EVERY-th frame only, and
 * emu_link_shm_burst_end rings every peer still owed one. A doorbell is a full fence (the
 * reader's wake-up protocol), and a fence per frame waited for every frame's stores to drain:
 * a third of the sender's time at 64 KiB messages. Engine lock held from begin to end, with no
 * wait in between (a frame still owed its doorbell when the lock is released could leave the
 * reader asleep). */
#define EMU_LINK_SHM_BELL_EVERY 16
void emu_link_shm_burst_begin(void);
void emu_link_shm_burst_end(void);
/* Whether this thread is delivering frames from the rings now (a pass of the ring thread or
 * of a busy poller, engine lock held). The data path then holds a responder's ACK back until
 * its QP's requester sends or the ring thread idles (emu/verbs/ack_hold.c, docs/daemon.md
 * "Held ACKs"). */
bool emu_link_shm_delivering(void);
/* fn runs with the engine lock held, in a burst, when the ring thread has found the rings
 * empty EMU_LINK_SHM_FLUSH_ROUNDS times in a row and at every later locked look until it
 * sleeps: what a pass held back goes out then at the latest. One hook (the data path's).
 * Two looks, one sched_yield between them: ib_write_lat measured the same with 1, 2 and 8
 * (the poller's post comes first either way), and each yield on a CPU busy with a spinner
 * can cost a scheduler slice, which a held ACK would wait for. */
#define EMU_LINK_SHM_FLUSH_ROUNDS 2
void emu_link_shm_set_idle_hook(void (*fn)(void));
/* Frames sent / received / dropped (the backlog behind a full ring was full too) through the
 * rings since the start, for status lines and benchmarks. */
struct emu_link_shm_stats {
	uint64_t tx, rx, backlogged, drops, wakeups;
	unsigned peers;
};
void emu_link_shm_stats(struct emu_link_shm_stats *out);
/* A busy poller's turn (an empty ibv_poll_cq in real time): drains the rings to this process
 * and flushes its backlogs on the calling thread, as the ring thread would, so a polling
 * application takes its completions' frames without a hand-over between threads. Looks at the
 * rings without a lock first and takes the engine lock only when a frame or a backlog waits.
 * true when it delivered frames (the caller polls again instead of yielding). */
bool emu_link_shm_poll(struct emu_engine *e);
/* Whether this process has rings to another process (without a lock). */
bool emu_link_shm_peers(void);
/* Stops the ring thread, unmaps every ring, closes the eventfd (emu_link_reset). */
void emu_link_shm_reset(void);

#endif
