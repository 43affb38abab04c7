/* Helpers of the rsocket cases (area RS, case_rs*.c).
 *
 * Every r* call is found with dlsym, never linked: the suite must still load and run against a
 * librdmacm without rsockets (then each RS case is Notrun, naming the missing symbol). The
 * types come from <rdma/rsocket.h> through __typeof__, so a changed prototype is a build error
 * rather than a silent mismatch. */
#ifndef CONFORMANCE_RS_UTIL_H
#define CONFORMANCE_RS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <netinet/in.h>
#include <rdma/rsocket.h>

struct rs_calls {
	__typeof__(rsocket) *socket;
	__typeof__(rbind) *bind;
	__typeof__(rlisten) *listen;
	__typeof__(raccept) *accept;
	__typeof__(rconnect) *connect;
	__typeof__(rshutdown) *shutdown;
	__typeof__(rclose) *close;
	__typeof__(rrecv) *recv;
	__typeof__(rrecvfrom) *recvfrom;
	__typeof__(rrecvmsg) *recvmsg;
	__typeof__(rsend) *send;
	__typeof__(rsendto) *sendto;
	__typeof__(rsendmsg) *sendmsg;
	__typeof__(rread) *read;
	__typeof__(rreadv) *readv;
	__typeof__(rwrite) *write;
	__typeof__(rwritev) *writev;
	__typeof__(rpoll) *poll;
	__typeof__(rselect) *select;
	__typeof__(rgetpeername) *getpeername;
	__typeof__(rgetsockname) *getsockname;
	__typeof__(rsetsockopt) *setsockopt;
	__typeof__(rgetsockopt) *getsockopt;
	__typeof__(rfcntl) *fcntl;
	__typeof__(riomap) *iomap;
	__typeof__(riounmap) *iounmap;
	__typeof__(riowrite) *iowrite;
};

/* The loaded librdmacm's rsocket calls; ends the case with Notrun when one is absent. */
const struct rs_calls *rs_api(void);

/* The local RDMA IPv4 address (cm_local_ipv4) with the row's own port, RS_PORT + row, so a
 * connection of an earlier case still in timewait cannot collide. Notrun without one. */
#define RS_PORT 49000
void rs_addr(int row, struct sockaddr_in *sin);
/* The link layer (IBV_LINK_LAYER_*) of the port behind the local address, -1 if unknown. */
int rs_link_layer(void);

/* A stream rsocket (AF_INET), or the case fails. */
int rs_stream(void);

/* A stream rsocket bound to `sin` and listening (backlog 8), or the case fails. */
int rs_listener(const struct sockaddr_in *sin);

/* A connected pair over the loopback of the local RDMA address: *c from a blocking rconnect,
 * *s from raccept on *l (left open; -1 to close it). The case fails when either step does. */
void rs_pair(int row, int *l, int *c, int *s);

/* Byte i of a test pattern with a seed: every byte checkable, different per direction. */
static inline uint8_t rs_pat(size_t i, unsigned seed)
{
	return (uint8_t)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
}
void rs_fill(uint8_t *buf, size_t len, unsigned seed);
/* Index of the first byte that is not the pattern, or len. */
size_t rs_check(const uint8_t *buf, size_t len, unsigned seed);

/* Sends/receives exactly len bytes in blocking calls of at most `chunk` bytes; returns the bytes
 * moved and the errno of the call that stopped short in *err (0 at the end of the stream). */
size_t rs_send_all(int fd, const uint8_t *buf, size_t len, size_t chunk, int *err);
size_t rs_recv_all(int fd, uint8_t *buf, size_t len, int *err);

/* rs_send_all in a thread of its own, for a direction whose receiver runs in the case's. */
struct rs_sender {
	pthread_t t;
	int fd;
	const uint8_t *buf;
	size_t len, chunk, done;
	int err;
};

void rs_sender_start(struct rs_sender *s, int fd, const uint8_t *buf, size_t len, size_t chunk);
/* Joins; a short transfer is a failed expectation naming `what`. */
void rs_sender_join(struct rs_sender *s, const char *what);

/* malloc, or the case fails. */
uint8_t *rs_xmalloc(size_t n);

/* One direction: `len` bytes of pattern `seed` from `from` to `to` in rsend calls of `chunk`
 * (a sender thread), read back whole and checked byte by byte. */
void rs_one_way(const char *what, int from, int to, size_t len, size_t chunk, unsigned seed);

/* rpoll of one rsocket for `events`, up to ms; returns revents (0 on timeout, -1 on error). */
int rs_poll1(int fd, short events, int ms);

/* EXPECT_INT/EXPECT_HEX that evaluate `got` once: the cases pass calls, and the plain macros
 * name `got` twice (in the test and among conf_expect's arguments). */
#define RS_INT(what, got, want)                                                               \
	do {                                                                                  \
		long long rs_got_ = (long long)(got);                                         \
		EXPECT_INT(what, rs_got_, want);                                              \
	} while (0)
#define RS_HEX(what, got, want)                                                               \
	do {                                                                                  \
		unsigned long long rs_got_ = (unsigned long long)(got);                       \
		EXPECT_HEX(what, rs_got_, want);                                              \
	} while (0)

/* Integer option: value and length read back (rgetsockopt) with its errno. */
struct rs_opt {
	int ret, err, val;
	socklen_t len;
};
struct rs_opt rs_getopt(int fd, int level, int name);
/* rsetsockopt of an int: 0 or the errno. */
int rs_setopt(int fd, int level, int name, int val);

#endif
