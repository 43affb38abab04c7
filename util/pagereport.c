/* pagereport: whether the host takes free guest memory back (util/pagereport.h). */
#define _GNU_SOURCE
#include "pagereport.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define VIRTIO_ID_BALLOON "0x0005"
#define VIRTIO_BALLOON_F_REPORTING 5

/* The first bytes of dir/name/file, NUL-terminated; the length read, or -1. */
static ssize_t read_attr(const char *dir, const char *name, const char *file, char *buf,
			 size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", dir, name, file) >= sizeof path)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool emu_free_page_reporting(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char buf[160];

		if (e->d_name[0] == '.')
			continue;
		if (read_attr(dir, e->d_name, "device", buf, sizeof buf) < 0 ||
		    strncmp(buf, VIRTIO_ID_BALLOON, strlen(VIRTIO_ID_BALLOON)))
			continue;
		found = read_attr(dir, e->d_name, "features", buf, sizeof buf) >
				VIRTIO_BALLOON_F_REPORTING &&
			buf[VIRTIO_BALLOON_F_REPORTING] == '1';
	}
	closedir(d);
	return found;
}
