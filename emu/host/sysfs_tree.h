/* The files the kernel's RDMA core shows for an emulated host, written out as a directory tree
 * for a sandbox to mount: /sys/class/infiniband, /sys/class/infiniband_verbs,
 * /sys/class/infiniband_mad and /dev/infiniband (docs/reference/kernel-rxe-sysfs.md). The
 * names, modes and contents come from emu/hca/sysfs_class.h, the files the emulated
 * libibverbs answers ibv_read_sysfs_file() with. */
#ifndef RDMAEMU_EMU_HOST_SYSFS_TREE_H
#define RDMAEMU_EMU_HOST_SYSFS_TREE_H

#include <stddef.h>

#include "emu/hca/sysfs_class.h"
#include "emu/sim/fabric.h"

/* Creates, or brings up to date, host h's RDMA class directories under class_root
 * (class_root/infiniband/<dev>/..., class_root/infiniband_verbs/..., class_root/infiniband_mad/...)
 * and its /dev/infiniband nodes under devib_root (either root made, with the directories above
 * it, if missing; a root that exists gets mode 0755):
 *  - every directory, file and symbolic link kernel rxe shows, with its name, mode and
 *    content; the class entries (rxe0, uverbs0, umad0, ...) are directories, not links into
 *    /sys/devices; a file whose read fails on the kernel (the type and netdev of an empty GID
 *    slot, power/autosuspend_delay_ms) is an empty file with the kernel's mode;
 *  - a file whose content changed is replaced whole (written beside it, then renamed over it),
 *    so a reader sees the old content or the new, never a part; files that did not change are
 *    not touched;
 *  - whatever is under the three class directories and devib_root that h no longer has (a
 *    removed device, a GID table that shrank) is removed; nothing else under class_root is;
 *  - the /dev/infiniband nodes are empty regular files with the kernel's modes (0666, 0600),
 *    for /dev/null to be bind-mounted onto; an existing node of another type (such a mount) is
 *    left as it is.
 * Returns 0, or -1 with errno set (the first failure; the rest is still brought up to date as
 * far as possible). Unmount what was mounted on a stale node first: unlinking it fails with
 * EBUSY. */
int emu_host_sysfs_write(const struct emu_host *h, const char *class_root, const char *devib_root);

/* Fills up to max nodes of h's /dev/infiniband (rdma_cm, uverbsN, umadN, issmN: name, mode and
 * the kernel's major:minor) and returns how many there are, which may exceed max. The same
 * list emu_host_sysfs_write writes under devib_root. */
size_t emu_host_devib_nodes(const struct emu_host *h, struct emu_sysfs_devnode *out, size_t max);

#endif
