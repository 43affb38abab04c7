/* The certification report's machine-readable twin (--report FILE writes FILE.json): the run's
 * header lines and every case with its area, row, result, description, documented statement
 * and observed detail. scripts/conformance-report renders it as the HTML page and compares two
 * of them. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conformance/runner.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The header is "key: value" lines; each becomes one member of "run". */
static void json_header(FILE *f, const char *header)
{
	const char *p = header;
	bool first = true;

	fputs("\"run\":{", f);
	while (p && *p) {
		size_t len = strcspn(p, "\n");
		const char *colon = memchr(p, ':', len);

		if (colon) {
			char key[64], val[1024];

			snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
			snprintf(val, sizeof val, "%.*s", (int)(len - (size_t)(colon - p) - 1),
				 colon + 1);
			fputs(first ? "\n  " : ",\n  ", f);
			json_str(f, key);
			fputc(':', f);
			json_str(f, val + strspn(val, " "));
			first = false;
		}
		p += len;
		p += *p == '\n';
	}
	fputs("\n},\n", f);
}

int conf_report_json(const char *path, const struct conf_result *res, size_t n,
		     const char *header)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("{\"format\":\"rdmaemu-conformance-report-1\",\n", f);
	json_header(f, header);
	fputs("\"cases\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct conf_result *r = &res[i];

		fputs(i ? ",\n {\"id\":" : "\n {\"id\":", f);
		json_str(f, r->c->id);
		fputs(",\"area\":", f);
		json_str(f, r->c->area);
		fprintf(f, ",\"row\":%d,\"result\":", r->c->row);
		json_str(f, conf_state_name(r->state));
		fputs(",\"expected\":", f);
		json_str(f, r->c->desc);
		fputs(",\"documented\":", f);
		if (r->c->documented)
			json_str(f, r->c->documented);
		else
			fputs("null", f);
		fputs(",\"observed\":", f);
		json_str(f, r->msg);
		fprintf(f, ",\"seconds\":%.3f}", r->seconds);
	}
	fputs("\n]}\n", f);
	return fclose(f);
}
