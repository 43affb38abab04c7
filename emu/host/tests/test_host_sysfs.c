/* The emulated host's RDMA sysfs classes and /dev/infiniband against what kernel rxe shows in
 * the reference VMs (the .tree files of fixtures/sysfs, recorded by probes/host/sysfs-dump.sh; see
 * docs/reference/kernel-rxe-sysfs.md): every path, type, mode and content, with the deliberate
 * differences listed below; then the update path (an address, a link, a device removed). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "emu/host/sysfs_tree.h"
#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

/* An entry of a tree: a listing recorded on the VM, or the tree written here. */
struct ent {
	char kind; /* 'D', 'F', 'L', 'C' */
	unsigned mode;
	char *path;
	char *content; /* F: the bytes; L: the target */
	bool error;    /* F: the read failed */
};

struct tree {
	struct ent *e;
	size_t n, cap;
};

static struct ent *add(struct tree *t, char kind, unsigned mode, const char *path)
{
	struct ent *e;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->e = realloc(t->e, t->cap * sizeof(*t->e));
		assert_non_null(t->e);
	}
	e = &t->e[t->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->mode = mode;
	e->path = strdup(path);
	e->content = strdup("");
	return e;
}

static void append(struct ent *e, const char *s, size_t len)
{
	size_t old = strlen(e->content);

	e->content = realloc(e->content, old + len + 1);
	memcpy(e->content + old, s, len);
	e->content[old + len] = '\0';
}

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->e[i].path);
		free(t->e[i].content);
	}
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static const struct ent *find(const struct tree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].path, path))
			return &t->e[i];
	return NULL;
}

/* ---- the VM's listing, as the generated tree must be -------------------------------------- */

/* Deliberate differences of content: the model's values where the reference VM's differ. */
static const struct {
	const char *host, *suffix, *vm, *emulated, *reason;
} deliberate[] = {
	{ NULL, "/node_desc", "rxe\n", NULL,
	  "the model's node description is rdma-ndd's \"<host> <device>\" (rdmaemu-fabric(5)); "
	  "no rdma-ndd runs in the VM, so rxe's own \"rxe\" stays" },
};

static void expected_content(const char *host, struct ent *e)
{
	for (size_t i = 0; i < sizeof(deliberate) / sizeof(deliberate[0]); i++) {
		size_t pl = strlen(e->path), sl = strlen(deliberate[i].suffix);
		char buf[160];

		if ((deliberate[i].host && strcmp(deliberate[i].host, host)) || pl < sl ||
		    strcmp(e->path + pl - sl, deliberate[i].suffix))
			continue;
		assert_string_equal(e->content, deliberate[i].vm);
		if (deliberate[i].emulated) {
			snprintf(buf, sizeof(buf), "%s", deliberate[i].emulated);
		} else {
			/* "class/infiniband/<dev>/node_desc" */
			const char *dev = e->path + strlen("class/infiniband/");

			snprintf(buf, sizeof(buf), "%s %.*s\n", host, (int)(strchr(dev, '/') - dev),
				 dev);
		}
		free(e->content);
		e->content = strdup(buf);
	}
}

/* Maps a path of the VM to the generated tree's: /sys/class and /sys/devices/virtual both to
 * class/, /dev/infiniband to devib. NULL for a class entry's symbolic link, which is the
 * device directory itself here (its /sys/devices/virtual record gives it). */
static const char *map_path(char kind, const char *p, char *out, size_t n)
{
	if (!strncmp(p, "/sys/class/", 11)) {
		if (kind == 'L' && strchr(p + 11, '/') && !strchr(strchr(p + 11, '/') + 1, '/'))
			return NULL;
		snprintf(out, n, "class/%s", p + 11);
	} else if (!strncmp(p, "/sys/devices/virtual/", 21)) {
		snprintf(out, n, "class/%s", p + 21);
	} else if (!strncmp(p, "/dev/infiniband", 15)) {
		snprintf(out, n, "devib%s", p + 15);
	} else {
		fail_msg("unexpected path in the listing: %s", p);
	}
	return out;
}

/* Reads a listing of probes/host/sysfs-dump.sh into the tree the emulated host must write. */
static void load_listing(const char *file, const char *host, struct tree *t)
{
	char path[1200], line[1024], mapped[512];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");
	struct ent *cur = NULL;
	bool in_rec = false; /* the lines after a record header belong to it, kept or not */
	FILE *f;

	snprintf(path, sizeof(path), "%s/fixtures/sysfs/%s", top && *top ? top : RDMAEMU_SRCDIR,
		 file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char kind, p[512];
		unsigned mode;

		line[strcspn(line, "\n")] = '\0';
		if ((line[0] == '|' || line[0] == '!' || !strncmp(line, "-> ", 3) ||
		     line[0] == '\\') && in_rec && !cur) {
			continue;
		} else if (line[0] == '|' && cur) {
			append(cur, line + 1, strlen(line + 1));
			append(cur, "\n", 1);
		} else if (!strcmp(line, "\\ no newline at end") && cur) {
			cur->content[strlen(cur->content) - 1] = '\0';
		} else if (line[0] == '!' && cur) {
			cur->error = true;
		} else if (!strncmp(line, "-> ", 3) && cur) {
			append(cur, line + 3, strlen(line + 3));
		} else if (sscanf(line, "%c %o %511s", &kind, &mode, p) == 3 && kind == 'C') {
			/* "C 600 e7:40 /dev/infiniband/issm0": an empty regular file here */
			sscanf(line, "%c %o %*s %511s", &kind, &mode, p);
			cur = add(t, 'F', mode, map_path(kind, p, mapped, sizeof(mapped)));
			in_rec = true;
		} else if (sscanf(line, "%c %o %511s", &kind, &mode, p) == 3) {
			const char *m = map_path(kind, p, mapped, sizeof(mapped));

			cur = m && !find(t, m) ? add(t, kind, mode, m) : NULL;
			in_rec = true;
		} else {
			fail_msg("%s: unexpected line: %s", file, line);
		}
	}
	fclose(f);
	for (size_t i = 0; i < t->n; i++) {
		struct ent *e = &t->e[i];

		if (e->kind == 'L' && !strncmp(e->content, "../../../../class/", 18)) {
			/* subsystem: the class directory, seen from the device directory here */
			char *target;

			assert_int_not_equal(asprintf(&target, "../../%s", e->content + 18), -1);
			free(e->content);
			e->content = target;
		}
		if (e->kind == 'F' && e->error) {
			/* a regular file cannot fail a read: it is empty */
			free(e->content);
			e->content = strdup("");
		}
		if (e->kind == 'F')
			expected_content(host, e);
	}
}

/* ---- the generated tree ------------------------------------------------------------------- */

static void read_tree(const char *root, const char *rel, struct tree *t)
{
	char path[1024], sub[1024];
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(lstat(path, &st), 0);
	if (S_ISLNK(st.st_mode)) {
		struct ent *e = add(t, 'L', st.st_mode & 07777, rel);
		char target[512];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		assert_true(n > 0);
		append(e, target, (size_t)n);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		struct ent *e = add(t, 'F', st.st_mode & 07777, rel);
		char buf[4096];
		int fd = open(path, O_RDONLY);
		ssize_t n;

		assert_true(fd >= 0);
		n = read(fd, buf, sizeof(buf));
		assert_true(n >= 0);
		append(e, buf, (size_t)n);
		close(fd);
		return;
	}
	assert_true(S_ISDIR(st.st_mode));
	add(t, 'D', st.st_mode & 07777, rel);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
		read_tree(root, sub, t);
	}
	closedir(d);
}

static char tmpdir[256];
static char class_root[300], devib_root[300];

static int setup_dir(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_host_sysfs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(class_root, sizeof(class_root), "%s/class", tmpdir);
	snprintf(devib_root, sizeof(devib_root), "%s/devib", tmpdir);
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[400];

	(void)state;
	emu_process_reset();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The generated tree's entries under class/infiniband*, class itself left out. */
static void read_generated(struct tree *got)
{
	static const char *const tops[] = { "class/infiniband", "class/infiniband_verbs",
					    "class/infiniband_mad", "devib" };

	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		read_tree(tmpdir, tops[i], got);
}

static void compare_with_vm(const char *fabric, const char *host, const char *listing)
{
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");
	struct emu_error err;
	struct emu_fabric *f;
	struct tree want = { 0 }, got = { 0 };
	size_t bad = 0;

	snprintf(path, sizeof(path), "%s/fixtures/%s", top && *top ? top : RDMAEMU_SRCDIR, fabric);
	f = emu_fabric_load(path, &err);
	assert_non_null(f);
	assert_int_equal(emu_host_sysfs_write(emu_fabric_find_host(f, host), class_root,
					      devib_root), 0);
	load_listing(listing, host, &want);
	read_generated(&got);
	for (size_t i = 0; i < want.n; i++) {
		const struct ent *w = &want.e[i], *g = find(&got, w->path);

		if (!g || g->kind != w->kind || g->mode != w->mode || strcmp(g->content, w->content)) {
			print_message("%s: VM %c %o '%s', emulated %c %o '%s'\n", w->path, w->kind,
				      w->mode, w->content, g ? g->kind : '-', g ? g->mode : 0,
				      g ? g->content : "(missing)");
			bad++;
		}
	}
	for (size_t i = 0; i < got.n; i++)
		if (!find(&want, got.e[i].path)) {
			print_message("%s: not on the VM\n", got.e[i].path);
			bad++;
		}
	assert_int_equal(bad, 0);
	assert_int_equal(got.n, want.n);
	tree_free(&want);
	tree_free(&got);
	emu_fabric_free(f);
}

static void test_rxe_ref(void **state)
{
	(void)state;
	compare_with_vm("rxe-ref.fabric", "rxe-ref", "rxe-ref.tree");
}

static void test_rxe_ref2_a(void **state)
{
	(void)state;
	compare_with_vm("rxe-ref2.fabric", "A", "rxe-ref2-A.tree");
}

static void test_rxe_ref2_b(void **state)
{
	(void)state;
	compare_with_vm("rxe-ref2.fabric", "B", "rxe-ref2-B.tree");
}

/* ---- the update path ---------------------------------------------------------------------- */

static void read_file(const char *rel, char *buf, size_t n)
{
	char path[1024];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	got = read(fd, buf, n - 1);
	assert_true(got >= 0);
	buf[got] = '\0';
	close(fd);
}

static bool exists(const char *rel)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	return lstat(path, &st) == 0;
}

static ino_t inode(const char *rel)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

static void rewrite(void)
{
	assert_int_equal(emu_host_sysfs_write(emu_process_host(), class_root, devib_root), 0);
}

static void put(const char *rel)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
}

#define P1 "class/infiniband/rxe0/ports/1/"

static void test_update(void **state)
{
	char path[1200], buf[128];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");
	ino_t guid_ino, gid1_ino;

	(void)state;
	emu_process_reset();
	snprintf(path, sizeof(path), "%s/fixtures/rxe-ref.fabric", top && *top ? top : RDMAEMU_SRCDIR);
	assert_int_equal(rdmaemu_ctl_attach(path, "rxe-ref"), 0);
	rewrite();
	read_file(P1 "gids/1", buf, sizeof(buf));
	assert_string_equal(buf, "0000:0000:0000:0000:0000:ffff:c000:0201\n");
	guid_ino = inode("class/infiniband/rxe0/node_guid");
	gid1_ino = inode(P1 "gids/1");

	/* what is not the host's goes; what is outside the three classes stays */
	put(P1 "gids/extra");
	snprintf(path, sizeof(path), "%s/class/net", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	put("class/net/d0");
	put("devib/umad7");
	rewrite();
	assert_false(exists(P1 "gids/extra"));
	assert_false(exists("devib/umad7"));
	assert_true(exists("class/net/d0"));
	/* an unchanged file is left alone */
	assert_int_equal(inode("class/infiniband/rxe0/node_guid"), guid_ino);
	assert_int_equal(inode(P1 "gids/1"), gid1_ino);

	/* `ip addr del`: the slot empties, its type and netdev read empty (EINVAL on the kernel) */
	assert_int_equal(rdmaemu_ctl_addr_del("rxe-ref", "d0", "192.0.2.1/28"), 0);
	rewrite();
	read_file(P1 "gids/1", buf, sizeof(buf));
	assert_string_equal(buf, "0000:0000:0000:0000:0000:0000:0000:0000\n");
	assert_int_not_equal(inode(P1 "gids/1"), gid1_ino);
	read_file(P1 "gid_attrs/types/1", buf, sizeof(buf));
	assert_string_equal(buf, "");
	read_file(P1 "gid_attrs/ndevs/1", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* `ip addr add`: the first free slot takes it */
	assert_int_equal(rdmaemu_ctl_addr_add("rxe-ref", "d0", "198.51.100.7/24"), 0);
	rewrite();
	read_file(P1 "gids/1", buf, sizeof(buf));
	assert_string_equal(buf, "0000:0000:0000:0000:0000:ffff:c633:6407\n");
	read_file(P1 "gid_attrs/types/1", buf, sizeof(buf));
	assert_string_equal(buf, "RoCE v2\n");
	read_file(P1 "gid_attrs/ndevs/1", buf, sizeof(buf));
	assert_string_equal(buf, "d0\n");

	/* `ip link set d0 down`, as measured: DOWN / Disabled */
	assert_int_equal(rdmaemu_ctl_link_set("rxe-ref", "d0", 0), 0);
	rewrite();
	read_file(P1 "state", buf, sizeof(buf));
	assert_string_equal(buf, "1: DOWN\n");
	read_file(P1 "phys_state", buf, sizeof(buf));
	assert_string_equal(buf, "3: Disabled\n");
	assert_int_equal(rdmaemu_ctl_link_set("rxe-ref", "d0", 1), 0);
	rewrite();
	read_file(P1 "state", buf, sizeof(buf));
	assert_string_equal(buf, "4: ACTIVE\n");

	/* `rdma link delete rxe1`: its directories and nodes go, rxe0's keep their numbers */
	assert_int_equal(rdmaemu_ctl_device_remove("rxe-ref", "rxe1"), 0);
	rewrite();
	assert_false(exists("class/infiniband/rxe1"));
	assert_false(exists("class/infiniband_verbs/uverbs1"));
	assert_false(exists("class/infiniband_mad/umad1"));
	assert_false(exists("class/infiniband_mad/issm1"));
	assert_false(exists("devib/uverbs1"));
	assert_false(exists("devib/umad1"));
	assert_false(exists("devib/issm1"));
	assert_true(exists("class/infiniband/rxe0/ports/1/gids/1023"));
	read_file("class/infiniband_verbs/uverbs0/ibdev", buf, sizeof(buf));
	assert_string_equal(buf, "rxe0\n");
	read_file("class/infiniband_mad/abi_version", buf, sizeof(buf));
	assert_string_equal(buf, "5\n");
	assert_true(exists("devib/rdma_cm"));
	assert_true(exists("devib/uverbs0"));
}

static void test_devnodes(void **state)
{
	struct emu_sysfs_devnode nodes[8];
	struct emu_error err;
	char path[1200];
	const char *top = getenv("RDMAEMU_TOP_SRCDIR");
	struct emu_fabric *f;
	const struct emu_host *h;

	(void)state;
	snprintf(path, sizeof(path), "%s/fixtures/rxe-ref.fabric", top && *top ? top : RDMAEMU_SRCDIR);
	f = emu_fabric_load(path, &err);
	assert_non_null(f);
	h = emu_fabric_find_host(f, "rxe-ref");
	assert_int_equal(emu_host_devib_nodes(h, NULL, 0), 7);
	assert_int_equal(emu_host_devib_nodes(h, nodes, 8), 7);
	/* measured: names, modes and major:minor of /dev/infiniband */
	assert_string_equal(nodes[0].name, "rdma_cm");
	assert_int_equal(nodes[0].mode, 0666);
	assert_int_equal(nodes[0].major, 10);
	assert_int_equal(nodes[0].minor, 124);
	assert_string_equal(nodes[1].name, "uverbs0");
	assert_int_equal(nodes[1].mode, 0666);
	assert_int_equal(nodes[1].minor, 192);
	assert_string_equal(nodes[2].name, "umad0");
	assert_int_equal(nodes[2].mode, 0600);
	assert_int_equal(nodes[2].minor, 0);
	assert_string_equal(nodes[3].name, "issm0");
	assert_int_equal(nodes[3].major, 231);
	assert_int_equal(nodes[3].minor, 64);
	assert_string_equal(nodes[4].name, "uverbs1");
	assert_int_equal(nodes[4].minor, 193);
	assert_string_equal(nodes[5].name, "umad1");
	assert_string_equal(nodes[6].name, "issm1");
	assert_int_equal(nodes[6].minor, 65);
	emu_fabric_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rxe_ref, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_rxe_ref2_a, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_rxe_ref2_b, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_update, setup_dir, teardown_dir),
		cmocka_unit_test(test_devnodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
