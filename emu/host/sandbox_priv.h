/* The parts of a host's sandbox (emu/host/sandbox.h), each run by its keeper once inside the
 * new namespaces. */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_PRIV_H
#define RDMAEMU_EMU_HOST_SANDBOX_PRIV_H
#include <linux/rtnetlink.h>
#include <stddef.h>

#include "emu/sim/fabric.h"

/* The host's netdevs as taps (emu/host/sandbox_net.c): lo up, then for each Ethernet netdev
 * a tap with its name, MAC, MTU, flags and addresses, then the host's routes. tapfd[i] gets
 * netdev i's tap (-1: none, an IPoIB netdev). 0, or -errno with err filled (no tap left
 * open). */
int emu_sandbox_net_setup(const struct emu_host *h, int *tapfd, char *err, size_t errlen);

/* The mounts and generated files (emu/host/sandbox_fs.c); 0, or -1 with err filled. */
int emu_sandbox_fs_setup(const struct emu_host *h, char *err, size_t errlen);
/* Brings /sys/class/infiniband* up to date with the host's model. */
int emu_sandbox_fs_update(const struct emu_host *h, char *err, size_t errlen);

/* rtnetlink requests (emu/host/sandbox_rtnl.c): one built in an emu_rtnl_req, sent on nl with
 * its acknowledgement read (0 or -errno); attributes and nests appended. */
struct emu_rtnl_req {
	union {
		struct nlmsghdr h;
		char b[1024];
	};
};
void *emu_rtnl_start(struct emu_rtnl_req *r, unsigned short type, size_t len);
struct rtattr *emu_rtnl_put(struct nlmsghdr *h, unsigned short type, const void *data,
			    size_t len);
void emu_rtnl_nest_end(struct nlmsghdr *h, struct rtattr *nest);
int emu_rtnl_talk(int nl, struct nlmsghdr *req);

/* Where /dev/net/tun is closed to the user (emu/host/sandbox_veth.c): netdev nd as one end of
 * a veth pair made in the sandbox (the current network namespace, open as sns), whose other
 * end lives alone in a network namespace of its own; returns a packet socket on that end
 * (read and write whole frames, as a tap's descriptor), or -errno. */
int emu_sandbox_veth(const struct emu_netdev *nd, int sns);

#endif
