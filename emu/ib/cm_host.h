/* The IB CM of every emulated host on the wire: one CM agent (emu/ib/cm_agent.h) per device, as
 * the kernel keeps one cm_device per ib_device, listening on QP1 of each of the device's ports
 * through the MAD layer (emu/ib/gsi.h, management class 0x07 version 2, as a server: CM messages
 * are all unsolicited Sends). The agents send through the port named in the destination
 * address; retries are the agent's (the MAD layer sends each CM MAD once, with no response
 * timeout), as the agent models ib_cm's use of the MAD layer's retry machinery itself.
 *
 * Created on first use and freed with the engine (emu/sim/engine_ext.h). Engine lock held for
 * every call. */
#ifndef RDMAEMU_EMU_CM_HOST_H
#define RDMAEMU_EMU_CM_HOST_H

#include <stddef.h>

struct emu_engine;
struct emu_cm_agent;

#define EMU_MGMT_CLASS_CM 0x07
#define EMU_CM_CLASS_VERSION 2

/* The CM agent of device `dev` of host `host` (indices into the fabric), created with its QP1
 * agents on first use. NULL with errno ENOENT (no such device), EBUSY (another CM server on a
 * port), ENOMEM. */
struct emu_cm_agent *emu_cm_host_agent(struct emu_engine *e, size_t host, size_t dev);

/* Under rdmaemud the CM agents are the daemon's: rdmaemu_ctl_cm_fault goes there (the link
 * registers fn when the process attaches; NULL: the process's own agents). fn returns 0 or a
 * negative errno; node is never NULL. */
struct rdmaemu_cm_fault;
typedef int emu_cm_fault_remote_fn(const char *node, const char *device, const char *msg,
				   const struct rdmaemu_cm_fault *set, struct rdmaemu_cm_fault *old);
void emu_cm_fault_set_remote(emu_cm_fault_remote_fn *fn);

#endif
