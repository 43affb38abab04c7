/* rdmaemud's handlers under the fuzzer (daemon_harness.h). The daemon's source is compiled
 * here as it is, its main() renamed, so that its static handlers are reachable: the fuzz
 * targets stand where its main loop and its clients' sockets are. */
#include "config.h"

int rdmaemud_main(int argc, char **argv);
#define main rdmaemud_main
#include "emu/daemon/rdmaemud.c"
#undef main

#include "fuzz/daemon_harness.h"
#include "fuzz/fuzz_env.h"

static int peer[FZD_CLIENTS] = { -1, -1, -1, -1 };
/* the credentials client_accept reads off every connection: this process's, read off the
 * first one (a stat of /proc/PID/ns/net a connection was a tenth of the daemon target's time) */
static struct emu_dpeer self;
static bool have_self;
static uint8_t *rbuf;
static bool verbose;

static void setup(void)
{
	memset(&d, 0, sizeof(d));
	d.vt = true;
	snprintf(d.sock, sizeof(d.sock), "%s/rdmaemud.sock", fuzz_dir());
	if (fabric_setup(fuzz_fixture("rxe-ref2.fabric")))
		abort();
	for (size_t i = 0; i < MAX_CLIENTS; i++) {
		d.clients[i].fd = -1;
		d.clients[i].ucma_dfd = -1;
		d.clients[i].outq_tail = &d.clients[i].outq;
	}
	if (pipe2(d.wake, O_CLOEXEC | O_NONBLOCK))
		abort();
	emu_engine_lock(d.e);
	emu_engine_set_quiesce_ns(d.e, 0);
	emu_engine_unlock(d.e);
}

void fzd_init(void)
{
	signal(SIGPIPE, SIG_IGN);
	verbose = getenv("RDMAEMU_FUZZ_VERBOSE");
	rbuf = malloc(EMU_DPROTO_PATH_MAX + 1024 > EMU_WIRE_MAX_FRAME ? EMU_DPROTO_PATH_MAX + 1024
								       : EMU_WIRE_MAX_FRAME);
	if (!rbuf)
		abort();
	setup();
}

const char *fzd_fabric_path(void)
{
	return d.fabric_path;
}

/* client_accept's work for a connection the harness made. */
static struct client *client(unsigned i)
{
	struct client *c = &d.clients[i];
	struct emu_dpeer cred;
	int sv[2];

	if (c->state != CLIENT_FREE)
		return c;
	/* the daemon may have closed its end itself (a broken ring, UCMA_CLOSE): the old
	 * connection's other end goes now */
	if (peer[i] >= 0)
		close(peer[i]);
	peer[i] = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		abort();
	/* the daemon's end blocks on send as an accepted socket does */
	fcntl(sv[0], F_SETFL, 0);
	/* the credentials client_accept reads: this process's, so that a HELLO claiming
	 * getpid() is believed and any other pid refused (emu/daemon/peer.c) */
	if (!have_self) {
		if (emu_dpeer_get(sv[0], &self))
			abort();
		have_self = true;
	}
	cred = self;
	emu_engine_lock(d.e);
	memset(c, 0, sizeof(*c));
	c->outq_tail = &c->outq;
	c->fd = sv[0];
	c->ucma_dfd = -1;
	c->peer = cred;
	c->peer_pid = cred.pid;
	d.vt_dirty = true;
	d.vt_armed = false;
	client_set_state(c, CLIENT_CONNECTED);
	emu_engine_unlock(d.e);
	peer[i] = sv[1];
	return c;
}

/* What the daemon sent to client i, read and dropped; fds passed with it closed. */
static void drain(unsigned i)
{
	static uint8_t sink[1 << 16];

	while (peer[i] >= 0) {
		union {
			struct cmsghdr c;
			char b[CMSG_SPACE(8 * sizeof(int))];
		} cm;
		struct iovec iov = { sink, sizeof(sink) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
				    .msg_controllen = sizeof(cm.b) };
		ssize_t n = recvmsg(peer[i], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct emu_dmsg h;
		int fd;

		if (n <= 0)
			break;
		/* what the daemon answered, for writing seeds: RDMAEMU_FUZZ_VERBOSE=1 */
		if (verbose && n >= (ssize_t)sizeof(h)) {
			memcpy(&h, sink, sizeof(h));
			uint32_t first = 0;

			if (n >= (ssize_t)(sizeof(h) + 4))
				memcpy(&first, sink + sizeof(h), 4);
			fprintf(stderr, "fuzz: client %u got type %u arg %d pad %u, %zd bytes: %u\n",
				i, h.type, (int)h.arg, h.pad, n - (ssize_t)sizeof(h), first);
		}
		while ((fd = msg_fd(&m)) >= 0) {
			close(fd);
			m.msg_controllen = 0;
		}
	}
}

/* drain() of every client the daemon sent something to (or hung up on): one poll for the
 * four, not a recvmsg that finds nothing for each */
static void drain_all(void)
{
	struct pollfd p[FZD_CLIENTS];

	for (unsigned i = 0; i < FZD_CLIENTS; i++)
		p[i] = (struct pollfd){ .fd = peer[i], .events = POLLIN };
	if (poll(p, FZD_CLIENTS, 0) <= 0)
		return;
	for (unsigned i = 0; i < FZD_CLIENTS; i++)
		if (p[i].revents)
			drain(i);
}

bool fzd_attached(unsigned i)
{
	return d.clients[i].state == CLIENT_ATTACHED || d.clients[i].state == CLIENT_UCMA;
}

void fzd_close(unsigned i)
{
	if (d.clients[i].state != CLIENT_FREE)
		client_close(&d.clients[i]);
	if (peer[i] >= 0)
		close(peer[i]);
	peer[i] = -1;
}

void fzd_send(unsigned i, const uint8_t *hdr, uint16_t type, uint32_t arg, uint32_t pad,
	      const void *body, size_t len)
{
	struct client *c = client(i);
	struct emu_dmsg h = { .magic = EMU_DPROTO_MAGIC, .version = EMU_DPROTO_VERSION,
			      .type = type, .arg = arg, .pad = pad };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	bool got;

	if (hdr)
		memcpy(&h, hdr, sizeof(h));
	if (sendmsg(peer[i], &m, MSG_DONTWAIT) < 0)
		return; /* larger than the socket takes: the client's own failure */
	batching = true;
	if (!client_read(c, rbuf, &got))
		fzd_close(i);
	batching = false;
}

bool fzd_ring(unsigned i, uint16_t type, uint16_t seq16, uint32_t arg, uint32_t pad,
	      const void *body, size_t len)
{
	struct client *c = &d.clients[i];
	struct emu_ducma_rec rec = { .len = (uint32_t)len, .type = type, .seq16 = seq16,
				     .arg = arg, .pad = pad };
	uint8_t *ring;
	uint64_t head;
	uint32_t off, size = emu_ducma_rec_size((uint32_t)len);

	if (c->state != CLIENT_UCMA || !c->ucma_sh || len > EMU_DUCMA_REC_MAX)
		return false;
	ring = (uint8_t *)c->ucma_sh + EMU_DUCMA_RING_OFF;
	head = c->ucma_sh->head;
	off = (uint32_t)(head & (EMU_DUCMA_RING_LEN - 1));
	if (size > EMU_DUCMA_RING_LEN - off) {
		/* the client's wrap record, as emu/link/ucma_link.c writes it */
		struct emu_ducma_rec wrap = { .type = EMU_DUCMA_REC_WRAP };

		memcpy(ring + off, &wrap, sizeof(wrap));
		head += EMU_DUCMA_RING_LEN - off;
		off = 0;
	}
	if (head + size - c->ucma_sh->tail > EMU_DUCMA_RING_LEN)
		return false; /* full: the client would wait */
	memcpy(ring + off, &rec, sizeof(rec));
	if (len)
		memcpy(ring + off + sizeof(rec), body, len);
	__atomic_store_n(&c->ucma_sh->head, head + size, __ATOMIC_RELEASE);
	return true;
}

void fzd_ring_head(unsigned i, uint64_t head)
{
	struct client *c = &d.clients[i];

	if (c->state == CLIENT_UCMA && c->ucma_sh)
		__atomic_store_n(&c->ucma_sh->head, head, __ATOMIC_RELEASE);
}

void fzd_turn(void)
{
	rings_turn(rbuf);
	for (unsigned i = 0; i < FZD_CLIENTS; i++) {
		struct client *c = &d.clients[i];

		if (c->state != CLIENT_FREE) {
			emu_engine_lock(d.e);
			outq_flush(c);
			emu_engine_unlock(d.e);
			emu_dshm_flush(i);
		}
	}
	drain_all();
	if (d.vt && rings_idle() && d.vt_dirty && vt_quiet())
		vt_round();
	drain_all();
}

void fzd_advance(uint64_t ns)
{
	emu_engine_lock(d.e);
	emu_engine_advance(d.e, ns);
	emu_engine_unlock(d.e);
}

void fzd_reset(bool full)
{
	for (unsigned i = 0; i < FZD_CLIENTS; i++)
		fzd_close(i);
	if (!full)
		return;
	close(d.wake[0]);
	close(d.wake[1]);
	emu_engine_reset();
	emu_process_reset();
	free(d.ports);
	free(d.qpn_cursor);
	d.qpn_cursor = NULL;
	setup();
}
