/* The file system view of a host's sandbox (emu/host/sandbox.h). */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_FS_H
#define RDMAEMU_EMU_HOST_SANDBOX_FS_H
#include <stddef.h>

#include "emu/sim/fabric.h"

/* A sandbox's mounts and generated files (emu/host/sandbox_fs.c); 0, or -1 with err filled. */
int emu_sandbox_fs_setup(const struct emu_host *h, char *err, size_t errlen);
/* Brings /sys/class/infiniband* and /dev/infiniband up to date with the host's model. */
int emu_sandbox_fs_update(const struct emu_host *h, char *err, size_t errlen);
#endif
