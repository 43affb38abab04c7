/* The emulated host's RDMA devices read from the sysfs files the kernel's RDMA core writes
 * (class/infiniband/<dev>/..., class/net/<netdev>/ifindex), in the form RDMA netlink reports. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/host/nl_host.h"

/* rxe's hw counters in the order of its descriptor table, the order netlink reports them in
 * (measured on kernel rxe); sysfs lists them in no set order. */
static const char *const rxe_counter_order[] = {
	"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
	"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err",
	"retry_rnr_exceeded_err", "completer_retry_err", "send_err", "link_downed", "rdma_sends",
	"rdma_recvs",
};
#define N_RXE_COUNTERS (sizeof(rxe_counter_order) / sizeof(rxe_counter_order[0]))

const char *nlh_class_dir(void)
{
	const char *d = getenv("RDMAEMU_HOST_SYSFS");

	return d && *d ? d : "/sys/class";
}

/* A path; an empty one (which opens nothing) if it does not fit. */
static void make_path(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void make_path(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		out[0] = '\0';
}

/* First line of a sysfs file without its newline; -1 if it cannot be read. */
static int read_line(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int read_line(char *out, size_t size, const char *fmt, ...)
{
	char path[4096];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* "0000:00ff:fe00:0101" as the 64-bit number the kernel keeps (big-endian order of the text). */
static uint64_t parse_guid(const char *s)
{
	uint64_t v = 0;

	for (; *s; s++)
		if (isxdigit((unsigned char)*s))
			v = v << 4 | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0'
									: (tolower((unsigned char)*s) - 'a' + 10));
	return v;
}

static uint64_t read_num(const char *dir, const char *file, int base)
{
	char line[256];

	if (read_line(line, sizeof(line), "%s/%s", dir, file))
		return 0;
	return strtoull(line, NULL, base);
}

static int counter_rank(const char *name)
{
	for (size_t i = 0; i < N_RXE_COUNTERS; i++)
		if (!strcmp(rxe_counter_order[i], name))
			return (int)i;
	return (int)N_RXE_COUNTERS;
}

static int counter_cmp(const void *a, const void *b)
{
	const struct nlh_counter *x = a, *y = b;
	int rx = counter_rank(x->name), ry = counter_rank(y->name);

	return rx != ry ? rx - ry : strcmp(x->name, y->name);
}

/* hw_counters/: every file but lifespan (the refresh interval, not a counter). */
static void load_counters(struct nlh_port *p, const char *portdir)
{
	char dir[4096];

	make_path(dir, sizeof(dir), "%s/hw_counters", portdir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	p->has_counters = 1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan") ||
		    strlen(e->d_name) >= NLH_NAME_MAX)
			continue;
		struct nlh_counter *c = realloc(p->counters, (p->ncounters + 1) * sizeof(*c));
		if (!c)
			break;
		p->counters = c;
		c = &p->counters[p->ncounters++];
		memcpy(c->name, e->d_name, strlen(e->d_name) + 1); /* fits: checked above */
		c->value = read_num(dir, e->d_name, 10);
	}
	closedir(d);
	qsort(p->counters, p->ncounters, sizeof(*p->counters), counter_cmp);
}

/* The first 64 bits of GID 0: the subnet prefix of an InfiniBand port. */
static uint64_t subnet_prefix(const char *portdir)
{
	char line[128];

	if (read_line(line, sizeof(line), "%s/gids/0", portdir))
		return 0;
	char *c = line;
	for (int colons = 0; *c; c++)
		if (*c == ':' && ++colons == 4) {
			*c = '\0';
			break;
		}
	return parse_guid(line);
}

static void load_port(struct nlh_port *p, const char *devdir, unsigned num, const char *classdir,
		      const char *netdev)
{
	char dir[4096], line[256];

	make_path(dir, sizeof(dir), "%s/ports/%u", devdir, num);
	p->state = (uint8_t)read_num(dir, "state", 10);
	p->phys_state = (uint8_t)read_num(dir, "phys_state", 10);
	p->ib = !read_line(line, sizeof(line), "%s/link_layer", dir) && !strcmp(line, "InfiniBand");
	p->lid = (uint32_t)read_num(dir, "lid", 16);
	p->sm_lid = (uint32_t)read_num(dir, "sm_lid", 16);
	p->lmc = (uint8_t)read_num(dir, "lid_mask_count", 10);
	p->cap_flags = read_num(dir, "cap_mask", 16);
	if (p->ib)
		p->subnet_prefix = subnet_prefix(dir);
	/* The kernel names the netdev only when it lives in the caller's network namespace: the
	 * netdev's class/net entry is there exactly then. */
	if (netdev[0] && !read_line(line, sizeof(line), "%s/net/%s/ifindex", classdir, netdev)) {
		snprintf(p->netdev, sizeof(p->netdev), "%s", netdev);
		p->ifindex = (uint32_t)strtoul(line, NULL, 10);
	}
	load_counters(p, dir);
}

static unsigned count_ports(const char *devdir)
{
	char dir[4096];
	unsigned n = 0;

	make_path(dir, sizeof(dir), "%s/ports", devdir);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned v = (unsigned)strtoul(e->d_name, NULL, 10);
		if (v > n && v < 256)
			n = v;
	}
	closedir(d);
	return n;
}

static int load_dev(struct nlh_dev *d, const char *classdir, const char *name)
{
	char dir[4096], line[256], netdev[NLH_NAME_MAX] = "";

	make_path(dir, sizeof(dir), "%s/infiniband/%s", classdir, name);
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (!read_line(line, sizeof(line), "%s/node_guid", dir))
		d->node_guid = parse_guid(line);
	if (!read_line(line, sizeof(line), "%s/sys_image_guid", dir))
		d->sys_image_guid = parse_guid(line);
	d->node_type = (uint8_t)read_num(dir, "node_type", 10);
	if (read_line(d->fw_ver, sizeof(d->fw_ver), "%s/fw_ver", dir))
		d->fw_ver[0] = '\0';
	if (!read_line(line, sizeof(line), "%s/parent", dir) && strlen(line) < sizeof(netdev))
		memcpy(netdev, line, strlen(line) + 1);
	d->nports = count_ports(dir);
	d->ports = calloc(d->nports ? d->nports : 1, sizeof(*d->ports));
	if (!d->ports)
		return -ENOMEM;
	for (unsigned p = 0; p < d->nports; p++)
		load_port(&d->ports[p], dir, p + 1, classdir, netdev);
	return 0;
}

/* Devices numbered as the kernel does, in the order they were registered; a generated sysfs
 * registers rxe0, rxe1, ... in that order, so the order is the names' with their numbers
 * compared as numbers. */
static int natural_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t px = strcspn(x, "0123456789"), py = strcspn(y, "0123456789");

	if (px != py || strncmp(x, y, px))
		return strcmp(x, y);
	unsigned long nx = strtoul(x + px, NULL, 10), ny = strtoul(y + py, NULL, 10);
	return nx < ny ? -1 : nx > ny ? 1 : strcmp(x, y);
}

static size_t list_devs(const char *classdir, char ***names)
{
	char dir[4096];
	size_t n = 0;

	*names = NULL;
	make_path(dir, sizeof(dir), "%s/infiniband", classdir);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= NLH_NAME_MAX)
			continue;
		char **v = realloc(*names, (n + 1) * sizeof(*v));
		if (!v)
			break;
		*names = v;
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(*names, n, sizeof(**names), natural_cmp);
	return n;
}

int nlh_host_load(struct nlh_host *h, const char *classdir)
{
	char **names;
	size_t n = list_devs(classdir, &names);
	int rc = 0;

	memset(h, 0, sizeof(*h));
	h->devs = calloc(n ? n : 1, sizeof(*h->devs));
	if (!h->devs)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		h->devs[i].index = (uint32_t)i;
		rc = load_dev(&h->devs[i], classdir, names[i]);
		h->ndev = i + 1;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc)
		nlh_host_free(h);
	return rc;
}

void nlh_host_free(struct nlh_host *h)
{
	for (size_t i = 0; i < h->ndev; i++) {
		for (unsigned p = 0; p < h->devs[i].nports; p++)
			free(h->devs[i].ports[p].counters);
		free(h->devs[i].ports);
	}
	free(h->devs);
	memset(h, 0, sizeof(*h));
}

const struct nlh_dev *nlh_dev_by_index(const struct nlh_host *h, uint32_t index)
{
	for (size_t i = 0; i < h->ndev; i++)
		if (h->devs[i].index == index)
			return &h->devs[i];
	return NULL;
}
