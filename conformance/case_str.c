/* STR (spec §7.2, §15 rows 18-21): rdma_event_str. */
#include "config.h"

#include <rdma/rdma_cma.h>
#include <string.h>

#include "conformance/conformance.h"
#include "rdmaemu/compat.h"

static const char *const names[] = {
	"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
	"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
	"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
	"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
	"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
	"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	"RDMA_CM_EVENT_ADDRINFO_RESOLVED", "RDMA_CM_EVENT_ADDRINFO_ERROR",
};

static void expect_str(int ev, const char *want)
{
	const char *got = rdma_event_str((enum rdma_cm_event_type)ev);

	conf_expect(got && !strcmp(got, want), "rdma_event_str(%d) = %s%s%s, want \"%s\"", ev,
		    got ? "\"" : "", got ? got : "NULL", got ? "\"" : "", want);
}

static void str_18(const struct conf_case *c)
{
	conf_stimulus("rdma_event_str(0..15)");
	for (int i = 0; i <= 15; i++)
		expect_str(i, names[i]);
	conf_note("0 -> \"%s\" .. 15 -> \"%s\"", names[0], names[15]);
}

static void str_19(const struct conf_case *c)
{
	int level = conf_rdmacm_level();

	conf_stimulus("rdma_event_str(16), (17) at level %d", level);
	for (int i = 16; i <= 17; i++)
		expect_str(i, level >= 60 ? names[i] : "UNKNOWN EVENT");
	conf_note(level >= 60 ? "ADDRINFO_RESOLVED/ERROR names" : "\"UNKNOWN EVENT\" (pre-v60)");
}

static void str_20(const struct conf_case *c)
{
	conf_stimulus("rdma_event_str(18), (19)");
	expect_str(RDMAEMU_CM_EVENT_USER, "UNKNOWN EVENT");
	expect_str(RDMAEMU_CM_EVENT_INTERNAL, "UNKNOWN EVENT");
	conf_note("\"UNKNOWN EVENT\"");
}

static void str_21(const struct conf_case *c)
{
	conf_stimulus("rdma_event_str(-1), (20), (1000)");
	expect_str(-1, "UNKNOWN EVENT");
	expect_str(20, "UNKNOWN EVENT");
	expect_str(1000, "UNKNOWN EVENT");
	conf_note("\"UNKNOWN EVENT\", never NULL");
}

static const struct conf_case cases[] = {
	{ "STR-18", "STR", 18, "rdma_event_str(0..15) returns the exact enumerator names", NULL,
	  PRE_NONE, NULL, 0, str_18, NULL },
	{ "STR-19", "STR", 19, "rdma_event_str(16), (17): >= v60 \"RDMA_CM_EVENT_ADDRINFO_RESOLVED\"/"
	  "\"..._ERROR\", below v60 \"UNKNOWN EVENT\"",
	  "rdma-core 7b1a686bc (v60), librdmacm/cma.c:rdma_event_str", PRE_NONE, NULL, 0, str_19,
	  NULL },
	{ "STR-20", "STR", 20, "rdma_event_str(USER 18), (INTERNAL 19) return \"UNKNOWN EVENT\"",
	  "rdma_write_cm_event.3 documents RDMA_CM_EVENT_USER but the library has no string for it",
	  PRE_NONE, NULL, 0, str_20, NULL },
	{ "STR-21", "STR", 21, "rdma_event_str(-1), (20), (1000) return \"UNKNOWN EVENT\", never NULL",
	  NULL, PRE_NONE, NULL, 0, str_21, NULL },
};

const struct conf_area conf_area_str = { "STR", cases, sizeof cases / sizeof cases[0] };
