/* Common parts of the datagram rsocket tests: they compile lib/rsocket/ds_*.c into the test
 * program and call the ops of rs_dgram_type directly, in-process on an emulated host. */
#ifndef RDMAEMU_DS_TEST_H
#define RDMAEMU_DS_TEST_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <time.h>

#include "emu/verbs/tests/verbs_test.h"
#include "lib/rsocket/ds.h"
#include "lib/rsocket/ds_addr.h"
#include "lib/rsocket/ds_udp.h"

static inline struct sockaddr_in dt_addr(const char *ip, uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	return a;
}

#define DT_SA(a) ((struct sockaddr *)&(a))

static inline struct rs_sock *dt_new(void)
{
	struct rs_sock *s = rs_dgram_new(AF_INET);

	assert_non_null(s);
	assert_ptr_equal(s->type, &rs_dgram_type);
	assert_ptr_equal(rs_index_get(s->index), s);
	return s;
}

static inline struct rs_sock *dt_bound(const char *ip, uint16_t port)
{
	struct rs_sock *s = dt_new();
	struct sockaddr_in a = dt_addr(ip, port);

	assert_int_equal(s->type->bind(s, DT_SA(a), sizeof a), 0);
	return s;
}

static inline uint16_t dt_port(struct rs_sock *s)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;

	assert_int_equal(s->type->getsockname(s, DT_SA(a), &len), 0);
	return ntohs(a.sin_port);
}

static inline void dt_close(struct rs_sock *s)
{
	assert_int_equal(s->type->close(s), 0);
}

#endif
