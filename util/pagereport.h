/* pagereport: whether the host takes free guest memory back (free page reporting).
 *
 * A VM whose virtio balloon offers free page reporting (VIRTIO_BALLOON_F_REPORTING, feature
 * bit 5; Linux 5.7) tells the host about every free block of 2 MiB and up (the kernel's
 * page_reporting_order, 9 by default) a few seconds after it was freed, and the host unmaps
 * it. The next 2 MiB huge page the guest hands out is most likely such a block, which the host
 * must back again on first touch (~4.6 ms for 2 MiB on this project's CI machines, against
 * ~0.1 ms for a block it still backs). 4 KiB pages come from the guest's smaller free blocks,
 * which are never reported. Where this is true, kmem (kmem.c) asks for a huge page for its
 * first chunk only. */
#ifndef RDMAEMU_UTIL_PAGEREPORT_H
#define RDMAEMU_UTIL_PAGEREPORT_H

#include <stdbool.h>

/* The virtio devices' sysfs folder, where each device's `device` file holds its id (0x0005: a
 * balloon) and `features` its feature bits as a string of 0s and 1s, bit 0 first. */
#define EMU_VIRTIO_DEVICES "/sys/bus/virtio/devices"

/* True if a balloon under dir (EMU_VIRTIO_DEVICES, or a test's copy) has free page
 * reporting; false where there is none, or dir cannot be read. */
bool emu_free_page_reporting(const char *dir);

#endif
