/* The RDMA class directories of a host's sandbox, generated from the emulated model. */
#ifndef RDMAEMU_EMU_HOST_SYSFS_TREE_H
#define RDMAEMU_EMU_HOST_SYSFS_TREE_H
#include "emu/sim/fabric.h"
#define EMU_SYSFS_MAX_NODES 64
/* Makes class_root/infiniband/<dev> for each device of h. 0 or -errno. */
int emu_host_sysfs_write(const struct emu_host *h, const char *class_root, const char *devib_root);
/* The names of h's /dev/infiniband nodes into names; how many. */
int emu_host_dev_nodes(const struct emu_host *h, char (*names)[32], int max);
#endif
