/* RDMAEMU_TRACE keywords and the trace line (emu/sim/trace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/trace.h"

bool emu_trace_spec_has(const char *spec, const char *keyword)
{
	size_t klen = strlen(keyword);

	while (spec && *spec) {
		size_t n;

		spec += strspn(spec, ", \t");
		n = strcspn(spec, ", \t");
		if ((n == klen && !strncmp(spec, keyword, n)) || (n == 3 && !strncmp(spec, "all", 3)))
			return true;
		spec += n;
	}
	return false;
}

bool emu_trace_enabled_read(int *cache, const char *keyword)
{
	*cache = emu_trace_spec_has(getenv("RDMAEMU_TRACE"), keyword);
	return *cache;
}

void emu_trace_vprint(const char *prefix, const char *fmt, va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "rdmaemu: %s", prefix ? prefix : "");

	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}
