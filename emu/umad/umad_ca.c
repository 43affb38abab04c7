/* CAs and ports as libibumad reads them from sysfs (rdma-core's umad.c: get_ca, get_port,
 * resolve_ca_name), here from the emulated host's sysfs files (emu/hca/sysfs_class.h). */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/sysfs_class.h"
#include "emu/sim/process.h"
#include "emu/umad/umad_priv.h"
#include "util/failcall.h"

#define EXPORT __attribute__((visibility("default")))

int umad_debug_level;

const struct emu_host *umad_host(void)
{
	return emu_process_host();
}

const struct emu_device *umad_device(const struct emu_host *h, const char *name)
{
	if (!h || !name)
		return NULL;
	for (size_t i = 0; i < h->ndevices; i++)
		if (!h->devices[i].removed && !strcmp(h->devices[i].name, name))
			return &h->devices[i];
	return NULL;
}

/* sys_read_string / sys_read_uint of rdma-core: the file's first line; numbers as strtoul
 * with base 0 reads them ("4: ACTIVE" is 4, "40 Gb/sec (4X QDR)" is 40, "0x2" is 2). */
static int sys_string(const struct emu_host *h, char *out, size_t n, const char *fmt, ...)
{
	char path[256], buf[EMU_SYSFS_CONTENT_MAX];
	va_list ap;
	char *nl;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (emu_sysfs_file(h, path, buf, sizeof(buf)))
		return -ENOENT;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	snprintf(out, n, "%s", buf);
	return 0;
}

static int sys_uint(const struct emu_host *h, unsigned *out, const char *dev, int port,
		    const char *file)
{
	char buf[EMU_SYSFS_CONTENT_MAX];

	if (sys_string(h, buf, sizeof(buf), "infiniband/%s/ports/%d/%s", dev, port, file))
		return -EIO;
	*out = (unsigned)strtoul(buf, NULL, 0);
	return 0;
}

/* "xxxx:xxxx:xxxx:xxxx" to a big-endian GUID, as sys_read_guid. */
static uint64_t guid_of(const char *s)
{
	unsigned a = 0, b = 0, c = 0, d = 0;

	sscanf(s, "%x:%x:%x:%x", &a, &b, &c, &d);
	return htobe64((uint64_t)a << 48 | (uint64_t)b << 32 | (uint64_t)c << 16 | d);
}

static int get_port(const struct emu_host *h, const struct emu_device *d, int portnum,
		    umad_port_t *port)
{
	static const struct { size_t off; const char *file; } files[] = {
		{ offsetof(umad_port_t, lmc), "lid_mask_count" },
		{ offsetof(umad_port_t, sm_lid), "sm_lid" },
		{ offsetof(umad_port_t, sm_sl), "sm_sl" },
		{ offsetof(umad_port_t, base_lid), "lid" },
		{ offsetof(umad_port_t, state), "state" },
		{ offsetof(umad_port_t, phys_state), "phys_state" },
		{ offsetof(umad_port_t, rate), "rate" },
	};
	char buf[EMU_SYSFS_CONTENT_MAX];
	unsigned cap, n = 0;
	union umad_gid gid;

	memset(port, 0, sizeof(*port));
	snprintf(port->ca_name, sizeof(port->ca_name), "%.19s", d->name);
	port->portnum = portnum;
	if (portnum < 1 || (size_t)portnum > d->nports)
		return -EIO;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (sys_uint(h, (unsigned *)((char *)port + files[i].off), d->name, portnum,
			     files[i].file))
			return -EIO;
	if (sys_uint(h, &cap, d->name, portnum, "cap_mask"))
		return -EIO;
	port->capmask = htobe32(cap);
	if (sys_string(h, port->link_layer, sizeof(port->link_layer),
		       "infiniband/%s/ports/%d/link_layer", d->name, portnum))
		snprintf(port->link_layer, sizeof(port->link_layer), "IB");
	if (sys_string(h, buf, sizeof(buf), "infiniband/%s/ports/%d/gids/0", d->name, portnum))
		return -EIO;
	for (int i = 0; i < 8; i++) {
		unsigned v = (unsigned)strtoul(buf + 5 * i, NULL, 16);

		gid.raw[2 * i] = (uint8_t)(v >> 8);
		gid.raw[2 * i + 1] = (uint8_t)v;
	}
	port->gid_prefix = gid.global.subnet_prefix;
	port->port_guid = gid.global.interface_id;
	/* the pkeys/ directory holds pkey_tbl_len files */
	n = d->ports[portnum - 1].pkey_tbl_len;
	if (!n)
		return -EIO;
	port->pkeys = emu_calloc(n, sizeof(port->pkeys[0]));
	if (!port->pkeys)
		return -EIO;
	for (unsigned i = 0; i < n; i++) {
		char f[32];
		unsigned v;

		snprintf(f, sizeof(f), "pkeys/%u", i);
		if (sys_uint(h, &v, d->name, portnum, f)) {
			free(port->pkeys);
			port->pkeys = NULL;
			return -EIO;
		}
		port->pkeys[i] = (uint16_t)v;
	}
	port->pkeys_size = n;
	return 0;
}

EXPORT int umad_release_port(umad_port_t *port)
{
	free(port->pkeys);
	port->pkeys = NULL;
	return 0;
}

EXPORT int umad_release_ca(umad_ca_t *ca)
{
	for (int i = 0; i < UMAD_CA_MAX_PORTS; i++) {
		if (!ca->ports[i])
			continue;
		umad_release_port(ca->ports[i]);
		free(ca->ports[i]);
		ca->ports[i] = NULL;
	}
	return 0;
}

static int get_ca(const char *name, umad_ca_t *ca)
{
	const struct emu_host *h = umad_host();
	const struct emu_device *d = umad_device(h, name);
	char buf[EMU_SYSFS_CONTENT_MAX];

	memset(ca, 0, sizeof(*ca));
	snprintf(ca->ca_name, sizeof(ca->ca_name), "%.19s", name);
	if (!d || sys_string(h, buf, sizeof(buf), "infiniband/%s/node_type", name))
		return -ENOENT;
	ca->node_type = (unsigned)strtoul(buf, NULL, 0);
	if (sys_string(h, ca->fw_ver, sizeof(ca->fw_ver), "infiniband/%s/fw_ver", name))
		ca->fw_ver[0] = 0;
	if (sys_string(h, ca->hw_ver, sizeof(ca->hw_ver), "infiniband/%s/hw_rev", name))
		ca->hw_ver[0] = 0;
	if (sys_string(h, ca->ca_type, sizeof(ca->ca_type), "infiniband/%s/hca_type", name))
		ca->ca_type[0] = 0;
	if (sys_string(h, buf, sizeof(buf), "infiniband/%s/node_guid", name))
		return -ENOENT;
	ca->node_guid = guid_of(buf);
	if (sys_string(h, buf, sizeof(buf), "infiniband/%s/sys_image_guid", name))
		return -ENOENT;
	ca->system_guid = guid_of(buf);
	for (size_t p = 1; p <= d->nports && p < UMAD_CA_MAX_PORTS; p++) {
		ca->ports[p] = emu_calloc(1, sizeof(*ca->ports[p]));
		if (!ca->ports[p]) {
			umad_release_ca(ca);
			return -ENOMEM;
		}
		if (get_port(h, d, (int)p, ca->ports[p])) {
			free(ca->ports[p]);
			ca->ports[p] = NULL;
			umad_release_ca(ca);
			return -EIO;
		}
		ca->numports = (int)p;
	}
	return 0;
}

static bool is_ib(const umad_port_t *p)
{
	return !strcmp(p->link_layer, "InfiniBand") || !strcmp(p->link_layer, "IB");
}

/* resolve_ca_port of rdma-core: 1 for an active port, 0 for one that is up or not disabled,
 * -1 for none; *port is set to it. */
static int resolve_port(const char *name, int *port)
{
	int active = -1, up = -1, ret = -1;
	umad_ca_t ca;

	if (get_ca(name, &ca) < 0)
		return -1;
	if (ca.node_type == 2) {
		*port = 0;
		ret = 1;
	} else if (*port > 0) {
		if (*port <= ca.numports && ca.ports[*port] && is_ib(ca.ports[*port]))
			ret = ca.ports[*port]->state == 4 ? 1
			      : ca.ports[*port]->phys_state != 3 ? 0 : -1;
	} else {
		for (int i = 0; i <= ca.numports; i++) {
			if (!ca.ports[i] || !is_ib(ca.ports[i]))
				continue;
			if (up < 0 && ca.ports[i]->phys_state == 5)
				up = *port = i;
			if (ca.ports[i]->state == 4) {
				active = *port = i;
				break;
			}
		}
		if (active < 0 && up < 0)
			for (int i = 0; i <= ca.numports; i++)
				if (ca.ports[i] && ca.ports[i]->phys_state != 3) {
					up = *port = i;
					break;
				}
		ret = active >= 0 ? 1 : up >= 0 ? 0 : -1;
	}
	umad_release_ca(&ca);
	return ret;
}

int umad_resolve(const char *ca_in, int *port, char **name)
{
	const struct emu_host *h = umad_host();
	int found_port = 0, any = 0;
	const char *found = NULL;

	*name = NULL;
	if (ca_in && (!port || *port)) {
		*name = emu_strdup(ca_in);
		return *name ? 0 : -1;
	}
	if (ca_in) {
		if (resolve_port(ca_in, port) < 0)
			return -1;
		*name = emu_strdup(ca_in);
		return *name ? 0 : -1;
	}
	if (!h)
		return -1;
	for (size_t i = 0; i < h->ndevices; i++) {
		const struct emu_device *d = &h->devices[i];
		int p = port ? *port : 0, t;

		if (d->removed)
			continue;
		t = resolve_port(d->name, &p);
		if (t < 0)
			continue;
		if (t > 0) {
			found = d->name;
			found_port = p;
			break;
		}
		if (!any) {
			any = 1;
			found = d->name;
			found_port = p;
		}
	}
	if (!found)
		return -1;
	if (port)
		*port = found_port;
	*name = emu_strdup(found);
	return *name ? 0 : -1;
}

EXPORT int umad_init(void)
{
	return 0;
}

EXPORT int umad_done(void)
{
	return 0;
}

EXPORT struct umad_device_node *umad_get_ca_device_list(void)
{
	const struct emu_host *h = umad_host();
	struct umad_device_node *head = NULL, **tail = &head;

	errno = 0;
	if (!h)
		return NULL;
	for (size_t i = 0; i < h->ndevices; i++) {
		size_t len = strlen(h->devices[i].name) + 1;
		struct umad_device_node *n;

		if (h->devices[i].removed)
			continue;
		n = emu_calloc(1, sizeof(*n) + len);
		if (!n) {
			while (head) {
				n = head->next;
				free(head);
				head = n;
			}
			errno = ENOMEM;
			return NULL;
		}
		memcpy(n + 1, h->devices[i].name, len);
		n->ca_name = (const char *)(n + 1);
		*tail = n;
		tail = &n->next;
	}
	return head;
}

EXPORT void umad_free_ca_device_list(struct umad_device_node *head)
{
	while (head) {
		struct umad_device_node *n = head->next;

		free(head);
		head = n;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct umad_device_node *const *)a)->ca_name,
		      (*(struct umad_device_node *const *)b)->ca_name);
}

EXPORT int umad_sort_ca_device_list(struct umad_device_node **head, size_t size)
{
	struct umad_device_node **v, *n;
	size_t i = 0;

	if (!size)
		for (n = *head; n; n = n->next)
			size++;
	if (!size)
		return 0;
	v = emu_calloc(size, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (n = *head; n && i < size; n = n->next)
		v[i++] = n;
	qsort(v, i, sizeof(*v), by_name);
	for (size_t j = 0; j + 1 < i; j++)
		v[j]->next = v[j + 1];
	v[i - 1]->next = NULL;
	*head = v[0];
	free(v);
	return 0;
}

/* scandir with alphasort in rdma-core: the names in order, at most max. */
EXPORT int umad_get_cas_names(char cas[][UMAD_CA_NAME_LEN], int max)
{
	struct umad_device_node *list = umad_get_ca_device_list(), *n;
	int j = 0;

	umad_sort_ca_device_list(&list, 0);
	for (n = list; n; n = n->next)
		if (j < max && strlen(n->ca_name) < UMAD_CA_NAME_LEN)
			strcpy(cas[j++], n->ca_name);
	umad_free_ca_device_list(list);
	return j;
}

EXPORT int umad_get_ca(const char *ca_name, umad_ca_t *ca)
{
	char *name;
	int r;

	if (umad_resolve(ca_name, NULL, &name) < 0)
		return -ENODEV;
	r = get_ca(name, ca);
	free(name);
	return r < 0 ? r : 0;
}

EXPORT int umad_get_port(const char *ca_name, int portnum, umad_port_t *port)
{
	const struct emu_device *d;
	char *name;
	int r;

	if (umad_resolve(ca_name, &portnum, &name) < 0)
		return -ENODEV;
	d = umad_device(umad_host(), name);
	r = d ? get_port(umad_host(), d, portnum, port) : -ENODEV;
	free(name);
	return r;
}

EXPORT int umad_get_ca_portguids(const char *ca_name, uint64_t *portguids, int max)
{
	umad_ca_t ca;
	char *name;
	int r;

	if (umad_resolve(ca_name, NULL, &name) < 0)
		return -ENODEV;
	r = get_ca(name, &ca);
	free(name);
	if (r < 0)
		return -1;
	r = ca.numports + 1;
	if (portguids) {
		if (ca.numports + 1 > max)
			r = -ENOMEM;
		else
			for (int i = 0; i <= ca.numports; i++)
				portguids[i] = ca.ports[i] ? ca.ports[i]->port_guid : 0;
	}
	umad_release_ca(&ca);
	return r;
}

/* The issmN node of the port: its number among the host's ports (emu_sysfs_devnodes). */
EXPORT int umad_get_issm_path(const char *ca_name, int portnum, char path[], int max)
{
	const struct emu_host *h = umad_host();
	size_t num = 0;
	char *name;
	int r = -ENODEV;

	if (umad_resolve(ca_name, &portnum, &name) < 0)
		return -ENODEV;
	for (size_t i = 0; h && i < h->ndevices; i++) {
		if (!strcmp(h->devices[i].name, name) && portnum >= 1 &&
		    (size_t)portnum <= h->devices[i].nports) {
			snprintf(path, (size_t)max, "/dev/infiniband/issm%zu", num + (size_t)portnum - 1);
			r = 0;
			break;
		}
		num += h->devices[i].nports;
	}
	free(name);
	return r;
}
