/* rdmaemu run / rdmaemu daemon: runs programs on a fabric owned by rdmaemud (docs/daemon.md).
 *
 *   rdmaemu run [--fabric FILE] [--node NAME] [--pcap PREFIX] [--no-sandbox] [--rsockets]
 *               [--rdma-core 44|61] -- CMD [ARGS...]
 *   rdmaemu daemon start [--fabric FILE] [--as DAEMON] [--pcap PREFIX] | stop | status
 *   rdmaemu daemon remove-device NODE DEV      (`rdma link delete DEV` on host NODE)
 *   rdmaemu daemon neigh-flush NODE [NETDEV]   (`ip neigh flush` on host NODE)
 *   rdmaemu daemon link-set NODE NETDEV up|down (`ip link set` on host NODE)
 *
 * `run` makes sure a daemon runs the fabric (starting one, detached, when none answers), then
 * execs CMD with the project's libibverbs.so.1, librdmacm.so.1 and libibumad.so.3 first on
 * LD_LIBRARY_PATH and RDMAEMU_DAEMON / RDMAEMU_FABRIC / RDMAEMU_NODE set, so that an unmodified program
 * attaches to the host NAME through the daemon, in the host's sandbox (emu/host/sandbox.h)
 * unless --no-sandbox or namespaces are not permitted; --rsockets preloads librspreload.so
 * (docs/rsockets.md "Preload"). --rdma-core (or RDMAEMU_RDMA_CORE) picks the librdmacm.so.1
 * personality, the directory of its own each has (docs/rdma-core-generations.md); without it
 * the default one. From the build tree (this program's
 * executable lies under it) the libraries and the daemon are the build's; installed, they
 * are pkglibdir's and bindir's. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/link/proto.h"
#include "emu/link/link.h"
#include "emu/sim/fabric.h"
#include "emu/tools/rdmaemu_run.h"
#include "emu/host/sandbox.h"
#include "util/selfexe.h"

static bool in_build_tree(void)
{
	return emu_self_exe_below(RDMAEMU_BUILDDIR);
}

/* The librdmacm personality's directory comes first (each holds only librdmacm.so.1); the
 * default personality is the one beside the other libraries. */
static void libdirs(char *buf, size_t len, const char *rdma_core)
{
	const char *env = getenv("RDMAEMU_LIBDIR");
	char first[PATH_MAX + 32] = "";

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (rdma_core && in_build_tree())
		snprintf(first, sizeof(first), "%s/lib/rdma-core-%s/.libs:", RDMAEMU_BUILDDIR,
			 rdma_core);
	else if (rdma_core)
		snprintf(first, sizeof(first), "%s/rdma-core-%s:", RDMAEMU_PKGLIBDIR, rdma_core);
	if (in_build_tree())
		snprintf(buf, len, "%s%s/lib/.libs:%s/emu/verbs/.libs:%s/emu/umad/.libs:%s/emu/.libs",
			 first, RDMAEMU_BUILDDIR, RDMAEMU_BUILDDIR, RDMAEMU_BUILDDIR, RDMAEMU_BUILDDIR);
	else
		snprintf(buf, len, "%s%s", first, RDMAEMU_PKGLIBDIR);
}

/* true for "44", "61" or NULL (none asked for); false after saying what is accepted. */
static bool rdma_core_valid(const char *v)
{
	if (!v || !strcmp(v, "44") || !strcmp(v, "61"))
		return true;
	fprintf(stderr, "rdmaemu: --rdma-core / RDMAEMU_RDMA_CORE: '%s': the personalities are 44 "
			"and 61\n", v);
	return false;
}

/* A preload library: the build tree's (build_rel, under the build directory), pkglibdir's
 * (inst_rel, under it), or the first directory of RDMAEMU_LIBDIR that has it (as inst_rel or
 * by its file name). */
static void preload_lib(char *buf, size_t len, const char *build_rel, const char *inst_rel)
{
	const char *env = getenv("RDMAEMU_LIBDIR");
	const char *name = strrchr(inst_rel, '/') ? strrchr(inst_rel, '/') + 1 : inst_rel;

	if (env && *env) {
		while (*env) {
			size_t n = strcspn(env, ":");

			snprintf(buf, len, "%.*s/%s", (int)n, env, inst_rel);
			if (!access(buf, R_OK))
				return;
			snprintf(buf, len, "%.*s/%s", (int)n, env, name);
			if (!access(buf, R_OK))
				return;
			env += n + (env[n] == ':');
		}
	} else if (in_build_tree()) {
		snprintf(buf, len, "%s/%s", RDMAEMU_BUILDDIR, build_rel);
		return;
	} else {
		snprintf(buf, len, "%s/%s", RDMAEMU_PKGLIBDIR, inst_rel);
		return;
	}
	buf[0] = 0;
}

/* Adds a library to LD_PRELOAD, after what is there (a sanitizer's runtime must stay first). */
static void preload_add(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (!lib[0] || access(lib, R_OK) || (old && strstr(old, lib)))
		return;
	v = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
	if (!v)
		return;
	sprintf(v, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", lib);
	setenv("LD_PRELOAD", v, 1);
	free(v);
}

/* librspreload.so (--rsockets) comes before librdmaemu-host.so (RDMA netlink, the guard of a
 * run without a sandbox): the program's calls reach librspreload.so first, and the libc calls
 * it makes for sockets it leaves real (its fallback to TCP) pass through the host library's
 * guard on their way to libc. */
static void preload_libs(bool rsockets)
{
	char lib[PATH_MAX + 32];

	if (rsockets) {
		preload_lib(lib, sizeof(lib), "lib/preload/.libs/librspreload.so.1",
			    "rsocket/librspreload.so.1");
		if (!lib[0] || access(lib, R_OK))
			fprintf(stderr, "rdmaemu: --rsockets: no librspreload.so.1 (%s): running "
					"without it\n", lib[0] ? lib : "not in RDMAEMU_LIBDIR");
		preload_add(lib);
	}
	preload_lib(lib, sizeof(lib), "emu/host/.libs/librdmaemu-host.so", "librdmaemu-host.so");
	preload_add(lib);
}

static void daemon_bin(char *buf, size_t len)
{
	if (in_build_tree())
		snprintf(buf, len, "%s/emu/daemon/rdmaemud", RDMAEMU_BUILDDIR);
	else
		snprintf(buf, len, "%s/rdmaemud", RDMAEMU_BINDIR);
}

/* Sends a control message and reads the answer into buf (NUL-terminated text). 0, or -1 with
 * errno (ECONNREFUSED / ENOENT: no daemon). */
static int control(const char *sock, uint16_t type, char *buf, size_t len)
{
	struct emu_dmsg h = { EMU_DPROTO_MAGIC, EMU_DPROTO_VERSION, type, 0, 0 };
	static char ans[sizeof(h) + EMU_DPROTO_STATUS_MAX];
	int fd = emu_link_connect(sock);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	do
		n = recv(fd, ans, sizeof(ans), 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < (ssize_t)sizeof(h)) {
		errno = n < 0 ? errno : EPROTO;
		return -1;
	}
	n -= (ssize_t)sizeof(h);
	if ((size_t)n >= len)
		n = (ssize_t)len - 1;
	memcpy(buf, ans + sizeof(h), (size_t)n);
	buf[n] = 0;
	return 0;
}

static bool daemon_answers(const char *sock)
{
	int fd = emu_link_connect(sock);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Starts rdmaemud detached (its own session, output to <runtime dir>/rdmaemud.log) and waits
 * until it answers on its socket. 0 or 1 after printing why. */
static int daemon_start(const char *sock, const char *fabric, const char *as, const char *pcap,
			bool vt, const char *hold, bool trace)
{
	char bin[PATH_MAX], dir[PATH_MAX], log[PATH_MAX + 16];
	pid_t pid;
	int status;

	daemon_bin(bin, sizeof(bin));
	if (emu_link_runtime_dir(dir, sizeof(dir), true))
		return 1;

	snprintf(log, sizeof(log), "%s/rdmaemud.log", dir);
	pid = fork();
	if (pid < 0) {
		perror("rdmaemu: fork");
		return 1;
	}
	if (pid == 0) {
		char *args[16];
		int n = 0, fd;

		/* a grandchild, so that nobody has to reap the daemon */
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		args[n++] = bin;
		if (fabric) {
			args[n++] = (char *)"--fabric";
			args[n++] = (char *)fabric;
		}
		if (as) {
			args[n++] = (char *)"--as";
			args[n++] = (char *)as;
		}
		if (pcap) {
			args[n++] = (char *)"--pcap";
			args[n++] = (char *)pcap;
		}
		args[n++] = (char *)"--socket";
		args[n++] = (char *)sock;
		if (vt)
			args[n++] = (char *)"--virtual-time";
		if (hold) {
			args[n++] = (char *)"--hold";
			args[n++] = (char *)hold;
		}
		if (trace)
			args[n++] = (char *)"--trace";
		args[n] = NULL;
		execv(bin, args);
		fprintf(stderr, "rdmaemu: cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	waitpid(pid, &status, 0);
	/* generous: a loaded machine, a sanitizer build */
	for (int i = 0; i < 600; i++) {
		if (daemon_answers(sock))
			return 0;
		sleep_ms(50);
	}
	fprintf(stderr, "rdmaemu: rdmaemud did not come up on %s (see %s)\n", sock, log);
	return 1;
}

/* A fabric run by several daemons (docs/multi-daemon.md): the daemon of the host the run is
 * for (node, else RDMAEMU_NODE, else the first host), in buf; NULL for any other fabric (the
 * daemon then says what is wrong with it). */
static const char *host_daemon(const char *fabric, const char *node, char *buf, size_t len)
{
	struct emu_fabric *f = fabric ? emu_fabric_load(fabric, NULL) : NULL;
	const struct emu_host *h = NULL;
	bool found = false;

	if (!node)
		node = getenv("RDMAEMU_NODE");
	if (f && f->nhosts)
		h = node && *node ? emu_fabric_find_host(f, node) : &f->hosts[0];
	if (h && h->daemon) {
		snprintf(buf, len, "%s", f->daemons[h->daemon - 1].name);
		found = true;
	}
	emu_fabric_free(f);
	return found ? buf : NULL;
}

/* The fabric a running daemon serves, from its status ("fabric PATH" or "fabric (built-in)"):
 * 0 when it is the one this run asks for (NULL: the built-in fabric), 1 after saying which
 * fabric holds the daemon and how to run beside it. A daemon that does not answer the status
 * is left to the attach, which reports what goes wrong. */
static int daemon_fabric_matches(const char *sock, const char *fabric)
{
	static char text[EMU_DPROTO_STATUS_MAX];
	char held[PATH_MAX];
	const char *want = fabric ? fabric : "(built-in)";
	const char *line;
	size_t n;

	if (control(sock, EMU_DMSG_STATUS, text, sizeof(text)))
		return 0;
	line = strstr(text, "\nfabric ");
	if (!line)
		return 0;
	line += strlen("\nfabric ");
	n = strcspn(line, "\n");
	if (n >= sizeof(held))
		return 0;
	memcpy(held, line, n);
	held[n] = 0;
	if (!strcmp(held, want))
		return 0;
	fprintf(stderr,
		"rdmaemu: the rdmaemud on %s runs fabric %s, not %s: one daemon serves one fabric.\n"
		"rdmaemu: stop it (`rdmaemu daemon stop`), or run this fabric beside it with a runtime "
		"directory of its own (RDMAEMU_RUNTIME_DIR=DIR rdmaemu run ...)\n",
		sock, held, want);
	return 1;
}

/* The time mode a running daemon has (its status says "time: virtual" or "time: real"): 0
 * when it is the one this run asks for, 1 after saying which it runs in. */
static int daemon_mode_matches(const char *sock, bool vt)
{
	static char text[EMU_DPROTO_STATUS_MAX];
	bool held;

	if (control(sock, EMU_DMSG_STATUS, text, sizeof(text)))
		return 0;
	held = strstr(text, "\ntime: virtual\n") != NULL;
	if (held == vt)
		return 0;
	fprintf(stderr,
		"rdmaemu: the rdmaemud on %s runs in %s time, not %s time%s: one daemon runs one "
		"mode.\nrdmaemu: stop it (`rdmaemu daemon stop`), or run beside it with a runtime "
		"directory of its own (RDMAEMU_RUNTIME_DIR=DIR rdmaemu run ...)\n",
		sock, held ? "virtual" : "real", vt ? "virtual" : "real",
		vt ? " (--virtual-time)" : "");
	return 1;
}

static void run_usage(FILE *out)
{
	fputs("usage: rdmaemu run [--fabric FILE] [--node NAME] [--pcap PREFIX] [--no-sandbox] "
	      "[--rsockets]\n"
	      "                   [--virtual-time] [--rdma-core 44|61] -- CMD [ARGS...]\n"
	      "  (default)        real time: the fabric's clock is the machine's; protocol\n"
	      "                   timeouts take their wall time (what benchmarks use)\n"
	      "  --virtual-time   virtual time: one clock for every process of the fabric, moved\n"
	      "                   by rdmaemud to the next deadline when all of them are idle;\n"
	      "                   timeouts cost no wall time and runs repeat exactly\n"
	      "  --rdma-core N    the librdmacm personality: 44 (Debian 12's rdma-core) or 61\n"
	      "                   (with the v60 calls); default RDMAEMU_RDMA_CORE, else the\n"
	      "                   installed rdma-core's generation\n",
	      out);
}

/* Running without a sandbox: IP to the fabric's subnets is refused (emu/host/net_guard.h). */
static int no_sandbox(const char *fabric)
{
	char nets[8192];

	unsetenv("RDMAEMU_SANDBOX");
	if (emu_sandbox_guard_nets(fabric, nets, sizeof(nets)))
		return 1;
	setenv("RDMAEMU_GUARD_NETS", nets, 1);
	return 0;
}

/* Puts this process into the host's sandbox (emu/host/sandbox.h). 0: inside, or running
 * without one after saying so in one line (namespaces not permitted, or --no-sandbox); 1
 * after saying what failed. */
static int enter_sandbox(const char *sock, const char *fabric, const char *node)
{
	struct emu_sandbox_opts o = { .sock = sock, .fabric = fabric, .node = node };
	char dir[PATH_MAX], err[600];

	if (emu_link_runtime_dir(dir, sizeof(dir), true))
		return 1;
	o.runtime_dir = dir;
	switch (emu_sandbox_enter(&o, err, sizeof(err))) {
	case EMU_SANDBOX_INSIDE:
		setenv("RDMAEMU_SANDBOX", node && *node ? node : "", 1);
		unsetenv("RDMAEMU_GUARD_NETS");
		return 0;
	case EMU_SANDBOX_NOT_PERMITTED:
		fprintf(stderr, "rdmaemu: no sandbox for host %s (not permitted here: %s): running "
				"on this machine's own network, without the host's interfaces, sysfs "
				"or /dev/infiniband\n",
			node && *node ? node : "(first)", err);
		return no_sandbox(fabric);
	default:
		fprintf(stderr, "rdmaemu: the sandbox of host %s: %s\n", node && *node ? node : "(first)",
			err);
		return 1;
	}
}

int rdmaemu_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' }, { "node", required_argument, NULL, 'n' },
		{ "pcap", required_argument, NULL, 'p' },   { "help", no_argument, NULL, 'h' },
		{ "no-sandbox", no_argument, NULL, 'S' },   { "rsockets", no_argument, NULL, 'R' },
		{ "virtual-time", no_argument, NULL, 'V' }, { "rdma-core", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	bool sandbox = true, rsockets = false, vt = false;
	const char *fabric = getenv("RDMAEMU_FABRIC"), *node = NULL, *pcap = NULL;
	const char *rdma_core = getenv("RDMAEMU_RDMA_CORE");
	char sock[PATH_MAX], libs[5 * PATH_MAX], *path, real[PATH_MAX], as[EMU_NAME_MAX];
	const char *old;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+f:n:p:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': fabric = optarg; break;
		case 'n': node = optarg; break;
		case 'p': pcap = optarg; break;
		case 'S': sandbox = false; break;
		case 'R': rsockets = true; break;
		case 'V': vt = true; break;
		case 'C': rdma_core = optarg; break;
		case 'h': run_usage(stdout); return 0;
		default: run_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return 2;
	}
	if (rdma_core && !*rdma_core)
		rdma_core = NULL;
	if (!rdma_core_valid(rdma_core))
		return 2;
	if (fabric && *fabric) {
		if (!realpath(fabric, real)) {
			fprintf(stderr, "rdmaemu: %s: %s\n", fabric, strerror(errno));
			return 1;
		}
		fabric = real;
	} else {
		fabric = NULL;
	}
	if (emu_link_socket_path(sock, sizeof(sock), true))
		return 1;
	/* a large fabric: mapped from the daemon's image, not parsed again */
	emu_fabric_set_image_dir_of(sock);
	if (!daemon_answers(sock)) {
		/* a socket there that is not the user's alone was refused (emu_link_connect said
		 * so): it is no daemon's to replace, its owner must look */
		if (errno == EPERM ||
		    daemon_start(sock, fabric, host_daemon(fabric, node, as, sizeof(as)), pcap, vt,
				 NULL, false))
			return 1;
	} else if (daemon_fabric_matches(sock, fabric) || daemon_mode_matches(sock, vt)) {
		return 1;
	} else if (pcap) {
		fprintf(stderr, "rdmaemu: --pcap: rdmaemud already runs (its captures are fixed at "
				"its start); `rdmaemu daemon stop` first\n");
		return 1;
	}
	if (!node)
		node = getenv("RDMAEMU_NODE");
	if (sandbox ? enter_sandbox(sock, fabric, node) : no_sandbox(fabric))
		return 1;
	preload_libs(rsockets);
	libdirs(libs, sizeof(libs), rdma_core);
	old = getenv("LD_LIBRARY_PATH");
	path = malloc(strlen(libs) + (old ? strlen(old) : 0) + 2);
	if (!path)
		return 1;
	sprintf(path, "%s%s%s", libs, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
	setenv("RDMAEMU_DAEMON", sock, 1);
	/* the library compares it with its own personality (lib/personality.c) */
	if (rdma_core)
		setenv("RDMAEMU_RDMA_CORE", rdma_core, 1);
	if (fabric)
		setenv("RDMAEMU_FABRIC", fabric, 1);
	else
		unsetenv("RDMAEMU_FABRIC");
	if (node)
		setenv("RDMAEMU_NODE", node, 1);
	unsetenv("RDMAEMU_PCAP"); /* the daemon writes the captures */
	/* the mode the process asks the daemon for (emu/link/link.c) */
	if (vt)
		setenv("RDMAEMU_TIME", "virtual", 1);
	else
		unsetenv("RDMAEMU_TIME");
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "rdmaemu: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}

int rdmaemu_daemon(int argc, char **argv)
{
	char sock[PATH_MAX];
	static char text[EMU_DPROTO_STATUS_MAX];

	if (argc < 2) {
		fputs("usage: rdmaemu daemon start [--fabric FILE] [--as DAEMON] [--pcap PREFIX]\n"
		      "                     [--virtual-time] [--hold N] [--trace] | stop | status\n"
		      "       rdmaemu daemon remove-device NODE DEV\n"
		      "       rdmaemu daemon neigh-flush NODE [NETDEV]\n"
		      "       rdmaemu daemon link-set NODE NETDEV up|down\n",
		      stderr);
		return 2;
	}
	if (emu_link_socket_path(sock, sizeof(sock), !strcmp(argv[1], "start")))
		return 1;
	if (!strcmp(argv[1], "status")) {
		if (control(sock, EMU_DMSG_STATUS, text, sizeof(text))) {
			printf("rdmaemud: not running (%s)\n", sock);
			return 3; /* as LSB status: not running */
		}
		fputs(text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "remove-device")) {
		int rc;

		if (argc != 4) {
			fputs("usage: rdmaemu daemon remove-device NODE DEV\n", stderr);
			return 2;
		}
		rc = emu_link_device_remove(sock, argv[2], argv[3]);
		if (rc == -ENOTCONN) {
			fprintf(stderr, "rdmaemud: not running (%s)\n", sock);
			return 1;
		}
		if (rc) {
			fprintf(stderr, "rdmaemu: remove-device %s %s: %s\n", argv[2], argv[3],
				strerror(-rc));
			return 1;
		}
		return 0;
	}
	if (!strcmp(argv[1], "link-set")) {
		int rc;

		if (argc != 5 || (strcmp(argv[4], "up") && strcmp(argv[4], "down"))) {
			fputs("usage: rdmaemu daemon link-set NODE NETDEV up|down\n", stderr);
			return 2;
		}
		rc = emu_link_link_set(sock, argv[2], argv[3], !strcmp(argv[4], "up"));
		if (rc == -ENOTCONN) {
			fprintf(stderr, "rdmaemud: not running (%s)\n", sock);
			return 1;
		}
		if (rc) {
			fprintf(stderr, "rdmaemu: link-set %s %s %s: %s\n", argv[2], argv[3], argv[4],
				strerror(-rc));
			return 1;
		}
		return 0;
	}
	if (!strcmp(argv[1], "neigh-flush")) {
		int rc;

		if (argc != 3 && argc != 4) {
			fputs("usage: rdmaemu daemon neigh-flush NODE [NETDEV]\n", stderr);
			return 2;
		}
		rc = emu_link_neigh_flush(sock, argv[2], argc == 4 ? argv[3] : NULL);
		if (rc == -ENOTCONN) {
			fprintf(stderr, "rdmaemud: not running (%s)\n", sock);
			return 1;
		}
		if (rc < 0) {
			fprintf(stderr, "rdmaemu: neigh-flush %s%s%s: %s\n", argv[2],
				argc == 4 ? " " : "", argc == 4 ? argv[3] : "", strerror(-rc));
			return 1;
		}
		printf("%d\n", rc);
		return 0;
	}
	if (!strcmp(argv[1], "stop")) {
		if (control(sock, EMU_DMSG_STOP, text, sizeof(text))) {
			printf("rdmaemud: not running (%s)\n", sock);
			return 0;
		}
		for (int i = 0; i < 600 && daemon_answers(sock); i++)
			sleep_ms(50);
		return daemon_answers(sock) ? 1 : 0;
	}
	if (!strcmp(argv[1], "start")) {
		static const struct option opts[] = {
			{ "fabric", required_argument, NULL, 'f' },
			{ "pcap", required_argument, NULL, 'p' },
			{ "virtual-time", no_argument, NULL, 'V' },
			{ "hold", required_argument, NULL, 'H' },
			{ "trace", no_argument, NULL, 'T' },
			{ "as", required_argument, NULL, 'a' },
			{ NULL, 0, NULL, 0 },
		};
		const char *fabric = NULL, *pcap = NULL, *hold = NULL, *as = NULL;
		char real[PATH_MAX];
		bool vt = false, trace = false;
		int opt;

		optind = 2;
		while ((opt = getopt_long(argc, argv, "f:p:", opts, NULL)) != -1) {
			if (opt == 'f')
				fabric = optarg;
			else if (opt == 'p')
				pcap = optarg;
			else if (opt == 'V')
				vt = true;
			else if (opt == 'H')
				hold = optarg;
			else if (opt == 'T')
				trace = true;
			else if (opt == 'a')
				as = optarg;
			else
				return 2;
		}
		if (fabric && !realpath(fabric, real)) {
			fprintf(stderr, "rdmaemu: %s: %s\n", fabric, strerror(errno));
			return 1;
		}
		if (daemon_answers(sock)) {
			fprintf(stderr, "rdmaemu: rdmaemud already runs on %s\n", sock);
			return 1;
		}
		if (errno == EPERM)
			return 1; /* a socket not the user's alone, said */
		return daemon_start(sock, fabric ? real : NULL, as, pcap, vt, hold, trace);
	}
	fprintf(stderr, "rdmaemu: unknown daemon command '%s'\n", argv[1]);
	return 2;
}
