/* Tap devices of host sandboxes on the emulated wire (emu/daemon/tap.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/daemon/tap.h"
#include "emu/hca/engine_rx.h"
#include "emu/net/neigh.h"
#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "emu/sim/topology.h"
#include "emu/sim/wire.h"

/* A burst: frames read from one tap in one turn of the main loop. */
#define TAP_BURST 64

struct tap {
	bool used;
	int fd;
	unsigned owner;
	size_t host;
	int netdev;
	size_t dev;
	unsigned port;
	int ep;
	uint8_t mac[6];
	uint64_t to_wire, from_wire, dropped;
};

/* The receiver that stood on a port's EMU_RX_NET class before its first tap came, passed on
 * to and put back when its last tap goes. */
struct tap_port {
	bool used;
	size_t host, dev;
	unsigned port;
	emu_wire_rx_fn *next_fn;
	void *next_ctx;
	unsigned ntaps;
};

static struct tap taps[EMU_DTAP_MAX];
static struct tap_port ports[EMU_DTAP_MAX];

static struct tap_port *port_find(size_t host, size_t dev, unsigned port)
{
	for (size_t i = 0; i < EMU_DTAP_MAX; i++)
		if (ports[i].used && ports[i].host == host && ports[i].dev == dev &&
		    ports[i].port == port)
			return &ports[i];
	return NULL;
}

/* Non-RoCE frames reaching a port with taps (wire callback, engine lock held). */
static void port_rx(void *ctx, const uint8_t *f, size_t len, uint64_t now)
{
	struct tap_port *p = ctx;

	for (size_t i = 0; len >= 14 && i < EMU_DTAP_MAX; i++) {
		struct tap *t = &taps[i];

		if (!t->used || t->host != p->host || t->dev != p->dev || t->port != p->port)
			continue;
		if (!(f[0] & 1) && memcmp(f, t->mac, 6))
			continue;
		/* the tap's queue is the kernel's: a full one drops, as a NIC's ring does */
		if (write(t->fd, f, len) == (ssize_t)len)
			t->from_wire++;
		else
			t->dropped++;
	}
	if (p->next_fn)
		p->next_fn(p->next_ctx, f, len, now);
}

static int port_hold(struct emu_engine *e, struct tap *t)
{
	struct tap_port *p = port_find(t->host, t->dev, t->port);
	int rc;

	if (!p) {
		for (size_t i = 0; i < EMU_DTAP_MAX && !p; i++)
			if (!ports[i].used)
				p = &ports[i];
		if (!p)
			return -ENOSPC;
		*p = (struct tap_port){ .host = t->host, .dev = t->dev, .port = t->port };
		rc = emu_engine_port_get_rx_class(e, t->host, t->dev, t->port, EMU_RX_NET,
						  &p->next_fn, &p->next_ctx);
		if (!rc)
			rc = emu_engine_port_set_rx_class(e, t->host, t->dev, t->port, EMU_RX_NET,
							  port_rx, p);
		if (rc)
			return rc;
		p->used = true;
	}
	p->ntaps++;
	return 0;
}

static void port_release(struct emu_engine *e, const struct tap *t)
{
	struct tap_port *p = port_find(t->host, t->dev, t->port);

	if (!p || --p->ntaps)
		return;
	emu_engine_port_set_rx_class(e, p->host, p->dev, p->port, EMU_RX_NET, p->next_fn,
				     p->next_ctx);
	p->used = false;
}

/* The netdev's index on the host, its port's endpoint and MAC into t; 0 or an errno. */
static int netdev_place(struct emu_engine *e, size_t host, const char *name, struct tap *t)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	const struct emu_host *h;
	const struct emu_netdev *nd = NULL;

	if (host >= f->nhosts)
		return -ENOENT;
	h = &f->hosts[host];
	for (size_t i = 0; i < h->nnetdevs && !nd; i++)
		if (!strcmp(h->netdevs[i].name, name)) {
			nd = &h->netdevs[i];
			t->netdev = (int)i;
		}
	if (!nd)
		return -ENOENT;
	if (nd->device < 0 || !nd->port || nd->hwaddr_len != 6 ||
	    h->devices[nd->device].ports[nd->port - 1].link_layer != EMU_LL_ETHERNET)
		return -ENODEV;
	t->dev = (size_t)nd->device;
	t->port = nd->port;
	t->ep = emu_topology_port_endpoint(emu_engine_topology(e), host, t->dev, t->port);
	if (t->ep < 0)
		return -ENODEV;
	memcpy(t->mac, nd->hwaddr, 6);
	return 0;
}

int emu_dtap_attach(struct emu_engine *e, size_t host, const char *netdev, int fd,
		    unsigned owner)
{
	struct tap n = { .fd = fd, .owner = owner, .host = host }, *slot = NULL;
	int rc = netdev_place(e, host, netdev, &n);

	for (size_t i = 0; !rc && i < EMU_DTAP_MAX; i++) {
		if (taps[i].used && taps[i].host == host && taps[i].netdev == n.netdev)
			rc = -EBUSY;
		else if (!taps[i].used && !slot)
			slot = &taps[i];
	}
	if (!rc && !slot)
		rc = -ENOSPC;
	if (!rc && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		rc = -errno;
	if (!rc)
		rc = port_hold(e, &n);
	if (rc) {
		close(fd);
		return rc;
	}
	n.used = true;
	*slot = n;
	emu_neigh_set_replies(e, host, n.netdev, false);
	return 0;
}

static void tap_close(struct emu_engine *e, struct tap *t)
{
	emu_neigh_set_replies(e, t->host, t->netdev, true);
	port_release(e, t);
	close(t->fd);
	t->used = false;
}

void emu_dtap_close_owner(struct emu_engine *e, unsigned owner)
{
	for (size_t i = 0; i < EMU_DTAP_MAX; i++)
		if (taps[i].used && taps[i].owner == owner)
			tap_close(e, &taps[i]);
}

size_t emu_dtap_poll_set(struct pollfd *pfd, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < EMU_DTAP_MAX && n < max; i++)
		if (taps[i].used)
			pfd[n++] = (struct pollfd){ .fd = taps[i].fd, .events = POLLIN };
	return n;
}

static struct tap *tap_of_fd(int fd)
{
	for (size_t i = 0; i < EMU_DTAP_MAX; i++)
		if (taps[i].used && taps[i].fd == fd)
			return &taps[i];
	return NULL;
}

void emu_dtap_turn(struct emu_engine *e, const struct pollfd *pfd, size_t n, uint8_t *buf)
{
	struct emu_wire *w = emu_topology_wire(emu_engine_topology(e));

	for (size_t k = 0; k < n; k++) {
		struct tap *t = tap_of_fd(pfd[k].fd);

		if (!t || !pfd[k].revents)
			continue;
		for (int burst = 0; burst < TAP_BURST; burst++) {
			ssize_t len = read(t->fd, buf, EMU_WIRE_MAX_FRAME);

			if (len < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (len <= 0) {
				/* the sandbox's network namespace is gone, and the tap with it */
				emu_engine_lock(e);
				tap_close(e, t);
				emu_engine_unlock(e);
				break;
			}
			if (len < 14)
				continue;
			emu_engine_lock(e);
			if (!emu_wire_send(w, t->ep, buf, (size_t)len))
				t->to_wire++;
			else
				t->dropped++;
			emu_engine_unlock(e); /* runs the zero-delay deliveries now */
		}
	}
}

size_t emu_dtap_status(const struct emu_engine *e, char *buf, size_t len)
{
	const struct emu_fabric *f = emu_engine_fabric((struct emu_engine *)e);
	size_t n = 0;

	for (size_t i = 0; i < EMU_DTAP_MAX && n < len; i++) {
		const struct tap *t = &taps[i];
		int w;

		if (!t->used)
			continue;
		w = snprintf(buf + n, len - n, "tap %s/%s: %llu to the wire, %llu from it, %llu dropped\n",
			     f->hosts[t->host].name, f->hosts[t->host].netdevs[t->netdev].name,
			     (unsigned long long)t->to_wire, (unsigned long long)t->from_wire,
			     (unsigned long long)t->dropped);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return n < len ? n : len;
}
