/* Unit tests of emu/sim/process.c: which fabric and node a process is attached to, and the attach
 * calls of the control API. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "emu/sim/process.h"
#include "rdmaemu/ctl.h"

static char ref2[4096];

static int setup(void **state)
{
	const char *src = getenv("RDMAEMU_TOP_SRCDIR");

	(void)state;
	snprintf(ref2, sizeof(ref2), "%s/fixtures/rxe-ref2.fabric", src ? src : RDMAEMU_SRCDIR);
	unsetenv("RDMAEMU_FABRIC");
	unsetenv("RDMAEMU_NODE");
	return 0;
}

static int reset(void **state)
{
	(void)state;
	emu_process_reset();
	unsetenv("RDMAEMU_FABRIC");
	unsetenv("RDMAEMU_NODE");
	return 0;
}

static void test_version_and_level(void **state)
{
	(void)state;
	assert_string_equal(rdmaemu_ctl_version(), "rdmaemu " PACKAGE_VERSION);
	/* no emulated librdmacm in this program: no personality until one says its own */
	assert_int_equal(rdmaemu_ctl_rdmacm_level(), 0);
	rdmaemu_ctl_rdmacm_loaded(44);
	assert_int_equal(rdmaemu_ctl_rdmacm_level(), 44);
	rdmaemu_ctl_rdmacm_loaded(61);
	assert_int_equal(rdmaemu_ctl_rdmacm_level(), 61);
	rdmaemu_ctl_rdmacm_loaded(0);
}

static void test_default_is_builtin_first_host(void **state)
{
	const struct emu_host *h;
	struct emu_fabric *builtin = emu_fabric_builtin();

	(void)state;
	assert_non_null(builtin);
	h = emu_process_host();
	assert_non_null(h);
	assert_string_equal(h->name, builtin->hosts[0].name);
	assert_string_equal(emu_process_fabric()->source, builtin->source);
	assert_ptr_equal(h->fabric, emu_process_fabric());
	assert_true(h->ndevices >= 1);
	assert_string_equal(rdmaemu_ctl_node(), builtin->hosts[0].name);
	emu_fabric_free(builtin);
}

static void test_env_selects_fabric_and_node(void **state)
{
	const struct emu_host *h;

	(void)state;
	setenv("RDMAEMU_FABRIC", ref2, 1);
	setenv("RDMAEMU_NODE", "B", 1);
	h = emu_process_host();
	assert_non_null(h);
	assert_string_equal(h->name, "B");
	/* the first lookup fixed the attachment: changing the environment changes nothing */
	setenv("RDMAEMU_NODE", "A", 1);
	assert_ptr_equal(emu_process_host(), h);
}

static void test_unknown_node_is_enoent_and_sticky(void **state)
{
	(void)state;
	setenv("RDMAEMU_FABRIC", ref2, 1);
	setenv("RDMAEMU_NODE", "no-such-node", 1);
	errno = 0;
	assert_null(emu_process_host());
	assert_int_equal(errno, ENOENT);
	/* every later caller gets the same answer */
	errno = 0;
	assert_null(emu_process_fabric());
	assert_int_equal(errno, ENOENT);
	assert_null(rdmaemu_ctl_node());
}

static void test_missing_file_is_enoent(void **state)
{
	(void)state;
	setenv("RDMAEMU_FABRIC", "/nonexistent/dir/x.fabric", 1);
	errno = 0;
	assert_null(emu_process_host());
	assert_int_equal(errno, ENOENT);
}

static void test_ctl_attach(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(rdmaemu_ctl_attach(ref2, "no-such-node"), -1);
	assert_int_equal(errno, ENOENT);
	/* a failed explicit attach leaves the process unattached */
	assert_int_equal(rdmaemu_ctl_attach(ref2, "A"), 0);
	assert_string_equal(emu_process_host()->name, "A");
	errno = 0;
	assert_int_equal(rdmaemu_ctl_attach(ref2, "B"), -1);
	assert_int_equal(errno, EBUSY);
	assert_string_equal(rdmaemu_ctl_node(), "A");
}

static void test_ctl_attach_text_errors(void **state)
{
	(void)state;
	errno = 0;
	assert_int_equal(rdmaemu_ctl_attach_text(NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rdmaemu_ctl_attach_text("this is not a fabric\n", NULL), -1);
	assert_int_equal(errno, EINVAL);
	/* an empty fabric loads but has no host to attach to */
	errno = 0;
	assert_int_equal(rdmaemu_ctl_attach_text("# nothing\n", NULL), -1);
	assert_int_equal(errno, ENOENT);
	/* after failures, a good attach still works */
	assert_int_equal(rdmaemu_ctl_attach(NULL, NULL), 0);
	assert_non_null(emu_process_host());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_level),
		cmocka_unit_test_teardown(test_default_is_builtin_first_host, reset),
		cmocka_unit_test_teardown(test_env_selects_fabric_and_node, reset),
		cmocka_unit_test_teardown(test_unknown_node_is_enoent_and_sticky, reset),
		cmocka_unit_test_teardown(test_missing_file_is_enoent, reset),
		cmocka_unit_test_teardown(test_ctl_attach, reset),
		cmocka_unit_test_teardown(test_ctl_attach_text_errors, reset),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
