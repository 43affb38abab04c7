/* rdma_cm files that rdmaemud serves for its processes (docs/daemon.md, "rdma_cm files"):
 * the daemon end of UCMA_OPEN, UCMA_WRITE and UCMA_CLOSE. Called by the main loop without
 * the engine lock (the emulated ucma takes it); never waits for a client. */
#ifndef RDMAEMU_EMU_DAEMON_UCMA_SRV_H
#define RDMAEMU_EMU_DAEMON_UCMA_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "emu/sim/fabric.h"

struct emu_dpeer;

/* What the daemon does for the files. */
struct emu_ucma_srv_ops {
	/* Sends a message on the connection ctx (emu_ucma_srv_open's) behind what is queued
	 * for it, queueing it when the socket is full: never dropped, never reordered. The
	 * engine lock is held. */
	void (*send)(void *ctx, uint16_t type, uint32_t arg, uint32_t pad, const void *body,
		     size_t len);
	/* Adds delta (+1 or -1) to the semaphore of file fd (its eventfd), served on ctx: +1
	 * before an EVENT's send, -1 before a DROP's. The engine lock is held. */
	void (*sem)(void *ctx, int fd, int delta);
	/* Takes the UCMA_CONSUMED at the head of the command ring of connection ctx (protocol
	 * 11): 1 (its seq and count), 0 when the head is anything else or nothing, -1 when the
	 * connection has no ring (its socket carries them). No lock needed. */
	int (*ring_consumed)(void *ctx, uint32_t *seq, uint32_t *count);
	/* A file of host (the fabric's index) named QP number qpn in an rdma_connect or
	 * rdma_accept (conn_param.qp_num), before the command runs. Engine lock held. NULL: not
	 * told. */
	void (*qpn_used)(size_t host, uint32_t qpn);
};

/* Before serving. */
void emu_ucma_srv_init(const struct emu_ucma_srv_ops *ops);
/* UCMA_OPEN on connection sock (body: struct emu_dmsg_hello, checked as HELLO is: the fabric
 * must be the daemon's, fabric_path "" for the built-in). Creates the file for the named host
 * and answers with its eventfd and sent_fd (the page of the sent-message count, -1: none);
 * ctx names the connection for ops->send, which counts what it sends there. Returns the daemon's fd of the file (the connection now
 * serves it), or -1 after answering an errno (EPERM: the peer may not claim that pid or
 * host, emu/daemon/peer.h). *pid: the pid the client gave. */
int emu_ucma_srv_open(int sock, const struct emu_fabric *f, const char *fabric_path,
		      const void *body, size_t len, const struct emu_dpeer *peer, int *pid,
		      void *ctx, int sent_fd);
/* UCMA_CONSUMED of count events up to seq on file dfd: 0, or -1 when they are not the head
 * of the file's queue (the client's copy diverged: the caller closes the connection). */
int emu_ucma_srv_consumed(int dfd, uint32_t seq, uint32_t count);
/* UCMA_WRITE on the connection serving file dfd of process pid: runs the command, answers.
 * Returns 0, or -1 when the message is malformed (the caller closes the connection). */
int emu_ucma_srv_write(int sock, int dfd, int pid, const uint8_t *body, size_t len);
/* UCMA_POST on the connection serving file dfd: runs the posted command (CREATE_ID at the
 * spare handle the client gave, DESTROY_ID, RESOLVE_ROUTE), says on stderr where it did
 * otherwise than the client answered, and answers with UCMA_POSTED when asked. 0, or -1
 * for a malformed message or a handle that is no spare of the file (the caller closes the
 * connection). */
int emu_ucma_srv_post(int dfd, const uint8_t *body, size_t len);
/* The connection closed or sent UCMA_CLOSE: the kernel's ucma_close (destroys the file's ids:
 * DREQs, rejects) and the daemon's eventfd goes. */
void emu_ucma_srv_close(int dfd);
/* Number of files served (for status). */
unsigned emu_ucma_srv_count(void);
/* Writes file dfd's status line into buf: "rdma_cm file DFD process PID ids N listen L
 * mcast M\n" (ids it holds, of them listening, multicast memberships). Its length. */
size_t emu_ucma_srv_status(int dfd, int pid, char *buf, size_t len);

/* The addresses, links or neighbours of host changed: the RESOLVE_ADDR verdicts given to its
 * files are taken back (UCMA_VERDICT 0, which also makes the client forget every answer and
 * verdict it kept). SIZE_MAX: a device went; every file is told. Engine lock held. */
void emu_ucma_srv_revoke(size_t host);
/* The daemon removed a device (generation gen): every later answer carries gen, and the
 * client applies the removals up to it before it returns (emu_link_devrm_sync). */
void emu_ucma_srv_devrm(uint32_t gen);

#endif
