/* The kernel's side of an RDMA netlink socket (NETLINK_RDMA): a datagram sent by the program
 * in, the datagrams the kernel would queue for it out, computed from the emulated host
 * (nl_host.h). docs/reference/rdma-netlink.md has the measured behaviour. */
#ifndef RDMAEMU_HOST_NL_RDMA_H
#define RDMAEMU_HOST_NL_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "emu/host/nl_host.h"
#include "emu/host/nl_msg.h"

/* Kernels from 6.5 (and Debian's 6.1 of the reference VM) report it in SYS_GET;
 * rdma_netlink.h of rdma-core 44 does not name it yet. */
#define NL_SYS_ATTR_PRIVILEGED_QKEY_MODE 96
#define NL_ATTR_SLOTS 128

/* Where the reply datagrams go. */
struct nl_sink {
	void (*emit)(void *ctx, const unsigned char *buf, size_t len);
	void *ctx;
};

/* The socket a datagram came from. */
struct nl_peer {
	uint32_t portid;
	int cap_ack; /* NETLINK_CAP_ACK: errors echo only the request's header */
	struct nl_sink sink;
};

/* One request being answered. */
struct nl_req {
	const struct nlmsghdr *nlh;
	const struct nlattr *tb[NL_ATTR_SLOTS];
	const struct nl_peer *peer;
	const struct nlh_host *host;
};

/* Processes every netlink message of one datagram, as the kernel's RDMA netlink input does. */
void nl_rdma_input(const void *buf, size_t len, const struct nl_peer *peer);

/* For the command handlers (nl_nldev*.c). */
int nl_attr_u32(const struct nl_req *r, unsigned type, uint32_t *v);
const struct nlh_dev *nl_req_dev(const struct nl_req *r, int *err);
size_t nl_reply_start(struct nlb *b, const struct nl_req *r, unsigned op, uint16_t flags);
void nl_reply_send(struct nlb *b, const struct nl_req *r);
void nl_put_handle(struct nlb *b, const struct nlh_dev *d);

/* A command's handlers: the answer to a request (0 or -errno; the caller acks) and to a dump
 * request (0 or -errno, which the caller puts in NLMSG_DONE). */
struct nl_op {
	int (*doit)(const struct nl_req *r);
	int (*dump)(const struct nl_req *r);
	int admin; /* needs CAP_NET_ADMIN in the initial user namespace */
};
const struct nl_op *nl_nldev_op(unsigned op);

/* Resource tracking (nl_nldev_res.c). */
int nl_res_summary_doit(const struct nl_req *r);
int nl_res_summary_dump(const struct nl_req *r);
int nl_res_doit(const struct nl_req *r);
int nl_res_dump(const struct nl_req *r);

#endif
