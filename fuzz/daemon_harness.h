/* rdmaemud in the fuzzer's process (docs/fuzzing.md): its own message handlers, fed by
 * clients that are socket pairs the harness holds the other end of. Shared by the daemon and
 * ucma targets. The daemon serves fixtures/rxe-ref2.fabric (hosts A and B) in virtual time. */
#ifndef RDMAEMU_FUZZ_DAEMON_HARNESS_H
#define RDMAEMU_FUZZ_DAEMON_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FZD_CLIENTS 4

/* Once: the daemon's fabric, stacks and client table. */
void fzd_init(void);
/* The real path of the daemon's fabric (what a HELLO must name). */
const char *fzd_fabric_path(void);
/* Client i (0..FZD_CLIENTS-1) sends one message (its connection is this process's, as
 * SO_PEERCRED says: a HELLO or UCMA_OPEN must claim getpid() to be believed): header (magic, version, type, arg, pad;
 * raw when hdr is not NULL: 16 bytes as given) and body; the daemon reads and handles it as
 * its main loop does, closing the client when its handler says so. Connects it first if
 * needed. */
void fzd_send(unsigned i, const uint8_t *hdr, uint16_t type, uint32_t arg, uint32_t pad,
	      const void *body, size_t len);
/* Client i puts a record in its command ring (after UCMA_OPEN gave it one; otherwise
 * nothing): false when it has no ring. With raw_head, the ring's head is set to head instead
 * (a client lying about what it wrote). */
bool fzd_ring(unsigned i, uint16_t type, uint16_t seq16, uint32_t arg, uint32_t pad,
	      const void *body, size_t len);
void fzd_ring_head(unsigned i, uint64_t head);
/* Whether the daemon took client i's HELLO (attached) or UCMA_OPEN (an rdma_cm file). */
bool fzd_attached(unsigned i);
/* Client i hangs up. */
void fzd_close(unsigned i);
/* The main loop's turn after a message: rings, queued frames, a virtual-time round when
 * everything is quiet, and whatever the daemon sent is read off the clients' sockets. */
void fzd_turn(void);
/* Virtual time passes in the daemon's engine, timers firing, as a round would let it when
 * every process is idle. */
void fzd_advance(uint64_t ns);
/* After an input: every client gone; with full, the daemon is built again from scratch (an
 * input that removed a device or changed a link leaves a different fabric). */
void fzd_reset(bool full);

#endif
