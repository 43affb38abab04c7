/* rdma_cm files served by rdmaemud (emu/daemon/ucma_srv.h): the daemon end.
 *
 * A file is the emulated kernel's (emu/rdma_cm/ucma.c) for the client's host, numbered by the
 * daemon's eventfd; the client gets that eventfd itself through SCM_RIGHTS. Commands run with
 * the daemon's copies of the user buffers they name (emu/link/ucma_proto.h). Every file is
 * a push file (protocol 6): events go to the client as they are queued (UCMA_EVENT), the
 * client reads them from its copy of the queue and says so (UCMA_CONSUMED); the eventfd
 * counts what it has not read yet. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>

#include "emu/link/link.h"
#include "emu/link/proto.h"
#include "emu/link/ucma_proto.h"
#include "emu/daemon/peer.h"
#include "emu/daemon/ucma_srv.h"
#include "emu/sim/engine.h"
#include "emu/rdma_cm/ucma.h"

/* The daemon's device-removal generation, in the pad of every answer and pushed event
 * (emu_ucma_srv_devrm). */
static uint32_t devrm_gen;
/* By the daemon's fd of a file: the process owning it (MIGRATE_ID may only name the
 * caller's), its connection, and whether a drain found its copy diverged. */
static struct owner {
	int pid;
	int sock;
	bool broken;
	void *ctx;
	/* handles reserved for the file's posted CREATE_IDs, told to the client (UCMA_SPARE) */
	uint32_t spare[EMU_DUCMA_SPARE_MAX];
	unsigned nspare;
	/* a RESOLVE_ADDR verdict is out (UCMA_VERDICT), and the posts made on it since */
	size_t host;
	bool verdict;
	unsigned verdict_posts;
} *owners;
static size_t nowner;
static unsigned nfiles;
static const struct emu_ucma_srv_ops *ops;
/* RDMAEMU_UCMA_SNAPS=0 in the daemon's environment: events go without answers (measuring) */
static bool snaps_on = true;

void emu_ucma_srv_init(const struct emu_ucma_srv_ops *o)
{
	const char *s = getenv("RDMAEMU_UCMA_SNAPS");

	ops = o;
	snaps_on = !s || strcmp(s, "0");
	emu_ucma_set_nowait(true);
}

void emu_ucma_srv_devrm(uint32_t gen)
{
	devrm_gen = gen;
}

/* Runs QUERY / INIT_QP_ATTR (cmd, sub) on id of file dfd and appends its answer to buf at
 * *off (struct emu_ducma_snap): only a success, with the bytes it wrote (emu_ucma_written,
 * the prefix a UCMA_WRITE answer carries too). Engine lock held. */
static void snap_one(int dfd, uint32_t cmd, uint32_t id, uint32_t sub, uint8_t *buf,
		     size_t *off, size_t max)
{
	static uint8_t r[EMU_DUCMA_MAX_OUT]; /* the engine lock guards it */
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_query q; /* the same layout as rdma_ucm_init_qp_attr */
	} c;
	struct emu_ducma_snap s = { cmd, id, sub, 0 };
	size_t len, padded;

	_Static_assert(sizeof(struct rdma_ucm_query) == sizeof(struct rdma_ucm_init_qp_attr) &&
			       offsetof(struct rdma_ucm_query, option) ==
				       offsetof(struct rdma_ucm_init_qp_attr, qp_state),
		       "QUERY and INIT_QP_ATTR commands share a layout");
	memset(&c, 0, sizeof(c));
	c.hdr.cmd = cmd;
	c.hdr.in = sizeof(c.q);
	c.hdr.out = sizeof(r);
	c.q.response = (uintptr_t)r;
	c.q.id = id;
	c.q.option = sub;
	if (emu_ucma_write_locked(dfd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return;
	len = emu_ucma_written(r, sizeof(r));
	padded = (len + 7) & ~(size_t)7;
	if (!len || *off + sizeof(s) + padded > max)
		return;
	s.len = (uint32_t)len;
	memcpy(buf + *off, &s, sizeof(s));
	memset(buf + *off + sizeof(s), 0, padded);
	memcpy(buf + *off + sizeof(s), r, len);
	*off += sizeof(s) + padded;
}

static void add_verdict(uint8_t *buf, size_t *off, size_t max, uint32_t cmd, uint32_t id,
			uint32_t sub)
{
	struct emu_ducma_snap v = { cmd, id, sub, 0 };

	if (*off + sizeof(v) > max)
		return;
	memcpy(buf + *off, &v, sizeof(v));
	*off += sizeof(v);
}

/* Verdicts (snaps of no bytes) for the commands that follow such an event, when they surely
 * return 0 now (docs/daemon.md "Posted commands"): RESOLVE_ROUTE after ADDR_RESOLVED, CONNECT
 * after ROUTE_RESOLVED, ACCEPT after CONNECT_REQUEST (the REP) and CONNECT_RESPONSE (the
 * RTU; and then DISCONNECT, sub 1: it holds once that ACCEPT has run), DISCONNECT after
 * ESTABLISHED and DISCONNECTED. Engine lock held. */
static void verdicts(int dfd, const struct rdma_ucm_event_resp *resp, uint8_t *buf,
		     size_t *off, size_t max)
{
	uint32_t sub;

	switch (resp->event) {
	case EMU_CMA_EVENT_ADDR_RESOLVED:
		if (emu_ucma_route_sure(dfd, resp->id))
			add_verdict(buf, off, max, RDMA_USER_CM_CMD_RESOLVE_ROUTE, resp->id, 0);
		break;
	case EMU_CMA_EVENT_ROUTE_RESOLVED:
		if (emu_ucma_cm_sure(dfd, resp->id, RDMA_USER_CM_CMD_CONNECT, &sub))
			add_verdict(buf, off, max, RDMA_USER_CM_CMD_CONNECT, resp->id, sub);
		break;
	case EMU_CMA_EVENT_CONNECT_REQUEST:
	case EMU_CMA_EVENT_CONNECT_RESPONSE:
		if (!emu_ucma_cm_sure(dfd, resp->id, RDMA_USER_CM_CMD_ACCEPT, &sub))
			break;
		add_verdict(buf, off, max, RDMA_USER_CM_CMD_ACCEPT, resp->id, sub);
		/* the RTU keeps the IB CM id: rdma_disconnect will DREQ */
		if (!sub)
			add_verdict(buf, off, max, RDMA_USER_CM_CMD_DISCONNECT, resp->id, 1);
		break;
	case EMU_CMA_EVENT_ESTABLISHED:
	case EMU_CMA_EVENT_DISCONNECTED:
		if (emu_ucma_cm_sure(dfd, resp->id, RDMA_USER_CM_CMD_DISCONNECT, &sub))
			add_verdict(buf, off, max, RDMA_USER_CM_CMD_DISCONNECT, resp->id, sub);
		break;
	default:
		break;
	}
}

/* emu_ucma_push_fn of every file: the messages go behind whatever the connection has
 * queued (the daemon's send), never dropped. An event goes with the answers the library
 * asks for right after reading it (struct emu_ducma_snap): those are round trips no more
 * (the client keeps them until something could change them, emu/link/ucma_link.c). */
static void push(void *ctx, int dfd, enum emu_ucma_push_kind kind, uint32_t seq,
		 const struct rdma_ucm_event_resp *resp)
{
	static uint8_t body[sizeof(struct rdma_ucm_event_resp) + EMU_DUCMA_MAX_OUT]; /* lock */
	static const uint32_t addr[][2] = {
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_ADDR },
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_GID },
	}, route[][2] = {
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_PATH },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 1 }, /* rdma_create_qp comes next (cmtime) */
	}, req[][2] = {
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_ADDR },
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_GID },
		{ RDMA_USER_CM_CMD_QUERY, RDMA_USER_CM_QUERY_PATH },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 1 /* INIT */ },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 2 /* RTR */ },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 3 /* RTS */ },
	}, rep[][2] = {
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 1 },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 2 },
		{ RDMA_USER_CM_CMD_INIT_QP_ATTR, 3 },
	};
	const uint32_t(*list)[2] = NULL;
	size_t n = 0, off = sizeof(*resp);

	if (kind == EMU_UCMA_PUSH_FORGET) {
		ops->send(ctx, EMU_DMSG_UCMA_FORGET, seq, devrm_gen, NULL, 0);
		return;
	}
	if (kind != EMU_UCMA_PUSH_EVENT) {
		if (kind == EMU_UCMA_PUSH_DROP)
			ops->sem(ctx, dfd, -1);
		ops->send(ctx, EMU_DMSG_UCMA_DROP, seq, devrm_gen, NULL, 0);
		return;
	}
	memcpy(body, resp, sizeof(*resp));
	switch (resp->event) {
	case EMU_CMA_EVENT_ADDR_RESOLVED:
		list = addr, n = sizeof(addr) / sizeof(*addr);
		break;
	case EMU_CMA_EVENT_ROUTE_RESOLVED:
		list = route, n = sizeof(route) / sizeof(*route);
		break;
	case EMU_CMA_EVENT_CONNECT_REQUEST:
		list = req, n = sizeof(req) / sizeof(*req);
		break;
	case EMU_CMA_EVENT_CONNECT_RESPONSE:
		list = rep, n = sizeof(rep) / sizeof(*rep);
		break;
	default:
		break;
	}
	if (n && snaps_on)
		for (size_t i = 0; i < n; i++)
			snap_one(dfd, list[i][0], resp->id, list[i][1], body, &off, sizeof(body));
	/* the verdicts that let the client post the command that usually comes next */
	if (snaps_on)
		verdicts(dfd, resp, body, &off, sizeof(body));
	ops->sem(ctx, dfd, 1);
	ops->send(ctx, EMU_DMSG_UCMA_EVENT, seq, devrm_gen, body, off);
}

/* fd and fd2 (each -1 for none) go with the message (SCM_RIGHTS) */
static int answer2(int sock, uint16_t type, int32_t arg, const void *body, size_t len, int fd,
		   int fd2)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, (uint32_t)arg,
			      devrm_gen };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)body, len } };
	int fds[2] = { fd, fd2 }, n = (fd >= 0) + (fd >= 0 && fd2 >= 0);

	/* an answer is small and the client waits for it: the socket has room unless the
	 * client floods it with requests it does not read the answers of; then it loses them */
	return emu_link_sendmsg_fds(sock, iov, body && len ? 2 : 1, fds, n,
				    MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}

static int answer(int sock, uint16_t type, int32_t arg, const void *body, size_t len, int fd)
{
	return answer2(sock, type, arg, body, len, fd, -1);
}

static int set_owner(int dfd, int pid, int sock, void *ctx, size_t host)
{
	if ((size_t)dfd >= nowner) {
		size_t n = (size_t)dfd + 64;
		struct owner *t = realloc(owners, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = nowner; i < n; i++)
			t[i] = (struct owner){ .sock = -1 };
		owners = t;
		nowner = n;
	}
	owners[dfd] = (struct owner){ .pid = pid, .sock = sock, .ctx = ctx, .host = host };
	return 0;
}

/* Reserves handles for file dfd's posted CREATE_IDs up to EMU_DUCMA_SPARE_MAX when fewer than
 * half are left, and tells the client the new ones (UCMA_SPARE; always: even none, the
 * first, which the client's open waits for). Engine lock held. */
static void top_up(int dfd, bool always)
{
	struct owner *o = &owners[dfd];
	uint32_t fresh[EMU_DUCMA_SPARE_MAX];
	unsigned n = 0;

	if (o->nspare >= EMU_DUCMA_SPARE_MAX / 2)
		return;
	while (o->nspare < EMU_DUCMA_SPARE_MAX) {
		uint32_t h = emu_cma_id_reserve();

		if (h == UINT32_MAX)
			break;
		o->spare[o->nspare++] = h;
		fresh[n++] = h;
	}
	if (n || always)
		ops->send(o->ctx, EMU_DMSG_UCMA_SPARE, 0, devrm_gen, fresh, n * sizeof(*fresh));
}

/* Takes h from file dfd's spares: false when it is none of them. */
static bool take_spare(int dfd, uint32_t h)
{
	struct owner *o = &owners[dfd];

	for (unsigned i = 0; i < o->nspare; i++)
		if (o->spare[i] == h) {
			o->spare[i] = o->spare[--o->nspare];
			return true;
		}
	return false;
}

int emu_ucma_srv_open(int sock, const struct emu_fabric *f, const char *fabric_path,
		      const void *body, size_t len, const struct emu_dpeer *peer, int *pid,
		      void *ctx, int sent_fd)
{
	struct emu_dmsg_hello h;
	struct emu_ducma_opened ans = { -1 };
	const struct emu_host *host;
	int dfd;

	if (len < sizeof(h)) {
		answer(sock, EMU_DMSG_UCMA_OPEN, EPROTO, &ans, sizeof(ans), -1);
		return -1;
	}
	memcpy(&h, body, sizeof(h));
	*pid = h.pid;
	if (strncmp(h.fabric, fabric_path, sizeof(h.fabric))) {
		answer(sock, EMU_DMSG_UCMA_OPEN, EXDEV, &ans, sizeof(ans), -1);
		return -1;
	}
	host = memchr(h.node, 0, sizeof(h.node)) ? emu_fabric_find_host(f, h.node) : NULL;
	if (!host) {
		answer(sock, EMU_DMSG_UCMA_OPEN, ENOENT, &ans, sizeof(ans), -1);
		return -1;
	}
	if (emu_dpeer_may_claim(peer, f, "UCMA_OPEN", h.pid, (size_t)(host - f->hosts))) {
		answer(sock, EMU_DMSG_UCMA_OPEN, EPERM, &ans, sizeof(ans), -1);
		return -1;
	}
	/* every file of a client is a push file (protocol 6 on) */
	dfd = emu_ucma_open_push(host, push, ctx);
	if (dfd >= 0 && set_owner(dfd, h.pid, sock, ctx, (size_t)(host - f->hosts))) {
		emu_ucma_close(dfd);
		dfd = -ENOMEM;
	}
	if (dfd < 0) {
		answer(sock, EMU_DMSG_UCMA_OPEN, -dfd, &ans, sizeof(ans), -1);
		return -1;
	}
	ans.dfd = dfd;
	nfiles++;
	if (answer2(sock, EMU_DMSG_UCMA_OPEN, 0, &ans, sizeof(ans), dfd, sent_fd)) {
		emu_ucma_srv_close(dfd);
		return -1;
	}
	emu_cma_trace("rdmaemud: rdma_cm file %d opened for pid %d on host %s", dfd, h.pid,
		      host->name);
	emu_engine_lock(emu_engine_get());
	top_up(dfd, true);
	emu_engine_unlock(emu_engine_get());
	return dfd;
}

/* Applies the UCMA_CONSUMED messages waiting on the connection of file src (MIGRATE_ID is
 * about to take its events of an id): its client sent them before it asked for the
 * migration (it holds src's lock meanwhile, so nothing else is waiting there), and an event
 * it has read must not be moved. */
static void drain_consumed(int src)
{
	struct emu_dmsg h;
	int r;

	while ((r = ops->ring_consumed(owners[src].ctx, &h.arg, &h.pad)) > 0)
		if (emu_ucma_consumed(src, h.arg, h.pad)) {
			fprintf(stderr, "rdmaemud: rdma_cm file %d: UCMA_CONSUMED %u (%u events) is "
				"not the head of its queue: closing it\n", src, h.arg, h.pad);
			owners[src].broken = true;
			return;
		}
	if (r == 0)
		return; /* the ring's head is something else: the main loop deals with it */
	for (;;) {
		ssize_t n = recv(owners[src].sock, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);

		if (n != (ssize_t)sizeof(h) || h.magic != EMU_DPROTO_MAGIC ||
		    h.version != EMU_DPROTO_VERSION || h.type != EMU_DMSG_UCMA_CONSUMED)
			return; /* the main loop deals with the rest */
		if (recv(owners[src].sock, &h, sizeof(h), MSG_DONTWAIT) != (ssize_t)sizeof(h))
			return;
		if (emu_ucma_consumed(src, h.arg, h.pad)) {
			fprintf(stderr, "rdmaemud: rdma_cm file %d: UCMA_CONSUMED %u (%u events) is "
				"not the head of its queue: closing it\n", src, h.arg, h.pad);
			owners[src].broken = true;
			return;
		}
	}
}

int emu_ucma_srv_consumed(int dfd, uint32_t seq, uint32_t count)
{
	int ret;

	if (dfd < 0 || (size_t)dfd >= nowner || owners[dfd].broken)
		return -1;
	ret = emu_ucma_consumed(dfd, seq, count);
	if (ret)
		fprintf(stderr, "rdmaemud: rdma_cm file %d: UCMA_CONSUMED %u (%u events) is not "
			"the head of its queue (%s): closing it\n", dfd, seq, count, strerror(-ret));
	return ret ? -1 : 0;
}

/* The struct of a RESOLVE_ADDR / RESOLVE_IP command (the bytes a verdict holds), or 0. */
static size_t resolve_size(uint32_t cmd)
{
	return cmd == RDMA_USER_CM_CMD_RESOLVE_ADDR || cmd == RDMA_USER_CM_CMD_RESOLVE_IP ?
		       emu_ducma_post_size(cmd) :
		       0;
}

/* A RESOLVE_ADDR / RESOLVE_IP (cmd, in bytes at body) returned 0 on an id that was pristine
 * (ps, qp_type): the same bytes return 0 on every pristine id of the file until the host's
 * addresses, links or devices change (emu_ucma_srv_revoke). Tells the client so
 * (UCMA_VERDICT, EMU_DUCMA_VERDICT_USES posts). Engine lock held. */
static void grant(int dfd, uint32_t cmd, const uint8_t *body, size_t in, uint16_t ps,
		  uint8_t qp_type)
{
	struct emu_ducma_verdict v;
	size_t n = resolve_size(cmd);

	if (!n || in < n || n > sizeof(v.key))
		return;
	memset(&v, 0, sizeof(v));
	v.cmd = cmd;
	v.ps = ps;
	v.qp_type = qp_type;
	v.klen = (uint32_t)n;
	memcpy(v.key, body, n);
	memset(v.key + emu_ducma_ptrs_of(cmd).id, 0, sizeof(uint32_t)); /* the id */
	owners[dfd].verdict = true;
	owners[dfd].verdict_posts = 0;
	ops->send(owners[dfd].ctx, EMU_DMSG_UCMA_VERDICT, EMU_DUCMA_VERDICT_USES, devrm_gen, &v,
		  sizeof(v));
}

void emu_ucma_srv_revoke(size_t host)
{
	struct emu_ducma_verdict v;

	memset(&v, 0, sizeof(v));
	/* a device removal changes ids without an event the client could see (a request not
	 * accepted yet is closed silently): every file forgets all it kept */
	for (size_t i = 0; i < nowner; i++)
		if (owners[i].sock >= 0 &&
		    (host == SIZE_MAX || (owners[i].verdict && owners[i].host == host))) {
			owners[i].verdict = false;
			ops->send(owners[i].ctx, EMU_DMSG_UCMA_VERDICT, 0, devrm_gen, &v,
				  sizeof(v));
		}
}

/* The QP number an rdma_connect or rdma_accept names goes to ops->qpn_used (cb: the
 * command's body of in bytes). Engine lock held. */
static void note_qpn(int dfd, uint32_t cmd, const uint8_t *cb, uint32_t in)
{
	size_t off;
	uint32_t qpn;

	if (!ops->qpn_used || (size_t)dfd >= nowner)
		return;
	if (cmd == RDMA_USER_CM_CMD_CONNECT)
		off = offsetof(struct rdma_ucm_connect, conn_param.qp_num);
	else if (cmd == RDMA_USER_CM_CMD_ACCEPT)
		off = offsetof(struct rdma_ucm_accept, conn_param.qp_num);
	else
		return;
	if (off + sizeof(qpn) > in)
		return;
	memcpy(&qpn, cb + off, sizeof(qpn));
	if (qpn)
		ops->qpn_used(owners[dfd].host, qpn);
}

int emu_ucma_srv_write(int sock, int dfd, int pid, const uint8_t *body, size_t len)
{
	union {
		uint64_t align;
		uint8_t b[sizeof(struct rdma_ucm_cmd_hdr) + EMU_DUCMA_MAX_IN + 8];
	} cmd;
	union {
		uint64_t align;
		uint8_t b[EMU_DUCMA_MAX_OUT];
	} resp;
	union {
		uint64_t align;
		uint8_t b[EMU_DUCMA_MAX_OPT];
	} opt;
	struct emu_ducma_write w;
	struct rdma_ucm_cmd_hdr hdr;
	struct emu_ducma_ptrs ptrs;
	uint8_t *cb = cmd.b + sizeof(hdr);
	size_t in;
	ssize_t ret;

	if (len < sizeof(w))
		return -1;
	memcpy(&w, body, sizeof(w));
	if (w.in < sizeof(hdr) || w.in > sizeof(hdr) + EMU_DUCMA_MAX_IN ||
	    w.out > EMU_DUCMA_MAX_OUT || w.opt > EMU_DUCMA_MAX_OPT ||
	    len != sizeof(w) + w.in + w.opt)
		return -1;
	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.b, body + sizeof(w), w.in);
	/* protocol 8: the response buffer's bytes stay with the client; the answer carries the
	 * ones the command wrote (emu_ucma_written), which the client lays over its buffer */
	memset(resp.b, 0, w.out);
	memcpy(opt.b, body + sizeof(w) + w.in, w.opt);
	memcpy(&hdr, cmd.b, sizeof(hdr));
	/* the command describes only the bytes that came */
	if (hdr.in > w.in - sizeof(hdr))
		hdr.in = (uint16_t)(w.in - sizeof(hdr));
	if (hdr.out > w.out)
		hdr.out = (uint16_t)w.out;
	ptrs = emu_ducma_ptrs_of(hdr.cmd);
	if (ptrs.resp >= 0) {
		/* the response goes to the daemon's copy, also when the command was too short to
		 * hold the address (the kernel zero-fills it and would fail the copy; here the
		 * client's own NULL address makes it skip the copy back) */
		uint64_t a = (uintptr_t)resp.b;

		memcpy(cb + ptrs.resp, &a, sizeof(a));
		if (hdr.in < (size_t)ptrs.resp + 8)
			hdr.in = (uint16_t)(ptrs.resp + 8);
	}
	if (ptrs.opt >= 0 && (size_t)ptrs.opt_len + 4 <= hdr.in) {
		uint64_t a;
		uint32_t optlen;

		memcpy(&a, cb + ptrs.opt, sizeof(a));
		memcpy(&optlen, cb + ptrs.opt_len, sizeof(optlen));
		if (a && optlen <= (1u << 22)) {
			if (optlen != w.opt)
				return -1;
			a = (uintptr_t)opt.b;
			memcpy(cb + ptrs.opt, &a, sizeof(a));
		}
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_MIGRATE_ID &&
	    offsetof(struct rdma_ucm_migrate_id, fd) + 4 <= hdr.in) {
		uint8_t *p = cb + offsetof(struct rdma_ucm_migrate_id, fd);
		int32_t src;

		memcpy(&src, p, sizeof(src));
		/* -1: the client's fd was closed (ENOENT); a file of another process, or no
		 * file: this connection's socket, open and no rdma_cm file (EINVAL) */
		if (src != -1 && (src < 0 || (size_t)src >= nowner || owners[src].pid != pid ||
				  !emu_ucma_is_file(src)))
			src = sock;
		else if (src >= 0 && src != dfd)
			drain_consumed(src);
		memcpy(p, &src, sizeof(src));
	}
	memcpy(cmd.b, &hdr, sizeof(hdr));
	in = sizeof(hdr) + hdr.in;
	if ((size_t)dfd >= nowner || owners[dfd].broken)
		return -1;
	/* the answer in the same hold of the engine lock as the command (one acquisition of
	 * a lock the engine thread contends), behind the events the command pushed and any
	 * still queued: the client has them all when it reads the answer */
	emu_engine_lock(emu_engine_get());
	{
		uint32_t id = 0;
		uint16_t ps;
		uint8_t qp_type;
		bool fresh;

		if (ptrs.id >= 0)
			memcpy(&id, cb + ptrs.id, sizeof(id));
		fresh = resolve_size(hdr.cmd) && emu_ucma_id_pristine(dfd, id, &ps, &qp_type);
		note_qpn(dfd, hdr.cmd, cb, hdr.in);
		ret = emu_ucma_write_locked(dfd, cmd.b, in);
		/* the verdict goes before the answer: the client has it when the call returns */
		if (fresh && ret >= 0)
			grant(dfd, hdr.cmd, cb, hdr.in, ps, qp_type);
	}
	/* a client out of spares asked: the new ones reach it with the answer */
	if (hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID)
		top_up(dfd, false);
	ops->send(owners[dfd].ctx, EMU_DMSG_UCMA_WRITE, (uint32_t)(ret < 0 ? (int32_t)ret : 0),
		  devrm_gen, resp.b, emu_ucma_written(resp.b, w.out));
	emu_engine_unlock(emu_engine_get());
	return 0;
}

/* What a posted command did otherwise than its client said: an event of the id was on its
 * way to the client when it posted (the kernel races so between an event and the next
 * syscall too), or a bug. Said on stderr either way. */
static void post_differs(int dfd, uint32_t cmd, uint32_t id, const char *what, long client,
			 long daemon)
{
	fprintf(stderr, "rdmaemud: rdma_cm file %d: posted %s of id %u: %s %ld, the client "
		"answered %ld\n", dfd, emu_ucma_cmd_name(cmd), id, what, daemon, client);
}

int emu_ucma_srv_post(int dfd, const uint8_t *body, size_t len)
{
	union {
		uint64_t align;
		uint8_t b[sizeof(struct rdma_ucm_cmd_hdr) + EMU_DUCMA_POST_MAX];
	} cmd;
	union {
		uint64_t align;
		uint8_t b[sizeof(struct rdma_ucm_create_id_resp) +
			  sizeof(struct rdma_ucm_destroy_id_resp)];
	} resp;
	struct emu_ducma_posted ans = { 0, 0, 0, 0 };
	struct emu_ducma_post p;
	uint16_t ps = 0;
	uint8_t qp_type = 0;
	bool fresh;
	struct rdma_ucm_cmd_hdr hdr;
	struct emu_ducma_ptrs ptrs;
	size_t need;
	ssize_t ret;
	uint32_t id;

	if (len < sizeof(p) || (size_t)dfd >= nowner || owners[dfd].broken)
		return -1;
	memcpy(&p, body, sizeof(p));
	if (p.in < sizeof(hdr) || p.in > sizeof(cmd.b) || len != sizeof(p) + p.in)
		return -1;
	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.b, body + sizeof(p), p.in);
	memcpy(&hdr, cmd.b, sizeof(hdr));
	/* what a client posts: the commands it can answer, whole */
	need = emu_ducma_post_size(hdr.cmd);
	if (!need)
		return -1;
	if (hdr.in != need || p.in != sizeof(hdr) + need)
		return -1;
	ptrs = emu_ducma_ptrs_of(hdr.cmd);
	hdr.out = 0;
	if (ptrs.resp >= 0) {
		uint64_t a = (uintptr_t)resp.b;

		memcpy(cmd.b + sizeof(hdr) + ptrs.resp, &a, sizeof(a));
		hdr.out = sizeof(resp.b);
	}
	memcpy(cmd.b, &hdr, sizeof(hdr));
	id = p.val; /* CREATE_ID: the handle */
	if (ptrs.id >= 0)
		memcpy(&id, cmd.b + sizeof(hdr) + ptrs.id, sizeof(id));
	emu_engine_lock(emu_engine_get());
	if (hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID && !take_spare(dfd, p.val)) {
		emu_engine_unlock(emu_engine_get());
		fprintf(stderr, "rdmaemud: rdma_cm file %d: posted CREATE_ID at handle %u, not one "
			"of its spares: closing it\n", dfd, p.val);
		return -1;
	}
	/* a RESOLVE_ADDR is posted on a verdict for ids as CREATE_ID left them */
	fresh = resolve_size(hdr.cmd) && emu_ucma_id_pristine(dfd, id, &ps, &qp_type);
	if (resolve_size(hdr.cmd) && !fresh)
		fprintf(stderr, "rdmaemud: rdma_cm file %d: posted %s of id %u: the id was used "
			"before\n", dfd, emu_ucma_cmd_name(hdr.cmd), id);
	note_qpn(dfd, hdr.cmd, cmd.b + sizeof(hdr), need);
	ret = emu_ucma_post_locked(dfd, cmd.b, sizeof(hdr) + need,
				   hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID ? p.val : UINT32_MAX);
	ret = ret < 0 ? ret : 0;
	/* the verdict renewed before the client runs out, while it holds */
	if (!ret && fresh && owners[dfd].verdict &&
	    ++owners[dfd].verdict_posts >= EMU_DUCMA_VERDICT_USES / 2)
		grant(dfd, hdr.cmd, cmd.b + sizeof(hdr), need, ps, qp_type);
	if (ret != p.ret) {
		post_differs(dfd, hdr.cmd, id, "returned", p.ret, (long)ret);
		/* the kernel's answer to a resolution that fails after the call returned */
		if (resolve_size(hdr.cmd))
			emu_ucma_addr_error(dfd, id, (int)ret);
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID) {
		if (ret)
			emu_cma_id_unreserve(p.val);
		top_up(dfd, false);
	} else if (hdr.cmd == RDMA_USER_CM_CMD_DESTROY_ID && !ret) {
		struct rdma_ucm_destroy_id_resp r;

		memcpy(&r, resp.b, sizeof(r));
		ans.val = r.events_reported;
		if (ans.val != p.val)
			post_differs(dfd, hdr.cmd, id, "events_reported", p.val, ans.val);
	}
	if (p.flags & EMU_DUCMA_POST_ACK) {
		ans.cmd = hdr.cmd;
		ans.id = id;
		ops->send(owners[dfd].ctx, EMU_DMSG_UCMA_POSTED, (uint32_t)(int32_t)ret, devrm_gen,
			  &ans, sizeof(ans));
	}
	emu_engine_unlock(emu_engine_get());
	return 0;
}

void emu_ucma_srv_close(int dfd)
{
	if (dfd < 0)
		return;
	emu_cma_trace("rdmaemud: rdma_cm file %d closed", dfd);
	if ((size_t)dfd < nowner) {
		emu_engine_lock(emu_engine_get());
		while (owners[dfd].nspare)
			emu_cma_id_unreserve(owners[dfd].spare[--owners[dfd].nspare]);
		emu_engine_unlock(emu_engine_get());
		owners[dfd] = (struct owner){ .sock = -1 };
	}
	emu_ucma_close(dfd);
	nfiles--;
}

unsigned emu_ucma_srv_count(void)
{
	return nfiles;
}

size_t emu_ucma_srv_status(int dfd, int pid, char *buf, size_t len)
{
	unsigned nids, nlisten, nmcs;
	int n;

	if (emu_ucma_file_stats(dfd, &nids, &nlisten, &nmcs))
		return 0;
	n = snprintf(buf, len, "rdma_cm file %d process %d ids %u listen %u mcast %u\n", dfd, pid,
		     nids, nlisten, nmcs);
	return n < 0 ? 0 : (size_t)n >= len ? len - 1 : (size_t)n;
}
