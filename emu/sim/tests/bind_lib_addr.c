/* The address-taking part of test_bind's library (bind_lib.h): with it the linker makes the
 * calls to clock_gettime go through the GOT slot of the address too (GLOB_DAT). */
#include <time.h>

#include "emu/sim/tests/bind_lib.h"

void *bind_lib_clock_addr(void)
{
	return (void *)clock_gettime;
}
