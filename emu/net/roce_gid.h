/* The RoCE GID table follows the netdev's addresses (the kernel's roce_gid_mgmt.c): a
 * listener of the neighbour layer's address events adds a RoCE v2 GID for every address that
 * appears on a netdev behind a RoCE port and clears it when the address goes (docs/neigh.md
 * "GID table"). */
#ifndef RDMAEMU_EMU_ROCE_GID_H
#define RDMAEMU_EMU_ROCE_GID_H

struct emu_engine;

/* Registers the listener with n, engine e's neighbour layer (once per engine; the layer's
 * creation calls it, as ib_core registers roce_gid_mgmt with the netdev notifiers). The
 * loader gave every RoCE port's GID table its full length, so entries never move while the
 * data path reads them. 0 or -errno. */
struct emu_neigh;
int emu_roce_gid_attach(struct emu_engine *e, struct emu_neigh *n);

#endif
