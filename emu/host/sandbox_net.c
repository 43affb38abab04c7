/* A sandbox's network interfaces (emu/host/sandbox.h): host X's netdevs as tap devices (veth
 * pairs where /dev/net/tun is closed to the user: emu/host/sandbox_veth.c) in the sandbox's
 * network namespace, with the fabric's names, MACs, MTUs, flags, addresses and
 * routes, configured through rtnetlink and the interface ioctls as `ip` would. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emu/host/sandbox_net.h"
#include "emu/host/sandbox_rtnl.h"
#include "emu/host/sandbox_veth.h"

static int addr_add(int nl, int ifindex, const struct emu_ifaddr *a)
{
	struct emu_rtnl_req r;
	struct ifaddrmsg *m = emu_rtnl_start(&r, RTM_NEWADDR, sizeof(*m));
	size_t alen = a->family == AF_INET ? 4 : 16;
	int rc;

	m->ifa_family = (unsigned char)a->family;
	m->ifa_prefixlen = a->prefixlen;
	m->ifa_index = (unsigned)ifindex;
	/* nodad: the fabric's addresses are unique by construction, and a tentative address
	 * could not be bound for the second DAD takes */
	m->ifa_flags = a->family == AF_INET6 ? IFA_F_NODAD : 0;
	emu_rtnl_put(&r.h, IFA_LOCAL, &a->addr, alen);
	emu_rtnl_put(&r.h, IFA_ADDRESS, &a->addr, alen);
	if (a->family == AF_INET && a->prefixlen < 31) {
		uint32_t bcast = a->addr.v4.s_addr | htonl(0xffffffffu >> a->prefixlen);

		emu_rtnl_put(&r.h, IFA_BROADCAST, &bcast, 4);
	}
	rc = emu_rtnl_talk(nl, &r.h);
	return rc == -EEXIST ? 0 : rc; /* the link-local address the kernel made itself */
}

static int route_add(int nl, int ifindex, const struct emu_route *rt)
{
	struct emu_rtnl_req r;
	struct rtmsg *m = emu_rtnl_start(&r, RTM_NEWROUTE, sizeof(*m));
	size_t alen = rt->family == AF_INET ? 4 : 16;

	m->rtm_family = (unsigned char)rt->family;
	m->rtm_dst_len = rt->prefixlen;
	m->rtm_table = RT_TABLE_MAIN;
	m->rtm_protocol = RTPROT_BOOT;
	m->rtm_scope = rt->has_gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
	m->rtm_type = RTN_UNICAST;
	if (rt->prefixlen)
		emu_rtnl_put(&r.h, RTA_DST, &rt->dst, alen);
	if (rt->has_gateway)
		emu_rtnl_put(&r.h, RTA_GATEWAY, &rt->gateway, alen);
	emu_rtnl_put(&r.h, RTA_OIF, &ifindex, sizeof(ifindex));
	return emu_rtnl_talk(nl, &r.h);
}

/* An interface name into an ifreq (the caller checked it fits: IFNAMSIZ). */
static void set_ifname(struct ifreq *ifr, const char *name)
{
	memset(ifr, 0, sizeof(*ifr));
	memcpy(ifr->ifr_name, name, strnlen(name, IFNAMSIZ - 1));
}

/* SIOCGIFFLAGS, then the flags with `set` added and `clear` taken away. */
static int flags_set(int sk, const char *name, short set, short clear)
{
	struct ifreq ifr;

	set_ifname(&ifr, name);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags = (short)((ifr.ifr_flags | set) & ~clear);
	return ioctl(sk, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

static void sysctl_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, value, strlen(value)) < 0) {
			/* the netdev keeps the default: nothing a program sees depends on it */
		}
		close(fd);
	}
}

/* No offloads on a veth's sandbox end: what it sends is read whole by a packet socket at the
 * other end and goes on the wire as it is, so checksums must be complete and segments no
 * larger than the MTU (a tap does both itself). */
static int offloads_off(int sk, const char *name)
{
	static const uint32_t cmds[] = { ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SSG, ETHTOOL_STXCSUM };
	struct ethtool_value v;
	struct ifreq ifr;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		set_ifname(&ifr, name);
		v = (struct ethtool_value){ .cmd = cmds[i], .data = 0 };
		ifr.ifr_data = (void *)&v;
		if (ioctl(sk, SIOCETHTOOL, &ifr) < 0)
			return -errno;
	}
	return 0;
}

/* A tap has carrier from its start, so the kernel never ran the link state machine for it and
 * `ip link` says UNKNOWN; a NIC that came up says UP. Taking the carrier away and giving it
 * back makes the kernel settle the state, to UP, as a NIC's driver does when its link comes. */
static void carrier_cycle(int fd)
{
	int off = 0, on = 1;

	if (ioctl(fd, TUNSETCARRIER, &off) == 0)
		ioctl(fd, TUNSETCARRIER, &on);
}

/* The netdev's IPv6 settings, before it goes up. */
static void netdev_sysctls(const struct emu_netdev *nd)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", nd->name);
	sysctl_write(path, nd->ipv6 ? "0" : "1");
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/accept_dad", nd->name);
	sysctl_write(path, "0");
	/* a host of the fabric sends no router solicitations: there is no router to find */
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/router_solicitations", nd->name);
	sysctl_write(path, "0");
}

/* A tap named and addressed as netdev nd; its fd, or -errno. */
static int tap_create(int sk, const struct emu_netdev *nd)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	set_ifname(&ifr, nd->name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		rc = -errno;
	if (!rc) {
		set_ifname(&ifr, nd->name);
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, nd->hwaddr, 6);
		if (ioctl(sk, SIOCSIFHWADDR, &ifr) < 0)
			rc = -errno;
	}
	if (!rc) {
		set_ifname(&ifr, nd->name);
		ifr.ifr_mtu = (int)nd->mtu;
		if (ioctl(sk, SIOCSIFMTU, &ifr) < 0)
			rc = -errno;
	}
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int emu_sandbox_net_setup(const struct emu_host *h, int *tapfd, char *err, size_t errlen)
{
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int sns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	bool veth = false;
	int rc = 0;

	for (size_t i = 0; i < h->nnetdevs; i++)
		tapfd[i] = -1;
	if (sk < 0 || nl < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto out;
	}
	rc = flags_set(sk, "lo", IFF_UP, 0);
	if (rc) {
		snprintf(err, errlen, "lo up: %s", strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < h->nnetdevs && !rc; i++) {
		const struct emu_netdev *nd = &h->netdevs[i];
		int idx;

		if (nd->hwaddr_len != 6)
			continue; /* IPoIB: no Ethernet tap can stand for it */
		if (strlen(nd->name) >= IFNAMSIZ) {
			rc = -EINVAL;
			snprintf(err, errlen, "netdev name '%s' is longer than Linux allows (%d)",
				 nd->name, IFNAMSIZ - 1);
			break;
		}
		if (!veth) {
			tapfd[i] = tap_create(sk, nd);
			/* /dev/net/tun closed to this user, or missing (a container without
			 * it): veth pairs need no device node */
			veth = tapfd[i] == -EACCES || tapfd[i] == -EPERM || tapfd[i] == -ENOENT ||
			       tapfd[i] == -ENODEV || tapfd[i] == -ENXIO;
		}
		if (veth) {
			tapfd[i] = sns < 0 ? -EBADF : emu_sandbox_veth(nd, sns);
			if (tapfd[i] >= 0 && (rc = offloads_off(sk, nd->name))) {
				close(tapfd[i]);
				tapfd[i] = rc;
			}
		}
		if (tapfd[i] < 0) {
			rc = tapfd[i];
			snprintf(err, errlen, "%s %s: %s", veth ? "veth" : "tap (/dev/net/tun)",
				 nd->name, strerror(-rc));
			break;
		}
		netdev_sysctls(nd);
		/* arp=off stands for a dummy netdev: NOARP and no MULTICAST, as dummy_setup
		 * leaves it (the reference VM's d0: <BROADCAST,NOARP,UP,LOWER_UP>) */
		rc = flags_set(sk, nd->name,
			       (short)((nd->up ? IFF_UP : 0) | (nd->noarp ? IFF_NOARP : 0)),
			       (short)(nd->noarp ? IFF_MULTICAST : 0));
		/* arp=off stands for a dummy netdev, whose state stays UNKNOWN */
		if (!rc && !veth && !nd->noarp)
			carrier_cycle(tapfd[i]);
		idx = (int)if_nametoindex(nd->name);
		for (size_t a = 0; a < nd->naddrs && !rc; a++)
			rc = addr_add(nl, idx, &nd->addrs[a]);
		if (rc)
			snprintf(err, errlen, "%s: address: %s", nd->name, strerror(-rc));
	}
	for (size_t r = 0; r < h->nroutes && !rc; r++) {
		const struct emu_route *rt = &h->routes[r];

		if (rt->netdev < 0 || (size_t)rt->netdev >= h->nnetdevs || tapfd[rt->netdev] < 0)
			continue;
		rc = route_add(nl, (int)if_nametoindex(h->netdevs[rt->netdev].name), rt);
		if (rc == -EEXIST)
			rc = 0;
		if (rc)
			snprintf(err, errlen, "route via %s: %s", h->netdevs[rt->netdev].name,
				 strerror(-rc));
	}
out:
	if (sns >= 0)
		close(sns);
	if (sk >= 0)
		close(sk);
	if (nl >= 0)
		close(nl);
	if (rc)
		for (size_t i = 0; i < h->nnetdevs; i++)
			if (tapfd[i] >= 0) {
				close(tapfd[i]);
				tapfd[i] = -1;
			}
	return rc;
}

void emu_sandbox_net_settle(const struct emu_host *h)
{
	char path[128], state[16];

	for (size_t i = 0; i < h->nnetdevs; i++) {
		const struct emu_netdev *nd = &h->netdevs[i];

		if (nd->hwaddr_len != 6 || !nd->up || nd->noarp)
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", nd->name);
		/* the kernel's link watch runs within a second of the carrier's change */
		for (int tries = 0; tries < 200; tries++) {
			FILE *f = fopen(path, "r");
			bool up = f && fgets(state, sizeof(state), f) && !strcmp(state, "up\n");

			if (f)
				fclose(f);
			if (up)
				break;
			usleep(10000);
		}
	}
}
