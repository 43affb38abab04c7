/* An emulated host's RDMA sysfs classes and /dev/infiniband nodes written as a directory tree
 * (sysfs_tree.h). The listing and the contents are emu/hca/sysfs_class.c's; this file only
 * makes the file system agree with them. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/host/sysfs_tree.h"
#include "util/failcall.h"

static const char *const class_dirs[] = { "infiniband", "infiniband_verbs", "infiniband_mad" };

struct tree {
	const struct emu_host *h;
	const char *root;
	char **keep; /* the paths under root that h has, sorted once the walk is done */
	size_t nkeep, cap;
	int err;     /* the first errno */
};

static void fail(struct tree *t, int err)
{
	if (!t->err)
		t->err = err;
}

static int keep_path(struct tree *t, const char *rel)
{
	if (t->nkeep == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		char **k = emu_realloc(t->keep, cap * sizeof(*k));

		if (!k)
			return ENOMEM;
		t->keep = k;
		t->cap = cap;
	}
	if (!(t->keep[t->nkeep] = emu_strdup(rel)))
		return ENOMEM;
	t->nkeep++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool kept(const struct tree *t, const char *rel)
{
	return bsearch(&rel, t->keep, t->nkeep, sizeof(*t->keep), cmp_str) != NULL;
}

/* Removes path, a directory with everything in it or anything else. */
static int remove_all(const char *path)
{
	struct stat st;
	DIR *dir;
	struct dirent *de;
	int r = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 ? errno : 0;
	if (!(dir = opendir(path)))
		return errno;
	while ((de = readdir(dir))) {
		char sub[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (!r)
			r = remove_all(sub);
	}
	closedir(dir);
	if (!r && rmdir(path) < 0)
		r = errno;
	return r;
}

static int make_dir(const char *path, unsigned mode)
{
	struct stat st;

	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
		int r = remove_all(path);

		if (r)
			return r;
	}
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return errno;
	if (lstat(path, &st) < 0)
		return errno;
	if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0)
		return errno;
	return 0;
}

/* Whether path is already a regular file of this mode and content. */
static bool same_file(const char *path, unsigned mode, const char *content, size_t len)
{
	char buf[EMU_SYSFS_CONTENT_MAX + 1];
	struct stat st;
	ssize_t got;
	int fd;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode ||
	    (size_t)st.st_size != len)
		return false;
	if (len == 0)
		return true;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return false;
	got = read(fd, buf, sizeof(buf));
	close(fd);
	return got == (ssize_t)len && !memcmp(buf, content, len);
}

/* Writes the file whole beside path, then renames it over path. */
static int write_file(const char *path, unsigned mode, const char *content)
{
	size_t len = strlen(content);
	const char *base = strrchr(path, '/');
	char tmp[PATH_MAX];
	struct stat st;
	int fd, r = 0;

	if (same_file(path, mode, content, len))
		return 0;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (r = remove_all(path)))
		return r;
	snprintf(tmp, sizeof(tmp), "%.*s/.%s.new", (int)(base - path), path, base + 1);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return errno;
	errno = 0;
	if ((size_t)write(fd, content, len) != len || fchmod(fd, mode) < 0)
		r = errno ? errno : EIO;
	if (close(fd) < 0 && !r)
		r = errno;
	if (!r && rename(tmp, path) < 0)
		r = errno;
	if (r)
		unlink(tmp);
	return r;
}

static int make_link(const char *path, const char *target)
{
	char cur[PATH_MAX];
	ssize_t n = readlink(path, cur, sizeof(cur) - 1);
	int r;

	if (n >= 0) {
		cur[n] = '\0';
		if (!strcmp(cur, target))
			return 0;
	}
	if ((r = remove_all(path)))
		return r;
	return symlink(target, path) < 0 ? errno : 0;
}

static int apply(void *arg, const struct emu_sysfs_entry *e)
{
	struct tree *t = arg;
	char path[PATH_MAX], content[EMU_SYSFS_CONTENT_MAX];
	int r;

	if ((r = keep_path(t, e->path)))
		return r;
	snprintf(path, sizeof(path), "%s/%s", t->root, e->path);
	switch (e->kind) {
	case EMU_SYSFS_DIR:
		r = make_dir(path, e->mode);
		break;
	case EMU_SYSFS_LINK:
		r = make_link(path, e->target);
		break;
	case EMU_SYSFS_FILE:
		/* a read that fails on the kernel cannot fail on a regular file: it reads empty */
		if (emu_sysfs_file(t->h, e->path, content, sizeof(content)))
			content[0] = '\0';
		r = write_file(path, e->mode, content);
		break;
	}
	fail(t, r);
	/* a directory that cannot be made leaves nothing below it to do; go on with the rest */
	return 0;
}

/* Removes what is under rel (a path under the root) and not kept. */
static void prune(struct tree *t, const char *rel)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	if (!(dir = opendir(path)))
		return;
	while ((de = readdir(dir))) {
		char sub[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
		if (!kept(t, sub)) {
			char full[2 * PATH_MAX + 2];

			snprintf(full, sizeof(full), "%s/%s", t->root, sub);
			fail(t, remove_all(full));
		} else if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) {
			prune(t, sub); /* not a directory after all: opendir fails, nothing done */
		}
	}
	closedir(dir);
}

/* Makes root and the directories above it that are missing, as mkdir -p. */
static int make_root(const char *root)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", root);
	for (char *s = path + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				return errno;
			*s = '/';
		}
	return make_dir(path, 0755);
}

static int write_classes(const struct emu_host *h, const char *class_root)
{
	struct tree t = { .h = h, .root = class_root };
	int r;

	fail(&t, make_root(class_root));
	if (t.err)
		return t.err;
	/* only a complete list of what to keep may decide what to remove */
	if (!(r = emu_sysfs_walk(h, apply, &t))) {
		qsort(t.keep, t.nkeep, sizeof(*t.keep), cmp_str);
		for (size_t i = 0; i < sizeof(class_dirs) / sizeof(class_dirs[0]); i++)
			prune(&t, class_dirs[i]);
	}
	fail(&t, r);
	for (size_t i = 0; i < t.nkeep; i++)
		free(t.keep[i]);
	free(t.keep);
	return t.err;
}

static int write_devnodes(const struct emu_host *h, const char *devib_root)
{
	size_t n = emu_host_devib_nodes(h, NULL, 0);
	struct emu_sysfs_devnode *nodes = emu_calloc(n, sizeof(*nodes));
	struct dirent *de;
	DIR *dir;
	int err;

	if (!nodes)
		return ENOMEM;
	emu_host_devib_nodes(h, nodes, n);
	err = make_root(devib_root);
	for (size_t i = 0; i < n && !err; i++) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", devib_root, nodes[i].name);
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue; /* /dev/null mounted on it, or a real node: keep it */
		err = write_file(path, nodes[i].mode, "");
	}
	if ((dir = opendir(devib_root))) {
		while ((de = readdir(dir))) {
			char path[PATH_MAX];
			size_t i;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			for (i = 0; i < n && strcmp(nodes[i].name, de->d_name); i++)
				;
			if (i < n)
				continue;
			snprintf(path, sizeof(path), "%s/%s", devib_root, de->d_name);
			if (!err)
				err = remove_all(path);
		}
		closedir(dir);
	}
	free(nodes);
	return err;
}

int emu_host_sysfs_write(const struct emu_host *h, const char *class_root, const char *devib_root)
{
	int err = write_classes(h, class_root);
	int err2 = write_devnodes(h, devib_root);

	if (err || err2) {
		errno = err ? err : err2;
		return -1;
	}
	return 0;
}

size_t emu_host_devib_nodes(const struct emu_host *h, struct emu_sysfs_devnode *out, size_t max)
{
	return emu_sysfs_devnodes(h, out, max);
}
