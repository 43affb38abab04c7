/* rdmaemu: the command-line front end of the emulator.
 *
 *   rdmaemu fabric show [FILE]    print a fabric as the emulator sees it
 *   rdmaemu fabric check FILE...  load fabric files, report the first error of each
 *   rdmaemu run [--fabric FILE] [--node NAME] [--pcap PREFIX] [--no-sandbox] [--rsockets]
 *               -- CMD [ARGS...]
 *   rdmaemu daemon start [--fabric FILE] [--as DAEMON] [--pcap PREFIX] | stop | status
 *   rdmaemu daemon remove-device NODE DEV | neigh-flush NODE [NETDEV]
 *                 | link-set NODE NETDEV up|down
 *                                 (emu/tools/rdmaemu_run.c, docs/daemon.md)
 *   rdmaemu --help | --version
 *
 * Exit status: 0 success, 1 a fabric did not load (the reason on stderr, as FILE:LINE: what
 * was expected), 2 bad usage. See rdmaemu(1). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/fabric.h"
#include "emu/tools/rdmaemu_run.h"

static void usage(FILE *out)
{
	fputs("usage: rdmaemu fabric show [FILE]\n"
	      "       rdmaemu fabric check FILE...\n"
	      "       rdmaemu run [--fabric FILE] [--node NAME] [--pcap PREFIX] [--no-sandbox]\n"
	      "                   [--rsockets] [--rdma-core 44|61] -- CMD [ARGS...]\n"
	      "       rdmaemu daemon start [--fabric FILE] [--as DAEMON] [--pcap PREFIX] | stop | status\n"
	      "       rdmaemu daemon remove-device NODE DEV\n"
	      "       rdmaemu daemon neigh-flush NODE [NETDEV]\n"
	      "       rdmaemu daemon link-set NODE NETDEV up|down\n"
	      "       rdmaemu --help | --version\n"
	      "\n"
	      "  fabric show [FILE]    print the fabric in FILE (default: $RDMAEMU_FABRIC if set,\n"
	      "                        else the built-in default fabric)\n"
	      "  fabric check FILE...  load each FILE and report errors; prints nothing on success\n"
	      "  run ... -- CMD        run CMD as host NAME of the fabric that rdmaemud runs\n"
	      "                        (started when none answers)\n"
	      "  daemon stop|status    stop rdmaemud, or print what it runs\n"
	      "  daemon remove-device  `rdma link delete DEV` on host NODE of the daemon's fabric\n"
	      "  daemon neigh-flush    `ip neigh flush [dev NETDEV]` on host NODE\n"
	      "  daemon link-set       `ip link set NETDEV up|down` on host NODE\n"
	      "\n"
	      "Fabric files are described in rdmaemu-fabric(5).\n",
	      out);
}

static struct emu_fabric *load(const char *path)
{
	struct emu_error err;
	struct emu_fabric *f;

	if (!path)
		return emu_fabric_builtin();
	f = emu_fabric_load(path, &err);
	if (!f) {
		if (err.line)
			fprintf(stderr, "rdmaemu: %s:%u: %s\n", err.file, err.line, err.msg);
		else
			fprintf(stderr, "rdmaemu: %s: %s\n", err.file[0] ? err.file : path, err.msg);
	}
	return f;
}

static int fabric_show(int argc, char **argv)
{
	const char *path = NULL, *env = getenv("RDMAEMU_FABRIC");
	struct emu_fabric *f;

	if (argc > 1) {
		fputs("rdmaemu: 'fabric show' takes at most one FILE\n", stderr);
		return 2;
	}
	if (argc == 1)
		path = argv[0];
	else if (env && *env)
		path = env;
	f = load(path);
	if (!f) {
		if (!path)
			fprintf(stderr, "rdmaemu: cannot build the built-in fabric: %s\n",
				strerror(errno));
		return 1;
	}
	emu_fabric_show(f, stdout);
	emu_fabric_free(f);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

static int fabric_check(int argc, char **argv)
{
	int rc = 0;

	if (argc < 1) {
		fputs("rdmaemu: 'fabric check' needs at least one FILE\n", stderr);
		return 2;
	}
	for (int i = 0; i < argc; i++) {
		struct emu_fabric *f = load(argv[i]);

		if (!f)
			rc = 1;
		emu_fabric_free(f);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		/* the librdmacm personality `rdmaemu run` uses without --rdma-core, and the one
		 * generation the libibverbs.so.1 ABI has (emu/verbs/libibverbs.map) */
		printf("rdmaemu %s (librdmacm personality: rdma-core %d, libibverbs: rdma-core %d)\n",
		       PACKAGE_VERSION, RDMAEMU_RDMA_CORE_DEFAULT, RDMAEMU_VERBS_RDMA_CORE);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return rdmaemu_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "daemon"))
		return rdmaemu_daemon(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fabric") && argc >= 3) {
		if (!strcmp(argv[2], "show"))
			return fabric_show(argc - 3, argv + 3);
		if (!strcmp(argv[2], "check"))
			return fabric_check(argc - 3, argv + 3);
	}
	fprintf(stderr, "rdmaemu: unknown command '%s'\n", argc >= 3 && !strcmp(argv[1], "fabric")
								? argv[2] : argv[1]);
	usage(stderr);
	return 2;
}
