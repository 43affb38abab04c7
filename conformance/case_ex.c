/* EX (spec §13, §15 rows 272-273): rdma-core's example programs (rdmacm-utils) on a machine
 * without RDMA devices. The programs are the machine's, unmodified; on the emulator target they
 * load the emulator's librdmacm through the inherited LD_LIBRARY_PATH and attach to the nodev
 * fabric through RDMAEMU_FABRIC/RDMAEMU_NODE. */
#include "config.h"

#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance/conformance.h"
#include "conformance/emu_fabrics.h"

struct ex_row {
	const char *prog;
	const char *const *args;   /* argv after the program name */
	int status;                /* expected exit status */
	const char *const *lines;  /* lines that must appear in stdout+stderr */
};

static bool in_path(const char *prog, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", d, prog);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

static void emu_fabric_env(void)
{
	char tmpl[] = "/tmp/rdmaemu-conformance-nodev-XXXXXX";
	int fd;

	if (conf_target() != TARGET_EMU)
		return;
	if ((fd = mkstemp(tmpl)) < 0)
		conf_fatal("mkstemp: %s", strerror(errno));
	if (write(fd, EMU_FABRIC_NODEV, strlen(EMU_FABRIC_NODEV)) != (ssize_t)strlen(EMU_FABRIC_NODEV))
		conf_fatal("writing the nodev fabric: %s", strerror(errno));
	close(fd);
	setenv("RDMAEMU_FABRIC", tmpl, 1);
	setenv("RDMAEMU_NODE", EMU_FABRIC_NODEV_NODE, 1);
}

/* The sanitizer runtime this process has loaded (the emulator's libraries of a
 * --enable-sanitizers build link it), or NULL. An unmodified example program that loads such a
 * library must have the runtime preloaded, or ASan refuses to start. */
static int find_asan(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libasan.so")) {
		snprintf(data, 4096, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void preload_sanitizer(void)
{
	static char path[4096];

	if (conf_target() != TARGET_EMU || !dl_iterate_phdr(find_asan, path))
		return;
	setenv("LD_PRELOAD", path, 1);
	/* the example programs are not ours: their leaks are not the emulator's */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
}

static void ex_run(const struct conf_case *c)
{
	const struct ex_row *row = c->data;
	char exe[4096], out[16384], cmd[512];
	size_t have = 0, len;
	int fds[2], st;
	pid_t pid;

	if (!in_path(row->prog, exe, sizeof exe))
		conf_notrun("%s not installed (rdmacm-utils)", row->prog);
	len = (size_t)snprintf(cmd, sizeof cmd, "%s", row->prog);
	for (const char *const *a = row->args; a && *a && len < sizeof cmd; a++)
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, " %s", *a);
	conf_stimulus("%s (no device)", cmd);
	emu_fabric_env();
	if (pipe(fds))
		conf_fatal("pipe: %s", strerror(errno));
	if ((pid = fork()) < 0)
		conf_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		const char *argv[16] = { row->prog };
		int n = 1;

		for (const char *const *a = row->args; a && *a && n < 15; a++)
			argv[n++] = *a;
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		preload_sanitizer();
		close(fds[0]);
		close(fds[1]);
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t r = read(fds[0], out + have, sizeof out - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have == sizeof out - 1)
			break;
	}
	out[have] = 0;
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (getenv("RDMAEMU_FABRIC") && conf_target() == TARGET_EMU)
		unlink(getenv("RDMAEMU_FABRIC"));

	bool ok = WIFEXITED(st) && WEXITSTATUS(st) == row->status;
	unsigned missing = 0;

	for (const char *const *l = row->lines; *l; l++) {
		const char *p = out;
		bool found = false;
		size_t ll = strlen(*l);

		while ((p = strstr(p, *l))) {
			if ((p == out || p[-1] == '\n') && (p[ll] == '\n' || p[ll] == 0)) {
				found = true;
				break;
			}
			p += ll;
		}
		missing += !conf_expect(found, "no line \"%s\" in the output", *l);
	}
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = '|';
	if (!WIFEXITED(st))
		conf_expect(false, "did not exit (wait status 0x%x)", st);
	else
		EXPECT_INT("exit status", WEXITSTATUS(st), row->status);
	if (!ok || missing)
		conf_expect(false, "output \"%s\"", out);
	conf_note("exit %d, output \"%s\"", WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
}

static const char *const client_lines[] = { "rdma_getaddrinfo: Bad value for ai_flags",
					    "rdma_client: end -1", NULL };
static const char *const nodev_lines[] = { "No RDMA devices were detected", NULL };
static const char *const rping_args[] = { "-s", NULL };

static const struct conf_case cases[] = {
	{ "EX-272", "EX", 272, "no device: rdma_client prints \"rdma_getaddrinfo: Bad value for "
	  "ai_flags\" and \"rdma_client: end -1\", exit 255",
	  "the example prints gai_strerror(-1) (EAI_BADFLAGS) for a -1/ENODEV return", PRE_NODEVICE,
	  NULL, 0, ex_run,
	  &(const struct ex_row){ "rdma_client", NULL, 255, client_lines } },
	{ "EX-273a", "EX", 273, "no device: rping -s prints \"No RDMA devices were detected\", exit 19",
	  NULL, PRE_NODEVICE, NULL, 0, ex_run,
	  &(const struct ex_row){ "rping", rping_args, 19, nodev_lines } },
	{ "EX-273b", "EX", 273, "no device: ucmatose prints \"No RDMA devices were detected\", exit 1",
	  NULL, PRE_NODEVICE, NULL, 0, ex_run,
	  &(const struct ex_row){ "ucmatose", NULL, 1, nodev_lines } },
};

const struct conf_area conf_area_ex = { "EX", cases, sizeof cases / sizeof cases[0] };
