/* rdmaemud's half of the shared-memory loopback path (docs/daemon.md, "Shared memory"): it
 * pairs the processes of each host. A process that offers its eventfd (SHM_HELLO) gets, for
 * every other such process of its host, a fresh memfd holding the pair's two rings and the
 * peer's eventfd (SHM_PEER); when a process goes away its peers are told (SHM_GONE). The
 * daemon never maps the rings.
 *
 * Messages to a client are queued here and sent without blocking (the main loop must never
 * wait for a client: its receive thread may itself wait for the engine lock of a thread that
 * waits for the daemon); the main loop asks for POLLOUT while emu_dshm_pending() and calls
 * emu_dshm_flush() then. Main thread only. */
#ifndef RDMAEMU_EMU_DAEMON_SHM_H
#define RDMAEMU_EMU_DAEMON_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_DSHM_MAX_CLIENTS 4096

/* Client ci (socket fd, attached to host `host`, QP slot `slot` with that QPN range) offered
 * its eventfd efd (owned from now on): pairs it with every other offering process of the
 * host. 0, or an errno when no ring could be made (the client keeps using the daemon). */
int emu_dshm_hello(unsigned ci, int fd, int efd, size_t host, unsigned slot, uint32_t qpn_min,
		   uint32_t qpn_max, int pid);
/* Client ci said SHM_MAPPED for the peer in slot `slot` of its host: the peer may hear
 * SHM_READY. */
void emu_dshm_mapped(unsigned ci, uint32_t slot);
/* Client ci's socket closed: its peers hear SHM_GONE, its state goes, nobody waits for it. */
void emu_dshm_close(unsigned ci);
/* Whether messages wait for client ci's socket to have room. */
bool emu_dshm_pending(unsigned ci);
/* Sends what waits for client ci until its socket is full. */
void emu_dshm_flush(unsigned ci);
/* rdmaemud --trace: one line per offer state change. */
void emu_dshm_set_trace(bool on);
/* How many peers client ci was paired with (status). */
unsigned emu_dshm_npeers(unsigned ci);

#endif
