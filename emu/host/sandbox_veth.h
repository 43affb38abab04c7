/* A netdev of a sandbox as a veth pair. */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_VETH_H
#define RDMAEMU_EMU_HOST_SANDBOX_VETH_H
#include "emu/sim/fabric.h"

/* Where /dev/net/tun is closed to the user (emu/host/sandbox_veth.c): netdev nd as one end of
 * a veth pair made in the sandbox (the current network namespace, open as sns), whose other
 * end lives alone in a network namespace of its own; returns a packet socket on that end
 * (read and write whole frames, as a tap's descriptor), or -errno. */
int emu_sandbox_veth(const struct emu_netdev *nd, int sns);
#endif
