/* Socket options of the stream rsocket, with rdma-core's values and errnos: the options it
 * knows are kept as bits per level (so_opts, tcp_opts, ipv6_opts), the sizes apply until the
 * buffers or the QP exist, SOL_RDMA is refused (EINVAL) once a connect has started, and an
 * option it does not know is ENOTSUP. Like rdma-core, the values are read without checking
 * optlen. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <endian.h>
#include <infiniband/sa.h>
#include <rdma/rsocket.h>

#include "rs_stream_priv.h"
#include "util/failcall.h"

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int set_keepalive(struct rs_stream *rs, int on)
{
	FILE *f;

	if (!!on == !!(rs->opts & RS_OPT_KEEPALIVE))
		return 0;
	if (!on)
		return rs_svc_notify(RS_SVC_KEEPALIVE, rs, RS_SVC_REM_KEEPALIVE);
	if (!rs->keepalive_time) {
		f = fopen("/proc/sys/net/ipv4/tcp_keepalive_time", "re");
		if (!f || fscanf(f, "%u", &rs->keepalive_time) != 1)
			rs->keepalive_time = 7200;
		if (f)
			fclose(f);
	}
	return rs_svc_notify(RS_SVC_KEEPALIVE, rs, RS_SVC_ADD_KEEPALIVE);
}

static int set_sol_socket(struct rs_stream *rs, int name, const void *val, socklen_t len,
			  int *on)
{
	int ret;

	switch (name) {
	case SO_REUSEADDR:
		ret = rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
				      (void *)val, len);
		/* an IB id already bound keeps its address: rdma-core lets that pass */
		if (ret && (errno == ENOSYS ||
			    (rs->state != RS_INIT && rs->cm_id->context && rs->cm_id->verbs &&
			     rs->cm_id->verbs->device->transport_type == IBV_TRANSPORT_IB)))
			ret = 0;
		*on = *(const int *)val;
		return ret;
	case SO_RCVBUF:
		if (!rs->rbuf)
			rs->rbuf_size = (*(const uint32_t *)val) << 1;
		return 0;
	case SO_SNDBUF:
		if (!rs->sbuf)
			rs->sbuf_size = (*(const uint32_t *)val) << 1;
		if (rs->sbuf_size < RS_SNDLOWAT)
			rs->sbuf_size = RS_SNDLOWAT << 1;
		return 0;
	case SO_LINGER:
		/* kept inverted, so that the default bit 0 means on */
		*on = !((const struct linger *)val)->l_onoff;
		return 0;
	case SO_KEEPALIVE:
		ret = set_keepalive(rs, *(const int *)val);
		*on = !!(rs->opts & RS_OPT_KEEPALIVE);
		return ret;
	case SO_OOBINLINE:
		*on = *(const int *)val;
		return 0;
	default:
		return rs_seterr(ENOTSUP);
	}
}

static int set_tcp(struct rs_stream *rs, int name, const void *val, int *on)
{
	switch (name) {
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
		return 0;	/* a reliable connection has no probes to count */
	case TCP_KEEPIDLE:
		if (*(const int *)val <= 0)
			return rs_seterr(EINVAL);
		rs->keepalive_time = (unsigned)*(const int *)val;
		return (rs->opts & RS_OPT_KEEPALIVE)
			       ? rs_svc_notify(RS_SVC_KEEPALIVE, rs, RS_SVC_MOD_KEEPALIVE) : 0;
	case TCP_NODELAY:
		*on = *(const int *)val;
		return 0;
	case TCP_MAXSEG:
		return 0;
	default:
		return rs_seterr(ENOTSUP);
	}
}

static int set_rdma(struct rs_stream *rs, int name, const void *val, socklen_t len)
{
	if (rs->state >= RS_OPENING)
		return rs_seterr(EINVAL);
	switch (name) {
	case RDMA_SQSIZE:
		rs->sq_size = (uint16_t)min_u32(*(const uint32_t *)val, RS_QP_MAX_SIZE);
		return 0;
	case RDMA_RQSIZE:
		rs->rq_size = (uint16_t)min_u32(*(const uint32_t *)val, RS_QP_MAX_SIZE);
		return 0;
	case RDMA_INLINE:
		rs->sq_inline = (uint16_t)min_u32(*(const uint32_t *)val, RS_QP_MAX_SIZE);
		return 0;
	case RDMA_IOMAPSIZE: {
		/* rounded to what the 8-bit scaled field carries */
		int v = *(const int *)val;
		uint8_t scaled = (uint8_t)(v <= 128 ? v : 0x80 | (v >> 8));

		rs->target_iomap_size = scaled <= 128 ? scaled : (scaled & 0x7f) << 8;
		return 0;
	}
	case RDMA_ROUTE:
		free(rs->optval);
		rs->optval = emu_malloc(len);
		if (!rs->optval)
			return rs_seterr(ENOMEM);
		memcpy(rs->optval, val, len);
		rs->optlen = len;
		return 0;
	default:
		return rs_seterr(ENOTSUP);
	}
}

int rs_stream_setsockopt(struct rs_sock *s, int level, int name, const void *val,
			 socklen_t len)
{
	struct rs_stream *rs = rs_stream_of(s);
	uint64_t *opts = NULL;
	int ret, on = 0;

	switch (level) {
	case SOL_SOCKET:
		opts = &rs->so_opts;
		ret = set_sol_socket(rs, name, val, len, &on);
		break;
	case IPPROTO_TCP:
		opts = &rs->tcp_opts;
		ret = set_tcp(rs, name, val, &on);
		break;
	case IPPROTO_IPV6:
		opts = &rs->ipv6_opts;
		if (name != IPV6_V6ONLY)
			return rs_seterr(ENOTSUP);
		ret = rdma_set_option(rs->cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				      (void *)val, len);
		on = *(const int *)val;
		break;
	case SOL_RDMA:
		return set_rdma(rs, name, val, len);
	default:
		return rs_seterr(ENOTSUP);
	}
	if (!ret && opts) {
		if (on)
			*opts |= 1ull << name;
		else
			*opts &= ~(1ull << name);
	}
	return ret;
}

static void put_int(void *val, socklen_t *len, int v)
{
	*(int *)val = v;
	*len = sizeof(int);
}

static int get_sol_socket(struct rs_stream *rs, int name, void *val, socklen_t *len)
{
	switch (name) {
	case SO_REUSEADDR:
	case SO_KEEPALIVE:
	case SO_OOBINLINE:
		put_int(val, len, !!(rs->so_opts & (1ull << name)));
		return 0;
	case SO_RCVBUF:
		put_int(val, len, (int)rs->rbuf_size);
		return 0;
	case SO_SNDBUF:
		put_int(val, len, (int)rs->sbuf_size);
		return 0;
	case SO_LINGER:
		((struct linger *)val)->l_onoff = !(rs->so_opts & (1ull << name));
		((struct linger *)val)->l_linger = 0;
		*len = sizeof(struct linger);
		return 0;
	case SO_ERROR:
		put_int(val, len, rs->err);
		rs->err = 0;
		return 0;
	default:
		return ENOTSUP;
	}
}

static int get_tcp(struct rs_stream *rs, int name, void *val, socklen_t *len)
{
	const struct rdma_route *r = &rs->cm_id->route;

	switch (name) {
	case TCP_KEEPCNT:
	case TCP_KEEPINTVL:
		*(int *)val = 1;	/* optlen left as it is, as rdma-core */
		return 0;
	case TCP_KEEPIDLE:
		put_int(val, len, (int)rs->keepalive_time);
		return 0;
	case TCP_NODELAY:
		put_int(val, len, !!(rs->tcp_opts & (1ull << name)));
		return 0;
	case TCP_MAXSEG:
		put_int(val, len, r->num_paths ? 1 << (7 + r->path_rec->mtu) : 2048);
		return 0;
	default:
		return ENOTSUP;
	}
}

/* An SA path record in the ibv_path_data form RDMA_ROUTE takes. */
static void path_to_data(const struct ibv_sa_path_rec *sa, struct ibv_path_data *pd)
{
	memset(pd, 0, sizeof *pd);
	pd->path.dgid = sa->dgid;
	pd->path.sgid = sa->sgid;
	pd->path.dlid = sa->dlid;
	pd->path.slid = sa->slid;
	pd->path.flowlabel_hoplimit =
		htobe32((be32toh(sa->flow_label) << 8) | sa->hop_limit);
	pd->path.tclass = sa->traffic_class;
	pd->path.reversible_numpath = (uint8_t)(sa->reversible << 7 | 1);
	pd->path.pkey = sa->pkey;
	pd->path.qosclass_sl = htobe16(sa->sl);
	pd->path.mtu = (uint8_t)(sa->mtu | 2 << 6);
	pd->path.rate = (uint8_t)(sa->rate | 2 << 6);
	pd->path.packetlifetime = (uint8_t)(sa->packet_life_time | 2 << 6);
	pd->flags = sa->preference;
}

static int get_route(struct rs_stream *rs, void *val, socklen_t *len)
{
	struct ibv_path_data pd;
	socklen_t done = 0;

	if (rs->optval) {
		if (*len < rs->optlen)
			return EINVAL;
		/* rdma-core copies the wrong way here (into its saved value): kept */
		memcpy(rs->optval, val, rs->optlen);
		*len = (socklen_t)rs->optlen;
		return 0;
	}
	if (*len < sizeof pd)
		return EINVAL;
	for (int i = 0; i < rs->cm_id->route.num_paths && done + sizeof pd <= *len; i++) {
		path_to_data(&rs->cm_id->route.path_rec[i], &pd);
		memcpy((uint8_t *)val + done, &pd, sizeof pd);
		done += sizeof pd;
	}
	*len = done;
	return 0;
}

static int get_rdma(struct rs_stream *rs, int name, void *val, socklen_t *len)
{
	switch (name) {
	case RDMA_SQSIZE:
		put_int(val, len, rs->sq_size);
		return 0;
	case RDMA_RQSIZE:
		put_int(val, len, rs->rq_size);
		return 0;
	case RDMA_INLINE:
		put_int(val, len, rs->sq_inline);
		return 0;
	case RDMA_IOMAPSIZE:
		put_int(val, len, rs->target_iomap_size);
		return 0;
	case RDMA_ROUTE:
		return get_route(rs, val, len);
	default:
		return ENOTSUP;
	}
}

int rs_stream_getsockopt(struct rs_sock *s, int level, int name, void *val, socklen_t *len)
{
	struct rs_stream *rs = rs_stream_of(s);
	int ret;

	switch (level) {
	case SOL_SOCKET:
		ret = get_sol_socket(rs, name, val, len);
		break;
	case IPPROTO_TCP:
		ret = get_tcp(rs, name, val, len);
		break;
	case IPPROTO_IPV6:
		if (name == IPV6_V6ONLY) {
			put_int(val, len, !!(rs->ipv6_opts & (1ull << name)));
			ret = 0;
		} else {
			ret = ENOTSUP;
		}
		break;
	case SOL_RDMA:
		ret = get_rdma(rs, name, val, len);
		break;
	default:
		ret = ENOTSUP;
		break;
	}
	return ret ? rs_seterr(ret) : 0;
}
