/* wire_relay: the wire between the two reference VMs, with a loss at a chosen place.
 *   wire_relay [END:OFFSET:VALUE[/MASK]:NTH]... A_LOCAL A_REMOTE B_LOCAL B_REMOTE PCAP
 * QEMU's `-netdev dgram` of VM A sends its frames to the unix datagram socket A_REMOTE and
 * receives on A_LOCAL, B likewise; the relay binds A_REMOTE and B_REMOTE and passes each frame
 * on to the other VM's local socket (scripts/rxe-vm run --two --relay). Every frame, dropped or
 * not, goes to PCAP as it was sent, as the emulator's captures record them. A rule drops the
 * NTH RoCEv2 frame (UDP port 4791) sent by END (a or b) whose byte at OFFSET equals VALUE
 * under MASK: fixtures/wire-loss.fabric's drop-match= rules, the same loss on kernel rxe.
 * SIGTERM ends it. Unix sockets only: nothing leaves the machine. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_RULES 8
#define FRAME_MAX 65536

struct rule {
	int side;
	unsigned off, val, mask, nth, seen;
};

static struct rule rules[MAX_RULES];
static int nrules;
static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

static int bind_dgram(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void pcap_put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

static void pcap_header(FILE *f)
{
	pcap_put32(f, 0xa1b23c4du); /* nanosecond timestamps */
	pcap_put32(f, 2 | 4u << 16);
	pcap_put32(f, 0);
	pcap_put32(f, 0);
	pcap_put32(f, FRAME_MAX);
	pcap_put32(f, 1); /* Ethernet */
}

static void pcap_frame(FILE *f, const uint8_t *p, size_t n)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	pcap_put32(f, (uint32_t)t.tv_sec);
	pcap_put32(f, (uint32_t)t.tv_nsec);
	pcap_put32(f, (uint32_t)n);
	pcap_put32(f, (uint32_t)n);
	fwrite(p, 1, n, f);
	fflush(f);
}

/* RoCEv2 over IPv4 or IPv6 without VLAN: UDP destination port 4791. */
static int is_roce(const uint8_t *p, size_t n)
{
	if (n >= 42 && p[12] == 0x08 && p[13] == 0x00 && p[23] == 17)
		return ((p[14] & 0xf) * 4 + 14 + 4 <= (int)n) &&
		       (p[14 + (p[14] & 0xf) * 4 + 2] << 8 | p[14 + (p[14] & 0xf) * 4 + 3]) == 4791;
	if (n >= 62 && p[12] == 0x86 && p[13] == 0xdd && p[20] == 17)
		return (p[56] << 8 | p[57]) == 4791;
	return 0;
}

static int drop(int side, const uint8_t *p, size_t n)
{
	int d = 0;

	if (!is_roce(p, n))
		return 0;
	for (int i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];

		if (r->side != side || r->off >= n || (p[r->off] & r->mask) != r->val)
			continue;
		if (++r->seen == r->nth)
			d = 1;
	}
	return d;
}

static int parse_rule(const char *s, struct rule *r)
{
	char end;
	int used = 0;

	r->mask = 0xff;
	if (sscanf(s, "%c:%i:%i/%i:%u%n", &end, &r->off, &r->val, &r->mask, &r->nth, &used) != 5 &&
	    sscanf(s, "%c:%i:%i:%u%n", &end, &r->off, &r->val, &r->nth, &used) != 4)
		return -1;
	if ((end != 'a' && end != 'b') || s[used] || !r->nth || r->val > 0xff || r->mask > 0xff)
		return -1;
	r->side = end == 'b';
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un to[2] = { { .sun_family = AF_UNIX }, { .sun_family = AF_UNIX } };
	struct pollfd pfd[2];
	uint8_t *buf = malloc(FRAME_MAX);
	unsigned long passed = 0, dropped = 0;
	FILE *pcap;

	char **path;

	if (argc < 6 || argc - 6 > MAX_RULES || !buf) {
		fprintf(stderr, "usage: wire_relay [END:OFFSET:VALUE[/MASK]:NTH]... A_LOCAL A_REMOTE "
				"B_LOCAL B_REMOTE PCAP\n");
		return 2;
	}
	for (int i = 1; i < argc - 5; i++)
		if (parse_rule(argv[i], &rules[nrules++])) {
			fprintf(stderr, "wire_relay: bad rule '%s'\n", argv[i]);
			return 2;
		}
	path = argv + argc - 6; /* path[1] .. path[5] */
	if (strlen(path[1]) >= sizeof(to[0].sun_path) || strlen(path[3]) >= sizeof(to[0].sun_path))
		return 2;
	strcpy(to[0].sun_path, path[1]); /* frames from B go to A */
	strcpy(to[1].sun_path, path[3]);
	pfd[0] = (struct pollfd){ .fd = bind_dgram(path[2]), .events = POLLIN }; /* A sends */
	pfd[1] = (struct pollfd){ .fd = bind_dgram(path[4]), .events = POLLIN }; /* B sends */
	pcap = fopen(path[5], "wb");
	if (pfd[0].fd < 0 || pfd[1].fd < 0 || !pcap) {
		perror("wire_relay");
		return 1;
	}
	pcap_header(pcap);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while (!done) {
		if (poll(pfd, 2, 200) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int side = 0; side < 2; side++) {
			ssize_t n;

			if (!(pfd[side].revents & POLLIN))
				continue;
			n = recv(pfd[side].fd, buf, FRAME_MAX, MSG_DONTWAIT);
			if (n <= 0)
				continue;
			pcap_frame(pcap, buf, (size_t)n);
			if (drop(side, buf, (size_t)n)) {
				dropped++;
				continue;
			}
			/* the other VM may not be up yet: its frame is lost, as on a cable */
			sendto(pfd[!side].fd, buf, (size_t)n, MSG_DONTWAIT,
			       (struct sockaddr *)&to[!side], sizeof(to[!side]));
			passed++;
		}
	}
	fprintf(stderr, "wire_relay: %lu frames passed, %lu dropped\n", passed, dropped);
	fclose(pcap);
	unlink(path[2]);
	unlink(path[4]);
	return 0;
}
