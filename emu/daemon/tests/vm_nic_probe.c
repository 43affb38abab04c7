/* vm_nic_probe: plays the NIC of a kernel soft-RoCE VM on rdmaemud's wire, as QEMU's socket
 * netdev does (emu/daemon/vmport.h): binds LOCAL, sends an ARP request for TARGET from MAC/IP
 * to the daemon's VM socket DAEMON, and prints the ARP reply that comes back (at most 5 s):
 *   vm_nic_probe DAEMON LOCAL MAC IP TARGET
 *   -> "reply: TARGET is at XX:XX:XX:XX:XX:XX, to XX:XX:XX:XX:XX:XX", exit 0; 1 without. */
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int parse_mac(const char *s, unsigned char *m)
{
	unsigned v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		m[i] = (unsigned char)v[i];
	return 0;
}

static void put_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
}

/* An Ethernet ARP request (42 bytes, as the kernel hands it to the NIC) into f. */
static void arp_request(unsigned char *f, const unsigned char *mac, struct in_addr ip,
			struct in_addr target)
{
	static const unsigned char hdr[] = { 0, 1, 8, 0, 6, 4, 0, 1 };

	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memcpy(f + 14, hdr, sizeof(hdr));
	memcpy(f + 22, mac, 6);
	memcpy(f + 28, &ip, 4);
	memset(f + 32, 0, 6);
	memcpy(f + 38, &target, 4);
}

int main(int argc, char **argv)
{
	struct sockaddr_un daemon, local;
	unsigned char mac[6], f[2048];
	struct in_addr ip, target;
	int fd;

	if (argc != 6 || parse_mac(argv[3], mac) || !inet_pton(AF_INET, argv[4], &ip) ||
	    !inet_pton(AF_INET, argv[5], &target)) {
		fprintf(stderr, "usage: vm_nic_probe DAEMON LOCAL MAC IP TARGET\n");
		return 2;
	}
	put_addr(&daemon, argv[1]);
	put_addr(&local, argv[2]);
	unlink(argv[2]);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&local, sizeof(local))) {
		perror("vm_nic_probe: bind");
		return 1;
	}
	arp_request(f, mac, ip, target);
	if (sendto(fd, f, 42, 0, (struct sockaddr *)&daemon, sizeof(daemon)) != 42) {
		perror("vm_nic_probe: sendto");
		return 1;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 5000) <= 0) {
			printf("no reply\n");
			return 1;
		}
		n = recv(fd, f, sizeof(f), 0);
		/* an ARP reply (opcode 2) from TARGET; anything else the wire brings is skipped */
		if (n >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 2 &&
		    !memcmp(f + 28, &target, 4)) {
			printf("reply: %s is at %02x:%02x:%02x:%02x:%02x:%02x, to "
			       "%02x:%02x:%02x:%02x:%02x:%02x\n", argv[5], f[22], f[23], f[24],
			       f[25], f[26], f[27], f[0], f[1], f[2], f[3], f[4], f[5]);
			break;
		}
	}
	close(fd);
	unlink(argv[2]);
	return 0;
}
