/* The data path's trace: RDMAEMU_TRACE containing "qp" prints a line per packet and per
 * state transition of the requester, responder, completer and the objects they change
 * (emu/sim/trace.h). */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether anybody may observe packets (the fast paths' condition, fast.c and xfast.c): not
 * with RDMAEMU_FASTPATH=0, the "qp" trace or a capture. Read once. */
bool emu_dp_fast_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *f = getenv("RDMAEMU_FASTPATH");
		const char *pcap = getenv("RDMAEMU_PCAP");

		/* observers of packets: the trace prints each one, a capture may want them
		 * (loopback frames are not captured today, but a tap on the loopback must
		 * not lose them silently) */
		on = !(f && !strcmp(f, "0")) && !emu_dp_trace_on() && !(pcap && *pcap);
	}
	return on;
}

