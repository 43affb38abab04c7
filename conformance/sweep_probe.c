/* The failure sweep's go-on probe (sweep.c): after a case ran with a failed call and again
 * without, the process must still do what a program does: open a device and register memory,
 * and connect to itself over RC through the rdma_cm and move bytes. The result is "ok" or the
 * first step that did not work, which a sweep compares with the probe's result in the same
 * case without injection (a case without a device or an address stops at the same step). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <string.h>

#include "conformance/cm_util.h"
#include "conformance/runner.h"

#define PROBE_BYTES 64
#define PROBE_WAIT_MS 5000

struct probe {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *client, *server;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	bool client_qp, server_qp;
	char buf[2 * PROBE_BYTES];
};

/* The next event of the channel, which must be `want` (for id, when non-NULL); 0 or -1. */
static int next_event(struct probe *p, enum rdma_cm_event_type want, struct rdma_cm_id **id)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ok;

	if (poll(&pfd, 1, PROBE_WAIT_MS) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (rdma_get_cm_event(p->ch, &ev))
		return -1;
	ok = ev->event == want && !ev->status;
	if (ok && id)
		*id = ev->id;
	errno = ok ? 0 : EPROTO;
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

static int qp_for(struct probe *p, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.send_cq = p->cq, .recv_cq = p->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};

	return rdma_create_qp(id, p->pd, &a);
}

/* The send's and the receive's completions on the probe's CQ, in either order, polled a
 * bounded number of times. */
static int completions(struct probe *p)
{
	bool send = false, recv = false;

	for (long i = 0; i < 20000000 && !(send && recv); i++) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(p->cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 0)
			continue;
		if (wc.status != IBV_WC_SUCCESS ||
		    (wc.opcode != IBV_WC_SEND && wc.opcode != IBV_WC_RECV)) {
			errno = EIO;
			return -1;
		}
		send |= wc.opcode == IBV_WC_SEND;
		recv |= wc.opcode == IBV_WC_RECV;
	}
	if (send && recv)
		return 0;
	errno = ETIMEDOUT;
	return -1;
}

/* The RC connection of the probe: the step that failed, or NULL. */
static const char *connect_and_send(struct probe *p, const struct sockaddr_in *local)
{
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1 };
	struct sockaddr_in dst = *local;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
			   *bad_s;

	if (!(p->ch = rdma_create_event_channel()))
		return "rdma_create_event_channel";
	if (rdma_create_id(p->ch, &p->listen, NULL, RDMA_PS_TCP))
		return "rdma_create_id(listener)";
	dst.sin_port = 0;
	if (rdma_bind_addr(p->listen, (struct sockaddr *)&dst))
		return "rdma_bind_addr";
	if (rdma_listen(p->listen, 1))
		return "rdma_listen";
	dst.sin_port = rdma_get_src_port(p->listen);
	if (rdma_create_id(p->ch, &p->client, NULL, RDMA_PS_TCP))
		return "rdma_create_id(client)";
	if (rdma_resolve_addr(p->client, NULL, (struct sockaddr *)&dst, 2000) ||
	    next_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return "rdma_resolve_addr";
	if (rdma_resolve_route(p->client, 2000) ||
	    next_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		return "rdma_resolve_route";
	if (!(p->pd = ibv_alloc_pd(p->client->verbs)))
		return "ibv_alloc_pd";
	if (!(p->cq = ibv_create_cq(p->client->verbs, 8, NULL, NULL, 0)))
		return "ibv_create_cq";
	if (!(p->mr = ibv_reg_mr(p->pd, p->buf, sizeof p->buf, IBV_ACCESS_LOCAL_WRITE)))
		return "ibv_reg_mr";
	if (qp_for(p, p->client))
		return "rdma_create_qp(client)";
	p->client_qp = true;
	if (rdma_connect(p->client, &param))
		return "rdma_connect";
	if (next_event(p, RDMA_CM_EVENT_CONNECT_REQUEST, &p->server))
		return "CONNECT_REQUEST";
	if (p->server->verbs != p->client->verbs)
		return "CONNECT_REQUEST on another device";
	if (qp_for(p, p->server))
		return "rdma_create_qp(server)";
	p->server_qp = true;
	sge = (struct ibv_sge){ (uintptr_t)p->buf + PROBE_BYTES, PROBE_BYTES, p->mr->lkey };
	if (ibv_post_recv(p->server->qp, &rwr, &bad_r))
		return "ibv_post_recv";
	if (rdma_accept(p->server, &param))
		return "rdma_accept";
	if (next_event(p, RDMA_CM_EVENT_ESTABLISHED, NULL) ||
	    next_event(p, RDMA_CM_EVENT_ESTABLISHED, NULL))
		return "ESTABLISHED";
	for (int i = 0; i < PROBE_BYTES; i++)
		p->buf[i] = (char)(0x5a ^ i);
	memset(p->buf + PROBE_BYTES, 0, PROBE_BYTES);
	sge = (struct ibv_sge){ (uintptr_t)p->buf, PROBE_BYTES, p->mr->lkey };
	if (ibv_post_send(p->client->qp, &swr, &bad_s))
		return "ibv_post_send";
	if (completions(p))
		return "completions";
	if (memcmp(p->buf, p->buf + PROBE_BYTES, PROBE_BYTES)) {
		errno = EIO;
		return "bytes received";
	}
	/* the passive side's DISCONNECTED on the DREQ, its rdma_disconnect sends the DREP */
	if (rdma_disconnect(p->client) || next_event(p, RDMA_CM_EVENT_DISCONNECTED, NULL) ||
	    rdma_disconnect(p->server) || next_event(p, RDMA_CM_EVENT_DISCONNECTED, NULL))
		return "rdma_disconnect";
	return NULL;
}

static void probe_free(struct probe *p)
{
	if (p->server_qp)
		rdma_destroy_qp(p->server);
	if (p->server)
		rdma_destroy_id(p->server);
	if (p->client_qp)
		rdma_destroy_qp(p->client);
	if (p->client)
		rdma_destroy_id(p->client);
	if (p->listen)
		rdma_destroy_id(p->listen);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
}

void conf_sweep_probe(char *out, size_t size)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct sockaddr_in local;
	struct probe p;
	const char *step = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(out, size, "ibv_get_device_list:%s", conf_errno_name(errno));
		return;
	}
	if (n > 0 && !(ctx = ibv_open_device(list[0])))
		step = "ibv_open_device";
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	if (step) {
		snprintf(out, size, "%s:%s", step, conf_errno_name(errno));
		return;
	}
	/* (cm_local_ipv4_try ends the case when the rdma_cm has no device) */
	struct ibv_context **cm_devs = rdma_get_devices(&n);

	if (!cm_devs || !n) {
		snprintf(out, size, "rdma_get_devices:%s", cm_devs ? "none" : conf_errno_name(errno));
		if (cm_devs)
			rdma_free_devices(cm_devs);
		return;
	}
	rdma_free_devices(cm_devs);
	if (!cm_local_ipv4_try(0, 0, &local, NULL)) {
		snprintf(out, size, "no local IPv4 address");
		return;
	}
	memset(&p, 0, sizeof p);
	step = connect_and_send(&p, &local);
	if (step)
		snprintf(out, size, "%s:%s", step, conf_errno_name(errno));
	else
		snprintf(out, size, "ok");
	probe_free(&p);
}
