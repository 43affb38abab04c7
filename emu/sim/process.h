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

/* For tests: forget the attachment (and the engine built on it) so the next call attaches
 * again (not thread-safe). */
void emu_process_reset(void);

#endif
