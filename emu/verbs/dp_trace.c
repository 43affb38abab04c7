/* The data path's trace: RDMAEMU_TRACE containing "qp" prints a line per packet and per
 * state transition of the requester, responder, completer and the objects they change
 * (emu/sim/trace.h). */
#include "config.h"

#include <stdarg.h>

#include "emu/sim/trace.h"
#include "emu/verbs/datapath.h"

bool emu_dp_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "qp");
}

void emu_dp_trace_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_trace_vprint("", fmt, ap);
	va_end(ap);
}
