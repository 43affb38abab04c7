/* The UDP service thread of datagram rsockets (rdma-core's udp_svc_*): one thread for all the
 * datagram rsockets of the process, running while there is one. It reads what arrives on
 * their UDP sockets:
 *  - a datagram with a valid ds_udp_header from a peer: the peer becomes a destination
 *    (a QP for the local address towards it), a DS_OP_DATA message is answered with a
 *    DS_OP_CTRL one carrying this side's QPN, an AH to the peer is made through rdma_cm
 *    address and route resolution when there is none yet or the peer's QPN changed, and the
 *    user data of a DS_OP_DATA message is forwarded, behind a ds_header naming the peer, to
 *    the rsocket's own QP, where recvfrom finds it as any datagram;
 *  - anything else is dropped. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ds.h"
#include "ds_addr.h"
#include "ds_chan.h"
#include "util/failcall.h"

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;	/* start and stop */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;	/* what follows */
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static struct ds_sock **socks;
static int nsocks, cap;
static struct ds_sock *busy;	/* the rsocket the thread is serving */
static int stopping, running;
static int wake[2] = { -1, -1 };
static pthread_t thread;

static int valid_udp_hdr(const struct ds_udp_header *h, const union ds_addr *from)
{
	return h->tag == htonl(DS_UDP_TAG) &&
	       ((h->version == 4 && from->sa.sa_family == AF_INET &&
		 h->length == DS_UDP_IPV4_HDR_LEN) ||
		(h->version == 6 && from->sa.sa_family == AF_INET6 &&
		 h->length == DS_UDP_IPV6_HDR_LEN));
}

static uint8_t sgid_index(struct ds_dest *dest, const union ibv_gid *sgid)
{
	union ibv_gid gid;

	for (int i = 0; i < 16; i++) {
		ibv_query_gid(dest->qp->cm_id->verbs, dest->qp->cm_id->port_num, i, &gid);
		if (!memcmp(sgid, &gid, sizeof gid))
			return (uint8_t)i;
	}
	return 0;
}

static uint8_t path_bits(struct ds_dest *dest)
{
	struct ibv_port_attr attr;

	if (!ibv_query_port(dest->qp->cm_id->verbs, dest->qp->cm_id->port_num, &attr))
		return (uint8_t)((1 << attr.lmc) - 1);
	return 0x7f;
}

/* The AH from the path rdma_cm resolves from the QP's address to the peer's. */
static void create_ah(struct ds_sock *ds, struct ds_dest *dest, uint32_t qpn)
{
	struct ibv_sa_path_rec *path;
	struct ibv_ah_attr attr;
	struct rdma_cm_id *id;
	union ds_addr src;
	struct sockaddr *local;

	if (dest->ah) {
		pthread_mutex_lock(&ds->slock);
		ibv_destroy_ah(dest->ah);
		dest->ah = NULL;
		pthread_mutex_unlock(&ds->slock);
	}
	if (rdma_create_id(NULL, &id, NULL, dest->qp->cm_id->ps))
		return;
	local = rdma_get_local_addr(dest->qp->cm_id);
	memset(&src, 0, sizeof src);
	memcpy(&src, local, ds_addrlen(local));
	src.sin.sin_port = 0;	/* the same place in sockaddr_in6 */
	if (rdma_resolve_addr(id, &src.sa, &dest->addr.sa, 2000) || rdma_resolve_route(id, 2000))
		goto out;
	path = id->route.path_rec;
	memset(&attr, 0, sizeof attr);
	if (path->hop_limit > 1) {
		attr.is_global = 1;
		attr.grh.dgid = path->dgid;
		attr.grh.flow_label = ntohl(path->flow_label);
		attr.grh.sgid_index = sgid_index(dest, &path->sgid);
		attr.grh.hop_limit = path->hop_limit;
		attr.grh.traffic_class = path->traffic_class;
	}
	attr.dlid = ntohs(path->dlid);
	attr.sl = path->sl;
	attr.src_path_bits = (uint8_t)(ntohs(path->slid) & path_bits(dest));
	attr.static_rate = path->rate;
	attr.port_num = id->port_num;
	pthread_mutex_lock(&ds->slock);
	dest->qpn = qpn;
	dest->ah = ibv_create_ah(dest->qp->cm_id->pd, &attr);
	pthread_mutex_unlock(&ds->slock);
out:
	rdma_destroy_id(id);
}

/* What a datagram from a peer asks (serve's work). */
static void handle(struct ds_sock *ds, const uint8_t *buf, ssize_t n, const union ds_addr *from,
		   socklen_t fromlen)
{
	const struct ds_udp_header *h = (const struct ds_udp_header *)buf;
	struct ds_header fwd;
	struct ds_dest *dest;
	struct iovec iov;
	uint32_t qpn;

	if (n < DS_UDP_IPV4_HDR_LEN || !valid_udp_hdr(h, from))
		return;
	qpn = ntohl(h->qpn) & 0xFFFFFF;
	if (ds_get_dest(ds, &from->sa, fromlen, &dest))
		return;
	if (h->op == DS_OP_DATA) {
		pthread_mutex_lock(&ds->slock);
		ds_send_udp(ds, dest, NULL, 0, 0, DS_OP_CTRL);
		pthread_mutex_unlock(&ds->slock);
	}
	if (!dest->ah || dest->qpn != qpn)
		create_ah(ds, dest, qpn);
	if (h->op != DS_OP_DATA)
		return;
	ds_format_hdr(&fwd, from);
	iov.iov_base = (void *)(buf + h->length);
	iov.iov_len = (size_t)n - h->length;
	pthread_mutex_lock(&ds->slock);
	ds_send_slot(ds, &dest->qp->dest, &fwd, &iov, 1, 0);
	pthread_mutex_unlock(&ds->slock);
}

static void serve(struct ds_sock *ds)
{
	static uint8_t buf[DS_SNDLOWAT];	/* only this thread reads into it */
	union ds_addr from;
	socklen_t fromlen = sizeof from;
	ssize_t n;

	memset(&from, 0, sizeof from);
	n = ds->chan->ops->recvfrom(ds->chan, buf, sizeof buf, &from.sa, &fromlen);
	if (n < 0)
		return;
	handle(ds, buf, n, &from, fromlen);
}

static int registered_locked(const struct ds_sock *ds)
{
	for (int i = 0; i < nsocks; i++)
		if (socks[i] == ds)
			return 1;
	return 0;
}

/* One round: poll the wake pipe and every registered socket, serve those readable. */
static int round_trip(void)
{
	struct ds_sock **list;
	struct pollfd *pfd;
	char drain[64];
	int n;

	pthread_mutex_lock(&reg_lock);
	if (stopping) {
		pthread_mutex_unlock(&reg_lock);
		return 0;
	}
	n = nsocks;
	list = emu_malloc(sizeof *list * (size_t)(n + 1));
	pfd = emu_calloc((size_t)n + 1, sizeof *pfd);
	if (!list || !pfd) {
		pthread_mutex_unlock(&reg_lock);
		free(list);
		free(pfd);
		usleep(1000);
		return 1;
	}
	pfd[0].fd = wake[0];
	pfd[0].events = POLLIN;
	for (int i = 0; i < n; i++) {
		list[i] = socks[i];
		pfd[i + 1].fd = socks[i]->chan->rfd;
		pfd[i + 1].events = POLLIN;
	}
	pthread_mutex_unlock(&reg_lock);

	poll(pfd, (nfds_t)n + 1, -1);
	if (pfd[0].revents)
		while (read(wake[0], drain, sizeof drain) > 0)
			;
	for (int i = 0; i < n; i++) {
		if (!pfd[i + 1].revents)
			continue;
		pthread_mutex_lock(&reg_lock);
		if (!registered_locked(list[i]) || stopping) {
			pthread_mutex_unlock(&reg_lock);
			continue;
		}
		busy = list[i];
		pthread_mutex_unlock(&reg_lock);
		serve(list[i]);
		pthread_mutex_lock(&reg_lock);
		busy = NULL;
		pthread_cond_broadcast(&reg_cond);
		pthread_mutex_unlock(&reg_lock);
	}
	free(list);
	free(pfd);
	return 1;
}

static void *run(void *arg)
{
	(void)arg;
	while (round_trip())
		;
	return NULL;
}

static void poke(void)
{
	ssize_t r = write(wake[1], "", 1);

	(void)r;	/* a full pipe already wakes the thread */
}

int ds_svc_add(struct ds_sock *ds)
{
	struct ds_sock **grown;
	int ret;

	pthread_mutex_lock(&ctl_lock);
	if (!running) {
		if (pipe2(wake, O_CLOEXEC | O_NONBLOCK))
			goto fail;
		ret = emu_pthread_create(&thread, NULL, run, NULL);
		if (ret) {
			close(wake[0]);
			close(wake[1]);
			errno = ret;
			goto fail;
		}
		running = 1;
	}
	pthread_mutex_lock(&reg_lock);
	if (nsocks == cap) {
		grown = emu_realloc(socks, sizeof *socks * (size_t)(cap ? cap * 2 : 8));
		if (!grown) {
			pthread_mutex_unlock(&reg_lock);
			errno = ENOMEM;
			goto fail;
		}
		socks = grown;
		cap = cap ? cap * 2 : 8;
	}
	socks[nsocks++] = ds;
	ds->in_svc = 1;
	pthread_mutex_unlock(&reg_lock);
	poke();
	pthread_mutex_unlock(&ctl_lock);
	return 0;
fail:
	pthread_mutex_unlock(&ctl_lock);
	return -1;
}

void ds_svc_remove(struct ds_sock *ds)
{
	int last;

	if (!ds->in_svc)
		return;
	pthread_mutex_lock(&ctl_lock);
	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < nsocks; i++)
		if (socks[i] == ds) {
			socks[i] = socks[--nsocks];
			break;
		}
	ds->in_svc = 0;
	poke();
	while (busy == ds)
		pthread_cond_wait(&reg_cond, &reg_lock);
	last = !nsocks;
	if (last)
		stopping = 1;
	pthread_mutex_unlock(&reg_lock);
	if (last) {
		poke();
		pthread_join(thread, NULL);
		close(wake[0]);
		close(wake[1]);
		free(socks);
		socks = NULL;
		cap = 0;
		stopping = 0;
		running = 0;
	}
	pthread_mutex_unlock(&ctl_lock);
}
