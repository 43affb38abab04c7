/* A fake, non-functional RDMA device for the system target (spec §0 "fakedev"): libibverbs
 * sees an rxe0 through $SYSFS_PATH and a /dev/infiniband/uverbs0 node, but there is no
 * /dev/infiniband/rdma_cm and the device cannot be opened. This is the state of spec rows
 * 30-32 (DI `fake`), and it makes librdmacm's ucma_init() succeed so that every `fake` row can
 * run against the real library on a machine without RDMA hardware (--fake-device).
 *
 * Everything happens in the case's child, in a private mount namespace: a tmpfs over /tmp holds
 * the sysfs tree and the new /dev, which holds the device node (plus the few ordinary nodes a
 * process needs). Nothing is visible outside the child. Needs CAP_SYS_ADMIN (root). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "conformance/fakedev.h"

#define ROOT "/tmp/rdmaemu-fakedev"

static int put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int mkdirs(const char *path)
{
	char tmp[512];

	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

#define TRY(what, expr)                                                                 \
	do {                                                                            \
		if ((expr)) {                                                           \
			snprintf(why, size, "%s: %s", what, strerror(errno));           \
			return -1;                                                      \
		}                                                                       \
	} while (0)

int conf_fakedev_enter(char *why, size_t size)
{
	static const char *const nodes[] = { "null", "zero", "random", "urandom", "tty", NULL };

	TRY("unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
	TRY("mount --make-rprivate /", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	/* A private /tmp, so that nothing is left on the machine's. */
	TRY("mount tmpfs /tmp", mount("none", "/tmp", "tmpfs", 0, "mode=1777"));
	TRY("mkdir " ROOT, mkdir(ROOT, 0755));

	/* The sysfs view of libibverbs (v44 sysfs fallback when RDMA netlink is absent). */
	TRY("sysfs tree", mkdirs(ROOT "/sys/class/infiniband_verbs/uverbs0") ||
				  mkdirs(ROOT "/sys/class/infiniband/rxe0/ports/1"));
	TRY("sysfs files",
	    put(ROOT "/sys/class/infiniband_verbs/abi_version", "6\n") ||
		    put(ROOT "/sys/class/infiniband_verbs/uverbs0/ibdev", "rxe0\n") ||
		    put(ROOT "/sys/class/infiniband_verbs/uverbs0/abi_version", "1\n") ||
		    put(ROOT "/sys/class/infiniband_verbs/uverbs0/dev", "231:192\n") ||
		    put(ROOT "/sys/class/infiniband/rxe0/node_type", "1: CA\n") ||
		    put(ROOT "/sys/class/infiniband/rxe0/node_guid", "0200:00ff:fe00:0001\n"));

	/* /dev: the uverbs node libibverbs checks, no rdma_cm. */
	TRY("mkdir dev", mkdirs(ROOT "/dev/infiniband"));
	TRY("mknod uverbs0", mknod(ROOT "/dev/infiniband/uverbs0", S_IFCHR | 0644, makedev(231, 192)));
	for (const char *const *n = nodes; *n; n++) {
		char src[64], dst[128];

		snprintf(src, sizeof src, "/dev/%s", *n);
		snprintf(dst, sizeof dst, ROOT "/dev/%s", *n);
		if (access(src, F_OK))
			continue;
		TRY("dev node", put(dst, ""));
		TRY("bind dev node", mount(src, dst, NULL, MS_BIND, NULL));
	}
	TRY("mount --rbind /dev", mount(ROOT "/dev", "/dev", NULL, MS_BIND | MS_REC, NULL));
	TRY("setenv SYSFS_PATH", setenv("SYSFS_PATH", ROOT "/sys", 1));
	return 0;
}
