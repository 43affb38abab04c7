/* A netdev as a veth pair, where /dev/net/tun is closed to the user (emu/host/sandbox_veth.h).
 *
 * Debian makes /dev/net/tun world-usable, but a machine without udev may leave it 0600 root,
 * and then a user's sandbox gets no tap. A veth pair needs no device node: the keeper, root of
 * its user namespace, enters a network namespace of its own (the "wire" namespace: nothing
 * else is ever in it), makes the pair there with the sandbox end created directly in the
 * sandbox's namespace under the netdev's name and MAC, opens a packet socket on the wire end
 * and goes back. The packet socket is what rdmaemud reads and writes, as it does a tap: one
 * frame per read and write. Frames the socket itself sends are not read back
 * (PACKET_IGNORE_OUTGOING). The wire namespace lives as long as that socket. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/host/sandbox_rtnl.h"
#include "emu/host/sandbox_veth.h"

#define WIRE_END "wire0"

static int pair_create(int nl, const struct emu_netdev *nd, int sns)
{
	struct emu_rtnl_req r;
	struct ifinfomsg *m = emu_rtnl_start(&r, RTM_NEWLINK, sizeof(*m));
	struct ifinfomsg peer = { .ifi_family = AF_UNSPEC };
	struct rtattr *info, *data, *pe;
	uint32_t mtu = nd->mtu;

	m->ifi_family = AF_UNSPEC;
	emu_rtnl_put(&r.h, IFLA_IFNAME, WIRE_END, sizeof(WIRE_END));
	emu_rtnl_put(&r.h, IFLA_MTU, &mtu, sizeof(mtu));
	info = emu_rtnl_put(&r.h, IFLA_LINKINFO, NULL, 0);
	emu_rtnl_put(&r.h, IFLA_INFO_KIND, "veth", 5);
	data = emu_rtnl_put(&r.h, IFLA_INFO_DATA, NULL, 0);
	pe = emu_rtnl_put(&r.h, VETH_INFO_PEER, &peer, sizeof(peer));
	emu_rtnl_put(&r.h, IFLA_IFNAME, nd->name, strlen(nd->name) + 1);
	emu_rtnl_put(&r.h, IFLA_ADDRESS, nd->hwaddr, 6);
	emu_rtnl_put(&r.h, IFLA_MTU, &mtu, sizeof(mtu));
	emu_rtnl_put(&r.h, IFLA_NET_NS_FD, &sns, sizeof(sns));
	emu_rtnl_nest_end(&r.h, pe);
	emu_rtnl_nest_end(&r.h, data);
	emu_rtnl_nest_end(&r.h, info);
	return emu_rtnl_talk(nl, &r.h);
}

/* In the wire namespace: the pair, the wire end up, a packet socket bound to it. */
static int wire_side(const struct emu_netdev *nd, int sns)
{
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ps = -1, one = 1, rc;
	struct ifreq ifr;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };

	if (nl < 0 || sk < 0) {
		rc = -errno;
		goto out;
	}
	rc = pair_create(nl, nd, sns);
	if (rc)
		goto out;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, WIRE_END, sizeof(WIRE_END));
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0) {
		rc = -errno;
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0) {
		rc = -errno;
		goto out;
	}
	ll.sll_ifindex = (int)if_nametoindex(WIRE_END);
	ps = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (ps < 0 || setsockopt(ps, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) ||
	    bind(ps, (struct sockaddr *)&ll, sizeof(ll)))
		rc = -errno;
out:
	if (rc && ps >= 0)
		close(ps);
	if (nl >= 0)
		close(nl);
	if (sk >= 0)
		close(sk);
	return rc ? rc : ps;
}

int emu_sandbox_veth(const struct emu_netdev *nd, int sns)
{
	int fd;

	/* a wire namespace per netdev: each holds one pair, named alike */
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	fd = wire_side(nd, sns);
	if (setns(sns, CLONE_NEWNET) < 0) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	return fd;
}
