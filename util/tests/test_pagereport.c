/* pagereport: a balloon with feature bit 5 reports free pages; a balloon without it, another
 * device with it, short feature strings and a folder that cannot be read do not. Each case
 * builds a copy of /sys/bus/virtio/devices in a temporary folder. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/pagereport.h"

struct dev {
	const char *name, *id, *features;
};

static char root[64];

/* root/<name>/{device,features} for each of devs */
static void make_tree(const struct dev *devs, size_t n)
{
	char path[256];

	strcpy(root, "/tmp/pagereport.XXXXXX");
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < n; i++) {
		FILE *f;

		snprintf(path, sizeof path, "%s/%s", root, devs[i].name);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof path, "%s/%s/device", root, devs[i].name);
		assert_non_null(f = fopen(path, "w"));
		fprintf(f, "%s\n", devs[i].id);
		fclose(f);
		snprintf(path, sizeof path, "%s/%s/features", root, devs[i].name);
		assert_non_null(f = fopen(path, "w"));
		fprintf(f, "%s\n", devs[i].features);
		fclose(f);
	}
}

static void remove_tree(const struct dev *devs, size_t n)
{
	char path[256];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s/device", root, devs[i].name);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof path, "%s/%s/features", root, devs[i].name);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof path, "%s/%s", root, devs[i].name);
		assert_int_equal(rmdir(path), 0);
	}
	assert_int_equal(rmdir(root), 0);
}

static bool reporting(const struct dev *devs, size_t n)
{
	bool r;

	make_tree(devs, n);
	r = emu_free_page_reporting(root);
	remove_tree(devs, n);
	return r;
}

/* what this project's CI machine has: a block device, a net device, and a balloon offering
 * STATS_VQ, DEFLATE_ON_OOM and REPORTING */
static void test_balloon_reporting(void **state)
{
	(void)state;
	const struct dev devs[] = {
		{"virtio0", "0x0002", "0010001001100100000000000000010010000000"},
		{"virtio1", "0x0001", "1100010110111011000000000000010010000000"},
		{"virtio2", "0x0005", "0110010100000000000000000000000010000000"},
	};
	assert_true(reporting(devs, 3));
}

/* a balloon without bit 5 (free page hinting, bit 3, is another feature) */
static void test_balloon_without_reporting(void **state)
{
	(void)state;
	const struct dev devs[] = {
		{"virtio0", "0x0005", "0111100000000000000000000000000010000000"},
	};
	assert_false(reporting(devs, 1));
}

/* bit 5 of devices that are no balloon (a net device; 0x0015, one digit off the balloon) */
static void test_other_device(void **state)
{
	(void)state;
	const struct dev devs[] = {
		{"virtio0", "0x0002", "0000010000000000000000000000000010000000"},
		{"virtio1", "0x0015", "0000010000000000000000000000000010000000"},
	};
	assert_false(reporting(devs, 2));
}

/* a features string too short to hold bit 5, then none */
static void test_short_features(void **state)
{
	(void)state;
	const struct dev short_devs[] = {{"virtio0", "0x0005", "01100"}};
	const struct dev empty_devs[] = {{"virtio0", "0x0005", ""}};

	assert_false(reporting(short_devs, 1));
	assert_false(reporting(empty_devs, 1));
}

/* no virtio bus at all (bare metal, or a VM with other devices) */
static void test_no_folder(void **state)
{
	(void)state;
	assert_false(emu_free_page_reporting("/nonexistent/bus/virtio/devices"));
	make_tree(NULL, 0);
	assert_false(emu_free_page_reporting(root));
	remove_tree(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_balloon_reporting),
		cmocka_unit_test(test_balloon_without_reporting),
		cmocka_unit_test(test_other_device),
		cmocka_unit_test(test_short_features),
		cmocka_unit_test(test_no_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
