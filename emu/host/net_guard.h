/* The guard of a program run without a sandbox (librdmaemu-host.so; docs/host.md "Where
 * namespaces are not permitted"). Outside a sandbox a fabric address is an address of the
 * machine's real network (a fabric file may use the very range the machine's LAN uses), so
 * `rdmaemu run` names the fabric's subnets in RDMAEMU_GUARD_NETS ("192.0.2.0/28,fe80::/64,...")
 * and connect(), sendto() and sendmsg() towards one of them fail with ENETUNREACH, saying why
 * once on stderr, instead of leaving the machine. */
#ifndef RDMAEMU_EMU_HOST_NET_GUARD_H
#define RDMAEMU_EMU_HOST_NET_GUARD_H
#include <stdbool.h>
#include <sys/socket.h>

/* Whether a call towards addr must be refused (errno is then ENETUNREACH). */
bool emu_net_guard_refuses(const struct sockaddr *addr, socklen_t len);

#endif
