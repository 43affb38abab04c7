/* The emulated host this process is attached to (see include/rdmaemu/ctl.h for the rules).
 * The drop-in libraries call emu_process_host() wherever the real stack would ask the kernel
 * about "this machine": its RDMA devices, its netdevs and addresses, its routes. */
#ifndef RDMAEMU_EMU_PROCESS_H
#define RDMAEMU_EMU_PROCESS_H

#include "emu/sim/fabric.h"

/* Attaches on first use. NULL when the fabric does not load or the node does not exist; the
 * reason is printed once on stderr and errno is set (ENOENT, EINVAL). Thread-safe. */
const struct emu_host *emu_process_host(void);
const struct emu_fabric *emu_process_fabric(void);

/* Further hosts of the attached fabric whose RDMA devices this process opens too
 * (rdmaemu_ctl_open_host_devices): the i-th, or NULL past the last. Once the verbs device list
 * has been built (emu_process_hosts_freeze), no more can be added. */
#define EMU_PROCESS_MAX_EXTRA_HOSTS 8
const struct emu_host *emu_process_extra_host(size_t i);
void emu_process_hosts_freeze(void);

/* The host of the rdma_cm files the calling thread opens: the one rdmaemu_ctl_cm_host chose
 * for it, else the attached host. */
const struct emu_host *emu_process_cm_host(void);

/* For tests: forget the attachment (and what the layers built on it: the reset hooks) so the
 * next call attaches again (not thread-safe). */
void emu_process_reset(void);

/* ---- what the layers above register (once, before the first attach: a constructor of
 * librdmaemu.so) ---- */

/* Attaching through another process: the link to rdmaemud (emu/link) sets this hook, which
 * attaches through the daemon when $RDMAEMU_DAEMON names one. It runs for a fabric loaded from
 * a file or built in (never one given as text), with the fabric loaded and the host chosen
 * (path: the fabric's file as given, NULL or "" for the built-in): 0 lets the attach go on,
 * an errno fails it (the fabric is freed). One hook. */
typedef int emu_process_attach_fn(struct emu_fabric *f, const struct emu_host *h,
				  const char *path);
void emu_process_set_attach_hook(emu_process_attach_fn *fn);

/* emu_process_reset runs the reset hooks first, lowest order first, then drops the fabric:
 * each layer forgets what it built on it. The engine goes first (order 0: it points into the
 * fabric), then the rdma_cm's port spaces (4: they refer to its hosts), then the link (5). */
struct emu_process_reset_hook {
	int order;
	void (*reset)(void);
	struct emu_process_reset_hook *next; /* the process's */
};
void emu_process_on_reset(struct emu_process_reset_hook *h);

#endif
