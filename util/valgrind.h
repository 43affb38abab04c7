/* valgrind: whether this process runs under valgrind (memcheck), for the calls it does not
 * know (userfaultfd's ioctls) or measures wrongly (huge-page chunks). False where the build
 * had no valgrind headers. */
#ifndef RDMAEMU_UTIL_VALGRIND_H
#define RDMAEMU_UTIL_VALGRIND_H

#include <stdbool.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define EMU_HAVE_VALGRIND_H 1
#endif
#endif

static inline bool emu_on_valgrind(void)
{
#ifdef EMU_HAVE_VALGRIND_H
	return RUNNING_ON_VALGRIND != 0;
#else
	return false;
#endif
}

#endif
