/* The sysfs files of the emulated devices, as Linux 6.1 writes them for rxe.
 *
 * rdma-core reads a few device facts from sysfs rather than through uverbs (ibv_query_pkey():
 * ports/N/pkeys/I, ibv_get_device_guid() in part), and tools such as
 * ibv_devinfo call ibv_read_sysfs_file() themselves (board_id). The emulated library serves
 * every path under /sys/class/infiniband* from the fabric model (emu/hca/sysfs_class.c, the
 * same files the emulated host's sysfs tree is written from), with the errors the real files
 * give (ENOENT for an entry past the table, EINVAL for an empty GID's type); any other path is
 * read from the real file system, as the real library does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/hca/sysfs_class.h"
#include "emu/sim/process.h"
#include "emu/verbs/verbs_priv.h"

/* The emulated content of `path`: 0 (out filled), an errno, or -1 when the path is not an
 * emulated one. Every path under the RDMA core's classes is the emulated host's, whose files
 * emu/hca/sysfs_class.c describes; the rest of the file system is real. */
static int emulated_file(const char *path, char *out, size_t n)
{
	const struct emu_host *h;

	if (strncmp(path, "/sys/class/infiniband", 21) != 0)
		return -1;
	h = emu_process_host();
	if (!h)
		return ENOENT;
	return emu_sysfs_file(h, path + strlen("/sys/class/"), out, n);
}

/* rdma-core's ibv_read_sysfs_file_at(): strips one trailing newline, fails rather than
 * return an unterminated string. */
static int finish_read(char *buf, size_t size, ssize_t len)
{
	if (len > 0) {
		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
		else
			return -1;
	}
	return (int)len;
}

int emu_sysfs_read(const char *path, char *buf, size_t size)
{
	char content[EMU_SYSFS_CONTENT_MAX];
	int r = emulated_file(path, content, sizeof(content));
	ssize_t len;

	if (r == 0) {
		len = (ssize_t)strlen(content);
		if ((size_t)len > size)
			len = (ssize_t)size;
		memcpy(buf, content, (size_t)len);
		return finish_read(buf, size, len);
	}
	if (r > 0) {
		errno = r;
		return -1;
	}
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -1;
		len = read(fd, buf, size);
		close(fd);
		return finish_read(buf, size, len);
	}
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char *path;
	int res;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	res = emu_sysfs_read(path, buf, size);
	free(path);
	return res;
}
