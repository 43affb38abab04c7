/* The interfaces of a host's sandbox (emu/host/sandbox.h). */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_NET_H
#define RDMAEMU_EMU_HOST_SANDBOX_NET_H
#include <stddef.h>

#include "emu/sim/fabric.h"

/* A sandbox's interfaces (emu/host/sandbox_net.c): lo up, then for each Ethernet netdev of
 * host h a tap (a veth pair where /dev/net/tun is closed) with its name, MAC, MTU, flags and
 * addresses, then the host's routes. tapfd[i] gets netdev i's descriptor for rdmaemud (-1:
 * none, an IPoIB netdev). 0, or -errno with err filled (nothing left open). */
int emu_sandbox_net_setup(const struct emu_host *h, int *tapfd, char *err, size_t errlen);
/* Waits (2 s at most) until the kernel has settled the state of the netdevs that came up to
 * UP, as `ip link` shows it; after /sys shows the sandbox's interfaces. */
void emu_sandbox_net_settle(const struct emu_host *h);
#endif
