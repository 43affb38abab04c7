/* selfexe: whether the running program is one of a build tree's (header only, for the
 * programs: `rdmaemu run` and rdmaemu-conformance choose between the build tree's libraries
 * and fixtures and the installed ones by it).
 *
 * The executable's own path decides, not whether the build directory still exists: an
 * installed copy on the machine that built it must not pick up that build's files. */
#ifndef EMU_SELFEXE_H
#define EMU_SELFEXE_H

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* Whether /proc/self/exe lies below directory dir. */
static inline bool emu_self_exe_below(const char *dir)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t b = strlen(dir);

	if (n <= 0)
		return false;
	exe[n] = 0;
	return !strncmp(exe, dir, b) && exe[b] == '/';
}

#endif
