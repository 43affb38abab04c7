/* Fabric images (emu/sim/fabric_image.c): a parse written once, mapped by later loads; the same
 * model pointer for pointer; refused when stale, corrupt, not the user's alone, or when its
 * address is taken, and the file is then parsed as before. */
#include <fcntl.h>
#include <sys/mman.h>

#include "fabric_test.h"

static char imgdir[600];

static int setup(void **state)
{
	(void)state;
	snprintf(imgdir, sizeof(imgdir), "%s/img", tmpdir_make());
	mkdir(imgdir, 0700);
	emu_fabric_set_image_dir(imgdir, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	emu_fabric_set_image_dir(NULL, 0);
	tmpdir_cleanup();
	return 0;
}

/* The image file's path (the directory holds one). */
static const char *image_file(void)
{
	static char path[1300];
	char cmd[700];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/fabric-*.img", imgdir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(path, sizeof(path), p));
	pclose(p);
	path[strcspn(path, "\n")] = 0;
	return path;
}

static void rm_images(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -f %s/fabric-*", imgdir);
	assert_int_equal(system(cmd), 0);
}

static struct emu_fabric *load(const char *path)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load(path, &err);

	if (!f)
		fail_msg("load %s failed: %s:%u: %s", path, err.file, err.line, err.msg);
	return f;
}

/* Loads path: from an image (mapped) or parsed. */
static void load_expect(const char *path, bool mapped)
{
	struct emu_fabric *f = load(path);

	assert_int_equal(emu_fabric_is_image(f), mapped);
	emu_fabric_free(f);
}

/* Every back pointer of the mapped model points into it, where a parse's would. */
static void check_links(const struct emu_fabric *f)
{
	for (size_t h = 0; h < f->nhosts; h++) {
		const struct emu_host *ho = &f->hosts[h];

		assert_ptr_equal(ho->fabric, f);
		for (size_t d = 0; d < ho->ndevices; d++) {
			assert_ptr_equal(ho->devices[d].host, ho);
			for (size_t p = 0; p < ho->devices[d].nports; p++)
				assert_ptr_equal(ho->devices[d].ports[p].dev, &ho->devices[d]);
		}
	}
}

/* Parsed, then mapped: `rdmaemu fabric show` says the same of both, byte for byte. */
static void same_model(const char *fixture)
{
	const char *path = fixture_path(fixture);
	struct emu_fabric *parsed, *mapped, *again;
	char *a, *b;

	rm_images();
	parsed = load(path);
	assert_false(emu_fabric_is_image(parsed));
	mapped = load(path);
	assert_true(emu_fabric_is_image(mapped));
	assert_string_equal(mapped->source, path);
	a = show_to_string(parsed);
	b = show_to_string(mapped);
	assert_string_equal(a, b);
	assert_int_equal(emu_fabric_id(parsed), emu_fabric_id(mapped));
	assert_int_equal(mapped->nhosts, parsed->nhosts);
	assert_int_equal(mapped->nswitches, parsed->nswitches);
	assert_int_equal(mapped->nlinks, parsed->nlinks);
	check_links(mapped);
	/* its address is held by the first mapping: a second load parses */
	again = load(path);
	assert_false(emu_fabric_is_image(again));
	emu_fabric_free(again);
	free(a);
	free(b);
	emu_fabric_free(mapped);
	emu_fabric_free(parsed);
	/* unmapped: the address is free again */
	mapped = load(path);
	assert_true(emu_fabric_is_image(mapped));
	emu_fabric_free(mapped);
}

static void test_same_ib(void **state)
{
	(void)state;
	same_model("ib.fabric"); /* topology and hosts-data files, a switch, an SM */
}

static void test_same_roce(void **state)
{
	(void)state;
	same_model("rxe-ref.fabric");
}

static void test_same_daemons(void **state)
{
	(void)state;
	same_model("xdaemon.fabric");
}

/* A RoCE GID table has its whole length in the image, and writes to it stay in this process
 * (copy on write), as emu/net/roce_gid.c changes entries in place. */
static void test_gid_table_writable(void **state)
{
	const char *path = fixture_path("rxe-ref.fabric");
	struct emu_fabric *parsed, *mapped;
	struct emu_port *po;

	(void)state;
	rm_images();
	parsed = load(path);
	mapped = load(path);
	assert_true(emu_fabric_is_image(mapped));
	po = mapped->hosts[0].devices[0].ports;
	assert_int_equal(po->link_layer, 2);
	assert_int_equal(po->gid_tbl_len, 1024);
	po->gids[po->gid_tbl_len - 1].raw[0] = 0xfe;
	po->gids[po->gid_tbl_len - 1].netdev = 7;
	mapped->hosts[0].devices[0].removed = true;
	emu_fabric_free(mapped);
	/* the image on disk is unchanged */
	mapped = load(path);
	assert_true(emu_fabric_is_image(mapped));
	po = mapped->hosts[0].devices[0].ports;
	assert_int_equal(po->gids[po->gid_tbl_len - 1].raw[0], 0);
	assert_int_equal(po->gids[po->gid_tbl_len - 1].netdev, 0);
	assert_false(mapped->hosts[0].devices[0].removed);
	emu_fabric_free(mapped);
	emu_fabric_free(parsed);
}

static const char small[] = "host a\n  device rxe0 link=eth\n  netdev d0 rdma=rxe0/1\n"
			    "    addr 192.0.2.1/24\n";

/* A changed fabric file (or an included one) is parsed again, and its new image replaces the
 * old one. */
static void test_stale(void **state)
{
	const char *path;
	struct emu_fabric *f;
	struct timespec ts[2] = { { .tv_sec = 1000000000, .tv_nsec = 0 },
				  { .tv_sec = 1000000000, .tv_nsec = 0 } };
	char *before;

	(void)state;
	rm_images();
	write_file("inc/part.fabric", small);
	path = write_file("stale.fabric", "include inc/part.fabric\n");
	f = load(path);
	assert_false(emu_fabric_is_image(f));
	before = show_to_string(f);
	emu_fabric_free(f);
	load_expect(path, true);
	/* the included file changes: a new address */
	write_file("inc/part.fabric", "host a\n  device rxe0 link=eth\n"
				      "  netdev d0 rdma=rxe0/1\n    addr 192.0.2.9/24\n");
	f = load(path);
	assert_false(emu_fabric_is_image(f));
	assert_int_equal(f->hosts[0].netdevs[0].addrs[0].addr.v4.s_addr, htonl(0xc0000209));
	emu_fabric_free(f);
	f = load(path);
	assert_true(emu_fabric_is_image(f));
	assert_int_equal(f->hosts[0].netdevs[0].addrs[0].addr.v4.s_addr, htonl(0xc0000209));
	emu_fabric_free(f);
	/* only the time of the main file changes */
	assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
	load_expect(path, false);
	free(before);
}

/* A corrupt image, or one others may write, is not used. */
static void test_refused(void **state)
{
	const char *path = fixture_path("ib.fabric");
	struct stat st;
	char img[1300];
	int fd;

	(void)state;
	rm_images();
	emu_fabric_free(load(path));
	snprintf(img, sizeof(img), "%s", image_file());
	assert_int_equal(stat(img, &st), 0);
	/* one byte flipped in the middle */
	fd = open(img, O_RDWR);
	assert_true(fd >= 0);
	{
		unsigned char c;
		off_t at = st.st_size / 2;

		assert_int_equal(pread(fd, &c, 1, at), 1);
		c ^= 0x10;
		assert_int_equal(pwrite(fd, &c, 1, at), 1);
	}
	close(fd);
	load_expect(path, false);
	/* the parse wrote a good image again */
	load_expect(path, true);
	/* group-writable */
	assert_int_equal(chmod(img, 0620), 0);
	load_expect(path, false);
	/* truncated */
	rm_images();
	emu_fabric_free(load(path));
	snprintf(img, sizeof(img), "%s", image_file());
	assert_int_equal(stat(img, &st), 0);
	assert_int_equal(truncate(img, st.st_size - 1), 0);
	load_expect(path, false);
}

/* Without a directory, or below the size, nothing is written and every load parses; text
 * loads never use images. */
static void test_off(void **state)
{
	const char *path = fixture_path("ib.fabric");
	struct emu_fabric *f;
	struct stat st;
	char img[700];

	(void)state;
	rm_images();
	snprintf(img, sizeof(img), "%s/none", imgdir);
	emu_fabric_set_image_dir(NULL, 0);
	for (int i = 0; i < 2; i++) {
		load_expect(path, false);
	}
	emu_fabric_set_image_dir(imgdir, 1000);
	for (int i = 0; i < 2; i++) {
		load_expect(path, false);
	}
	emu_fabric_set_image_dir(imgdir, 0);
	for (int i = 0; i < 2; i++) {
		f = load_ok(small);
		assert_false(emu_fabric_is_image(f));
		emu_fabric_free(f);
	}
	assert_int_equal(stat(img, &st), -1);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "ls %s | grep -c img >/dev/null", imgdir);
		assert_int_not_equal(system(cmd), 0);
	}
}

/* The directory of a daemon socket. */
static void test_dir_of(void **state)
{
	const char *path = fixture_path("ib.fabric");
	char sock[700];

	(void)state;
	rm_images();
	snprintf(sock, sizeof(sock), "%s/rdmaemud.sock", imgdir);
	emu_fabric_set_image_dir_of(sock); /* large fabrics only: ib.fabric is not one */
	load_expect(path, false);
	load_expect(path, false);
	emu_fabric_set_image_dir_of(NULL);
	emu_fabric_set_image_dir(imgdir, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_ib),
		cmocka_unit_test(test_same_roce),
		cmocka_unit_test(test_same_daemons),
		cmocka_unit_test(test_gid_table_writable),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_dir_of),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
