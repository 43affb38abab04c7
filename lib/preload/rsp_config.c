/* Which sockets go to rsockets (rsocket(7) "preload"), and the options the environment sets.
 *
 * preload_config, in /etc/rdma/rsocket or in $RDMAEMU_RSOCKET_CONF (the directory of the
 * rsocket defaults, lib/rsocket/rs_config.c), holds one rule a line:
 *   program_name domain type protocol
 * with '*' for any value, domain INET, INET6 or IB, type STREAM or DGRAM, protocol TCP or UDP
 * (case ignored, AF_/PF_/SOCK_/IPPROTO_ prefixes accepted); a line starting with '#' is a
 * comment, a line with another value is ignored. A rule's program name matches every program
 * whose name starts with it. Without any rule every socket is offered to rsockets, which
 * refuse all but AF_INET, AF_INET6 and AF_IB streams and datagrams. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "lib/preload/rsp.h"

#ifndef AF_IB
#define AF_IB 27
#endif

#define RS_CONF_DIR "/etc/rdma/rsocket"

struct rule {
	char *name;	/* NULL: any program */
	int domain;	/* 0: any */
	int type;
	int protocol;
};

struct rsp_opts rsp_opts;
static struct rule *rules;
static int nrules;

struct word {
	const char *text;
	int value;
};

static const struct word domains[] = {
	{ "INET", AF_INET }, { "AF_INET", AF_INET }, { "PF_INET", AF_INET },
	{ "INET6", AF_INET6 }, { "AF_INET6", AF_INET6 }, { "PF_INET6", AF_INET6 },
	{ "IB", AF_IB }, { "AF_IB", AF_IB }, { "PF_IB", AF_IB }, { NULL, 0 },
};
static const struct word types[] = {
	{ "STREAM", SOCK_STREAM }, { "SOCK_STREAM", SOCK_STREAM },
	{ "DGRAM", SOCK_DGRAM }, { "SOCK_DGRAM", SOCK_DGRAM }, { NULL, 0 },
};
static const struct word protocols[] = {
	{ "TCP", IPPROTO_TCP }, { "IPPROTO_TCP", IPPROTO_TCP },
	{ "UDP", IPPROTO_UDP }, { "IPPROTO_UDP", IPPROTO_UDP }, { NULL, 0 },
};

/* The value of a field: 0 for '*', -1 for a word the table lacks. */
static int word_value(const struct word *t, const char *text)
{
	if (!strcmp(text, "*"))
		return 0;
	for (; t->text; t++)
		if (!strcasecmp(t->text, text))
			return t->value;
	return -1;
}

static void add_rule(const char *prog, const char *dom, const char *type, const char *proto)
{
	struct rule r = { NULL, word_value(domains, dom), word_value(types, type),
			  word_value(protocols, proto) };
	struct rule *grown;

	if (r.domain < 0 || r.type < 0 || r.protocol < 0)
		return;
	if (strcmp(prog, "*") && !(r.name = strdup(prog)))
		return;
	grown = realloc(rules, (size_t)(nrules + 1) * sizeof(*rules));
	if (!grown) {
		free(r.name);
		return;
	}
	rules = grown;
	rules[nrules++] = r;
}

static void free_rules(void)
{
	while (nrules)
		free(rules[--nrules].name);
	free(rules);
	rules = NULL;
}

static void read_rules(void)
{
	const char *dir = getenv("RDMAEMU_RSOCKET_CONF");
	char path[4096], line[120], prog[64], dom[16], type[16], proto[16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/preload_config", dir && *dir ? dir : RS_CONF_DIR);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s%15s%15s%15s", prog, dom, type, proto) == 4)
			add_rule(prog, dom, type, proto);
	}
	fclose(f);
	if (nrules)
		atexit(free_rules);
}

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v ? atoi(v) : dflt;
}

void rsp_config_load(void)
{
	rsp_opts.sq_size = env_int("RS_SQ_SIZE", 0);
	rsp_opts.rq_size = env_int("RS_RQ_SIZE", 0);
	rsp_opts.sq_inline = env_int("RS_INLINE", 0);
	rsp_opts.fork_support = env_int("RDMAV_FORK_SAFE", 0);
	read_rules();
}

bool rsp_config_takes(int domain, int type, int protocol)
{
	if (!nrules)
		return true;
	if (!protocol && type == SOCK_STREAM)
		protocol = IPPROTO_TCP;
	else if (!protocol && type == SOCK_DGRAM)
		protocol = IPPROTO_UDP;
	for (int i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];

		if (r->name && strncasecmp(r->name, program_invocation_short_name,
					   strlen(r->name)))
			continue;
		if ((!r->domain || r->domain == domain) && (!r->type || r->type == type) &&
		    (!r->protocol || r->protocol == protocol))
			return true;
	}
	return false;
}
