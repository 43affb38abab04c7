/* rtnetlink requests of a sandbox's keeper (emu/host/sandbox_veth.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/host/sandbox_rtnl.h"

int emu_rtnl_talk(int nl, struct nlmsghdr *req)
{
	static uint32_t seq;
	char ans[1024];
	struct nlmsghdr *h = (struct nlmsghdr *)ans;
	ssize_t n;

	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	req->nlmsg_seq = ++seq;
	if (send(nl, req, req->nlmsg_len, 0) < 0)
		return -errno;
	do
		n = recv(nl, ans, sizeof(ans), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n < (ssize_t)sizeof(*h) || h->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
}

void *emu_rtnl_start(struct emu_rtnl_req *r, unsigned short type, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->h.nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
	r->h.nlmsg_type = type;
	r->h.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	return NLMSG_DATA(&r->h);
}

struct rtattr *emu_rtnl_put(struct nlmsghdr *h, unsigned short type, const void *data, size_t len)
{
	char *at = (char *)h + NLMSG_ALIGN(h->nlmsg_len);
	struct rtattr a = { .rta_len = (unsigned short)RTA_LENGTH(len), .rta_type = type };

	memcpy(at, &a, sizeof(a));
	if (len)
		memcpy(at + RTA_LENGTH(0), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a.rta_len);
	return (struct rtattr *)at;
}

void emu_rtnl_nest_end(struct nlmsghdr *h, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)h + NLMSG_ALIGN(h->nlmsg_len) - (char *)nest);
}
