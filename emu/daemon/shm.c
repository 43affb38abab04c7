/* rdmaemud: pairing the processes of a host for the shared-memory loopback path
 * (emu/daemon/shm.h, emu/link/link_shm.c, docs/daemon.md).
 *
 * Each pair gets its own memfd, created here zero-filled: both rings start empty with no
 * reader marked awake, and no state of an earlier process of the same slot can leak into
 * the pair (a fresh memfd per pair is what makes slot reuse safe without any reset protocol).
 *
 * Offer states of a client: NONE --SHM_HELLO--> OFFERED --socket closed--> NONE. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emu/link/link.h"
#include "emu/link/proto.h"
#include "emu/daemon/shm.h"

struct pend {
	struct pend *next;
	struct emu_dmsg h;
	struct emu_dmsg_shm_peer body;
	int nfds, fds[2];
};

enum offer_state { OFFER_NONE, OFFER_OFFERED };

static struct dshm_client {
	enum offer_state state;
	int fd, efd, pid;
	size_t host;
	unsigned slot, npeers;
	uint32_t qpn_min, qpn_max;
	uint64_t awaiting[EMU_DSHM_MAX_CLIENTS / 64]; /* clients yet to say SHM_MAPPED for it */
	struct pend *q, **qtail;
} cl[EMU_DSHM_MAX_CLIENTS];

static const char *const offer_state_name[] = {
	[OFFER_NONE] = "NONE", [OFFER_OFFERED] = "OFFERED",
};
static bool trace_on;

void emu_dshm_set_trace(bool on)
{
	trace_on = on;
}

static void offer_set_state(struct dshm_client *c, enum offer_state s)
{
	if (trace_on)
		fprintf(stderr, "rdmaemud: shm: pid %d slot %u: %s -> %s\n", c->pid, c->slot,
			offer_state_name[c->state], offer_state_name[s]);
	c->state = s;
}

static void pend_free(struct pend *p)
{
	for (int i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p);
}

/* Queues a message for client c (taking the descriptors), then tries to send. false when
 * out of memory (the message is lost). */
static bool enqueue(struct dshm_client *c, uint16_t type, uint32_t arg,
		    const struct emu_dmsg_shm_peer *body, const int *fds, int nfds)
{
	struct pend *p = calloc(1, sizeof(*p));

	if (!p) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return false;
	}
	p->h = (struct emu_dmsg){ EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, arg, 0 };
	if (body)
		p->body = *body;
	p->nfds = nfds;
	if (nfds) /* SHM_GONE carries no fds (fds NULL): memcpy's source must not be NULL */
		memcpy(p->fds, fds, (size_t)nfds * sizeof(int));
	if (!c->qtail)
		c->qtail = &c->q;
	*c->qtail = p;
	c->qtail = &p->next;
	emu_dshm_flush((unsigned)(c - cl));
	return true;
}

void emu_dshm_flush(unsigned ci)
{
	struct dshm_client *c = &cl[ci];

	while (c->q) {
		struct pend *p = c->q;
		struct iovec iov[2] = { { &p->h, sizeof(p->h) }, { &p->body, sizeof(p->body) } };

		if (emu_link_sendmsg_fds(c->fd, iov, p->h.type == EMU_DMSG_SHM_PEER ? 2 : 1,
					 p->fds, p->nfds, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    (errno == EAGAIN || errno == EINTR))
			return; /* the main loop calls again on POLLOUT */
		/* sent, or the client is going away (its hang-up comes next) */
		c->q = p->next;
		if (!c->q)
			c->qtail = &c->q;
		pend_free(p);
	}
}

bool emu_dshm_pending(unsigned ci)
{
	return ci < EMU_DSHM_MAX_CLIENTS && cl[ci].q;
}

unsigned emu_dshm_npeers(unsigned ci)
{
	return ci < EMU_DSHM_MAX_CLIENTS ? cl[ci].npeers : 0;
}

/* SHM_PEER to a about b: the pair's memfd (a dup) and b's eventfd (a dup). false when a
 * will not hear it (no descriptor, no memory): the pair then stays on the daemon path. */
static bool tell_peer(struct dshm_client *a, const struct dshm_client *b, int memfd,
		      unsigned tx_ring)
{
	struct emu_dmsg_shm_peer body = { b->qpn_min, b->qpn_max, b->pid, tx_ring };
	int fds[2] = { dup(memfd), dup(b->efd) };

	if (fds[0] < 0 || fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		return false;
	}
	if (!enqueue(a, EMU_DMSG_SHM_PEER, b->slot, &body, fds, 2))
		return false;
	a->npeers++;
	return true;
}

static bool awaits_none(const struct dshm_client *c)
{
	for (size_t i = 0; i < EMU_DSHM_MAX_CLIENTS / 64; i++)
		if (c->awaiting[i])
			return false;
	return true;
}

/* Client ci no longer waits for client who: SHM_READY when it was the last one. */
static void await_done(unsigned ci, unsigned who)
{
	struct dshm_client *c = &cl[ci];

	if (!(c->awaiting[who / 64] >> (who % 64) & 1))
		return;
	c->awaiting[who / 64] &= ~(1ull << (who % 64));
	if (awaits_none(c))
		enqueue(c, EMU_DMSG_SHM_READY, 0, NULL, NULL, 0);
}

void emu_dshm_mapped(unsigned ci, uint32_t slot)
{
	if (ci >= EMU_DSHM_MAX_CLIENTS || cl[ci].state != OFFER_OFFERED)
		return;
	for (unsigned i = 0; i < EMU_DSHM_MAX_CLIENTS; i++)
		if (cl[i].state == OFFER_OFFERED && cl[i].host == cl[ci].host &&
		    cl[i].slot == slot)
			await_done(i, ci);
}

int emu_dshm_hello(unsigned ci, int fd, int efd, size_t host, unsigned slot, uint32_t qpn_min,
		   uint32_t qpn_max, int pid)
{
	struct dshm_client *c;

	if (ci >= EMU_DSHM_MAX_CLIENTS || cl[ci].state != OFFER_NONE) {
		close(efd);
		return EPROTO;
	}
	c = &cl[ci];
	*c = (struct dshm_client){ .state = OFFER_NONE, .fd = fd, .efd = efd, .pid = pid,
				   .host = host, .slot = slot, .qpn_min = qpn_min,
				   .qpn_max = qpn_max, .qtail = &c->q };
	offer_set_state(c, OFFER_OFFERED);
	for (unsigned i = 0; i < EMU_DSHM_MAX_CLIENTS; i++) {
		struct dshm_client *o = &cl[i];
		int memfd;

		if (i == ci || o->state != OFFER_OFFERED || o->host != host ||
		    slot >= EMU_DPROTO_SHM_SLOTS || o->slot >= EMU_DPROTO_SHM_SLOTS)
			continue; /* the pair stays on the daemon's path */
		memfd = memfd_create("rdmaemu-rings", MFD_CLOEXEC);
		if (memfd < 0 || ftruncate(memfd, EMU_SHM_PAIR_BYTES)) {
			int err = errno;

			fprintf(stderr, "rdmaemud: no rings for pids %d and %d: %s (the daemon "
					"carries their frames)\n", pid, o->pid, strerror(err));
			if (memfd >= 0)
				close(memfd);
			continue;
		}
		/* the older process writes ring 0; c waits for o's SHM_MAPPED */
		if (tell_peer(o, c, memfd, 0))
			c->awaiting[i / 64] |= 1ull << (i % 64);
		tell_peer(c, o, memfd, 1);
		close(memfd);
	}
	if (awaits_none(c))
		enqueue(c, EMU_DMSG_SHM_READY, 0, NULL, NULL, 0);
	return 0;
}

void emu_dshm_close(unsigned ci)
{
	struct dshm_client *c;

	if (ci >= EMU_DSHM_MAX_CLIENTS || cl[ci].state != OFFER_OFFERED)
		return;
	c = &cl[ci];
	while (c->q) {
		struct pend *p = c->q;

		c->q = p->next;
		pend_free(p);
	}
	close(c->efd);
	offer_set_state(c, OFFER_NONE);
	for (unsigned i = 0; i < EMU_DSHM_MAX_CLIENTS; i++) {
		struct dshm_client *o = &cl[i];

		if (i == ci || o->state != OFFER_OFFERED || o->host != c->host)
			continue;
		if (o->npeers)
			o->npeers--;
		enqueue(o, EMU_DMSG_SHM_GONE, c->slot, NULL, NULL, 0);
		await_done(i, ci); /* it will never answer */
	}
	*c = (struct dshm_client){ .state = OFFER_NONE, .fd = -1, .efd = -1 };
}
