/* The guard of a program run without a sandbox (emu/host/net_guard.h). */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/host/net_guard.h"

#define MAX_NETS 64

struct net {
	int family;
	uint8_t addr[16];
	unsigned plen;
};

static struct net nets[MAX_NETS];
static size_t nnets;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int warned;

static void parse(void)
{
	const char *env = getenv("RDMAEMU_GUARD_NETS");
	char item[80];

	while (env && *env && nnets < MAX_NETS) {
		size_t n = strcspn(env, ",");
		char *slash;
		struct net *t = &nets[nnets];

		if (n < sizeof(item)) {
			memcpy(item, env, n);
			item[n] = 0;
			slash = strchr(item, '/');
			if (slash) {
				*slash = 0;
				t->plen = (unsigned)atoi(slash + 1);
				if (inet_pton(AF_INET, item, t->addr) == 1 && t->plen <= 32)
					t->family = AF_INET, nnets++;
				else if (inet_pton(AF_INET6, item, t->addr) == 1 && t->plen <= 128)
					t->family = AF_INET6, nnets++;
			}
		}
		env += n;
		env += *env == ',';
	}
}

static bool in_net(const struct net *t, const uint8_t *a)
{
	unsigned full = t->plen / 8, rest = t->plen % 8;

	if (memcmp(t->addr, a, full))
		return false;
	return !rest || !((t->addr[full] ^ a[full]) & (uint8_t)(0xff << (8 - rest)));
}

bool emu_net_guard_refuses(const struct sockaddr *addr, socklen_t len)
{
	const uint8_t *a = NULL;
	uint8_t v4[4];
	char text[INET6_ADDRSTRLEN] = "";
	int family = 0;

	pthread_once(&once, parse);
	if (!nnets || !addr)
		return false;
	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(v4, &((const struct sockaddr_in *)addr)->sin_addr, 4);
		a = v4;
		family = AF_INET;
	} else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		a = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
		family = AF_INET6;
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
			memcpy(v4, a + 12, 4);
			a = v4;
			family = AF_INET;
		}
	}
	for (size_t i = 0; a && i < nnets; i++)
		if (nets[i].family == family && in_net(&nets[i], a)) {
			if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
				inet_ntop(family, a, text, sizeof(text));
				fprintf(stderr, "rdmaemu: IP to %s refused: without a sandbox, a fabric "
						"address is this machine's real network\n", text);
			}
			errno = ENETUNREACH;
			return true;
		}
	return false;
}
