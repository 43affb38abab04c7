/* The parts of a host's sandbox (emu/host/sandbox.h), each run by its keeper once inside the
 * new namespaces. */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_PRIV_H
#define RDMAEMU_EMU_HOST_SANDBOX_PRIV_H
#include <stddef.h>

#include "emu/sim/fabric.h"

/* The host's netdevs as taps (emu/host/sandbox_net.c): lo up, then for each Ethernet netdev
 * a tap with its name, MAC, MTU, flags and addresses, then the host's routes. tapfd[i] gets
 * netdev i's tap (-1: none, an IPoIB netdev). 0, or -errno with err filled (no tap left
 * open). */
int emu_sandbox_net_setup(const struct emu_host *h, int *tapfd, char *err, size_t errlen);

/* The mounts and generated files (emu/host/sandbox_fs.c); 0, or -1 with err filled. */
int emu_sandbox_fs_setup(const struct emu_host *h, char *err, size_t errlen);
/* Brings /sys/class/infiniband* up to date with the host's model. */
int emu_sandbox_fs_update(const struct emu_host *h, char *err, size_t errlen);

#endif
