/* The library of test_bind (bind_lib.h). */
#include <time.h>
#include <unistd.h>

#include "emu/sim/tests/bind_lib.h"

int bind_lib_clock(struct timespec *ts)
{
	return clock_gettime(CLOCK_MONOTONIC, ts);
}

pid_t bind_lib_pid(void)
{
	return getpid();
}
