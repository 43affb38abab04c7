/* RDMAEMU_TRACE keyword lists (emu/sim/trace.h): whole keywords, commas or spaces, "all". */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "emu/sim/trace.h"

static void test_spec(void **state)
{
	(void)state;
	assert_true(emu_trace_spec_has("qp", "qp"));
	assert_true(emu_trace_spec_has("mad,qp", "qp"));
	assert_true(emu_trace_spec_has(" neigh  cm ", "cm"));
	assert_true(emu_trace_spec_has("all", "cma"));
	/* whole keywords only: "cma" is not "cm", "qpx" is not "qp" */
	assert_false(emu_trace_spec_has("cma", "cm"));
	assert_false(emu_trace_spec_has("cm", "cma"));
	assert_false(emu_trace_spec_has("qpx", "qp"));
	assert_false(emu_trace_spec_has("", "qp"));
	assert_false(emu_trace_spec_has(",,", "qp"));
	assert_false(emu_trace_spec_has(NULL, "qp"));
}

static void test_cache(void **state)
{
	int on = -1, off = -1;

	(void)state;
	setenv("RDMAEMU_TRACE", "mad,neigh", 1);
	assert_true(emu_trace_enabled(&on, "neigh"));
	assert_false(emu_trace_enabled(&off, "cm"));
	/* read once: a later change of the variable does not move a filled cache */
	setenv("RDMAEMU_TRACE", "cm", 1);
	assert_true(emu_trace_enabled(&on, "neigh"));
	assert_false(emu_trace_enabled(&off, "cm"));
	unsetenv("RDMAEMU_TRACE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
