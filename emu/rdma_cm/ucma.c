/* ucma: the rdma_cm character device of the emulated kernel. Files (event channels), the
 * command table and the commands' marshalling, after Linux 6.1's drivers/infiniband/core/ucma.c:
 * every command is a struct rdma_ucm_* preceded by struct rdma_ucm_cmd_hdr, and responses go to
 * the user buffer whose address the command carries (in-process, a plain pointer). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "emu/hca/pkt.h"
#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/sim/process.h"
#include "emu/rdma_cm/ucma.h"
#include "util/failcall.h"

/* ---- the transport of the file interface ---- */

static int local_close(int fd);
static bool local_is_file(int fd);
static ssize_t local_write(int fd, const void *buf, size_t len);

/* This process's emulated kernel: the files below. */
static const struct emu_ucma_transport local_transport = {
	.open = emu_ucma_open_host,
	.write = local_write,
	.close = local_close,
	.is_file = local_is_file,
};

/* Set while the process attaches, before any file can exist (a file needs the host). */
static const struct emu_ucma_transport *transport = &local_transport;

void emu_ucma_set_transport(const struct emu_ucma_transport *t)
{
	__atomic_store_n(&transport, t ? t : &local_transport, __ATOMIC_RELEASE);
}

static const struct emu_ucma_transport *transport_of(void)
{
	return __atomic_load_n(&transport, __ATOMIC_ACQUIRE);
}

int emu_ucma_open(void)
{
	/* attaches first: the attach installs the transport */
	const struct emu_host *h = emu_process_cm_host();

	return transport_of()->open(h);
}

bool emu_ucma_is_file(int fd)
{
	return transport_of()->is_file(fd);
}

int emu_ucma_close(int fd)
{
	return transport_of()->close(fd);
}

ssize_t emu_ucma_write(int fd, const void *buf, size_t len)
{
	return transport_of()->write(fd, buf, len);
}

/* ---- files ---- */

static struct emu_ucma_file **files; /* indexed by fd */
static int nfiles;

static struct emu_ucma_file *file_of(int fd)
{
	return fd >= 0 && fd < nfiles ? files[fd] : NULL;
}

static int open_file(const struct emu_host *h, emu_ucma_push_fn push, void *ctx)
{
	struct emu_engine *e = emu_engine_get();
	struct emu_ucma_file *f;
	int fd;

	if (!h || !e)
		return -ENODEV;
	f = emu_calloc(1, sizeof *f);
	if (!f)
		return -ENOMEM;
	fd = push ? emu_eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE) : emu_engine_eventfd_new();
	if (fd < 0) {
		int err = errno;

		free(f);
		return -err;
	}
	f->fd = fd;
	f->host = h;
	f->push = push;
	f->push_ctx = ctx;
	emu_list_init(&f->events);
	emu_list_init(&f->ids);
	emu_engine_lock(e);
	if (fd >= nfiles) {
		int n = fd + 16;
		struct emu_ucma_file **t = emu_realloc(files, (size_t)n * sizeof *t);

		if (!t) {
			emu_engine_unlock(e);
			close(fd);
			free(f);
			return -ENOMEM;
		}
		memset(t + nfiles, 0, (size_t)(n - nfiles) * sizeof *t);
		files = t;
		nfiles = n;
	}
	files[fd] = f;
	emu_engine_unlock(e);
	return fd;
}

int emu_ucma_open_host(const struct emu_host *h)
{
	return open_file(h, NULL, NULL);
}

int emu_ucma_open_push(const struct emu_host *h, emu_ucma_push_fn push, void *ctx)
{
	return open_file(h, push, ctx);
}

static bool local_is_file(int fd)
{
	struct emu_engine *e;
	bool ret;

	e = emu_engine_get();
	if (!e)
		return false;
	emu_engine_lock(e);
	ret = file_of(fd) != NULL;
	emu_engine_unlock(e);
	return ret;
}

static int local_close(int fd)
{
	struct emu_engine *e;
	struct emu_ucma_file *f;

	e = emu_engine_get();
	if (e) {
		emu_engine_lock(e);
		f = file_of(fd);
		if (f) {
			/* ucma_close: every id still on the file goes */
			while (!emu_list_empty(&f->ids))
				emu_cma_id_destroy(emu_list_entry(f->ids.next, struct emu_cma_id,
								  file_node));
			while (!emu_list_empty(&f->events)) {
				struct emu_ucma_event *ev =
					emu_list_entry(f->events.next, struct emu_ucma_event, node);

				emu_list_del(&ev->node);
				emu_kmem_free(ev);
			}
			files[fd] = NULL;
			free(f);
		}
		emu_engine_unlock(e);
	}
	return close(fd) ? -errno : 0;
}

/* ---- helpers of the commands ---- */

#define RESP(ptr) ((void *)(uintptr_t)(ptr))

/* The end of what the command being run wrote into its response buffer: rdmaemud answers a
 * UCMA_WRITE with those bytes only (emu_ucma_written), so the bytes of the
 * application's buffer a command does not write stay as they were without the process
 * sending them (they are often uninitialised: valgrind said so of every round trip). Every
 * write into a response buffer goes through resp_put, or is marked with resp_mark. */
static uintptr_t resp_end;

static void resp_mark(void *dst, size_t len)
{
	if ((uintptr_t)dst + len > resp_end)
		resp_end = (uintptr_t)dst + len;
}

static void resp_put(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	resp_mark(dst, len);
}

/* _ucma_find_context: the id of this file with that handle. */
static struct emu_cma_id *find_ctx(struct emu_ucma_file *f, uint32_t handle, int *err)
{
	struct emu_cma_id *id = emu_cma_id_lookup(handle);

	if (!id) {
		*err = -ENOENT;
		return NULL;
	}
	if (id->file != f) {
		*err = -EINVAL;
		return NULL;
	}
	return id;
}

/* ucma_get_ctx: the same, and the context must still hold its reference, which close_work
 * dropped after a DEVICE_REMOVAL (refcount_inc_not_zero fails: ENXIO). */
static struct emu_cma_id *get_ctx(struct emu_ucma_file *f, uint32_t handle, int *err)
{
	struct emu_cma_id *id = find_ctx(f, handle, err);

	if (id && id->closed) {
		*err = -ENXIO;
		return NULL;
	}
	return id;
}

/* ucma_get_ctx_dev: the same, and it must have a device. */
static struct emu_cma_id *get_ctx_dev(struct emu_ucma_file *f, uint32_t handle, int *err)
{
	struct emu_cma_id *id = get_ctx(f, handle, err);

	if (id && id->dev < 0) {
		*err = -EINVAL;
		return NULL;
	}
	return id;
}

/* Copies the command body (zero-filled when the caller sent less). */
#define GET_CMD(cmd, in, in_len)                                                          \
	do {                                                                              \
		memset(&(cmd), 0, sizeof(cmd));                                           \
		memcpy(&(cmd), (in), (in_len) < sizeof(cmd) ? (in_len) : sizeof(cmd));   \
	} while (0)

static size_t kss_size(const struct __kernel_sockaddr_storage *ss)
{
	return emu_cma_addr_size((const struct sockaddr *)ss);
}

/* ---- commands ---- */

/* The handle a posted CREATE_ID takes (emu_ucma_post_locked), UINT32_MAX otherwise. */
static uint32_t post_handle = UINT32_MAX;

static int cmd_create_id(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	struct emu_cma_id *id;
	uint8_t qp_type;

	GET_CMD(cmd, in, in_len);
	if (out_len < sizeof resp)
		return -ENOSPC;
	/* ucma_get_qp_type */
	switch (cmd.ps) {
	case EMU_CMA_PS_TCP:
		qp_type = 2; /* IB_QPT_RC */
		break;
	case EMU_CMA_PS_UDP: case EMU_CMA_PS_IPOIB:
		qp_type = 4; /* IB_QPT_UD */
		break;
	case EMU_CMA_PS_IB:
		qp_type = cmd.qp_type;
		break;
	default:
		return -EINVAL;
	}
	id = emu_cma_id_new_at(f, cmd.uid, cmd.ps, qp_type, post_handle);
	if (!id)
		return -ENOMEM;
	resp.id = id->handle;
	resp_put(RESP(cmd.response), &resp, sizeof resp);
	return 0;
}

static int cmd_destroy_id(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct emu_cma_id *id;
	int err;

	GET_CMD(cmd, in, in_len);
	if (out_len < sizeof resp)
		return -ENOSPC;
	/* ucma_destroy_id looks the context up without taking a reference: a context closed by
	 * device removal is destroyed like any other */
	id = find_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	resp.events_reported = id->events_reported;
	emu_cma_id_destroy(id);
	resp_put(RESP(cmd.response), &resp, sizeof resp);
	return 0;
}

static int cmd_bind_ip(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_bind_ip cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (!emu_cma_addr_size((const struct sockaddr *)&cmd.addr))
		return -EINVAL;
	id = get_ctx(f, cmd.id, &err);
	return id ? emu_cma_bind(id, (const struct sockaddr *)&cmd.addr) : err;
}

static int cmd_bind(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_bind cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (cmd.reserved || !cmd.addr_size || cmd.addr_size != kss_size(&cmd.addr))
		return -EINVAL;
	id = get_ctx(f, cmd.id, &err);
	return id ? emu_cma_bind(id, (const struct sockaddr *)&cmd.addr) : err;
}

static int cmd_resolve_ip(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_resolve_ip cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if ((cmd.src_addr.sin6_family &&
	     !emu_cma_addr_size((const struct sockaddr *)&cmd.src_addr)) ||
	    !emu_cma_addr_size((const struct sockaddr *)&cmd.dst_addr))
		return -EINVAL;
	id = get_ctx(f, cmd.id, &err);
	return id ? emu_cma_resolve_addr(id, (const struct sockaddr *)&cmd.src_addr,
					 (const struct sockaddr *)&cmd.dst_addr, cmd.timeout_ms) :
		    err;
}

static int cmd_resolve_addr(struct emu_ucma_file *f, const void *in, size_t in_len,
			    size_t out_len)
{
	struct rdma_ucm_resolve_addr cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (cmd.reserved || (cmd.src_size && cmd.src_size != kss_size(&cmd.src_addr)) ||
	    !cmd.dst_size || cmd.dst_size != kss_size(&cmd.dst_addr))
		return -EINVAL;
	id = get_ctx(f, cmd.id, &err);
	return id ? emu_cma_resolve_addr(id, (const struct sockaddr *)&cmd.src_addr,
					 (const struct sockaddr *)&cmd.dst_addr, cmd.timeout_ms) :
		    err;
}

static int cmd_resolve_route(struct emu_ucma_file *f, const void *in, size_t in_len,
			     size_t out_len)
{
	struct rdma_ucm_resolve_route cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	id = get_ctx_dev(f, cmd.id, &err);
	return id ? emu_cma_resolve_route(id, cmd.timeout_ms) : err;
}

/* The GIDs of the id as the kernel's rdma_read_gids sees them: RoCE ports report both addresses as GIDs (rdma_ip2gid, IPv4-mapped), so a
 * loopback-bound id shows ::ffff:127.0.0.1; IB ports the port GID and the GID resolved from
 * the destination's IPoIB hardware address. */
static void id_gid(const struct emu_cma_id *id, bool src, uint8_t gid[16])
{
	const struct emu_port *p;

	memset(gid, 0, 16);
	if (id->dev < 0)
		return;
	p = &id->host->devices[id->dev].ports[id->port - 1];
	if (p->link_layer != 1 /* IBV_LINK_LAYER_INFINIBAND */)
		emu_gid_from_sockaddr((const struct sockaddr *)(src ? &id->src : &id->dst), gid);
	else if (!src)
		memcpy(gid, id->dgid, 16);
	else if (id->gid_index >= 0 && (size_t)id->gid_index < p->ngids)
		memcpy(gid, p->gids[id->gid_index].raw, 16);
}


static void fill_dev(const struct emu_cma_id *id, struct rdma_ucm_query_addr_resp *resp)
{
	if (id->dev < 0)
		return;
	resp->node_guid = id->host->devices[id->dev].node_guid;
	resp->port_num = id->port;
	resp->ibdev_index = (uint32_t)id->dev;
}

static int query_addr(struct emu_cma_id *id, void *out, size_t out_len)
{
	struct rdma_ucm_query_addr_resp resp;

	if (out_len < sizeof resp)
		return -ENOSPC;
	memset(&resp, 0, sizeof resp);
	fill_dev(id, &resp);
	if (id->dev >= 0)
		resp.pkey = htons(id->pkey); /* the kernel sends it big-endian */
	resp.src_size = (uint16_t)emu_cma_addr_size((const struct sockaddr *)&id->src);
	memcpy(&resp.src_addr, &id->src, resp.src_size);
	resp.dst_size = (uint16_t)emu_cma_addr_size((const struct sockaddr *)&id->dst);
	memcpy(&resp.dst_addr, &id->dst, resp.dst_size);
	resp_put(out, &resp, sizeof resp);
	return 0;
}

static int query_gid(struct emu_cma_id *id, void *out, size_t out_len)
{
	struct rdma_ucm_query_addr_resp resp;
	struct emu_sockaddr_ib sib;

	if (out_len < sizeof resp)
		return -ENOSPC;
	memset(&resp, 0, sizeof resp);
	fill_dev(id, &resp);
	for (int side = 0; side < 2; side++) {
		const struct sockaddr *a = (const struct sockaddr *)(side ? &id->dst : &id->src);

		if (a->sa_family == 27) { /* AF_IB: the address itself (ucma_query_gid) */
			memcpy(side ? (void *)&resp.dst_addr : (void *)&resp.src_addr, a, sizeof sib);
			continue;
		}
		memset(&sib, 0, sizeof sib);
		sib.sib_family = 27; /* AF_IB */
		sib.sib_pkey = htons(id->dev >= 0 ? id->pkey : 0);
		id_gid(id, side == 0, sib.sib_addr);
		/* rdma_get_service_id: (ps << 16) + port */
		sib.sib_sid = htobe64(((uint64_t)id->ps << 16) + emu_cma_port(a));
		sib.sib_sid_mask = ~0ull;
		memcpy(side ? (void *)&resp.dst_addr : (void *)&resp.src_addr, &sib, sizeof sib);
	}
	resp.src_size = resp.dst_size = sizeof sib;
	resp_put(out, &resp, sizeof resp);
	return 0;
}

static int query_path(struct emu_cma_id *id, void *out, size_t out_len)
{
	struct rdma_ucm_query_path_resp resp;
	size_t room;

	if (out_len < sizeof resp)
		return -ENOSPC;
	room = (out_len - sizeof resp) / sizeof(struct ib_path_rec_data);
	memset(&resp, 0, sizeof resp);
	resp.num_paths = id->npaths;
	resp_put(out, &resp, sizeof resp);
	for (unsigned i = 0; i < id->npaths && i < room; i++)
		resp_put((char *)out + sizeof resp + i * sizeof(struct ib_path_rec_data),
		       &id->paths[i], sizeof(struct ib_path_rec_data));
	return 0;
}

/* ucma_query_ib_service: ENOSPC below the 4-byte header, ENODATA without records; a buffer
 * with room for no record gets nothing written (the kernel skips the copy) and 0. */
static int query_ib_service(struct emu_cma_id *id, void *out, size_t out_len)
{
	uint32_t num = id->nservice_recs;
	size_t room;

	if (out_len < sizeof num)
		return -ENOSPC;
	if (!id->service_recs)
		return -ENODATA;
	room = (out_len - sizeof num) / EMU_UCMA_SERVICE_REC_SIZE;
	if (!room)
		return 0;
	if (room > num)
		room = num;
	resp_put(out, &num, sizeof num);
	resp_put((char *)out + sizeof num, id->service_recs, room * EMU_UCMA_SERVICE_REC_SIZE);
	return 0;
}

static int cmd_query(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_query cmd;
	struct emu_cma_id *id;
	int err;

	GET_CMD(cmd, in, in_len);
	id = get_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
		return query_addr(id, RESP(cmd.response), out_len);
	case RDMA_USER_CM_QUERY_PATH:
		return query_path(id, RESP(cmd.response), out_len);
	case RDMA_USER_CM_QUERY_GID:
		return query_gid(id, RESP(cmd.response), out_len);
	case EMU_UCMA_QUERY_IB_SERVICE:
		return query_ib_service(id, RESP(cmd.response), out_len);
	default:
		return -ENOSYS;
	}
}

static int cmd_connect(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_connect cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (!cmd.conn_param.valid)
		return -EINVAL;
	id = get_ctx_dev(f, cmd.id, &err);
	return id ? emu_cma_connect(id, &cmd.conn_param, &cmd.ece) : err;
}

static int cmd_listen(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_listen cmd;
	struct emu_cma_id *id;
	int err, backlog;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	id = get_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	backlog = (int)cmd.backlog;
	if (backlog <= 0 || backlog > EMU_CMA_MAX_BACKLOG)
		backlog = EMU_CMA_MAX_BACKLOG;
	return emu_cma_listen(id, backlog);
}

static int cmd_accept(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_accept cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	id = get_ctx_dev(f, cmd.id, &err);
	if (!id)
		return err;
	if (cmd.conn_param.valid)
		id->uid = cmd.uid;
	return emu_cma_accept(id, cmd.conn_param.valid ? &cmd.conn_param : NULL, &cmd.ece);
}

static int cmd_reject(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_reject cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (!cmd.reason)
		cmd.reason = 28; /* IB_CM_REJ_CONSUMER_DEFINED */
	if (cmd.reason != 28 && cmd.reason != 35 /* VENDOR_OPTION_NOT_SUPPORTED */)
		return -EINVAL;
	id = get_ctx_dev(f, cmd.id, &err);
	return id ? emu_cma_reject(id, cmd.private_data, cmd.private_data_len, cmd.reason) : err;
}

static int cmd_disconnect(struct emu_ucma_file *f, const void *in, size_t in_len,
			  size_t out_len)
{
	struct rdma_ucm_disconnect cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	id = get_ctx_dev(f, cmd.id, &err);
	return id ? emu_cma_disconnect(id) : err;
}

static int cmd_init_qp_attr(struct emu_ucma_file *f, const void *in, size_t in_len,
			    size_t out_len)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr resp;
	struct emu_cma_id *id;
	int err;

	GET_CMD(cmd, in, in_len);
	if (out_len < sizeof resp)
		return -ENOSPC;
	if (cmd.qp_state > 6 /* IB_QPS_ERR */)
		return -EINVAL;
	id = get_ctx_dev(f, cmd.id, &err);
	if (!id)
		return err;
	memset(&resp, 0, sizeof resp);
	resp.qp_state = cmd.qp_state;
	err = emu_cma_init_qp_attr(id, &resp);
	if (err)
		return err;
	resp_put(RESP(cmd.response), &resp, sizeof resp);
	return 0;
}

/* rdmaemud serves files for other processes: it never sleeps in a GET_EVENT (its client
 * sleeps in poll() on the file's eventfd and asks again). */
static bool ucma_nowait;

void emu_ucma_set_nowait(bool on)
{
	ucma_nowait = on;
}

bool emu_ucma_file_ready(int fd)
{
	struct emu_engine *e = emu_engine_get();
	struct emu_ucma_file *f;
	bool ret;

	if (!e)
		return false;
	emu_engine_lock(e);
	f = file_of(fd);
	ret = f && !emu_list_empty(&f->events);
	emu_engine_unlock(e);
	return ret;
}

int emu_ucma_file_stats(int fd, unsigned *nids, unsigned *nlisten, unsigned *nmcs)
{
	struct emu_engine *e = emu_engine_get();
	struct emu_ucma_file *f;
	struct emu_list *ip, *mp;

	if (!e)
		return -ENODEV;
	emu_engine_lock(e);
	f = file_of(fd);
	*nids = *nlisten = *nmcs = 0;
	if (f)
		for (ip = f->ids.next; ip != &f->ids; ip = ip->next) {
			struct emu_cma_id *id = emu_list_entry(ip, struct emu_cma_id, file_node);

			++*nids;
			*nlisten += id->state == EMU_CMA_LISTEN;
			for (mp = id->mcs.next; mp != &id->mcs; mp = mp->next)
				++*nmcs;
		}
	emu_engine_unlock(e);
	return f ? 0 : -EBADF;
}

static bool file_has_event(void *arg)
{
	return !emu_list_empty(&((struct emu_ucma_file *)arg)->events);
}

static void event_read(struct emu_ucma_file *f, struct emu_ucma_event *ev);

static int cmd_get_event(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_get_event cmd;
	struct rdma_ucm_event_resp resp;
	struct emu_ucma_event *ev;
	size_t len;

	GET_CMD(cmd, in, in_len);
	/* the only failure before the wait (ucma_get_event): nothing else can fail until an
	 * event is there, which emu/link/ucma_link.c relies on */
	if (out_len < EMU_UCMA_GET_EVENT_MIN_OUT)
		return -ENOSPC;
	/* a push file's client reads its own copy of the queue (UCMA_CONSUMED): an event
	 * taken here would be read twice */
	if (f->push)
		return -EINVAL;
	if (emu_list_empty(&f->events)) {
		int fl = fcntl(f->fd, F_GETFL);
		int ret;

		if ((fl >= 0 && (fl & O_NONBLOCK)) || ucma_nowait)
			return -EAGAIN;
		/* the kernel's ucma_get_event waits interruptibly: EINTR for a handler
		 * without SA_RESTART */
		ret = emu_engine_wait_interruptible(emu_engine_get(), "rdma_get_cm_event",
						    file_has_event, f);
		if (ret)
			return -ret;
	}
	ev = emu_list_entry(f->events.next, struct emu_ucma_event, node);
	if (out_len >= sizeof resp &&
	    !((uintptr_t)cmd.response % _Alignof(struct rdma_ucm_event_resp))) {
		/* straight into the caller's buffer */
		emu_ucma_event_resp(ev, RESP(cmd.response));
		resp_mark(RESP(cmd.response), sizeof resp);
	} else {
		emu_ucma_event_resp(ev, &resp);
		len = out_len < sizeof resp ? out_len : sizeof resp;
		resp_put(RESP(cmd.response), &resp, len);
	}
	event_read(f, ev);
	return 0;
}

/* What reading event ev (the head of f's queue) does after the copy, for GET_EVENT here and
 * for a push file's UCMA_CONSUMED. */
static void event_read(struct emu_ucma_file *f, struct emu_ucma_event *ev)
{
	emu_list_del(&ev->node);
	f->nevents--;
	/* a push file's client took the event's 1 off the semaphore itself */
	if (!f->nevents && !f->push)
		emu_engine_fd_clear(f->fd);
	/* ucma_connect_event_handler queues a CONNECT_REQUEST on the listener's context: it
	 * counts for the listener, whose destroy waits for its ack */
	if (ev->event == EMU_CMA_EVENT_CONNECT_REQUEST && ev->id->listen)
		ev->id->listen->events_reported++;
	else
		ev->id->events_reported++;
	if (ev->mc)
		ev->mc->events_reported++;
	if (ev->event == EMU_CMA_EVENT_CONNECT_REQUEST && ev->id->listen) {
		/* the backlog slot comes back when the request is read */
		ev->id->listen->backlog++;
		ev->id->listen = NULL;
	}
	emu_ucma_event_put(f, ev);
}

int emu_ucma_consumed(int fd, uint32_t seq, uint32_t count)
{
	struct emu_engine *e = emu_engine_get();
	struct emu_ucma_file *f;
	int ret = -EBADF;

	if (!e)
		return -ENODEV;
	emu_engine_lock(e);
	f = file_of(fd);
	if (f && f->push) {
		ret = count ? 0 : -EPROTO;
		/* the client reads its copy from the head, as GET_EVENT reads the queue */
		while (!ret && count--) {
			struct emu_ucma_event *ev = emu_list_empty(&f->events) ? NULL :
				emu_list_entry(f->events.next, struct emu_ucma_event, node);

			if (!ev || ev->seq > seq || (!count && ev->seq != seq))
				ret = -EPROTO;
			else
				event_read(f, ev);
		}
	}
	emu_engine_unlock(e);
	return ret;
}

static int cmd_set_option(struct emu_ucma_file *f, const void *in, size_t in_len,
			  size_t out_len)
{
	struct rdma_ucm_set_option cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	if (cmd.optlen > (1u << 22)) /* KMALLOC_MAX_SIZE */
		return -EINVAL;
	id = get_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	if (cmd.optlen && !cmd.optval)
		return -EFAULT;
	return emu_cma_set_option(id, cmd.level, cmd.optname, RESP(cmd.optval), cmd.optlen);
}

static int cmd_notify(struct emu_ucma_file *f, const void *in, size_t in_len, size_t out_len)
{
	struct rdma_ucm_notify cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	GET_CMD(cmd, in, in_len);
	id = get_ctx_dev(f, cmd.id, &err);
	return id ? emu_cma_notify(id, cmd.event) : err;
}

static uint32_t next_mc_handle;

static int process_join(struct emu_ucma_file *f, uint32_t handle, uint64_t uid,
			const struct sockaddr *addr, uint16_t join_flags, uint64_t response,
			size_t out_len)
{
	struct rdma_ucm_create_id_resp resp;
	struct emu_cma_mc *mc;
	struct emu_cma_id *id;
	int err;

	if (out_len < sizeof resp)
		return -ENOSPC;
	if (join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	    join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return -EINVAL;
	id = get_ctx_dev(f, handle, &err);
	if (!id)
		return err;
	mc = emu_calloc(1, sizeof *mc);
	if (!mc)
		return -ENOMEM;
	mc->handle = next_mc_handle++;
	mc->uid = uid;
	mc->id = id;
	mc->join_flags = (uint8_t)join_flags;
	memcpy(&mc->addr, addr, emu_cma_addr_size(addr));
	err = emu_cma_join(id, mc);
	if (err) {
		free(mc);
		return err;
	}
	emu_list_add_tail(&id->mcs, &mc->node);
	resp.id = mc->handle;
	resp_put(RESP(response), &resp, sizeof resp);
	return 0;
}

static int cmd_join_ip_mcast(struct emu_ucma_file *f, const void *in, size_t in_len,
			     size_t out_len)
{
	struct rdma_ucm_join_ip_mcast cmd;

	GET_CMD(cmd, in, in_len);
	if (!emu_cma_addr_size((const struct sockaddr *)&cmd.addr))
		return -EINVAL;
	return process_join(f, cmd.id, cmd.uid, (const struct sockaddr *)&cmd.addr,
			    RDMA_MC_JOIN_FLAG_FULLMEMBER, cmd.response, out_len);
}

static int cmd_join_mcast(struct emu_ucma_file *f, const void *in, size_t in_len,
			  size_t out_len)
{
	struct rdma_ucm_join_mcast cmd;

	GET_CMD(cmd, in, in_len);
	if (!kss_size(&cmd.addr) || cmd.addr_size != kss_size(&cmd.addr))
		return -EINVAL;
	return process_join(f, cmd.id, cmd.uid, (const struct sockaddr *)&cmd.addr,
			    cmd.join_flags, cmd.response, out_len);
}

/* Leaves mc: the module lets go of the group, queued events of the membership are dropped. */
static void leave_one(struct emu_ucma_file *f, struct emu_cma_id *id, struct emu_cma_mc *mc,
		      struct rdma_ucm_destroy_id_resp *resp)
{
	struct emu_list *ep, *et;

	emu_cma_leave(id, mc);
	emu_list_for_each_safe(ep, et, &f->events) {
		struct emu_ucma_event *ev = emu_list_entry(ep, struct emu_ucma_event, node);

		if (ev->mc != mc)
			continue;
		emu_ucma_event_unqueue(f, ev);
		emu_ucma_event_put(f, ev);
	}
	resp->events_reported = mc->events_reported;
	emu_list_del(&mc->node);
	free(mc);
}

static int cmd_leave_mcast(struct emu_ucma_file *f, const void *in, size_t in_len,
			   size_t out_len)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct emu_list *pos, *tmp;

	GET_CMD(cmd, in, in_len);
	if (out_len < sizeof resp)
		return -ENOSPC;
	for (int fd = 0; fd < nfiles; fd++) {
		struct emu_list *ip, *it;

		if (!files[fd])
			continue;
		emu_list_for_each_safe(ip, it, &files[fd]->ids) {
			struct emu_cma_id *id = emu_list_entry(ip, struct emu_cma_id, file_node);

			emu_list_for_each_safe(pos, tmp, &id->mcs) {
				struct emu_cma_mc *mc = emu_list_entry(pos, struct emu_cma_mc, node);

				if (mc->handle != cmd.id)
					continue;
				if (id->file != f)
					return -EINVAL;
				if (id->closed) /* ucma_leave_multicast's refcount_inc_not_zero */
					return -ENXIO;
				leave_one(f, id, mc, &resp);
				resp_put(RESP(cmd.response), &resp, sizeof resp);
				return 0;
			}
		}
	}
	return -ENOENT;
}

static int cmd_migrate_id(struct emu_ucma_file *f, const void *in, size_t in_len,
			  size_t out_len)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp;
	struct emu_ucma_file *cur;
	struct emu_cma_id *id;
	struct emu_list *pos, *tmp;
	int err;

	GET_CMD(cmd, in, in_len);
	if (out_len < sizeof resp)
		return -ENOSPC;
	if (fcntl((int)cmd.fd, F_GETFD) < 0)
		return -ENOENT;
	cur = file_of((int)cmd.fd);
	if (!cur)
		return -EINVAL;
	id = get_ctx(cur, cmd.id, &err);
	if (!id)
		return err;
	if (cur != f) {
		/* ucma_move_events: the id's queued events follow it, in order */
		emu_list_for_each_safe(pos, tmp, &cur->events) {
			struct emu_ucma_event *ev = emu_list_entry(pos, struct emu_ucma_event, node);

			if (ev->id != id)
				continue;
			/* a push file: DROP on cur, EVENT (a new sequence number) on f */
			emu_ucma_event_unqueue(cur, ev);
			emu_ucma_event_queue(f, ev);
		}
		/* cur's client waits for this after the answer, so that the DROPs it brings
		 * are applied to its copy before it reads cur again */
		if (cur->push)
			cur->push(cur->push_ctx, cur->fd, EMU_UCMA_PUSH_MOVED, 0, NULL);
		emu_list_del(&id->file_node);
		emu_list_add_tail(&f->ids, &id->file_node);
		id->file = f;
		emu_cma_trace("cma %u: migrated from fd %d to fd %d", id->handle, cur->fd, f->fd);
	}
	resp.events_reported = id->events_reported;
	resp_put(RESP(cmd.response), &resp, sizeof resp);
	return 0;
}

static int cmd_write_cm_event(struct emu_ucma_file *f, const void *in, size_t in_len,
			      size_t out_len)
{
	struct emu_ucma_write_cm_event cmd;
	struct rdma_ucm_event_resp param;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	memset(&cmd, 0, sizeof cmd);
	/* the body follows the header in our struct, which includes the header */
	memcpy((char *)&cmd + 8, in, in_len < sizeof cmd - 8 ? in_len : sizeof cmd - 8);
	id = get_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	if (cmd.event != EMU_CMA_EVENT_USER && cmd.event != EMU_CMA_EVENT_INTERNAL)
		return -EINVAL;
	memset(&param, 0, sizeof param);
	memcpy(&param.param, &cmd.arg, sizeof cmd.arg);
	return emu_cma_event(id, NULL, cmd.event, (int32_t)cmd.status, &param);
}

static int cmd_resolve_ib_service(struct emu_ucma_file *f, const void *in, size_t in_len,
				  size_t out_len)
{
	struct emu_ucma_resolve_ib_service cmd;
	struct emu_cma_id *id;
	int err;

	(void)out_len;
	memset(&cmd, 0, sizeof cmd);
	/* the body follows the header in our struct, which includes the header */
	memcpy((char *)&cmd + 8, in, in_len < sizeof cmd - 8 ? in_len : sizeof cmd - 8);
	id = get_ctx(f, cmd.id, &err);
	if (!id)
		return err;
	return emu_cma_resolve_ib_service(id, cmd.service_id, cmd.service_name, cmd.flags);
}

typedef int (*ucma_cmd_fn)(struct emu_ucma_file *f, const void *in, size_t in_len,
			   size_t out_len);

/* The kernel's ucma_cmd_table (with the 2025 RESOLVE_IB_SERVICE). NULL: the kernel has no
 * handler (GET_OPTION; QUERY_ROUTE is not emulated yet, see docs/cma.md) and answers ENOSYS. */
static const ucma_cmd_fn cmd_table[EMU_UCMA_NCMDS] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = cmd_create_id,
	[RDMA_USER_CM_CMD_DESTROY_ID] = cmd_destroy_id,
	[RDMA_USER_CM_CMD_BIND_IP] = cmd_bind_ip,
	[RDMA_USER_CM_CMD_RESOLVE_IP] = cmd_resolve_ip,
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = cmd_resolve_route,
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = NULL,
	[RDMA_USER_CM_CMD_CONNECT] = cmd_connect,
	[RDMA_USER_CM_CMD_LISTEN] = cmd_listen,
	[RDMA_USER_CM_CMD_ACCEPT] = cmd_accept,
	[RDMA_USER_CM_CMD_REJECT] = cmd_reject,
	[RDMA_USER_CM_CMD_DISCONNECT] = cmd_disconnect,
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = cmd_init_qp_attr,
	[RDMA_USER_CM_CMD_GET_EVENT] = cmd_get_event,
	[RDMA_USER_CM_CMD_GET_OPTION] = NULL,
	[RDMA_USER_CM_CMD_SET_OPTION] = cmd_set_option,
	[RDMA_USER_CM_CMD_NOTIFY] = cmd_notify,
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = cmd_join_ip_mcast,
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = cmd_leave_mcast,
	[RDMA_USER_CM_CMD_MIGRATE_ID] = cmd_migrate_id,
	[RDMA_USER_CM_CMD_QUERY] = cmd_query,
	[RDMA_USER_CM_CMD_BIND] = cmd_bind,
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = cmd_resolve_addr,
	[RDMA_USER_CM_CMD_JOIN_MCAST] = cmd_join_mcast,
	[EMU_UCMA_CMD_RESOLVE_IB_SERVICE] = cmd_resolve_ib_service,
	[EMU_UCMA_CMD_WRITE_CM_EVENT] = cmd_write_cm_event,
};

static const char *const cmd_names[EMU_UCMA_NCMDS] = {
	[RDMA_USER_CM_CMD_CREATE_ID] = "CREATE_ID",
	[RDMA_USER_CM_CMD_DESTROY_ID] = "DESTROY_ID",
	[RDMA_USER_CM_CMD_BIND_IP] = "BIND_IP",
	[RDMA_USER_CM_CMD_RESOLVE_IP] = "RESOLVE_IP",
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = "RESOLVE_ROUTE",
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = "QUERY_ROUTE",
	[RDMA_USER_CM_CMD_CONNECT] = "CONNECT",
	[RDMA_USER_CM_CMD_LISTEN] = "LISTEN",
	[RDMA_USER_CM_CMD_ACCEPT] = "ACCEPT",
	[RDMA_USER_CM_CMD_REJECT] = "REJECT",
	[RDMA_USER_CM_CMD_DISCONNECT] = "DISCONNECT",
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = "INIT_QP_ATTR",
	[RDMA_USER_CM_CMD_GET_EVENT] = "GET_EVENT",
	[RDMA_USER_CM_CMD_GET_OPTION] = "GET_OPTION",
	[RDMA_USER_CM_CMD_SET_OPTION] = "SET_OPTION",
	[RDMA_USER_CM_CMD_NOTIFY] = "NOTIFY",
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = "JOIN_IP_MCAST",
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = "LEAVE_MCAST",
	[RDMA_USER_CM_CMD_MIGRATE_ID] = "MIGRATE_ID",
	[RDMA_USER_CM_CMD_QUERY] = "QUERY",
	[RDMA_USER_CM_CMD_BIND] = "BIND",
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = "RESOLVE_ADDR",
	[RDMA_USER_CM_CMD_JOIN_MCAST] = "JOIN_MCAST",
	[EMU_UCMA_CMD_RESOLVE_IB_SERVICE] = "RESOLVE_IB_SERVICE",
	[EMU_UCMA_CMD_WRITE_CM_EVENT] = "WRITE_CM_EVENT",
};

const char *emu_ucma_cmd_name(uint32_t cmd)
{
	return cmd < EMU_UCMA_NCMDS && cmd_names[cmd] ? cmd_names[cmd] : "?";
}

/* The command checks and the command, engine lock held, f the file of fd. */
static ssize_t write_locked(struct emu_ucma_file *f, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	int ret;

	if (len < sizeof hdr)
		ret = -EINVAL;
	else if (memcpy(&hdr, buf, sizeof hdr), hdr.cmd >= EMU_UCMA_NCMDS)
		ret = -EINVAL;
	else if (hdr.in + sizeof hdr > len)
		ret = -EINVAL;
	else if (!cmd_table[hdr.cmd])
		ret = -ENOSYS;
	else
		ret = cmd_table[hdr.cmd](f, (const char *)buf + sizeof hdr, hdr.in, hdr.out);
	return ret ? ret : (ssize_t)len;
}

ssize_t emu_ucma_write_locked(int fd, const void *buf, size_t len)
{
	struct emu_ucma_file *f = file_of(fd);

	resp_end = 0;
	return f ? write_locked(f, buf, len) : -EBADF;
}

size_t emu_ucma_written(const void *resp, size_t len)
{
	uintptr_t base = (uintptr_t)resp;

	return resp_end > base ? (resp_end - base < len ? resp_end - base : len) : 0;
}

ssize_t emu_ucma_post_locked(int fd, const void *buf, size_t len, uint32_t handle)
{
	struct emu_ucma_file *f = file_of(fd);
	ssize_t ret;

	if (!f || !f->push)
		return -EBADF;
	post_handle = handle;
	f->quiet = true;
	ret = write_locked(f, buf, len);
	f->quiet = false;
	post_handle = UINT32_MAX;
	return ret;
}

bool emu_ucma_id_pristine(int fd, uint32_t handle, uint16_t *ps, uint8_t *qp_type)
{
	struct emu_ucma_file *f = file_of(fd);
	struct emu_cma_id *id = emu_cma_id_lookup(handle);

	if (!f || !id || id->file != f || id->state != EMU_CMA_IDLE || id->closed ||
	    id->reuseaddr || id->afonly_set || id->tos_set || id->timeout_set ||
	    id->bound_dev_if || id->dev >= 0 || id->bind || !emu_list_empty(&id->mcs) ||
	    id->has_cm || id->service_recs || !emu_cma_ports_plentiful(f->host))
		return false;
	*ps = id->ps;
	*qp_type = id->qp_type;
	return true;
}

void emu_ucma_addr_error(int fd, uint32_t handle, int status)
{
	struct emu_ucma_file *f = file_of(fd);
	struct emu_cma_id *id = emu_cma_id_lookup(handle);

	if (f && id && id->file == f)
		emu_cma_addr_resolved(id, status);
}

bool emu_ucma_cm_sure(int fd, uint32_t handle, uint32_t cmd, uint32_t *sub)
{
	struct emu_ucma_file *f = file_of(fd);
	struct emu_cma_id *id = emu_cma_id_lookup(handle);

	return f && id && id->file == f && emu_cma_cm_sure(id, cmd, sub);
}

bool emu_ucma_route_sure(int fd, uint32_t handle)
{
	struct emu_ucma_file *f = file_of(fd);
	struct emu_cma_id *id = emu_cma_id_lookup(handle);

	return f && id && id->file == f && emu_cma_resolve_route_sure(id);
}

static ssize_t local_write(int fd, const void *buf, size_t len)
{
	struct emu_engine *e;
	struct emu_ucma_file *f;
	ssize_t ret;

	if (fd < 0)
		return -EBADF;
	e = emu_engine_get();
	/* An fd of ours is open (closing it goes through emu_ucma_close): only another fd needs
	 * the fcntl that tells a closed one (EBADF) from a file that is no rdma_cm (EINVAL). */
	if (e) {
		emu_engine_lock(e);
		f = file_of(fd);
		if (!f)
			emu_engine_unlock(e);
	} else {
		f = NULL;
	}
	if (!f)
		return fcntl(fd, F_GETFD) < 0 ? -EBADF : -EINVAL;
	ret = write_locked(f, buf, len);
	emu_engine_unlock(e);
	return ret;
}
