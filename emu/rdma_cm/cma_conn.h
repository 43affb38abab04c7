/* rdma_cm's connection half on the IB CM agents (emu/rdma_cm/cma_conn.c, docs/cma.md "Connections"):
 * the table of emu_cma_cm_ops the emulated kernel CM uses by default. */
#ifndef RDMAEMU_EMU_CMA_CONN_H
#define RDMAEMU_EMU_CMA_CONN_H

#include "emu/rdma_cm/cma.h"

struct emu_cm_agent;

extern const struct emu_cma_cm_ops emu_cma_ib_cm_ops;

/* The CM agent carrying the connection of id (for faults and counters), NULL when the id has
 * none (never connected, or a listener). */
struct emu_cm_agent *emu_cma_conn_agent(const struct emu_cma_id *id);

/* Device `dev` of the listener's host goes away (cma_process_remove): a wildcard listener lets
 * go of its ib_cm listen there, as the kernel silently destroys the per-device child listen id
 * (cma_listen_handler returns non-zero on DEVICE_REMOVAL); the listener itself sees nothing. */
void emu_cma_conn_listen_drop_dev(struct emu_cma_id *id, size_t dev);

#endif
