/* The files of the RDMA core's sysfs classes (/sys/class/infiniband, infiniband_verbs,
 * infiniband_mad) and the /dev/infiniband nodes, as Linux 6.1 shows them for a host's rxe
 * devices (docs/reference/kernel-rxe-sysfs.md). One source for every reader: the emulated
 * libibverbs answers ibv_read_sysfs_file() from it (emu/verbs/sysfs.c), and the emulated host
 * writes the whole tree from it (emu/host/sysfs_tree.c). */
#ifndef RDMAEMU_EMU_HCA_SYSFS_CLASS_H
#define RDMAEMU_EMU_HCA_SYSFS_CLASS_H

#include <stddef.h>

#include "emu/sim/fabric.h"

/* The size of out that holds any file's content. */
#define EMU_SYSFS_CONTENT_MAX 256

enum emu_sysfs_kind { EMU_SYSFS_DIR, EMU_SYSFS_FILE, EMU_SYSFS_LINK };

/* One directory, file or symbolic link. The class entries (infiniband/rxe0, ...) are symbolic
 * links into /sys/devices/virtual in the kernel; here they are the directories themselves, so
 * every path is under the class root, and a link's target is relative to the directory that
 * holds the link, within that layout (infiniband/rxe0/subsystem -> ../../infiniband). */
struct emu_sysfs_entry {
	const char *path;   /* under /sys/class, e.g. "infiniband/rxe0/ports/1/state" */
	enum emu_sysfs_kind kind;
	unsigned mode;      /* permission bits as the kernel shows them: 0755, 0444, 0644, 0777 */
	const char *target; /* EMU_SYSFS_LINK only */
};

/* Calls fn for every entry kernel rxe shows for h's devices that are not removed (the class
 * directories and their abi_version files even without devices), each directory before what
 * it holds. Stops at the first nonzero return of fn and returns it; 0 when all were visited. */
int emu_sysfs_walk(const struct emu_host *h,
		   int (*fn)(void *arg, const struct emu_sysfs_entry *e), void *arg);

/* The content of the file at `path` (under /sys/class, as in emu_sysfs_entry) for host h: 0
 * with out filled (NUL-terminated, the kernel's bytes, trailing newline included), or the
 * errno a read of the kernel's file gives: ENOENT (no such file, a removed device's files),
 * EINVAL (the type or netdev of an empty GID slot), EIO (power/autosuspend_delay_ms). n must be
 * at least EMU_SYSFS_CONTENT_MAX for the content never to be cut. */
int emu_sysfs_file(const struct emu_host *h, const char *path, char *out, size_t n);

/* A character device of /dev/infiniband. */
struct emu_sysfs_devnode {
	char name[24];  /* under /dev/infiniband: "rdma_cm", "uverbs0", "umad0", "issm0" */
	unsigned mode;  /* 0666 (rdma_cm, uverbsN) or 0600 (umadN, issmN) */
	unsigned major, minor;
};

/* Fills up to max nodes of h's /dev/infiniband: rdma_cm, then for each device not removed its
 * uverbsN, then for each of its ports umadN and issmN. Returns how many there are (may exceed
 * max). uverbsN numbers the device by its index in h->devices, umadN and issmN the port by its
 * place among all ports of h's devices, so numbers do not move when a device is removed. */
size_t emu_sysfs_devnodes(const struct emu_host *h, struct emu_sysfs_devnode *out, size_t max);

#endif
