/* The library of test_bind, built as libbindlazy (linked to the test, lazy binding),
 * libbindnow (full RELRO), libbindnoplt (-fno-plt), libbindskip and libbindlate (opened by
 * the test): its calls to clock_gettime and getpid are imports of each kind. */
#ifndef RDMAEMU_EMU_SIM_TESTS_BIND_LIB_H
#define RDMAEMU_EMU_SIM_TESTS_BIND_LIB_H

#include <sys/types.h>
#include <time.h>

/* clock_gettime(CLOCK_MONOTONIC, ts) */
int bind_lib_clock(struct timespec *ts);
/* getpid() */
pid_t bind_lib_pid(void);
/* The address of clock_gettime, as this library takes it (bind_lib_addr.c: all but
 * libbindlazy, whose calls to both stay JUMP_SLOTs). */
void *bind_lib_clock_addr(void);

#endif
