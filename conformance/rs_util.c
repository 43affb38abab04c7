/* Helpers of the rsocket cases (rs_util.h). */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"
#include "conformance/rs_util.h"

static struct rs_calls calls;

#define RS_SYM(field, name) { #name, offsetof(struct rs_calls, field) }
static const struct {
	const char *name;
	size_t off;
} syms[] = {
	RS_SYM(socket, rsocket), RS_SYM(bind, rbind), RS_SYM(listen, rlisten),
	RS_SYM(accept, raccept), RS_SYM(connect, rconnect), RS_SYM(shutdown, rshutdown),
	RS_SYM(close, rclose), RS_SYM(recv, rrecv), RS_SYM(recvfrom, rrecvfrom),
	RS_SYM(recvmsg, rrecvmsg), RS_SYM(send, rsend), RS_SYM(sendto, rsendto),
	RS_SYM(sendmsg, rsendmsg), RS_SYM(read, rread), RS_SYM(readv, rreadv),
	RS_SYM(write, rwrite), RS_SYM(writev, rwritev), RS_SYM(poll, rpoll),
	RS_SYM(select, rselect), RS_SYM(getpeername, rgetpeername),
	RS_SYM(getsockname, rgetsockname), RS_SYM(setsockopt, rsetsockopt),
	RS_SYM(getsockopt, rgetsockopt), RS_SYM(fcntl, rfcntl), RS_SYM(iomap, riomap),
	RS_SYM(iounmap, riounmap), RS_SYM(iowrite, riowrite),
};
#undef RS_SYM

const struct rs_calls *rs_api(void)
{
	if (calls.socket)
		return &calls;
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(RTLD_DEFAULT, syms[i].name);

		if (!p) {
			memset(&calls, 0, sizeof calls);
			conf_notrun("the loaded librdmacm has no rsockets (%s absent)", syms[i].name);
		}
		/* object and function pointers share a representation on every target POSIX
		 * dlsym supports */
		memcpy((char *)&calls + syms[i].off, &p, sizeof p);
	}
	return &calls;
}

void rs_addr(int row, struct sockaddr_in *sin)
{
	cm_local_ipv4(0, (uint16_t)(RS_PORT + row), sin, NULL);
}

int rs_link_layer(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	struct ibv_port_attr pa;
	struct sockaddr_in sin;
	int ll = -1;

	cm_local_ipv4(0, 0, &sin, NULL);
	if (ch && !rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) &&
	    !rdma_bind_addr(id, (struct sockaddr *)&sin) && id->verbs &&
	    !ibv_query_port(id->verbs, id->port_num, &pa))
		ll = pa.link_layer;
	if (id)
		rdma_destroy_id(id);
	if (ch)
		rdma_destroy_event_channel(ch);
	return ll;
}

int rs_stream(void)
{
	int fd = rs_api()->socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		conf_fatal("rsocket(AF_INET, SOCK_STREAM, 0): %s", conf_errno_name(errno));
	return fd;
}

int rs_listener(const struct sockaddr_in *sin)
{
	const struct rs_calls *r = rs_api();
	int fd = rs_stream();

	const char *step = NULL;
	int e;

	if (r->bind(fd, (const struct sockaddr *)sin, sizeof *sin))
		step = "rbind";
	else if (r->listen(fd, 8))
		step = "rlisten";
	if (step) {
		/* closed, so that the process can go on (a failure sweep runs the case again) */
		e = errno;
		r->close(fd);
		conf_fatal("%s: %s", step, conf_errno_name(e));
	}
	return fd;
}

void rs_pair(int row, int *l, int *c, int *s)
{
	const struct rs_calls *r = rs_api();
	struct sockaddr_in sin;

	rs_addr(row, &sin);
	*l = rs_listener(&sin);
	*c = rs_stream();
	if (r->connect(*c, (struct sockaddr *)&sin, sizeof sin))
		conf_fatal("rconnect: %s", conf_errno_name(errno));
	*s = r->accept(*l, NULL, NULL);
	if (*s < 0)
		conf_fatal("raccept: %s", conf_errno_name(errno));
}

void rs_fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = rs_pat(i, seed);
}

size_t rs_check(const uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != rs_pat(i, seed))
			return i;
	return len;
}

size_t rs_send_all(int fd, const uint8_t *buf, size_t len, size_t chunk, int *err)
{
	size_t done = 0;

	*err = 0;
	while (done < len) {
		size_t n = len - done < chunk ? len - done : chunk;
		ssize_t w = rs_api()->send(fd, buf + done, n, 0);

		if (w <= 0) {
			*err = w < 0 ? errno : 0;
			break;
		}
		done += (size_t)w;
	}
	return done;
}

size_t rs_recv_all(int fd, uint8_t *buf, size_t len, int *err)
{
	size_t done = 0;

	*err = 0;
	while (done < len) {
		ssize_t n = rs_api()->recv(fd, buf + done, len - done, 0);

		if (n <= 0) {
			*err = n < 0 ? errno : 0;
			break;
		}
		done += (size_t)n;
	}
	return done;
}

int rs_poll1(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = rs_api()->poll(&p, 1, ms);

	return n <= 0 ? n : p.revents;
}

struct rs_opt rs_getopt(int fd, int level, int name)
{
	struct rs_opt o = { 0, 0, -12345, sizeof(int) };

	errno = 0;
	o.ret = rs_api()->getsockopt(fd, level, name, &o.val, &o.len);
	o.err = o.ret ? errno : 0;
	return o;
}

int rs_setopt(int fd, int level, int name, int val)
{
	errno = 0;
	return rs_api()->setsockopt(fd, level, name, &val, sizeof val) ? errno : 0;
}

/* ---- a sender thread ---- */

static void *sender_run(void *arg)
{
	struct rs_sender *s = arg;

	s->done = rs_send_all(s->fd, s->buf, s->len, s->chunk, &s->err);
	return NULL;
}

void rs_sender_start(struct rs_sender *s, int fd, const uint8_t *buf, size_t len, size_t chunk)
{
	s->fd = fd;
	s->buf = buf;
	s->len = len;
	s->chunk = chunk;
	s->done = 0;
	s->err = 0;
	if (pthread_create(&s->t, NULL, sender_run, s))
		conf_fatal("pthread_create");
}

void rs_sender_join(struct rs_sender *s, const char *what)
{
	pthread_join(s->t, NULL);
	conf_expect(s->done == s->len, "%s: rsend moved %zu of %zu bytes (errno %s)", what,
		    s->done, s->len, conf_errno_name(s->err));
}

uint8_t *rs_xmalloc(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	if (!p)
		conf_fatal("out of memory");
	return p;
}

/* One direction: `len` bytes from `from` to `to` in rsend calls of `chunk`, read back whole. */
void rs_one_way(const char *what, int from, int to, size_t len, size_t chunk, unsigned seed)
{
	uint8_t *out = rs_xmalloc(len), *in = rs_xmalloc(len);
	struct rs_sender s;
	size_t got, bad;
	int err;

	rs_fill(out, len, seed);
	memset(in, 0, len);
	rs_sender_start(&s, from, out, len, chunk);
	got = rs_recv_all(to, in, len, &err);
	rs_sender_join(&s, what);
	conf_expect(got == len, "%s: received %zu of %zu bytes (errno %s)", what, got, len,
		    conf_errno_name(err));
	bad = rs_check(in, got, seed);
	conf_expect(bad == got, "%s: byte %zu is 0x%02x, want 0x%02x", what, bad,
		    bad < got ? in[bad] : 0, rs_pat(bad, seed));
	free(out);
	free(in);
}

