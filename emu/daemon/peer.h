/* Who is at the other end of a daemon connection, and what it may speak for.
 *
 * The daemon takes nothing a process says about itself on trust that the kernel can tell:
 * the connection's credentials (SO_PEERCRED, taken by the kernel at connect time) give its uid
 * and pid, and /proc/PID/ns/net its network namespace. A connection of another uid is closed;
 * a HELLO, UCMA_OPEN or TAP_ATTACH claiming another pid is refused; and once a host's sandbox
 * keeper has handed its taps over (TAP_ATTACH), that network namespace is the host's: a
 * process inside it speaks as that host only, and a namespace is one host's only.
 *
 * Main thread only. */
#ifndef RDMAEMU_EMU_DAEMON_PEER_H
#define RDMAEMU_EMU_DAEMON_PEER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_fabric;

struct emu_dpeer {
	int pid;	/* -1: unknown (the kernel gave no credentials) */
	unsigned uid;
	bool has_netns; /* false: /proc told nothing (the process left already) */
	uint64_t netns_dev, netns_ino;
};

/* The credentials of connected socket fd into *p. 0, or an errno. */
int emu_dpeer_get(int fd, struct emu_dpeer *p);
/* Whether the peer runs as this daemon's effective uid; says why not on stderr. */
bool emu_dpeer_uid_ok(const struct emu_dpeer *p);
/* 0 when the peer may speak as process `pid` on host `host` (an index into f's hosts) in a
 * message `what` (HELLO, UCMA_OPEN, TAP_ATTACH); else EPERM, said on stderr. */
int emu_dpeer_may_claim(const struct emu_dpeer *p, const struct emu_fabric *f, const char *what,
			int pid, size_t host);
/* Connection `owner` (a sandbox keeper) handed over a tap of host `host`: its network
 * namespace is that host's from now on. */
void emu_dpeer_host_netns(const struct emu_dpeer *p, size_t host, unsigned owner);
/* Connection `owner` closed: the namespaces it stood for are nobody's any more. */
void emu_dpeer_forget(unsigned owner);

#endif
