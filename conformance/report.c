/* Output: per-case lines, the summary table per area, TAP13 and JUnit XML. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "conformance/runner.h"

const char *conf_state_name(enum conf_state s)
{
	switch (s) {
	case CONF_PASS: return "PASS";
	case CONF_FAIL: return "FAIL";
	case CONF_NOTRUN: return "NOTRUN";
	case CONF_EXCLUDED: return "EXCLUDED";
	}
	return "?";
}

void conf_report_line(FILE *out, const struct conf_result *r, bool verbose)
{
	fprintf(out, "%-8s %-9s %s\n", conf_state_name(r->state), r->c->id, r->msg ? r->msg : "");
	if (verbose) {
		fprintf(out, "         row %d: %s\n", r->c->row, r->c->desc);
		if (r->c->documented)
			fprintf(out, "         documented: %s\n", r->c->documented);
	}
}

struct tally {
	const char *area;
	unsigned n[4];
};

void conf_report_summary(FILE *out, const struct conf_result *res, size_t n)
{
	struct tally t[128] = { { 0 } }, total = { "total", { 0 } };
	size_t nt = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < nt; k++)
			if (!strcmp(t[k].area, res[i].c->area))
				break;
		if (k == nt) {
			if (nt == sizeof t / sizeof t[0])
				continue;
			t[nt++].area = res[i].c->area;
		}
		t[k].n[res[i].state]++;
		total.n[res[i].state]++;
	}
	fprintf(out, "\n%-8s %6s %6s %6s %8s\n", "area", "pass", "fail", "notrun", "excluded");
	for (size_t k = 0; k < nt; k++)
		fprintf(out, "%-8s %6u %6u %6u %8u\n", t[k].area, t[k].n[CONF_PASS],
			t[k].n[CONF_FAIL], t[k].n[CONF_NOTRUN], t[k].n[CONF_EXCLUDED]);
	fprintf(out, "%-8s %6u %6u %6u %8u\n", total.area, total.n[CONF_PASS], total.n[CONF_FAIL],
		total.n[CONF_NOTRUN], total.n[CONF_EXCLUDED]);
}

/* TAP and YAML want one line; the messages are ours, so only control characters need care. */
static void put_oneline(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
}

int conf_report_tap(const char *path, const struct conf_result *res, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "TAP version 13\n1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct conf_result *r = &res[i];

		fprintf(f, "%s %zu - %s ", r->state == CONF_FAIL ? "not ok" : "ok", i + 1, r->c->id);
		put_oneline(f, r->c->desc);
		if (r->state == CONF_NOTRUN || r->state == CONF_EXCLUDED) {
			fprintf(f, " # SKIP %s", r->state == CONF_EXCLUDED ? "excluded: " : "");
			put_oneline(f, r->msg);
		}
		fputc('\n', f);
		if (r->state == CONF_FAIL) {
			fprintf(f, "  ---\n  row: %d\n  message: \"", r->c->row);
			for (const char *s = r->msg; s && *s; s++) {
				if (*s == '"' || *s == '\\')
					fputc('\\', f);
				fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
			}
			fprintf(f, "\"\n  ...\n");
		}
	}
	return fclose(f);
}

static void put_xml(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

int conf_report_junit(const char *path, const struct conf_result *res, size_t n)
{
	FILE *f = fopen(path, "w");
	unsigned fails = 0, skips = 0;
	double secs = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		fails += res[i].state == CONF_FAIL;
		skips += res[i].state == CONF_NOTRUN || res[i].state == CONF_EXCLUDED;
		secs += res[i].seconds;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"rdmaemu-conformance\" tests=\"%zu\" failures=\"%u\" "
		   "errors=\"0\" skipped=\"%u\" time=\"%.3f\">\n", n, fails, skips, secs);
	for (size_t i = 0; i < n; i++) {
		const char *area = res[i].c->area;
		size_t tests = 0;
		unsigned af = 0, as = 0;
		double at = 0;
		bool seen = false;

		/* One <testsuite> per area, in order of first appearance (the variant copies and
		 * some case files interleave areas). */
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(res[k].c->area, area);
		if (seen)
			continue;
		for (size_t j = i; j < n; j++) {
			if (strcmp(res[j].c->area, area))
				continue;
			tests++;
			af += res[j].state == CONF_FAIL;
			as += res[j].state == CONF_NOTRUN || res[j].state == CONF_EXCLUDED;
			at += res[j].seconds;
		}
		fprintf(f, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%u\" errors=\"0\" "
			   "skipped=\"%u\" time=\"%.3f\" hostname=\"%s\">\n", area, tests, af, as, at,
			conf_target_name());
		for (size_t j = i; j < n; j++) {
			const struct conf_result *r = &res[j];

			if (strcmp(r->c->area, area))
				continue;
			fprintf(f, "    <testcase classname=\"conformance.%s.%s\" name=\"", area,
				conf_target_name());
			put_xml(f, r->c->id);
			fprintf(f, "\" time=\"%.3f\">\n", r->seconds);
			if (r->state == CONF_FAIL) {
				fprintf(f, "      <failure message=\"");
				put_xml(f, r->msg);
				fprintf(f, "\" type=\"conformance\">row %d: ", r->c->row);
				put_xml(f, r->c->desc);
				fprintf(f, "</failure>\n");
			} else if (r->state != CONF_PASS) {
				fprintf(f, "      <skipped message=\"");
				if (r->state == CONF_EXCLUDED)
					fputs("excluded: ", f);
				put_xml(f, r->msg);
				fprintf(f, "\"/>\n");
			}
			fprintf(f, "      <system-out>");
			put_xml(f, r->c->desc);
			if (r->c->documented) {
				fputs("\ndocumented: ", f);
				put_xml(f, r->c->documented);
			}
			if (r->state == CONF_PASS && r->msg) {
				fputs("\nobserved: ", f);
				put_xml(f, r->msg);
			}
			fprintf(f, "</system-out>\n    </testcase>\n");
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	return fclose(f);
}
