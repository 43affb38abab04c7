/* Who is at the other end of a daemon connection (emu/daemon/peer.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/daemon/peer.h"
#include "emu/sim/fabric.h"

/* The hosts whose sandboxes handed taps over: their network namespaces. A fabric runs at
 * most as many sandboxes as it has hosts with an Ethernet netdev on the wire; 256 keepers
 * at once is beyond any fabric file the project ships. */
#define NETNS_MAX 256

static struct {
	bool used;
	unsigned owner;
	size_t host;
	uint64_t dev, ino;
} netns[NETNS_MAX];

int emu_dpeer_get(int fd, struct emu_dpeer *p)
{
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	char path[64];
	struct stat st;

	p->pid = -1;
	p->uid = (unsigned)-1;
	p->has_netns = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl))
		return errno;
	p->pid = (int)cr.pid;
	p->uid = (unsigned)cr.uid;
	/* read now: the pid is the connecting process's while the connection is young, and a
	 * process cannot leave its namespace without privileges it has no need for */
	snprintf(path, sizeof(path), "/proc/%d/ns/net", p->pid);
	if (!stat(path, &st)) {
		p->has_netns = true;
		p->netns_dev = (uint64_t)st.st_dev;
		p->netns_ino = (uint64_t)st.st_ino;
	}
	return 0;
}

bool emu_dpeer_uid_ok(const struct emu_dpeer *p)
{
	if (p->uid == (unsigned)geteuid())
		return true;
	fprintf(stderr, "rdmaemud: pid %d of uid %u connected; this daemon serves uid %u only: "
			"refused\n", p->pid, p->uid, (unsigned)geteuid());
	return false;
}

/* Whether the peer runs in a host's sandbox, and which host's. */
static bool netns_host(const struct emu_dpeer *p, size_t *host)
{
	if (!p->has_netns)
		return false;
	for (size_t i = 0; i < NETNS_MAX; i++)
		if (netns[i].used && netns[i].dev == p->netns_dev && netns[i].ino == p->netns_ino) {
			*host = netns[i].host;
			return true;
		}
	return false;
}

int emu_dpeer_may_claim(const struct emu_dpeer *p, const struct emu_fabric *f, const char *what,
			int pid, size_t host)
{
	size_t in;

	if (pid != p->pid) {
		fprintf(stderr, "rdmaemud: pid %d claims pid %d in its %s: refused\n", p->pid, pid,
			what);
		return EPERM;
	}
	if (netns_host(p, &in) && in != host) {
		fprintf(stderr, "rdmaemud: pid %d runs in the sandbox of host %s and claims host "
				"%s in its %s: refused\n", p->pid, f->hosts[in].name, f->hosts[host].name,
			what);
		return EPERM;
	}
	return 0;
}

void emu_dpeer_host_netns(const struct emu_dpeer *p, size_t host, unsigned owner)
{
	size_t free_slot = NETNS_MAX;

	if (!p->has_netns)
		return;
	for (size_t i = 0; i < NETNS_MAX; i++) {
		if (netns[i].used && netns[i].dev == p->netns_dev && netns[i].ino == p->netns_ino)
			return; /* another netdev of the same host */
		if (!netns[i].used && free_slot == NETNS_MAX)
			free_slot = i;
	}
	if (free_slot == NETNS_MAX)
		return;
	netns[free_slot].used = true;
	netns[free_slot].owner = owner;
	netns[free_slot].host = host;
	netns[free_slot].dev = p->netns_dev;
	netns[free_slot].ino = p->netns_ino;
}

void emu_dpeer_forget(unsigned owner)
{
	for (size_t i = 0; i < NETNS_MAX; i++)
		if (netns[i].used && netns[i].owner == owner)
			netns[i].used = false;
}
