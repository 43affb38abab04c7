/* The neighbour layer in the control API (include/rdmaemu/ctl.h): `ip addr`, `ip link` and
 * `ip neigh flush` on an emulated host. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/net/neigh.h"
#include "rdmaemu/ctl.h"

static emu_neigh_flush_fn *remote_flush;
static emu_neigh_link_fn *remote_link;

void emu_neigh_set_flush_remote(emu_neigh_flush_fn *fn)
{
	__atomic_store_n(&remote_flush, fn, __ATOMIC_RELEASE);
}

void emu_neigh_set_link_remote(emu_neigh_link_fn *fn)
{
	__atomic_store_n(&remote_link, fn, __ATOMIC_RELEASE);
}

/* Host and netdev indices of "node"/"netdev" (NULL node: the attached one). */
static int find(const struct emu_fabric *f, const char *node, const char *netdev, size_t *host,
		int *nd)
{
	const struct emu_host *h;

	if (!node) {
		const char *me = rdmaemu_ctl_node();

		if (!me)
			return -errno;
		node = me;
	}
	h = emu_fabric_find_host(f, node);
	if (!h)
		return -ENOENT;
	*host = (size_t)(h - f->hosts);
	*nd = -1;
	if (!netdev)
		return 0;
	for (size_t i = 0; i < h->nnetdevs; i++)
		if (!strcmp(h->netdevs[i].name, netdev)) {
			*nd = (int)i;
			return 0;
		}
	return -ENOENT;
}

/* "192.0.2.70/28" or "2001:db8::1/64" */
static int parse_prefix(const char *s, struct sockaddr_storage *ss, uint8_t *plen)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long v;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash++ = 0;
	v = strtoul(slash, &end, 10);
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, buf, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		if (*end || end == slash || v > 32)
			return -EINVAL;
	} else if (inet_pton(AF_INET6, buf, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
		if (*end || end == slash || v > 128)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	*plen = (uint8_t)v;
	return 0;
}

static int ret_errno(int rc)
{
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

/* a count, or -1 with errno */
static int ret_errno2(int rc)
{
	return rc < 0 ? ret_errno(rc) : rc;
}

static int addr_op(const char *node, const char *netdev, const char *prefix, bool add)
{
	struct emu_engine *e = emu_engine_get();
	struct sockaddr_storage ss;
	uint8_t plen;
	size_t host;
	int nd, rc;

	if (!e)
		return -1;
	rc = parse_prefix(prefix, &ss, &plen);
	if (rc)
		return ret_errno(rc);
	emu_engine_lock(e);
	rc = find(emu_engine_fabric(e), node, netdev, &host, &nd);
	if (!rc && nd < 0)
		rc = -ENOENT;
	if (!rc)
		rc = add ? emu_neigh_addr_add(e, host, nd, (struct sockaddr *)&ss, plen)
			 : emu_neigh_addr_del(e, host, nd, (struct sockaddr *)&ss, plen);
	emu_engine_unlock(e);
	return ret_errno(rc);
}

int rdmaemu_ctl_addr_add(const char *node, const char *netdev, const char *prefix)
{
	return addr_op(node, netdev, prefix, true);
}

int rdmaemu_ctl_addr_del(const char *node, const char *netdev, const char *prefix)
{
	return addr_op(node, netdev, prefix, false);
}

int rdmaemu_ctl_link_set(const char *node, const char *netdev, int up)
{
	emu_neigh_link_fn *remote = __atomic_load_n(&remote_link, __ATOMIC_ACQUIRE);
	struct emu_engine *e;
	size_t host;
	int nd, rc;

	/* under rdmaemud the host's interfaces and its port's wire are the daemon's */
	if (remote)
		return ret_errno(remote(node, netdev, up != 0));
	e = emu_engine_get();
	if (!e)
		return -1;
	emu_engine_lock(e);
	rc = find(emu_engine_fabric(e), node, netdev, &host, &nd);
	if (!rc && nd < 0)
		rc = -ENOENT;
	if (!rc)
		rc = emu_neigh_link_set(e, host, nd, up != 0);
	emu_engine_unlock(e);
	return ret_errno(rc);
}

int rdmaemu_ctl_neigh_flush(const char *node, const char *netdev)
{
	struct emu_engine *e = emu_engine_get();
	emu_neigh_flush_fn *remote = __atomic_load_n(&remote_flush, __ATOMIC_ACQUIRE);
	size_t host;
	int nd, rc;

	/* under rdmaemud the host's neighbour tables are the daemon's */
	if (remote)
		return ret_errno2(remote(node, netdev));
	if (!e)
		return -1;
	emu_engine_lock(e);
	rc = find(emu_engine_fabric(e), node, netdev, &host, &nd);
	if (!rc)
		rc = emu_neigh_flush(e, host, nd);
	emu_engine_unlock(e);
	return rc < 0 ? ret_errno(rc) : rc;
}
