/* cm_ping: the smallest rdma_cm program a project might test. A client connects to a server
 * over an RC QP, sends "ping" and receives "pong"; each side prints one line and exits 0.
 *
 *   cm_ping [ADDR PORT]        both sides in one process (a thread listens, main connects);
 *                              ADDR defaults to $CM_PING_ADDR, PORT to 7471
 *   cm_ping -s ADDR PORT       the server only (two-host tests: ADDR is the server's address)
 *   cm_ping -c ADDR PORT       the client only
 *
 * It uses only librdmacm's synchronous calls (rdma_create_ep and rdma_verbs.h), so it builds
 * and runs unchanged on a real HCA, on kernel soft-RoCE and under `rdmaemu run`. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define MSG 16

struct side {
	const char *addr, *port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int listening; /* 1 listening, -1 failed: the in-process client waits for it */
};

static void say_listening(struct side *s, int v)
{
	pthread_mutex_lock(&s->lock);
	s->listening = v;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static struct rdma_addrinfo *resolve(const char *addr, const char *port, int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res = NULL;

	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	if (rdma_getaddrinfo(addr, port, &hints, &res)) {
		perror("cm_ping: rdma_getaddrinfo");
		return NULL;
	}
	return res;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC, .sq_sig_all = 1 };

	a.cap.max_send_wr = a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	return a;
}

/* Post the receive, exchange one message (send `out`, receive into `in`) on a connected id.
 * The server receives first, the client sends first. */
static int exchange(struct rdma_cm_id *id, struct ibv_mr *mr, char *buf, int server)
{
	struct ibv_wc wc;
	char *in = buf, *out = buf + MSG;

	strcpy(out, server ? "pong" : "ping");
	if (!server && rdma_post_send(id, NULL, out, MSG, mr, 0)) {
		perror("cm_ping: rdma_post_send");
		return -1;
	}
	if (!server && (rdma_get_send_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS)) {
		fprintf(stderr, "cm_ping: send completion failed\n");
		return -1;
	}
	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "cm_ping: receive completion failed\n");
		return -1;
	}
	if (strcmp(in, server ? "ping" : "pong")) {
		fprintf(stderr, "cm_ping: received \"%.*s\"\n", MSG, in);
		return -1;
	}
	if (server && (rdma_post_send(id, NULL, out, MSG, mr, 0) ||
		       rdma_get_send_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS)) {
		fprintf(stderr, "cm_ping: send failed\n");
		return -1;
	}
	printf("cm_ping: %s received \"%s\"\n", server ? "server" : "client", in);
	return 0;
}

static void *server(void *arg)
{
	struct side *s = arg;
	struct rdma_addrinfo *ai = resolve(s->addr, s->port, 1);
	struct ibv_qp_init_attr attr = qp_attr();
	struct rdma_cm_id *listen_id = NULL, *id = NULL;
	struct ibv_mr *mr = NULL;
	char buf[2 * MSG] = { 0 };
	long rc = 1;

	if (!ai || rdma_create_ep(&listen_id, ai, NULL, &attr) || rdma_listen(listen_id, 1)) {
		perror("cm_ping: server: listen");
		say_listening(s, -1);
		goto out;
	}
	say_listening(s, 1);
	if (rdma_get_request(listen_id, &id)) {
		perror("cm_ping: rdma_get_request");
		goto out;
	}
	mr = rdma_reg_msgs(id, buf, sizeof buf);
	if (!mr || rdma_post_recv(id, NULL, buf, MSG, mr) || rdma_accept(id, NULL)) {
		perror("cm_ping: server: accept");
		goto out;
	}
	rc = exchange(id, mr, buf, 1) ? 1 : 0;
	rdma_disconnect(id);
out:
	if (mr)
		rdma_dereg_mr(mr);
	if (id)
		rdma_destroy_ep(id);
	if (listen_id)
		rdma_destroy_ep(listen_id);
	if (ai)
		rdma_freeaddrinfo(ai);
	return (void *)rc;
}

static int client_once(struct rdma_addrinfo *ai, int *refused)
{
	struct ibv_qp_init_attr attr = qp_attr();
	struct rdma_cm_id *id = NULL;
	struct ibv_mr *mr = NULL;
	char buf[2 * MSG] = { 0 };
	int rc = 1;

	if (rdma_create_ep(&id, ai, NULL, &attr)) {
		perror("cm_ping: client: rdma_create_ep");
		goto out;
	}
	mr = rdma_reg_msgs(id, buf, sizeof buf);
	if (!mr || rdma_post_recv(id, NULL, buf, MSG, mr)) {
		perror("cm_ping: client: rdma_post_recv");
		goto out;
	}
	if (rdma_connect(id, NULL)) {
		/* nobody listens yet (a server in another process starting): the caller retries */
		*refused = errno == ECONNREFUSED;
		if (!*refused)
			perror("cm_ping: client: rdma_connect");
		goto out;
	}
	rc = exchange(id, mr, buf, 0) ? 1 : 0;
	rdma_disconnect(id);
out:
	if (mr)
		rdma_dereg_mr(mr);
	if (id)
		rdma_destroy_ep(id);
	return rc;
}

/* A client started beside its server may come first: a refused connection is retried for up
 * to 30 s. */
static int client(const char *addr, const char *port)
{
	struct rdma_addrinfo *ai = resolve(addr, port, 0);
	int rc = 1, refused = 1;

	for (int i = 0; ai && refused && i < 300; i++) {
		if (i)
			nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
		refused = 0;
		rc = client_once(ai, &refused);
	}
	if (refused)
		fprintf(stderr, "cm_ping: client: connection refused for 30 s\n");
	if (ai)
		rdma_freeaddrinfo(ai);
	return rc;
}

int main(int argc, char **argv)
{
	struct side s = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	const char *mode = argc == 4 ? argv[1] : "";
	pthread_t t;
	void *srv_rc;
	int rc;

	if (argc == 4 && strcmp(mode, "-s") && strcmp(mode, "-c"))
		argc = 0;
	if (argc == 1 && getenv("CM_PING_ADDR")) {
		s.addr = getenv("CM_PING_ADDR");
		s.port = "7471";
	} else if (argc == 3 || argc == 4) {
		s.addr = argv[argc - 2];
		s.port = argv[argc - 1];
	} else {
		fprintf(stderr, "usage: cm_ping [-s|-c] ADDR PORT, or cm_ping with CM_PING_ADDR set\n");
		return 2;
	}
	if (!strcmp(mode, "-s"))
		return (int)(long)server(&s);
	if (!strcmp(mode, "-c"))
		return client(s.addr, s.port);
	if (pthread_create(&t, NULL, server, &s))
		return 1;
	pthread_mutex_lock(&s.lock);
	while (!s.listening)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);
	rc = s.listening > 0 ? client(s.addr, s.port) : 1;
	pthread_join(t, &srv_rc);
	return rc || srv_rc ? 1 : 0;
}
