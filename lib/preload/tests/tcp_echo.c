/* A plain TCP program to run under librspreload.so: an echo server and client, and a probe of
 * the calls the library changes. Nothing in it knows of rsockets; the same binary runs on the
 * reference VM (docs/reference/rsockets-preload.md).
 *
 *   tcp_echo server [-f] [-s] PORT          echo one connection (-f: in a forked child,
 *                                           -s: wait with select instead of poll)
 *   tcp_echo client [-s] ADDR PORT BYTES    send BYTES of a pattern in 16 KiB chunks, each
 *                                           read back before the next, and compare
 *   tcp_echo probe ADDR PORT DEADPORT       one line per check, against an echo server on
 *                                           PORT and no listener on DEADPORT
 *   tcp_echo kinds                          what socket() gives for a few families and types
 * Prints what it did; exits 0 when everything matched. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 16384
#define WAIT_MS 20000

static int use_select;

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case ENOTSUP: return "ENOTSUP";
	case EBADF: return "EBADF";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENETUNREACH: return "ENETUNREACH";
	case ENOTSOCK: return "ENOTSOCK";
	case EBUSY: return "EBUSY";
	default: return strerrorname_np(e) ? strerrorname_np(e) : "?";
	}
}

/* Waits until fd is readable: 1, or 0 on timeout or error. */
static int wait_readable(int fd)
{
	if (use_select) {
		struct timeval tv = { WAIT_MS / 1000, 0 };
		fd_set rd;

		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		return select(fd + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(fd, &rd);
	} else {
		struct pollfd p = { fd, POLLIN, 0 };

		return poll(&p, 1, WAIT_MS) == 1 && (p.revents & (POLLIN | POLLHUP));
	}
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static struct sockaddr_in inet_addr_of(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "tcp_echo: bad address %s\n", addr);
		exit(2);
	}
	return sin;
}

static long echo(int fd)
{
	static char buf[65536];
	long total = 0;
	ssize_t n;

	while (wait_readable(fd) && (n = read(fd, buf, sizeof(buf))) > 0) {
		if (write_all(fd, buf, (size_t)n))
			return -1;
		total += n;
	}
	return total;
}

static int server(const char *port, int do_fork)
{
	struct sockaddr_in sin = inet_addr_of("0.0.0.0", port);
	int one = 1, lfd, fd, status;
	long total;
	pid_t pid;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 4)) {
		perror("tcp_echo server: listen");
		return 1;
	}
	printf("server: listening on %s\n", port);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("tcp_echo server: accept");
		return 1;
	}
	if (do_fork) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid) {
			close(fd);
			close(lfd);
			waitpid(pid, &status, 0);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		}
		close(lfd);
	}
	total = echo(fd);
	printf("server: echoed %ld bytes%s\n", total, do_fork ? " in a child" : "");
	close(fd);
	if (!do_fork)
		close(lfd);
	return total < 0;
}

static int client(const char *addr, const char *port, long bytes)
{
	struct sockaddr_in sin = inet_addr_of(addr, port);
	static char out[CHUNK], in[CHUNK];
	long sent = 0, got = 0, bad = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		printf("client: connect: %s\n", err_name(errno));
		return 1;
	}
	while (sent < bytes) {
		size_t len = (size_t)(bytes - sent < CHUNK ? bytes - sent : CHUNK), have = 0;

		for (size_t i = 0; i < len; i++)
			out[i] = (char)((sent + (long)i) * 7 + 3);
		if (write_all(fd, out, len))
			break;
		sent += (long)len;
		while (have < len) {
			ssize_t n = wait_readable(fd) ? read(fd, in + have, len - have) : -1;

			if (n <= 0)
				goto done;
			have += (size_t)n;
		}
		got += (long)have;
		bad += memcmp(in, out, len) != 0;
	}
done:
	shutdown(fd, SHUT_WR);
	close(fd);
	printf("client: sent %ld received %ld %s\n", sent, got,
	       got == bytes && !bad ? "match" : "MISMATCH");
	return !(got == bytes && !bad);
}

static const char *fd_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return err_name(errno);
	return S_ISSOCK(st.st_mode) ? "socket" : S_ISCHR(st.st_mode) ? "chardev" : "other";
}

#define SHOW(name, expr)                                                                  \
	do {                                                                              \
		errno = 0;                                                                \
		long r_ = (long)(expr);                                                   \
		printf("%s: %ld %s\n", name, r_, r_ < 0 ? err_name(errno) : "");          \
	} while (0)

/* What the library's rules (preload_config) leave of socket(): a socket, or the chardev of a
 * socket taken. */
static int kinds(void)
{
	static const struct { const char *name; int domain, type; } k[] = {
		{ "INET STREAM", AF_INET, SOCK_STREAM },
		{ "INET6 STREAM", AF_INET6, SOCK_STREAM },
		{ "INET STREAM|CLOEXEC", AF_INET, SOCK_STREAM | SOCK_CLOEXEC },
		{ "UNIX STREAM", AF_UNIX, SOCK_STREAM },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		int fd = socket(k[i].domain, k[i].type, 0);

		printf("%s: %s\n", k[i].name, fd < 0 ? err_name(errno) : fd_kind(fd));
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* The descriptors, flags, select, fallback, sendfile and dup2 as the library leaves them. */
static int probe(const char *addr, const char *port, const char *dead)
{
	struct sockaddr_in sin = inet_addr_of(addr, port), nobody = inet_addr_of(addr, dead);
	struct timeval tv = { 0, 10000 };
	char path[] = "/tmp/tcp_echo.XXXXXX", buf[4096] = "sendfile";
	int fd, cfd, tmp;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	printf("socket(STREAM|CLOEXEC) is a %s\n", fd_kind(fd));
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("socket(AF_UNIX) is a %s\n", fd_kind(fd));
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	printf("socket(STREAM) is a %s\n", fd_kind(fd));
	SHOW("fcntl(F_GETFD)", fcntl(fd, F_GETFD));
	SHOW("fcntl(F_SETFD)", fcntl(fd, F_SETFD, FD_CLOEXEC));
	SHOW("fcntl(F_GETFL)", fcntl(fd, F_GETFL));
	SHOW("select(0, 10 ms)", select(0, NULL, NULL, NULL, &tv));
	SHOW("accept4(not listening)", accept4(fd, NULL, NULL, SOCK_CLOEXEC));
	SHOW("connect(no listener)", connect(fd, (struct sockaddr *)&nobody, sizeof(nobody)));
	printf("after the failed connect, a %s\n", fd_kind(fd));
	close(fd);

	cfd = socket(AF_INET, SOCK_STREAM, 0);
	SHOW("connect(echo server)", connect(cfd, (struct sockaddr *)&sin, sizeof(sin)));
	tmp = mkstemp(path);
	if (tmp < 0 || write(tmp, buf, sizeof(buf)) != sizeof(buf))
		return 1;
	unlink(path);
	lseek(tmp, 0, SEEK_SET);
	SHOW("sendfile(4096)", sendfile(cfd, tmp, NULL, sizeof(buf)));
	close(tmp);
	SHOW("dup2(fd, 100)", dup2(cfd, 100));
	SHOW("write(100, 5)", write(100, "hello", 5));
	SHOW("wait readable", wait_readable(cfd));
	SHOW("read(fd)", read(cfd, buf, sizeof(buf)));
	SHOW("close(100)", close(100));
	SHOW("close(fd)", close(cfd));
	return 0;
}

int main(int argc, char **argv)
{
	int opt, do_fork = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	optind = 2;
	while ((opt = getopt(argc, argv, "fs")) != -1) {
		if (opt == 'f')
			do_fork = 1;
		else if (opt == 's')
			use_select = 1;
		else
			goto usage;
	}
	argv += optind;
	argc -= optind;
	if (!strcmp(argv[-optind + 1], "server") && argc == 1)
		return server(argv[0], do_fork);
	if (!strcmp(argv[-optind + 1], "client") && argc == 3)
		return client(argv[0], argv[1], atol(argv[2]));
	if (!strcmp(argv[-optind + 1], "probe") && argc == 3)
		return probe(argv[0], argv[1], argv[2]);
	if (!strcmp(argv[-optind + 1], "kinds") && argc == 0)
		return kinds();
usage:
	fputs("usage: tcp_echo server [-f] [-s] PORT | client [-s] ADDR PORT BYTES | "
	      "probe ADDR PORT DEADPORT | kinds\n", stderr);
	return 2;
}
