/* The sysfs files of the emulated devices, as Linux 6.1 writes them for rxe.
 *
 * rdma-core reads a few device facts from sysfs rather than through uverbs (ibv_query_pkey():
 * ports/N/pkeys/I, ibv_get_device_guid() in part), and tools such as
 * ibv_devinfo call ibv_read_sysfs_file() themselves (board_id). The emulated library serves
 * those paths from the fabric model, with the errors the real files give (ENOENT for an entry
 * past the table, EINVAL for an empty GID's type); any other path is read from the real
 * file system, as the real library does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/sim/process.h"
#include "emu/verbs/verbs_priv.h"

#define CLASS_IB "/sys/class/infiniband/"
#define CLASS_UVERBS "/sys/class/infiniband_verbs"

static const char *const port_states[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					   "ACTIVE_DEFER" };
static const char *const phys_states[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					   "PortConfigurationTraining", "LinkUp",
					   "LinkErrorRecovery", "Phy Test" };

static void guid_str(char *out, size_t n, uint64_t g)
{
	snprintf(out, n, "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static bool gid_is_zero(const uint8_t *raw)
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

/* rate_show() of drivers/infiniband/core/sysfs.c. */
static void rate_str(char *out, size_t n, const struct emu_port *p)
{
	int tenths, width;
	const char *sp;

	switch (p->active_speed) {
	case 2: tenths = 50; sp = " DDR"; break;
	case 4: tenths = 100; sp = " QDR"; break;
	case 8: tenths = 100; sp = " FDR10"; break;
	case 16: tenths = 140; sp = " FDR"; break;
	case 32: tenths = 250; sp = " EDR"; break;
	case 64: tenths = 500; sp = " HDR"; break;
	case 128: tenths = 1000; sp = " NDR"; break;
	default: tenths = 25; sp = " SDR"; break;
	}
	switch (p->active_width) {
	case 2: width = 4; break;
	case 4: width = 8; break;
	case 8: width = 12; break;
	default: width = 1; break;
	}
	tenths *= width;
	snprintf(out, n, "%d%s Gb/sec (%dX%s)\n", tenths / 10, tenths % 10 ? ".5" : "", width, sp);
}

/* A file under ports/N/ of a device; 0 with out filled, or an errno. */
static int port_file(const struct emu_port *p, const char *f, char *out, size_t n)
{
	unsigned idx;
	char tail;

	if (!strcmp(f, "state"))
		snprintf(out, n, "%d: %s\n", p->state, p->state < 6 ? port_states[p->state] : "?");
	else if (!strcmp(f, "phys_state"))
		snprintf(out, n, "%d: %s\n", p->phys_state,
			 p->phys_state < 8 ? phys_states[p->phys_state] : "<unknown>");
	else if (!strcmp(f, "link_layer"))
		snprintf(out, n, "%s\n", p->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet"
										  : "InfiniBand");
	else if (!strcmp(f, "rate"))
		rate_str(out, n, p);
	else if (!strcmp(f, "lid"))
		snprintf(out, n, "0x%x\n", p->lid);
	else if (!strcmp(f, "sm_lid"))
		snprintf(out, n, "0x%x\n", p->sm_lid);
	else if (!strcmp(f, "sm_sl"))
		snprintf(out, n, "%u\n", p->sm_sl);
	else if (!strcmp(f, "lid_mask_count"))
		snprintf(out, n, "%u\n", p->lmc);
	else if (!strcmp(f, "cap_mask"))
		snprintf(out, n, "0x%08x\n", 0x00010000u);
	else if (sscanf(f, "pkeys/%u%c", &idx, &tail) == 1) {
		if (idx >= p->pkey_tbl_len)
			return ENOENT;
		snprintf(out, n, "0x%04x\n", idx < p->npkeys ? p->pkeys[idx] : 0);
	} else if (sscanf(f, "gids/%u%c", &idx, &tail) == 1) {
		static const uint8_t zero[16];
		const uint8_t *g = idx < p->ngids ? p->gids[idx].raw : zero;

		if (idx >= p->gid_tbl_len)
			return ENOENT;
		snprintf(out, n, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
			 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12],
			 g[13], g[14], g[15]);
	} else if (sscanf(f, "gid_attrs/types/%u%c", &idx, &tail) == 1) {
		if (idx >= p->gid_tbl_len)
			return ENOENT;
		if (idx >= p->ngids || gid_is_zero(p->gids[idx].raw))
			return EINVAL; /* measured: an empty slot's type reads as EINVAL */
		snprintf(out, n, "%s\n", p->gids[idx].type == EMU_GID_ROCE_V2 ? "RoCE v2"
									   : "IB/RoCE v1");
	} else if (sscanf(f, "gid_attrs/ndevs/%u%c", &idx, &tail) == 1) {
		const struct emu_host *h = p->dev->host;

		if (idx >= p->gid_tbl_len)
			return ENOENT;
		if (idx >= p->ngids || gid_is_zero(p->gids[idx].raw) || p->gids[idx].netdev < 0 ||
		    p->link_layer != IBV_LINK_LAYER_ETHERNET)
			return ENODATA;
		snprintf(out, n, "%s\n", h->netdevs[p->gids[idx].netdev].name);
	} else
		return ENOENT;
	return 0;
}

/* A file under /sys/class/infiniband/<dev>/. */
static int ibdev_file(const struct emu_device *d, const char *f, char *out, size_t n)
{
	unsigned port;
	int off = 0;

	if (!strcmp(f, "node_type"))
		snprintf(out, n, "%d: CA\n", d->node_type);
	else if (!strcmp(f, "node_guid"))
		guid_str(out, n, d->node_guid);
	else if (!strcmp(f, "sys_image_guid"))
		guid_str(out, n, d->sys_image_guid);
	else if (!strcmp(f, "node_desc"))
		snprintf(out, n, "%s\n", d->node_desc);
	else if (!strcmp(f, "fw_ver"))
		snprintf(out, n, "\n"); /* rxe has no firmware version: the file is empty */
	else if (!strcmp(f, "parent")) {
		const struct emu_host *h = d->host;

		for (size_t i = 0; i < h->nnetdevs; i++)
			if (h->netdevs[i].device == (int)(d - h->devices)) {
				snprintf(out, n, "%s\n", h->netdevs[i].name);
				return 0;
			}
		return ENOENT;
	} else if (sscanf(f, "ports/%u/%n", &port, &off) == 1 && off > 0) {
		if (port < 1 || port > d->nports)
			return ENOENT;
		return port_file(&d->ports[port - 1], f + off, out, n);
	} else
		return ENOENT;
	return 0;
}

/* The emulated content of `path`: 0 (out filled), an errno, or -1 when the path is not an
 * emulated one. */
static int emulated_file(const char *path, char *out, size_t n)
{
	const struct emu_host *h;

	if (strncmp(path, "/sys/class/infiniband", 21) != 0)
		return -1;
	h = emu_process_host();
	if (!h)
		return ENOENT;
	if (!strcmp(path, CLASS_UVERBS "/abi_version")) {
		snprintf(out, n, "6\n");
		return 0;
	}
	for (size_t i = 0; i < h->ndevices; i++) {
		const struct emu_device *d = &h->devices[i];
		char dir[128];
		size_t len;

		len = (size_t)snprintf(dir, sizeof(dir), CLASS_IB "%s/", d->name);
		if (!strncmp(path, dir, len))
			return ibdev_file(d, path + len, out, n);
		len = (size_t)snprintf(dir, sizeof(dir), CLASS_UVERBS "/uverbs%zu/", i);
		if (!strncmp(path, dir, len)) {
			if (!strcmp(path + len, "ibdev"))
				snprintf(out, n, "%s\n", d->name);
			else if (!strcmp(path + len, "abi_version"))
				snprintf(out, n, "1\n");
			else
				return ENOENT;
			return 0;
		}
	}
	return ENOENT;
}

/* rdma-core's ibv_read_sysfs_file_at(): strips one trailing newline, fails rather than
 * return an unterminated string. */
static int finish_read(char *buf, size_t size, ssize_t len)
{
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			return -1;
	}
	return (int)len;
}

int emu_sysfs_read(const char *path, char *buf, size_t size)
{
	char content[256];
	int r = emulated_file(path, content, sizeof(content));
	ssize_t len;

	if (r == 0) {
		len = (ssize_t)strlen(content);
		if ((size_t)len > size)
			len = (ssize_t)size;
		memcpy(buf, content, (size_t)len);
		return finish_read(buf, size, len);
	}
	if (r > 0) {
		errno = r;
		return -1;
	}
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -1;
		len = read(fd, buf, size);
		close(fd);
		return finish_read(buf, size, len);
	}
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path;
	int res;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	res = emu_sysfs_read(path, buf, size);
	free(path);
	return res;
}
