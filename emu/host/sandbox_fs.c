/* A sandbox's file system view (emu/host/sandbox.h), in its own mount namespace:
 *
 *   /sys         a sysfs of the sandbox's network namespace (so /sys/class/net lists its
 *                interfaces only);
 *   /sys/class   a tmpfs holding every class of that sysfs bound back, except the RDMA ones
 *                (infiniband, infiniband_verbs, infiniband_mad, infiniband_cm), which are
 *                generated from the emulated host (emu/host/sysfs_tree.h): sysfs has no
 *                directory a mount could cover for a class this kernel does not have, and a
 *                real HCA of the machine must not show through;
 *   /dev         a tmpfs holding every entry of the real /dev bound back (or copied, for
 *                symbolic links), except infiniband/, whose nodes are /dev/null bound onto
 *                files of the names kernel rxe's nodes have: programs that only look for them
 *                (UCX stat()s uverbsN) find character devices, and the emulated libraries
 *                never open them; and shm/, a tmpfs of the host's own (mode 1777): POSIX
 *                shared memory and named semaphores (rsockets' /rsocket_fork) are the
 *                emulated host's, as a real host's are, and what a process of another host
 *                or of the machine left there (a semaphore held by a killed process) is not
 *                seen.
 *
 * Nothing here touches the machine's own trees: every mount is made in the sandbox's mount
 * namespace, whose root was made private first, and goes away with it. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/host/sandbox_fs.h"
#include "emu/host/sysfs_tree.h"

/* More /dev/infiniband nodes than a host of the fabric can have (4 per device port, and
 * rdma_cm). */
#define EMU_SANDBOX_MAX_NODES 1024

static bool rdma_class(const char *name)
{
	return !strcmp(name, "infiniband") || !strcmp(name, "infiniband_verbs") ||
	       !strcmp(name, "infiniband_mad") || !strcmp(name, "infiniband_cm");
}

/* Puts entry `name` of the covered directory (open as dfd) back at dir/name. 0 or -errno. */
static int bind_back(int dfd, const char *dir, const char *name)
{
	char src[64], dst[PATH_MAX], target[PATH_MAX], from[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = 0;
		return symlink(target, dst) < 0 ? -errno : 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(dst, st.st_mode & 07777) < 0)
			return -errno;
	} else {
		fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	snprintf(src, sizeof(src), "/proc/self/fd/%d/", dfd);
	snprintf(from, sizeof(from), "%s%s", src, name);
	return mount(from, dst, NULL, MS_BIND | MS_REC, NULL) < 0 ? -errno : 0;
}

/* Covers dir with a tmpfs and binds its entries back, all but those `skip` names. */
static int cover(const char *dir, bool (*skip)(const char *), char *err, size_t errlen)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	DIR *ls;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if (dfd < 0 || !(ls = fdopendir(dup(dfd)))) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(ls))) {
		char **grown;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || skip(de->d_name))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown || !(grown[n] = strdup(de->d_name))) {
			names = grown ? grown : names;
			rc = -ENOMEM;
			break;
		}
		names = grown;
		n++;
	}
	closedir(ls);
	if (!rc && mount("tmpfs", dir, "tmpfs", MS_NOSUID, "mode=0755") < 0)
		rc = -errno;
	if (rc)
		snprintf(err, errlen, "%s: tmpfs: %s", dir, strerror(-rc));
	for (size_t i = 0; i < n; i++) {
		/* an entry that cannot come back (a socket, a file that went away) is left out,
		 * as a device the sandbox does not have */
		if (!rc)
			bind_back(dfd, dir, names[i]);
		free(names[i]);
	}
	free(names);
	close(dfd);
	return rc ? -1 : 0;
}

static bool dev_skip(const char *name)
{
	return !strcmp(name, "infiniband") || !strcmp(name, "shm");
}

/* The host's own /dev/shm, in the /dev tmpfs. */
static int dev_shm(char *err, size_t errlen)
{
	if ((mkdir("/dev/shm", 01777) < 0 && errno != EEXIST) || chmod("/dev/shm", 01777) < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0) {
		snprintf(err, errlen, "/dev/shm: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* /dev/null bound onto each /dev/infiniband node the tree writer made: character devices. */
static int dev_nodes(const struct emu_host *h, char *err, size_t errlen)
{
	struct emu_sysfs_devnode nodes[EMU_SANDBOX_MAX_NODES];
	size_t n = emu_host_devib_nodes(h, nodes, EMU_SANDBOX_MAX_NODES);
	char path[PATH_MAX];

	for (size_t i = 0; i < n && i < EMU_SANDBOX_MAX_NODES; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "/dev/infiniband/%s", nodes[i].name);
		if (!stat(path, &st) && S_ISCHR(st.st_mode))
			continue; /* bound already */
		if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int emu_sandbox_fs_setup(const struct emu_host *h, char *err, size_t errlen)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(err, errlen, "making / private: %s", strerror(errno));
		return -1;
	}
	if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(err, errlen, "sysfs: %s", strerror(errno));
		return -1;
	}
	if (cover("/sys/class", rdma_class, err, errlen) || cover("/dev", dev_skip, err, errlen) ||
	    dev_shm(err, errlen))
		return -1;
	return emu_sandbox_fs_update(h, err, errlen);
}

/* Takes /dev/null off the nodes the host no longer has (a removed device's), so that the tree
 * writer can remove them. */
static void dev_nodes_stale(const struct emu_host *h)
{
	struct emu_sysfs_devnode nodes[EMU_SANDBOX_MAX_NODES];
	size_t n = emu_host_devib_nodes(h, nodes, EMU_SANDBOX_MAX_NODES);
	DIR *d = opendir("/dev/infiniband");
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		bool keep = de->d_name[0] == '.';

		for (size_t i = 0; i < n && i < EMU_SANDBOX_MAX_NODES && !keep; i++)
			keep = !strcmp(nodes[i].name, de->d_name);
		if (keep)
			continue;
		snprintf(path, sizeof(path), "/dev/infiniband/%s", de->d_name);
		umount2(path, MNT_DETACH);
	}
	closedir(d);
}

int emu_sandbox_fs_update(const struct emu_host *h, char *err, size_t errlen)
{
	dev_nodes_stale(h);
	if (emu_host_sysfs_write(h, "/sys/class", "/dev/infiniband")) {
		snprintf(err, errlen, "/sys/class/infiniband: %s", strerror(errno));
		return -1;
	}
	return dev_nodes(h, err, errlen);
}
