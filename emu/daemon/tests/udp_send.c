/* udp_send: one datagram to a daemon's UDP port (emu/daemon/udp_link.h), for the tests of what
 * the daemon accepts and refuses.
 *
 *   udp_send SRC PORT DST PORT TOTAL [MAGIC VERSION END FROM LINK SEQ FABRIC]
 *
 * Binds SRC:PORT (IPv4), sends TOTAL bytes to DST:PORT: the 24-byte header with the given
 * fields in network byte order (zeros without them), cut at TOTAL when shorter, then zeros. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int addr(const char *a, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)strtoul(port, NULL, 0));
	return inet_pton(AF_INET, a, &sa->sin_addr) == 1 ? 0 : -1;
}

static void put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

int main(int argc, char **argv)
{
	static const int width[] = { 4, 1, 1, 2, 4, 4, 8 };
	struct sockaddr_in src, dst;
	size_t total;
	uint8_t *b;
	int fd, off = 0;

	if ((argc != 6 && argc != 13) || addr(argv[1], argv[2], &src) ||
	    addr(argv[3], argv[4], &dst)) {
		fputs("usage: udp_send SRC PORT DST PORT TOTAL [MAGIC VERSION END FROM LINK SEQ "
		      "FABRIC]\n", stderr);
		return 2;
	}
	total = strtoul(argv[5], NULL, 0);
	b = calloc(1, total > 24 ? total : 24);
	if (!b)
		return 1;
	for (int i = 0; argc == 13 && i < 7; i++) {
		put(b + off, strtoull(argv[6 + i], NULL, 0), width[i]);
		off += width[i];
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    sendto(fd, b, total, 0, (struct sockaddr *)&dst, sizeof(dst)) != (ssize_t)total) {
		perror("udp_send");
		return 1;
	}
	close(fd);
	free(b);
	return 0;
}
