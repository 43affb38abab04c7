/* udp_anchor: the anchors of bench/run-xdaemon-bench, what the machine itself does with the
 * frames two daemons exchange.
 *
 *   udp_anchor memcpy SIZE
 *       copies SIZE-byte frames between two buffers for 0.3 s:
 *       bench xdaemon_anchor what=memcpy size=N frames_per_s=.. gbytes_per_s=..
 *   udp_anchor recv ADDR PORT
 *       counts datagrams on ADDR:PORT until none came for 0.5 s (after the first):
 *       bench xdaemon_anchor what=udp size=N datagrams_per_s=.. received=..
 *   udp_anchor send ADDR PORT DST DPORT SIZE COUNT
 *       sends COUNT datagrams of SIZE bytes from ADDR:PORT to DST:DPORT, as fast as the
 *       socket takes them (a full buffer waits).
 * IPv4 only: the bench's two namespaces. */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/bench_clock.h"

static int sock_at(const char *a, const char *port, struct sockaddr_in *sa)
{
	int fd, sz = 8 << 20;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, a, &sa->sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int do_memcpy(size_t size)
{
	static uint8_t a[1 << 16], b[1 << 16];
	uint64_t n = 0, t0 = bench_clock_ns(), t;

	if (size > sizeof(a))
		return 2;
	memset(a, 0x5a, sizeof(a));
	do {
		for (int i = 0; i < 1024; i++) {
			memcpy(b, a, size);
			__asm__ volatile("" : : "r"(b) : "memory"); /* the copy must happen */
		}
		n += 1024;
		t = bench_clock_ns();
	} while (t - t0 < 300000000ull);
	printf("bench xdaemon_anchor what=memcpy size=%zu frames_per_s=%.0f gbytes_per_s=%.2f\n",
	       size, n * 1e9 / (double)(t - t0), (double)(n * size) / (double)(t - t0));
	return 0;
}

static int do_recv(const char *a, const char *port)
{
	static uint8_t buf[65536];
	struct sockaddr_in sa;
	int fd = sock_at(a, port, &sa);
	uint64_t n = 0, first = 0, last = 0;
	ssize_t len = 0, size = 0;

	if (fd < 0) {
		perror("udp_anchor recv");
		return 1;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, n ? 500 : 30000) <= 0)
			break;
		len = recv(fd, buf, sizeof(buf), 0);
		if (len < 0)
			break;
		last = bench_clock_ns();
		if (!n++)
			first = last;
		size = len;
	}
	printf("bench xdaemon_anchor what=udp size=%zd datagrams_per_s=%.0f received=%llu\n", size,
	       n > 1 ? (double)(n - 1) * 1e9 / (double)(last - first) : 0.0,
	       (unsigned long long)n);
	return 0;
}

static int do_send(char **argv)
{
	static uint8_t buf[65536];
	struct sockaddr_in sa, to;
	int fd = sock_at(argv[2], argv[3], &sa);
	size_t size = strtoul(argv[6], NULL, 0);
	unsigned long count = strtoul(argv[7], NULL, 0);

	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)atoi(argv[5]));
	if (fd < 0 || size > sizeof(buf) || inet_pton(AF_INET, argv[4], &to.sin_addr) != 1) {
		perror("udp_anchor send");
		return 1;
	}
	for (unsigned long i = 0; i < count; i++)
		if (sendto(fd, buf, size, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			perror("udp_anchor send");
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "memcpy"))
		return do_memcpy(strtoul(argv[2], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return do_recv(argv[2], argv[3]);
	if (argc == 8 && !strcmp(argv[1], "send"))
		return do_send(argv);
	fputs("usage: udp_anchor memcpy SIZE | recv ADDR PORT | send ADDR PORT DST DPORT SIZE "
	      "COUNT\n", stderr);
	return 2;
}
