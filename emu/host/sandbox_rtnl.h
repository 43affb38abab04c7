/* rtnetlink requests of a sandbox's keeper. */
#ifndef RDMAEMU_EMU_HOST_SANDBOX_RTNL_H
#define RDMAEMU_EMU_HOST_SANDBOX_RTNL_H
#include <linux/rtnetlink.h>
#include <stddef.h>

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
#endif
