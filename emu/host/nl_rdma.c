/* RDMA netlink input as the kernel runs it: each message of a datagram in turn, requests only,
 * the client and operation from the message type, a dump or a single answer, then the
 * acknowledgement (docs/reference/rdma-netlink.md, "Framing and acknowledgements"). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/host/nl_rdma.h"

/* Marks a request answered by a dump: no acknowledgement follows, NLMSG_DONE ends it. */
#define NL_DUMPED 1

int nl_attr_u32(const struct nl_req *r, unsigned type, uint32_t *v)
{
	const struct nlattr *a = type < NL_ATTR_SLOTS ? r->tb[type] : NULL;

	if (!a)
		return -ENOENT;
	memcpy(v, (const unsigned char *)a + NLA_HDRLEN, sizeof(*v));
	return 0;
}

const struct nlh_dev *nl_req_dev(const struct nl_req *r, int *err)
{
	uint32_t index;
	const struct nlh_dev *d = NULL;

	if (!nl_attr_u32(r, RDMA_NLDEV_ATTR_DEV_INDEX, &index))
		d = nlh_dev_by_index(r->host, index);
	*err = d ? 0 : -EINVAL;
	return d;
}

size_t nl_reply_start(struct nlb *b, const struct nl_req *r, unsigned op, uint16_t flags)
{
	nlb_init(b);
	return nlb_msg_start(b, (uint16_t)RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op), flags,
			     r->nlh->nlmsg_seq, r->peer->portid);
}

void nl_reply_send(struct nlb *b, const struct nl_req *r)
{
	nlb_msg_end(b, 0);
	if (!b->failed)
		r->peer->sink.emit(r->peer->sink.ctx, b->buf, b->len);
	nlb_free(b);
}

void nl_put_handle(struct nlb *b, const struct nlh_dev *d)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	nlb_str(b, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
}

static int is_u32(unsigned type)
{
	static const unsigned u32[] = {
		RDMA_NLDEV_ATTR_DEV_INDEX, RDMA_NLDEV_ATTR_PORT_INDEX, RDMA_NLDEV_ATTR_STAT_RES,
		RDMA_NLDEV_ATTR_RES_LQPN, RDMA_NLDEV_ATTR_RES_CQN,    RDMA_NLDEV_ATTR_RES_PDN,
		RDMA_NLDEV_ATTR_RES_MRN,  RDMA_NLDEV_ATTR_RES_CM_IDN, RDMA_NLDEV_ATTR_RES_CTXN,
		RDMA_NLDEV_ATTR_RES_SRQN,
	};

	for (size_t i = 0; i < sizeof(u32) / sizeof(u32[0]); i++)
		if (u32[i] == type)
			return 1;
	return 0;
}

/* The attributes of a request by type; a malformed one fails the request with EINVAL as the
 * kernel's policy check does. Fixed-size attributes must hold their value. */
static int parse_attrs(struct nl_req *r)
{
	const unsigned char *p = (const unsigned char *)r->nlh + NLMSG_HDRLEN;
	size_t len = r->nlh->nlmsg_len - NLMSG_HDRLEN;

	memset(r->tb, 0, sizeof(r->tb));
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
			return -EINVAL;
		unsigned type = a.nla_type & NLA_TYPE_MASK;
		if (is_u32(type) && a.nla_len < NLA_HDRLEN + 4)
			return -EINVAL;
		if (type < NL_ATTR_SLOTS)
			r->tb[type] = (const struct nlattr *)p;
		size_t step = NLA_ALIGN(a.nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

/* CAP_NET_ADMIN in the initial user namespace: root outside any user namespace of its own
 * (a sandbox without root maps its user into a new one). */
static int net_admin(void)
{
	char line[128] = "";
	unsigned long inside, outside, count;

	if (geteuid() != 0)
		return 0;
	FILE *f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return 1;
	int full = fgets(line, sizeof(line), f) &&
		   sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
		   outside == 0 && count == 4294967295ul;
	fclose(f);
	return full;
}

/* The changes an administrator may ask for (links, counters, modes) are refused: the
 * emulated host is described by its fabric file, not changed through netlink. A request the
 * kernel rejects for its form still gets the kernel's EINVAL. */
static int admin_request(const struct nl_req *r, unsigned op)
{
	int err;

	if (!net_admin())
		return -EPERM;
	if (op == RDMA_NLDEV_CMD_NEWLINK) {
		if (!r->tb[RDMA_NLDEV_ATTR_DEV_NAME] || !r->tb[RDMA_NLDEV_ATTR_LINK_TYPE] ||
		    !r->tb[RDMA_NLDEV_ATTR_NDEV_NAME])
			return -EINVAL;
		return -EOPNOTSUPP;
	}
	if (op == RDMA_NLDEV_CMD_SYS_SET)
		return r->tb[RDMA_NLDEV_SYS_ATTR_NETNS_MODE] || r->tb[RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK]
			       ? -EOPNOTSUPP
			       : -EINVAL;
	nl_req_dev(r, &err);
	return err ? err : -EOPNOTSUPP;
}

static void put_done(const struct nl_req *r, int err)
{
	struct nlb b;

	nlb_init(&b);
	nlb_msg_start(&b, NLMSG_DONE, NLM_F_MULTI, r->nlh->nlmsg_seq, r->peer->portid);
	int32_t e = err;
	nlb_raw(&b, &e, sizeof(e));
	nl_reply_send(&b, r);
}

static int dispatch(struct nl_req *r)
{
	unsigned type = r->nlh->nlmsg_type;
	unsigned client = RDMA_NL_GET_CLIENT(type), opn = RDMA_NL_GET_OP(type);
	const struct nl_op *op = client == RDMA_NL_NLDEV ? nl_nldev_op(opn) : NULL;

	if (!op)
		return -EINVAL;
	int err = parse_attrs(r);
	if (op->admin)
		return err ? err : admin_request(r, opn);
	if (r->nlh->nlmsg_flags & NLM_F_DUMP) {
		if (!op->dump)
			return -EINVAL;
		put_done(r, err ? err : op->dump(r));
		return NL_DUMPED;
	}
	if (err)
		return err;
	return op->doit ? op->doit(r) : 0;
}

static void put_ack(const struct nl_req *r, int err)
{
	const struct nlmsghdr *req = r->nlh;
	int capped = !err || r->peer->cap_ack;
	struct nlb b;

	nlb_init(&b);
	nlb_msg_start(&b, NLMSG_ERROR, capped ? NLM_F_CAPPED : 0, req->nlmsg_seq, r->peer->portid);
	int32_t e = err;
	nlb_raw(&b, &e, sizeof(e));
	nlb_raw(&b, req, capped ? NLMSG_HDRLEN : req->nlmsg_len);
	nl_reply_send(&b, r);
}

void nl_rdma_input(const void *buf, size_t len, const struct nl_peer *peer)
{
	struct nlh_host host;
	int loaded = 0;
	const unsigned char *p = buf;

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
			break;
		struct nl_req r = { .nlh = (const struct nlmsghdr *)p, .peer = peer, .host = &host };
		int err = 0;
		if ((h.nlmsg_flags & NLM_F_REQUEST) && h.nlmsg_type >= NLMSG_MIN_TYPE) {
			if (!loaded && nlh_host_load(&host, nlh_class_dir()) == 0)
				loaded = 1;
			if (!loaded)
				memset(&host, 0, sizeof(host));
			err = dispatch(&r);
		}
		if (err != NL_DUMPED && ((h.nlmsg_flags & NLM_F_ACK) || err))
			put_ack(&r, err);
		size_t step = NLMSG_ALIGN(h.nlmsg_len);
		if (step > len)
			step = len;
		p += step;
		len -= step;
	}
	if (loaded)
		nlh_host_free(&host);
}
