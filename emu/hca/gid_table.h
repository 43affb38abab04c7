/* The GID tables of the devices' ports (struct emu_port's gids, emu/sim/fabric.h) change while
 * the process runs: roce_gid_mgmt (emu/net/roce_gid.c) adds and clears RoCE GIDs as the
 * netdevs' addresses come and go. What is derived from a GID table (the GSI's per-port route
 * cache, emu/ib/gsi_wire.c) holds while this generation is the one it was derived at. */
#ifndef RDMAEMU_EMU_GID_TABLE_H
#define RDMAEMU_EMU_GID_TABLE_H

/* Counts the changes made to any port's GID table. */
unsigned long emu_gid_table_generation(void);
/* Called after each change of a GID table entry. */
void emu_gid_table_changed(void);

#endif
