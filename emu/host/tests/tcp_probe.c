/* tcp_probe: one TCP exchange between two hosts of a fabric, from inside their sandboxes.
 *
 *   tcp_probe -l ADDR PORT    accepts one connection on ADDR:PORT, reads a line, answers
 *                             "pong <line> from <peer address>", exits 0
 *   tcp_probe -c ADDR PORT    connects (retrying for up to 10 s while refused), sends
 *                             "ping", prints the answer, exits 0
 *
 * Numeric IPv4 and IPv6 addresses (fe80::1%eth0 too). Any failure prints the call and its errno name, exits 1. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const char *what)
{
	printf("%s: %s\n", what, strerror(errno));
	return 1;
}

/* A numeric address (an IPv6 one may carry %IFNAME); never a name lookup. */
static socklen_t parse(const char *addr, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	socklen_t len;

	if (getaddrinfo(addr, port, &hints, &ai))
		return 0;
	len = ai->ai_addrlen;
	memcpy(ss, ai->ai_addr, len);
	freeaddrinfo(ai);
	return len;
}

static int serve(const struct sockaddr_storage *ss, socklen_t len)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	char line[128], who[INET6_ADDRSTRLEN], ans[256];
	int one = 1, c, s = socket(ss->ss_family, SOCK_STREAM, 0);
	ssize_t n;

	if (s < 0)
		return fail("socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (const struct sockaddr *)ss, len))
		return fail("bind");
	if (listen(s, 1))
		return fail("listen");
	c = accept(s, (struct sockaddr *)&peer, &plen);
	if (c < 0)
		return fail("accept");
	n = read(c, line, sizeof(line) - 1);
	if (n <= 0)
		return fail("read");
	line[n] = 0;
	inet_ntop(peer.ss_family,
		  peer.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&peer)->sin_addr
					    : (void *)&((struct sockaddr_in6 *)&peer)->sin6_addr,
		  who, sizeof(who));
	snprintf(ans, sizeof(ans), "pong %s from %s", line, who);
	if (write(c, ans, strlen(ans)) < 0)
		return fail("write");
	close(c);
	close(s);
	return 0;
}

static int client(const struct sockaddr_storage *ss, socklen_t len)
{
	char ans[256];
	ssize_t n;
	int s = -1;

	for (int i = 0;; i++) {
		s = socket(ss->ss_family, SOCK_STREAM, 0);
		if (s < 0)
			return fail("socket");
		if (!connect(s, (const struct sockaddr *)ss, len))
			break;
		if (errno != ECONNREFUSED || i == 100)
			return fail("connect");
		close(s);
		usleep(100000);
	}
	if (write(s, "ping", 4) != 4)
		return fail("write");
	n = read(s, ans, sizeof(ans) - 1);
	if (n <= 0)
		return fail("read");
	ans[n] = 0;
	printf("%s\n", ans);
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (argc != 4 || (strcmp(argv[1], "-l") && strcmp(argv[1], "-c")) ||
	    !(len = parse(argv[2], argv[3], &ss))) {
		fprintf(stderr, "usage: tcp_probe -l|-c ADDR PORT\n");
		return 2;
	}
	return argv[1][1] == 'l' ? serve(&ss, len) : client(&ss, len);
}
