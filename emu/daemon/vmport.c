/* Kernel soft-RoCE VMs as hosts of the emulated wire (emu/daemon/vmport.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "emu/daemon/vmport.h"
#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"

/* Frames held for a guest whose socket is full (the kernel queues net.unix.max_dgram_qlen,
 * 10 by default, datagrams per socket, which a burst of RoCE packets fills at once): past
 * this, frames are dropped as a congested NIC's ring drops them. */
#define VM_QUEUE_MAX_BYTES ((size_t)16 << 20)
/* A burst: frames read from one guest in one turn of the main loop. */
#define VM_BURST 64

struct vm_frame {
	struct vm_frame *next;
	size_t len;
	uint8_t data[];
};

/* Two sockets a port: fd, bound at the path the VM sends to and never connected, so that a
 * VM started again (a new QEMU, a new local path) is heard at once; ofd, connected to the
 * guest's path it learnt, for sending, since poll says POLLOUT on a connected datagram socket
 * only when the receiver's queue has room. */
struct vm_port {
	int fd, ofd;
	size_t host;
	int netdev;
	int ep;
	bool peer; /* the guest's address is known: fd is connected to it */
	struct sockaddr_un path, guest;
	struct vm_frame *q, **q_tail;
	size_t q_bytes;
	uint64_t to_wire, from_wire, dropped;
};

static struct vm_port vms[EMU_DVM_MAX];
static size_t nvms;
static void (*wake_main)(void);

static void queue_drop_all(struct vm_port *v)
{
	while (v->q) {
		struct vm_frame *f = v->q;

		v->q = f->next;
		free(f);
		v->dropped++;
	}
	v->q_tail = &v->q;
	v->q_bytes = 0;
}

/* The guest went away (its socket closed): forget it until a VM speaks again. */
static void peer_forget(struct vm_port *v)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };

	(void)connect(v->ofd, &sa, sizeof(sa));
	v->peer = false;
	v->guest.sun_path[0] = 0;
	queue_drop_all(v);
}

/* One send to the guest: 1 sent, 0 its socket is full, -1 gone or refused. */
static int guest_send(struct vm_port *v, const uint8_t *f, size_t len)
{
	if (send(v->ofd, f, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len) {
		v->from_wire++;
		return 1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
		return 0;
	if (errno == ECONNREFUSED || errno == ENOENT || errno == ENOTCONN)
		peer_forget(v);
	v->dropped++;
	return -1;
}

/* What reaches the VM's endpoint (wire callback, engine lock held). */
static void vm_rx(void *ctx, const uint8_t *frame, size_t len, uint64_t now)
{
	struct vm_port *v = ctx;
	struct vm_frame *f;

	(void)now;
	if (!v->peer) {
		v->dropped++;
		return;
	}
	if (!v->q && guest_send(v, frame, len) != 0)
		return;
	if (v->q_bytes + len > VM_QUEUE_MAX_BYTES || !(f = malloc(sizeof(*f) + len))) {
		v->dropped++;
		return;
	}
	f->next = NULL;
	f->len = len;
	memcpy(f->data, frame, len);
	*v->q_tail = f;
	v->q_tail = &f->next;
	if (v->q == f && wake_main)
		wake_main();
	v->q_bytes += len;
}

static int port_open(struct emu_engine *e, const char *dir, size_t host, size_t nd)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	const struct emu_host *h = &f->hosts[host];
	const struct emu_netdev *n = &h->netdevs[nd];
	struct vm_port *v;
	int ep;

	if (n->device < 0 || !n->port ||
	    h->devices[n->device].ports[n->port - 1].link_layer != EMU_LL_ETHERNET)
		return 0; /* no RDMA port on the wire behind it */
	ep = emu_topology_port_endpoint(emu_engine_topology(e), host, (size_t)n->device, n->port);
	if (ep < 0)
		return 0;
	if (nvms == EMU_DVM_MAX) {
		fprintf(stderr, "rdmaemud: more than %d VM ports\n", EMU_DVM_MAX);
		return -1;
	}
	v = &vms[nvms];
	*v = (struct vm_port){ .host = host, .netdev = (int)nd, .ep = ep, .q_tail = &v->q };
	v->path.sun_family = AF_UNIX;
	if (snprintf(v->path.sun_path, sizeof(v->path.sun_path), "%s/vm-%s-%s.sock", dir, h->name,
		     n->name) >= (int)sizeof(v->path.sun_path)) {
		fprintf(stderr, "rdmaemud: %s/vm-%s-%s.sock: path too long\n", dir, h->name, n->name);
		return -1;
	}
	unlink(v->path.sun_path); /* a dead daemon's socket */
	v->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	v->ofd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (v->fd < 0 || v->ofd < 0 ||
	    bind(v->fd, (struct sockaddr *)&v->path, sizeof(v->path)) ||
	    chmod(v->path.sun_path, 0600)) {
		fprintf(stderr, "rdmaemud: VM port %s: %s\n", v->path.sun_path, strerror(errno));
		if (v->fd >= 0)
			close(v->fd);
		if (v->ofd >= 0)
			close(v->ofd);
		return -1;
	}
	emu_topology_set_rx(emu_engine_topology(e), ep, vm_rx, v);
	nvms++;
	return 0;
}

int emu_dvm_open(struct emu_engine *e, const char *dir, void (*wake)(void))
{
	const struct emu_fabric *f = emu_engine_fabric(e);

	wake_main = wake;
	for (size_t h = 0; h < f->nhosts; h++) {
		size_t before = nvms;

		if (f->hosts[h].kind != EMU_HOST_RXE_VM)
			continue;
		for (size_t nd = 0; nd < f->hosts[h].nnetdevs; nd++)
			if (port_open(e, dir, h, nd))
				return -1;
		if (nvms == before) {
			fprintf(stderr, "rdmaemud: host %s is an rxe-vm host without an Ethernet "
					"netdev on a linked RDMA port: nothing to wire its VM to\n",
				f->hosts[h].name);
			return -1;
		}
	}
	return 0;
}

void emu_dvm_close(void)
{
	for (size_t i = 0; i < nvms; i++) {
		queue_drop_all(&vms[i]);
		close(vms[i].fd);
		close(vms[i].ofd);
		unlink(vms[i].path.sun_path);
	}
	nvms = 0;
}

size_t emu_dvm_poll_set(struct emu_engine *e, struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	if (!nvms)
		return 0; /* a fabric without VMs: the main loop's turn costs nothing more */
	emu_engine_lock(e);
	for (size_t i = 0; i < nvms && n < max; i++) {
		pfd[n++] = (struct pollfd){ .fd = vms[i].fd, .events = POLLIN };
		if (vms[i].q && n < max)
			pfd[n++] = (struct pollfd){ .fd = vms[i].ofd, .events = POLLOUT };
	}
	emu_engine_unlock(e);
	return n;
}

static void queue_flush(struct vm_port *v)
{
	while (v->q) {
		struct vm_frame *f = v->q;
		int r = guest_send(v, f->data, f->len);

		if (!r)
			return;
		if (!v->q)
			return; /* the guest went, the queue with it */
		v->q = f->next;
		if (!v->q)
			v->q_tail = &v->q;
		v->q_bytes -= f->len;
		free(f);
	}
}

/* The guest's address from its datagram: QEMU's bound path; a VM started again speaks from
 * a new one, and frames held for the old one go. Datagrams of an unbound sender (no path to
 * answer to) are not taken. */
static bool peer_learn(struct vm_port *v, const struct sockaddr_un *from, socklen_t fl)
{
	if (fl <= sizeof(sa_family_t) || from->sun_path[0] == 0)
		return false;
	if (v->peer && !strncmp(v->guest.sun_path, from->sun_path, sizeof(from->sun_path)))
		return true;
	queue_drop_all(v);
	if (connect(v->ofd, (const struct sockaddr *)from, fl)) {
		v->peer = false;
		return false;
	}
	memset(&v->guest, 0, sizeof(v->guest));
	memcpy(&v->guest, from, fl);
	v->peer = true;
	return true;
}

static void guest_frames(struct emu_engine *e, struct vm_port *v, uint8_t *buf)
{
	struct emu_wire *w = emu_topology_wire(emu_engine_topology(e));

	for (int burst = 0; burst < VM_BURST; burst++) {
		struct sockaddr_un from;
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(v->fd, buf, EMU_WIRE_MAX_FRAME, MSG_DONTWAIT,
				       (struct sockaddr *)&from, &fl);

		if (len < 0)
			break;
		emu_engine_lock(e);
		if (!peer_learn(v, &from, fl))
			v->dropped++;
		else if (len >= 14 && !emu_wire_send(w, v->ep, buf, (size_t)len))
			v->to_wire++;
		else
			v->dropped++;
		emu_engine_unlock(e); /* runs the zero-delay deliveries now */
	}
}

void emu_dvm_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n, uint8_t *buf)
{
	for (size_t k = 0; k < n; k++) {
		struct vm_port *v = NULL;

		for (size_t i = 0; i < nvms && !v; i++)
			if (vms[i].fd == pfd[k].fd || vms[i].ofd == pfd[k].fd)
				v = &vms[i];
		if (!v || !pfd[k].revents)
			continue;
		if (pfd[k].revents & POLLOUT) {
			emu_engine_lock(e);
			queue_flush(v);
			emu_engine_unlock(e);
		}
		if (pfd[k].revents & POLLIN)
			guest_frames(e, v, buf);
	}
}

size_t emu_dvm_status(const struct emu_engine *e, char *buf, size_t len)
{
	const struct emu_fabric *f = emu_engine_fabric((struct emu_engine *)e);
	size_t n = 0;

	for (size_t i = 0; i < nvms && n < len; i++) {
		const struct vm_port *v = &vms[i];
		int w = snprintf(buf + n, len - n,
				 "vm %s/%s: %s, %llu to the wire, %llu from it, %llu dropped, "
				 "socket %s\n", f->hosts[v->host].name,
				 f->hosts[v->host].netdevs[v->netdev].name,
				 v->peer ? "guest attached" : "no guest", (unsigned long long)v->to_wire,
				 (unsigned long long)v->from_wire, (unsigned long long)v->dropped,
				 v->path.sun_path);

		if (w < 0)
			break;
		n += (size_t)w;
	}
	return n < len ? n : len;
}
