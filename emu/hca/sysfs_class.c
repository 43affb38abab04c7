/* The RDMA core's sysfs classes and /dev/infiniband nodes of a host's rxe devices, from the
 * fabric model: the names, modes and contents kernel rxe on Linux 6.1 shows, as measured in the
 * reference VM (docs/reference/kernel-rxe-sysfs.md). The file list (emu_sysfs_walk) and the
 * contents (emu_sysfs_file) are kept side by side so that every listed file has content. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "emu/hca/sysfs_class.h"

/* ib_uverbs's and ib_umad's ABI versions (the class files), rxe's uverbs ABI (uverbsN's) */
#define UVERBS_CLASS_ABI 6
#define RXE_UVERBS_ABI 2
#define UMAD_CLASS_ABI 5
/* ib_umad and ib_uverbs share char major 231: umadN at minor N, issmN at 64 + N, uverbsN at
 * 192 + N; rdma_ucm is the misc device 10:124 */
#define IB_CHAR_MAJOR 231
#define ISSM_MINOR_BASE 64
#define UVERBS_MINOR_BASE 192
/* rdma_alloc_hw_stats' default lifespan of rxe's counters, in milliseconds */
#define HW_STATS_LIFESPAN 12

static const char *const port_states[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					   "ACTIVE_DEFER" };
static const char *const phys_states[] = { "<unknown>", "Sleep", "Polling", "Disabled",
					   "PortConfigurationTraining", "LinkUp",
					   "LinkErrorRecovery", "Phy Test" };

/* ports/N/'s plain files */
static const char *const port_files[] = { "cap_mask", "lid", "lid_mask_count", "link_layer",
					  "phys_state", "rate", "sm_lid", "sm_sl", "state" };
/* ib_cm's counter groups on every port, each with one file per CM message */
static const char *const cm_groups[] = { "cm_rx_duplicates", "cm_rx_msgs", "cm_tx_msgs",
					 "cm_tx_retries" };
static const char *const cm_msgs[] = { "apr", "drep", "dreq", "lap", "mra", "rej", "rep",
				       "req", "rtu", "sidr_rep", "sidr_req" };
/* rxe's port counters (rxe_hw_counters.c) */
static const char *const hw_counters[] = {
	"ack_deferred", "completer_retry_err", "duplicate_request", "lifespan", "link_downed",
	"out_of_seq_request", "rcvd_pkts", "rcvd_rnr_err", "rcvd_seq_err", "rdma_recvs",
	"rdma_sends", "retry_exceeded_err", "retry_rnr_exceeded_err", "send_err",
	"send_rnr_err", "sent_pkts",
};
/* the driver core's power/ group of a device without runtime PM */
static const struct {
	const char *name, *content; /* NULL content: the read fails with EIO */
	unsigned mode;
} power_files[] = {
	{ "async", "disabled\n", 0644 },
	{ "autosuspend_delay_ms", NULL, 0644 },
	{ "control", "auto\n", 0644 },
	{ "runtime_active_kids", "0\n", 0444 },
	{ "runtime_active_time", "0\n", 0444 },
	{ "runtime_enabled", "disabled\n", 0444 },
	{ "runtime_status", "unsupported\n", 0444 },
	{ "runtime_suspended_time", "0\n", 0444 },
	{ "runtime_usage", "0\n", 0444 },
};
/* the device directory's files besides ports/, power/ and subsystem */
static const struct {
	const char *name;
	unsigned mode;
} ibdev_files[] = {
	{ "fw_ver", 0444 }, { "node_desc", 0644 }, { "node_guid", 0444 },
	{ "node_type", 0444 }, { "parent", 0444 }, { "sys_image_guid", 0444 },
	{ "uevent", 0644 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool in_list(const char *const *l, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

static bool gid_is_zero(const uint8_t *raw)
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

/* The place of port p of device index di among all ports of h's devices: the N of umadN. */
static unsigned port_ordinal(const struct emu_host *h, size_t di, unsigned port)
{
	unsigned n = 0;

	for (size_t i = 0; i < di; i++)
		n += (unsigned)h->devices[i].nports;
	return n + port - 1;
}

static const struct emu_device *find_device(const struct emu_host *h, const char *name,
					    size_t len)
{
	for (size_t i = 0; i < h->ndevices; i++) {
		const struct emu_device *d = &h->devices[i];

		if (!d->removed && strlen(d->name) == len && !strncmp(d->name, name, len))
			return d;
	}
	return NULL;
}

/* ---- contents ---------------------------------------------------------------------------- */

static void guid_str(char *out, size_t n, uint64_t g)
{
	snprintf(out, n, "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
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

static int power_file(const char *f, char *out, size_t n)
{
	for (size_t i = 0; i < N(power_files); i++)
		if (!strcmp(f, power_files[i].name)) {
			if (!power_files[i].content)
				return EIO;
			snprintf(out, n, "%s", power_files[i].content);
			return 0;
		}
	return ENOENT;
}

/* A GID table entry's files: gids/I, gid_attrs/types/I, gid_attrs/ndevs/I. */
static int gid_file(const struct emu_port *p, const char *what, unsigned idx, char *out,
		    size_t n)
{
	static const uint8_t zero[16];
	const uint8_t *g = idx < p->ngids ? p->gids[idx].raw : zero;

	if (idx >= p->gid_tbl_len)
		return ENOENT;
	if (!strcmp(what, "gids")) {
		snprintf(out, n, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
			 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11],
			 g[12], g[13], g[14], g[15]);
		return 0;
	}
	/* measured: an empty slot's type and netdev both read as EINVAL; a GID without a netdev
	 * (an IB port's) has no netdev to name either */
	if (gid_is_zero(g))
		return EINVAL;
	if (!strcmp(what, "gid_attrs/types")) {
		snprintf(out, n, "%s\n", p->gids[idx].type == EMU_GID_ROCE_V2 ? "RoCE v2"
									   : "IB/RoCE v1");
		return 0;
	}
	if (p->gids[idx].netdev < 0 || p->link_layer != IBV_LINK_LAYER_ETHERNET)
		return EINVAL;
	snprintf(out, n, "%s\n", p->dev->host->netdevs[p->gids[idx].netdev].name);
	return 0;
}

static int port_plain_file(const struct emu_port *p, const char *f, char *out, size_t n)
{
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
		snprintf(out, n, "0x%08x\n", 0x00010000u); /* IsDeviceManagementSupported */
	else
		return ENOENT;
	return 0;
}

/* A file under ports/N/ of a device. */
static int port_file(const struct emu_port *p, const char *f, char *out, size_t n)
{
	char group[32], name[32];
	unsigned idx;
	int off = 0;

	if (sscanf(f, "pkeys/%u%n", &idx, &off) == 1 && !f[off]) {
		if (idx >= p->pkey_tbl_len)
			return ENOENT;
		snprintf(out, n, "0x%04x\n", idx < p->npkeys ? p->pkeys[idx] : 0);
		return 0;
	}
	if (sscanf(f, "gids/%u%n", &idx, &off) == 1 && !f[off])
		return gid_file(p, "gids", idx, out, n);
	if (sscanf(f, "gid_attrs/types/%u%n", &idx, &off) == 1 && !f[off])
		return gid_file(p, "gid_attrs/types", idx, out, n);
	if (sscanf(f, "gid_attrs/ndevs/%u%n", &idx, &off) == 1 && !f[off])
		return gid_file(p, "gid_attrs/ndevs", idx, out, n);
	if (sscanf(f, "%31[a-z_]/%31[a-z_]%n", group, name, &off) == 2 && !f[off]) {
		if (!strcmp(group, "hw_counters") && in_list(hw_counters, N(hw_counters), name))
			snprintf(out, n, "%d\n", !strcmp(name, "lifespan") ? HW_STATS_LIFESPAN : 0);
		else if (in_list(cm_groups, N(cm_groups), group) && in_list(cm_msgs, N(cm_msgs), name))
			snprintf(out, n, "0\n");
		else
			return ENOENT;
		return 0;
	}
	return port_plain_file(p, f, out, n);
}

/* A file under infiniband/<dev>/. */
static int ibdev_file(const struct emu_device *d, const char *f, char *out, size_t n)
{
	const struct emu_host *h = d->host;
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
		snprintf(out, n, "\n"); /* rxe has no firmware version: the file is one newline */
	else if (!strcmp(f, "uevent"))
		snprintf(out, n, "NAME=%s\n", d->name);
	else if (!strncmp(f, "power/", 6))
		return power_file(f + 6, out, n);
	else if (!strcmp(f, "parent")) {
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

/* A file under infiniband_verbs/uverbsN/. */
static int uverbs_file(const struct emu_host *h, unsigned num, const char *f, char *out,
		       size_t n)
{
	const struct emu_device *d = num < h->ndevices ? &h->devices[num] : NULL;

	if (!d || d->removed)
		return ENOENT;
	if (!strcmp(f, "ibdev"))
		snprintf(out, n, "%s\n", d->name);
	else if (!strcmp(f, "abi_version"))
		snprintf(out, n, "%d\n", RXE_UVERBS_ABI);
	else if (!strcmp(f, "dev"))
		snprintf(out, n, "%d:%u\n", IB_CHAR_MAJOR, UVERBS_MINOR_BASE + num);
	else if (!strcmp(f, "uevent"))
		snprintf(out, n, "MAJOR=%d\nMINOR=%u\nDEVNAME=infiniband/uverbs%u\nDEVMODE=0666\n",
			 IB_CHAR_MAJOR, UVERBS_MINOR_BASE + num, num);
	else if (!strncmp(f, "power/", 6))
		return power_file(f + 6, out, n);
	else
		return ENOENT;
	return 0;
}

/* A file under infiniband_mad/umadN/ or issmN/. */
static int umad_file(const struct emu_host *h, bool issm, unsigned num, const char *f,
		     char *out, size_t n)
{
	unsigned minor = issm ? ISSM_MINOR_BASE + num : num;

	for (size_t i = 0; i < h->ndevices; i++) {
		const struct emu_device *d = &h->devices[i];
		unsigned first = port_ordinal(h, i, 1);

		if (num < first || num >= first + d->nports)
			continue;
		if (d->removed)
			return ENOENT;
		if (!strcmp(f, "ibdev"))
			snprintf(out, n, "%s\n", d->name);
		else if (!strcmp(f, "port"))
			snprintf(out, n, "%u\n", num - first + 1);
		else if (!strcmp(f, "dev"))
			snprintf(out, n, "%d:%u\n", IB_CHAR_MAJOR, minor);
		else if (!strcmp(f, "uevent"))
			snprintf(out, n, "MAJOR=%d\nMINOR=%u\nDEVNAME=infiniband/%s%u\n",
				 IB_CHAR_MAJOR, minor, issm ? "issm" : "umad", num);
		else if (!strncmp(f, "power/", 6))
			return power_file(f + 6, out, n);
		else
			return ENOENT;
		return 0;
	}
	return ENOENT;
}

int emu_sysfs_file(const struct emu_host *h, const char *path, char *out, size_t n)
{
	unsigned num;
	int off = 0;

	if (!strcmp(path, "infiniband_verbs/abi_version")) {
		snprintf(out, n, "%d\n", UVERBS_CLASS_ABI);
		return 0;
	}
	if (!strcmp(path, "infiniband_mad/abi_version")) {
		snprintf(out, n, "%d\n", UMAD_CLASS_ABI);
		return 0;
	}
	if (sscanf(path, "infiniband_verbs/uverbs%u/%n", &num, &off) == 1 && off > 0)
		return uverbs_file(h, num, path + off, out, n);
	if (sscanf(path, "infiniband_mad/umad%u/%n", &num, &off) == 1 && off > 0)
		return umad_file(h, false, num, path + off, out, n);
	if (sscanf(path, "infiniband_mad/issm%u/%n", &num, &off) == 1 && off > 0)
		return umad_file(h, true, num, path + off, out, n);
	if (!strncmp(path, "infiniband/", 11)) {
		const char *name = path + 11, *slash = strchr(name, '/');
		const struct emu_device *d;

		if (!slash)
			return ENOENT;
		d = find_device(h, name, (size_t)(slash - name));
		return d ? ibdev_file(d, slash + 1, out, n) : ENOENT;
	}
	return ENOENT;
}

/* ---- the listing ------------------------------------------------------------------------- */

struct walk {
	int (*fn)(void *arg, const struct emu_sysfs_entry *e);
	void *arg;
	char path[256];
};

/* Visits one entry whose path is printf(fmt, ...). */
static int emit(struct walk *w, enum emu_sysfs_kind kind, unsigned mode, const char *target,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int emit(struct walk *w, enum emu_sysfs_kind kind, unsigned mode, const char *target,
		const char *fmt, ...)
{
	struct emu_sysfs_entry e = { .path = w->path, .kind = kind, .mode = mode,
				     .target = target };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->path, sizeof(w->path), fmt, ap);
	va_end(ap);
	return w->fn(w->arg, &e);
}

/* The power/ group and the subsystem link of the device directory `dir` of class `cls`. */
static int walk_devdir_common(struct walk *w, const char *cls, const char *dir)
{
	char target[64];
	int r;

	snprintf(target, sizeof(target), "../../%s", cls);
	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s/%s/power", cls, dir)))
		return r;
	for (size_t i = 0; i < N(power_files); i++)
		if ((r = emit(w, EMU_SYSFS_FILE, power_files[i].mode, NULL, "%s/%s/power/%s", cls,
			      dir, power_files[i].name)))
			return r;
	return emit(w, EMU_SYSFS_LINK, 0777, target, "%s/%s/subsystem", cls, dir);
}

/* A numbered table of port p (pkeys, gids, gid_attrs/types, gid_attrs/ndevs). */
static int walk_table(struct walk *w, const char *pdir, const char *what, uint32_t len)
{
	int r;

	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s/%s", pdir, what)))
		return r;
	for (uint32_t i = 0; i < len; i++)
		if ((r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "%s/%s/%u", pdir, what, i)))
			return r;
	return 0;
}

static int walk_port(struct walk *w, const struct emu_device *d, const struct emu_port *p)
{
	char pdir[128];
	int r;

	snprintf(pdir, sizeof(pdir), "infiniband/%s/ports/%u", d->name, p->num);
	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s", pdir)))
		return r;
	for (size_t i = 0; i < N(port_files); i++)
		if ((r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "%s/%s", pdir, port_files[i])))
			return r;
	for (size_t g = 0; g < N(cm_groups); g++) {
		if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s/%s", pdir, cm_groups[g])))
			return r;
		for (size_t i = 0; i < N(cm_msgs); i++)
			if ((r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "%s/%s/%s", pdir, cm_groups[g],
				      cm_msgs[i])))
				return r;
	}
	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s/hw_counters", pdir)))
		return r;
	for (size_t i = 0; i < N(hw_counters); i++)
		if ((r = emit(w, EMU_SYSFS_FILE, !strcmp(hw_counters[i], "lifespan") ? 0644 : 0444,
			      NULL, "%s/hw_counters/%s", pdir, hw_counters[i])))
			return r;
	if ((r = walk_table(w, pdir, "pkeys", p->pkey_tbl_len)) ||
	    (r = walk_table(w, pdir, "gids", p->gid_tbl_len)) ||
	    (r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "%s/gid_attrs", pdir)) ||
	    (r = walk_table(w, pdir, "gid_attrs/types", p->gid_tbl_len)) ||
	    (r = walk_table(w, pdir, "gid_attrs/ndevs", p->gid_tbl_len)))
		return r;
	return 0;
}

static int walk_ibdev(struct walk *w, const struct emu_device *d)
{
	int r;

	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "infiniband/%s", d->name)))
		return r;
	for (size_t i = 0; i < N(ibdev_files); i++)
		if ((r = emit(w, EMU_SYSFS_FILE, ibdev_files[i].mode, NULL, "infiniband/%s/%s",
			      d->name, ibdev_files[i].name)))
			return r;
	if ((r = walk_devdir_common(w, "infiniband", d->name)) ||
	    (r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "infiniband/%s/ports", d->name)))
		return r;
	for (size_t i = 0; i < d->nports; i++)
		if ((r = walk_port(w, d, &d->ports[i])))
			return r;
	return 0;
}

/* infiniband_verbs/uverbsN/ of device index di, infiniband_mad/umadN/ and issmN/ of its ports */
static int walk_chardevs(struct walk *w, const struct emu_host *h, size_t di)
{
	static const char *const mad_files[] = { "dev", "ibdev", "port" };
	static const char *const kinds[] = { "umad", "issm" };
	char dir[32];
	int r;

	snprintf(dir, sizeof(dir), "uverbs%zu", di);
	if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "infiniband_verbs/%s", dir)) ||
	    (r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_verbs/%s/abi_version", dir)) ||
	    (r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_verbs/%s/dev", dir)) ||
	    (r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_verbs/%s/ibdev", dir)) ||
	    (r = emit(w, EMU_SYSFS_FILE, 0644, NULL, "infiniband_verbs/%s/uevent", dir)) ||
	    (r = walk_devdir_common(w, "infiniband_verbs", dir)))
		return r;
	for (unsigned port = 1; port <= h->devices[di].nports; port++)
		for (size_t k = 0; k < N(kinds); k++) {
			snprintf(dir, sizeof(dir), "%s%u", kinds[k], port_ordinal(h, di, port));
			if ((r = emit(w, EMU_SYSFS_DIR, 0755, NULL, "infiniband_mad/%s", dir)))
				return r;
			for (size_t i = 0; i < N(mad_files); i++)
				if ((r = emit(w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_mad/%s/%s",
					      dir, mad_files[i])))
					return r;
			if ((r = emit(w, EMU_SYSFS_FILE, 0644, NULL, "infiniband_mad/%s/uevent",
				      dir)) ||
			    (r = walk_devdir_common(w, "infiniband_mad", dir)))
				return r;
		}
	return 0;
}

int emu_sysfs_walk(const struct emu_host *h,
		   int (*fn)(void *arg, const struct emu_sysfs_entry *e), void *arg)
{
	struct walk w = { .fn = fn, .arg = arg };
	int r;

	if ((r = emit(&w, EMU_SYSFS_DIR, 0755, NULL, "infiniband")) ||
	    (r = emit(&w, EMU_SYSFS_DIR, 0755, NULL, "infiniband_verbs")) ||
	    (r = emit(&w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_verbs/abi_version")) ||
	    (r = emit(&w, EMU_SYSFS_DIR, 0755, NULL, "infiniband_mad")) ||
	    (r = emit(&w, EMU_SYSFS_FILE, 0444, NULL, "infiniband_mad/abi_version")))
		return r;
	for (size_t i = 0; i < h->ndevices; i++) {
		if (h->devices[i].removed)
			continue;
		if ((r = walk_ibdev(&w, &h->devices[i])) || (r = walk_chardevs(&w, h, i)))
			return r;
	}
	return 0;
}

static void add_node(struct emu_sysfs_devnode *out, size_t max, size_t *k, const char *name,
		     unsigned num, unsigned mode, unsigned major, unsigned minor)
{
	if (*k < max) {
		struct emu_sysfs_devnode *o = &out[*k];

		if (num == ~0u)
			snprintf(o->name, sizeof(o->name), "%s", name);
		else
			snprintf(o->name, sizeof(o->name), "%s%u", name, num);
		o->mode = mode;
		o->major = major;
		o->minor = minor;
	}
	(*k)++;
}

size_t emu_sysfs_devnodes(const struct emu_host *h, struct emu_sysfs_devnode *out, size_t max)
{
	size_t k = 0;

	add_node(out, max, &k, "rdma_cm", ~0u, 0666, 10, 124);
	for (size_t i = 0; i < h->ndevices; i++) {
		const struct emu_device *d = &h->devices[i];

		if (d->removed)
			continue;
		add_node(out, max, &k, "uverbs", (unsigned)i, 0666, IB_CHAR_MAJOR,
			 UVERBS_MINOR_BASE + (unsigned)i);
		for (unsigned port = 1; port <= d->nports; port++) {
			unsigned num = port_ordinal(h, i, port);

			add_node(out, max, &k, "umad", num, 0600, IB_CHAR_MAJOR, num);
			add_node(out, max, &k, "issm", num, 0600, IB_CHAR_MAJOR,
				 ISSM_MINOR_BASE + num);
		}
	}
	return k;
}
