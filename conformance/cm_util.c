/* Helpers of the CM-id cases (cm_util.h). */
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

struct rdma_cm_id *cm_dummy_id(int fd)
{
	static struct rdma_event_channel ch;
	struct rdma_cm_id *id = calloc(1, 8192);

	if (!id)
		conf_fatal("out of memory");
	ch.fd = fd;
	id->channel = &ch;
	return id;
}

void cm_ipv4(const char *text, uint16_t port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, text, &sin->sin_addr) != 1)
		conf_fatal("bad address %s", text);
}

void cm_local_ipv4(unsigned idx, uint16_t port, struct sockaddr_in *sin,
		   struct ibv_context **verbs)
{
	if (!cm_local_ipv4_try(idx, port, sin, verbs))
		conf_notrun("needs %u RDMA port(s) with an IPv4 address", idx + 1);
}

/* The context of the device that owns `sin`: an id bound to it, kept for the rest of the case
 * (whether a library keeps a context open without ids is its own business). NULL if none. */
static struct ibv_context *addr_device(const struct sockaddr_in *sin)
{
	struct rdma_cm_id *id;
	struct sockaddr_in a = *sin;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return NULL;
	a.sin_port = 0;
	if (rdma_bind_addr(id, (struct sockaddr *)&a)) {
		rdma_destroy_id(id);
		return NULL;
	}
	return id->verbs;
}

/* The address a variant or --local names instead of the GID-table scan (idx 0 only). */
static const char *local_override(void)
{
	const struct conf_variant *v = conf_variant();

	if (v && v->local && conf_target() == TARGET_EMU)
		return v->local;
	return conf_local_addr();
}

bool cm_local_ipv4_try(unsigned idx, uint16_t port, struct sockaddr_in *sin,
		       struct ibv_context **verbs)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct ibv_context **list;
	uint8_t seen[16][4];
	unsigned found = 0;
	int n = 0;

	if (local_override()) {
		if (idx)
			return false;
		cm_ipv4(local_override(), port, sin);
		if (verbs && !(*verbs = addr_device(sin)))
			return false;
		return true;
	}

	list = rdma_get_devices(&n);
	if (!list)
		conf_fatal("rdma_get_devices: %s", conf_errno_name(errno));
	for (int d = 0; d < n; d++) {
		struct ibv_port_attr pa;

		if (ibv_query_port(list[d], 1, &pa))
			continue;
		for (int g = 0; g < pa.gid_tbl_len; g++) {
			union ibv_gid gid;

			bool dup = false;

			if (ibv_query_gid(list[d], 1, g, &gid) ||
			    memcmp(gid.raw, v4mapped, sizeof v4mapped))
				continue;
			/* RoCE v1 and v2 entries repeat an address */
			for (unsigned k = 0; k < found && k < 16; k++)
				dup = dup || !memcmp(seen[k], gid.raw + 12, 4);
			if (dup)
				continue;
			if (found < 16)
				memcpy(seen[found], gid.raw + 12, 4);
			if (found++ != idx)
				continue;
			memset(sin, 0, sizeof *sin);
			sin->sin_family = AF_INET;
			sin->sin_port = htons(port);
			memcpy(&sin->sin_addr, gid.raw + 12, 4);
			if (verbs)
				*verbs = list[d];
			rdma_free_devices(list);
			return true;
		}
	}
	rdma_free_devices(list);
	return false;
}

struct rdma_event_channel *cm_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		conf_fatal("rdma_create_event_channel: %s", conf_errno_name(errno));
	return ch;
}

struct rdma_cm_id *cm_id(struct rdma_event_channel *ch, enum rdma_port_space ps)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, ps))
		conf_fatal("rdma_create_id(ps 0x%x): %s", ps, conf_errno_name(errno));
	return id;
}

int cm_readable(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

cm_write_event_fn cm_write_event(void)
{
	cm_write_event_fn fn = (cm_write_event_fn)dlsym(RTLD_DEFAULT, "rdma_write_cm_event");

	if (!fn)
		conf_notrun("needs rdma_write_cm_event (rdma-core >= v60)");
	return fn;
}

void cm_peer_ipv4(uint16_t port, struct sockaddr_in *sin)
{
	const struct conf_variant *v = conf_variant();

	if (v && v->peer && conf_target() == TARGET_EMU) {
		cm_ipv4(v->peer, port, sin); /* the variant's own fabric: B */
		return;
	}
	/* the system target: the active half connects to --peer; the passive half (--passive)
	 * listens on its own address */
	if (cm_role() == CM_ACTIVE) {
		cm_ipv4(conf_peer_addr(), port, sin);
		return;
	}
	cm_local_ipv4(0, port, sin, NULL);
}

void cm_as_peer(bool on)
{
	const struct conf_variant *v = conf_variant();
	int (*cm_host)(const char *);

	if (!v || !v->peer_node || conf_target() != TARGET_EMU)
		return;
	cm_host = (int (*)(const char *))conf_ctl_sym("rdmaemu_ctl_cm_host");
	if (!cm_host || cm_host(on ? v->peer_node : NULL))
		conf_fatal("rdmaemu_ctl_cm_host(%s): %s", on ? v->peer_node : "NULL",
			   conf_errno_name(errno));
}

enum cm_role cm_role(void)
{
	const struct conf_variant *v = conf_variant();

	if (!v || !v->peer_node || conf_target() == TARGET_EMU)
		return CM_BOTH;
	return conf_passive() ? CM_PASSIVE : CM_ACTIVE;
}

void cm_need_both_roles(void)
{
	if (cm_role() != CM_BOTH)
		conf_notrun("this case runs both ends in one process (no split into active and "
			    "passive halves yet)");
}
