/* The hosts' kernel stacks in rdmaemud (docs/daemon.md, "Host stacks"): as the kernel runs them
 * on a booted host, the daemon's engine runs for every host of the fabric the neighbour
 * responders and caches (emu/net/neigh.h, started with the engine), the MAD layer on QP1 of every
 * port with the CM agent of every device (emu/ib/cm_host.h), the SA on the SM's port
 * (emu/ib/sa_agent.h) and the emulated kernel rdma_cm with its port spaces (emu/rdma_cm/cma.h, reached
 * through emu/daemon/ucma_srv.h). What the engine's demultiplexer (emu/hca/engine_rx.h) gives
 * these stacks stays in the daemon; what would reach a host's HCA goes to its processes. */
#ifndef RDMAEMU_EMU_DAEMON_STACKS_H
#define RDMAEMU_EMU_DAEMON_STACKS_H

struct emu_engine;

/* The DestQP of multicast transport packets (IBTA 10.5.2.2: 0xFFFFFF): for every process of
 * the host, each HCA keeping what its QPs attached. */
#define EMU_DSTACKS_MCAST_QPN 0xFFFFFFu

/* Starts the stacks of every host. Engine lock held. 0, or -1 with a message on stderr. */
int emu_dstacks_start(struct emu_engine *e);

#endif
