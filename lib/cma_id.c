/* CM ids (spec §6): create, destroy, migrate, bind, listen, options, and the kernel queries
 * that fill id->route and id->verbs. Every call marshals rdma-core's
 * ucma_abi_* command and writes it to the id's channel, as rdma-core's cma.c does, so the
 * kernel's errors (emu/rdma_cm/ucma.c, emu/rdma_cm/cma*.c) come back unchanged. */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <infiniband/sa.h>

#include "lib/cma.h"
#include "util/failnth.h"

/* AF_IB needs an AF_IB-capable kernel CM. ucma_set_af_ib_support finds out once per process,
 * at the first init with devices: a sync RDMA_PS_IB id binds the AF_IB wildcard with the TCP
 * service-ID prefix; success (Linux 6.1 and the emulated kernel) turns AF_IB addresses on
 * (48-byte sockaddr_ib), failure leaves them refused with EINVAL. The probe runs with the flag
 * set, as rdma-core's does, so that rdma_bind_addr lets the address through. An id or a bind
 * that fails for lack of a resource leaves AF_IB off for the process's life, as in rdma-core;
 * a failure sweep is told (emu_fail_lost). */
static bool af_ib_support;

static pthread_mutex_t af_ib_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int af_ib_probed; /* 0 not yet, 1 under way (this thread, recursively), 2 done */

/* true once the probe is done (not from this thread's probe calling back into init) */
static bool set_af_ib_support(void)
{
	struct rdma_cm_id *id;
	struct sockaddr_ib sib;
	int e = errno;

	if (__atomic_load_n(&af_ib_probed, __ATOMIC_ACQUIRE) == 2)
		return true;
	pthread_mutex_lock(&af_ib_lock);
	if (af_ib_probed) { /* done, or this thread's probe calling back into init */
		pthread_mutex_unlock(&af_ib_lock);
		return af_ib_probed == 2;
	}
	af_ib_probed = 1;
	if (!rdma_create_id(NULL, &id, NULL, RDMA_PS_IB)) {
		memset(&sib, 0, sizeof sib);
		sib.sib_family = AF_IB;
		sib.sib_sid = htobe64(RDMA_IB_IP_PS_TCP);
		sib.sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK);
		af_ib_support = true;
		af_ib_support = !rdma_bind_addr(id, (struct sockaddr *)&sib);
		rdma_destroy_id(id);
	}
	if (!af_ib_support)
		emu_fail_lost("AF_IB addresses (the probe of the kernel's AF_IB support failed)");
	__atomic_store_n(&af_ib_probed, 2, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&af_ib_lock);
	errno = e; /* a failed probe is not an error of the caller's call */
	return true;
}

/* init (lib/init.c) is below the ids: it gets the probe when the library is loaded. */
__attribute__((constructor)) static void register_af_ib_probe(void)
{
	cma_init_set_af_ib_probe(set_af_ib_support);
}

bool cma_af_ib_support(void)
{
	return af_ib_support;
}

socklen_t cma_addrlen(const struct sockaddr *addr)
{
	if (!addr)
		return 0;
	switch (addr->sa_family) {
	case PF_INET:
		return sizeof(struct sockaddr_in);
	case PF_INET6:
		return sizeof(struct sockaddr_in6);
	case PF_IB:
		return af_ib_support ? sizeof(struct sockaddr_ib) : 0;
	default:
		return 0;
	}
}

/* id->route.path_rec comes from the shared allocator (util/kmem.h). */
static void free_paths(struct rdma_cm_id *id)
{
	emu_kmem_free(id->route.path_rec);
}

struct cma_id_private *cma_alloc_id(struct rdma_event_channel *channel, void *context,
				    enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct cma_id_private *id_priv = emu_kmem_zalloc(sizeof *id_priv);

	if (!id_priv)
		return NULL;
	id_priv->id.context = context;
	id_priv->id.ps = ps;
	id_priv->id.qp_type = qp_type;
	id_priv->handle = 0xFFFFFFFF;
	if (!channel) {
		id_priv->id.channel = rdma_create_event_channel();
		if (!id_priv->id.channel) {
			emu_kmem_free(id_priv);
			return NULL;
		}
		id_priv->sync = 1;
	} else {
		id_priv->id.channel = channel;
	}
	return id_priv;
}

void cma_free_id(struct cma_id_private *id_priv)
{
	if (id_priv->cma_dev)
		cma_put_device(id_priv->cma_dev);
	free_paths(&id_priv->id);
	if (id_priv->sync)
		rdma_destroy_event_channel(id_priv->id.channel);
	free(id_priv->connect);
	if (id_priv->resolved_ai)
		rdma_freeaddrinfo(id_priv->resolved_ai);
	emu_kmem_free(id_priv);
}

static int create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		      enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct ucma_abi_create_id_resp resp;
	struct ucma_abi_create_id cmd;
	struct cma_id_private *id_priv;

	if (cma_init())
		return -1;
	id_priv = cma_alloc_id(channel, context, ps, qp_type);
	if (!id_priv)
		return cma_err(ENOMEM); /* whatever failed, as rdma-core (spec §16 item 13) */
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, CREATE_ID, &resp, sizeof resp);
	cmd.uid = (uintptr_t)id_priv;
	cmd.ps = (__u16)ps;
	cmd.qp_type = (__u8)qp_type;
	if (cma_write(id_priv->id.channel->fd, &cmd, sizeof cmd)) {
		int e = errno;

		cma_free_id(id_priv);
		return cma_err(e);
	}
	id_priv->handle = resp.id;
	*id = &id_priv->id;
	return 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	enum ibv_qp_type qp_type = (ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP) ? IBV_QPT_UD :
									       IBV_QPT_RC;

	/* rdma-core crashes on id == NULL (spec §6.3); the emulator refuses it */
	if (!id)
		return cma_err(EINVAL);
	return create_id2(channel, id, context, ps, qp_type);
}

/* DESTROY_ID: the number of events the kernel reported for the id, or -1. */
int cma_destroy_kern_id(int fd, uint32_t handle)
{
	struct ucma_abi_destroy_id_resp resp;
	struct ucma_abi_destroy_id cmd;

	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, DESTROY_ID, &resp, sizeof resp);
	cmd.id = handle;
	if (cma_write(fd, &cmd, sizeof cmd))
		return -1;
	return (int)resp.events_reported;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id_private *id_priv;
	int ret;

	if (!id || !id->channel)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	ret = cma_destroy_kern_id(id->channel->fd, id_priv->handle);
	if (ret < 0)
		return ret;
	if (id->event)
		rdma_ack_cm_event(id->event);
	/* events already read must be acked first (another thread may hold one) */
	cma_wait_acked("rdma_destroy_id", &id_priv->events_completed, ret);
	cma_free_id(id_priv);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct ucma_abi_migrate_resp resp;
	struct ucma_abi_migrate_id cmd;
	struct cma_id_private *id_priv;
	int sync;

	if (!id)
		return cma_err(EINVAL);
	id_priv = cma_priv(id);
	if (id_priv->sync && !channel)
		return cma_err(EINVAL);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		sync = 1;
	} else {
		sync = 0;
	}
	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, MIGRATE_ID, &resp, sizeof resp);
	cmd.id = id_priv->handle;
	cmd.fd = (__u32)id->channel->fd;
	if (cma_write(channel->fd, &cmd, sizeof cmd)) {
		int e = errno;

		if (sync)
			rdma_destroy_event_channel(channel);
		return cma_err(e);
	}
	if (id_priv->sync) {
		if (id->event) {
			rdma_ack_cm_event(id->event);
			id->event = NULL;
		}
		rdma_destroy_event_channel(id->channel);
	}
	id_priv->sync = sync;
	id->channel = channel;
	cma_wait_acked("rdma_migrate_id", &id_priv->events_completed, (int)resp.events_reported);
	return 0;
}

/* ---- queries ---- */

int cma_query_addr(struct rdma_cm_id *id)
{
	struct ucma_abi_query_addr_resp resp;
	struct ucma_abi_query cmd;
	struct cma_id_private *id_priv = cma_priv(id);

	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, QUERY, &resp, sizeof resp);
	cmd.id = id_priv->handle;
	cmd.option = UCMA_QUERY_ADDR;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	memcpy(&id->route.addr.src_addr, &resp.src_addr, resp.src_size);
	memcpy(&id->route.addr.dst_addr, &resp.dst_addr, resp.dst_size);
	if (!id_priv->cma_dev && resp.node_guid) {
		if (cma_get_device(id_priv, resp.node_guid))
			return -1;
		id->port_num = resp.port_num;
		id->route.addr.addr.ibaddr.pkey = resp.pkey;
	}
	return 0;
}

int cma_query_gid(struct rdma_cm_id *id)
{
	struct ucma_abi_query_addr_resp resp;
	struct ucma_abi_query cmd;
	struct sockaddr_ib *sib;

	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, QUERY, &resp, sizeof resp);
	cmd.id = cma_priv(id)->handle;
	cmd.option = UCMA_QUERY_GID;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	sib = (struct sockaddr_ib *)&resp.src_addr;
	memcpy(id->route.addr.addr.ibaddr.sgid.raw, sib->sib_addr.sib_raw, 16);
	sib = (struct sockaddr_ib *)&resp.dst_addr;
	memcpy(id->route.addr.addr.ibaddr.dgid.raw, sib->sib_addr.sib_raw, 16);
	return 0;
}

/* ucma_convert_path: an SA PathRecord (struct ibv_path_record) to struct ibv_sa_path_rec. */
static void convert_path(const struct ibv_path_data *pd, struct ibv_sa_path_rec *sa)
{
	uint32_t fl_hop = be32toh(pd->path.flowlabel_hoplimit);

	memset(sa, 0, sizeof *sa);
	memcpy(&sa->dgid, &pd->path.dgid, sizeof sa->dgid);
	memcpy(&sa->sgid, &pd->path.sgid, sizeof sa->sgid);
	sa->dlid = pd->path.dlid;
	sa->slid = pd->path.slid;
	sa->raw_traffic = 0;
	sa->flow_label = htobe32(fl_hop >> 8);
	sa->hop_limit = (uint8_t)fl_hop;
	sa->traffic_class = pd->path.tclass;
	sa->reversible = pd->path.reversible_numpath >> 7;
	sa->numb_path = 1;
	sa->pkey = pd->path.pkey;
	sa->sl = be16toh(pd->path.qosclass_sl) & 0xF;
	sa->mtu_selector = 2;
	sa->mtu = pd->path.mtu & 0x1F;
	sa->rate_selector = 2;
	sa->rate = pd->path.rate & 0x1F;
	sa->packet_life_time_selector = 2;
	sa->packet_life_time = pd->path.packetlifetime & 0x1F;
	sa->preference = (uint8_t)pd->flags;
}

int cma_query_path(struct rdma_cm_id *id)
{
	struct {
		struct ucma_abi_query_path_resp hdr;
		struct ibv_path_data path[6];
	} resp;
	struct ucma_abi_query cmd;

	CMA_INIT_CMD_RESP(&cmd, sizeof cmd, QUERY, &resp, sizeof resp);
	cmd.id = cma_priv(id)->handle;
	cmd.option = UCMA_QUERY_PATH;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	free_paths(id);
	id->route.path_rec = NULL;
	id->route.num_paths = 0;
	if (resp.hdr.num_paths) {
		unsigned n = resp.hdr.num_paths < 6 ? resp.hdr.num_paths : 6;

		id->route.path_rec = emu_kmem_zalloc(n * sizeof *id->route.path_rec);
		if (!id->route.path_rec)
			return cma_err(ENOMEM);
		id->route.num_paths = (int)n;
		for (unsigned i = 0; i < n; i++)
			convert_path(&resp.path[i], &id->route.path_rec[i]);
	}
	return 0;
}

/* ---- bind, listen, options ---- */

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct ucma_abi_bind cmd;
	socklen_t len = cma_addrlen(addr);

	if (!len)
		return cma_err(EINVAL);
	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, BIND);
	cmd.id = cma_priv(id)->handle;
	cmd.addr_size = (__u16)len;
	memcpy(&cmd.addr, addr, len);
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	if (cma_query_addr(id))
		return -1;
	return cma_query_gid(id);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct ucma_abi_listen cmd;

	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, LISTEN);
	cmd.id = cma_priv(id)->handle;
	cmd.backlog = (__u32)backlog;
	if (cma_write(id->channel->fd, &cmd, sizeof cmd))
		return -1;
	return cma_query_addr(id);
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct ucma_abi_set_option cmd;

	/* no validation in the library: the kernel judges (spec §8) */
	if (!id || !id->channel)
		return cma_err(EINVAL);
	CMA_INIT_CMD(&cmd, sizeof cmd, SET_OPTION);
	cmd.id = cma_priv(id)->handle;
	cmd.optval = (uintptr_t)optval;
	cmd.level = (__u32)level;
	cmd.optname = (__u32)optname;
	cmd.optlen = (__u32)optlen;
	return cma_write(id->channel->fd, &cmd, sizeof cmd);
}
