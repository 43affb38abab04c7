/* The certification report (--report): Markdown or HTML, one document a vendor hands in.
 *
 * Layout: the run's header; the certification summary ("conforms" or "conforms except" and
 * every deviation: each failed case with what was observed, each excluded case with its
 * manifest reason; the Notrun cases grouped by reason); the counts per area; then per area a
 * table of its cases: result, expected (the real stack's behaviour, the case description),
 * documented (the man page's statement where it differs, spec §16), observed. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/runner.h"
#include "conformance/seed_map.h"

/* The two output formats as an ops table: text escaping and the few structural pieces. */
struct doc_ops {
	void (*text)(FILE *f, const char *s);
	void (*begin)(FILE *f, const char *title);
	void (*heading)(FILE *f, int level, const char *title);
	void (*pre)(FILE *f, const char *text);
	void (*para_begin)(FILE *f);
	void (*para_end)(FILE *f);
	void (*item_begin)(FILE *f);
	void (*item_end)(FILE *f);
	void (*list_begin)(FILE *f);
	void (*list_end)(FILE *f);
	void (*table_begin)(FILE *f, const char *const *cols, size_t n);
	void (*row_begin)(FILE *f);
	void (*cell_sep)(FILE *f);
	void (*row_end)(FILE *f);
	void (*table_end)(FILE *f);
	void (*end)(FILE *f);
};

/* ---- Markdown ---- */

static void md_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("|\\`*_<>[]", *s))
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
}
static void md_begin(FILE *f, const char *title) { fprintf(f, "# %s\n\n", title); }
static void md_heading(FILE *f, int level, const char *title)
{
	fprintf(f, "\n%.*s ", level, "######");
	md_text(f, title);
	fputs("\n\n", f);
}
static void md_pre(FILE *f, const char *text) { fprintf(f, "```\n%s```\n\n", text); }
static void md_nop(FILE *f) { (void)f; }
static void md_para_end(FILE *f) { fputs("\n\n", f); }
static void md_item_begin(FILE *f) { fputs("- ", f); }
static void md_item_end(FILE *f) { fputc('\n', f); }
static void md_list_end(FILE *f) { fputc('\n', f); }
static void md_table_begin(FILE *f, const char *const *cols, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "| %s ", cols[i]);
	fputs("|\n", f);
	for (size_t i = 0; i < n; i++)
		fputs("|---", f);
	fputs("|\n", f);
}
static void md_row_begin(FILE *f) { fputs("| ", f); }
static void md_cell_sep(FILE *f) { fputs(" | ", f); }
static void md_row_end(FILE *f) { fputs(" |\n", f); }
static void md_table_end(FILE *f) { fputc('\n', f); }

static const struct doc_ops md_ops = {
	md_text, md_begin, md_heading, md_pre, md_nop, md_para_end, md_item_begin, md_item_end,
	md_nop, md_list_end, md_table_begin, md_row_begin, md_cell_sep, md_row_end, md_table_end,
	md_nop,
};

/* ---- HTML ---- */

static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc((unsigned char)*s < 0x20 && *s != '\n' ? ' ' : *s, f);
		}
	}
}
static void html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
	html_text(f, title);
	fputs("</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
	      "td,th{border:1px solid #999;padding:2px 6px;vertical-align:top;font-size:90%}"
	      ".PASS{color:#070}.FAIL{color:#b00;font-weight:bold}.NOTRUN,.EXCLUDED{color:#777}"
	      "</style></head><body>\n<h1>", f);
	html_text(f, title);
	fputs("</h1>\n", f);
}
static void html_heading(FILE *f, int level, const char *title)
{
	fprintf(f, "<h%d id=\"", level);
	html_text(f, title);
	fputs("\">", f);
	html_text(f, title);
	fprintf(f, "</h%d>\n", level);
}
static void html_pre(FILE *f, const char *text)
{
	fputs("<pre>", f);
	html_text(f, text);
	fputs("</pre>\n", f);
}
static void html_para_begin(FILE *f) { fputs("<p>", f); }
static void html_para_end(FILE *f) { fputs("</p>\n", f); }
static void html_item_begin(FILE *f) { fputs("<li>", f); }
static void html_item_end(FILE *f) { fputs("</li>\n", f); }
static void html_list_begin(FILE *f) { fputs("<ul>\n", f); }
static void html_list_end(FILE *f) { fputs("</ul>\n", f); }
static void html_table_begin(FILE *f, const char *const *cols, size_t n)
{
	fputs("<table>\n<tr>", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "<th>%s</th>", cols[i]);
	fputs("</tr>\n", f);
}
static void html_row_begin(FILE *f) { fputs("<tr><td>", f); }
static void html_cell_sep(FILE *f) { fputs("</td><td>", f); }
static void html_row_end(FILE *f) { fputs("</td></tr>\n", f); }
static void html_table_end(FILE *f) { fputs("</table>\n", f); }
static void html_end(FILE *f) { fputs("</body></html>\n", f); }

static const struct doc_ops html_ops = {
	html_text, html_begin, html_heading, html_pre, html_para_begin, html_para_end,
	html_item_begin, html_item_end, html_list_begin, html_list_end, html_table_begin,
	html_row_begin, html_cell_sep, html_row_end, html_table_end, html_end,
};

/* ---- the document ---- */

static void state_cell(const struct doc_ops *o, FILE *f, enum conf_state s)
{
	if (o == &html_ops)
		fprintf(f, "<span class=\"%s\">%s</span>", conf_state_name(s), conf_state_name(s));
	else
		fprintf(f, "%s%s%s", s == CONF_FAIL ? "**" : "", conf_state_name(s),
			s == CONF_FAIL ? "**" : "");
}

static void summary(const struct doc_ops *o, FILE *f, const struct conf_result *res, size_t n)
{
	unsigned cnt[4] = { 0 };

	for (size_t i = 0; i < n; i++)
		cnt[res[i].state]++;
	o->heading(f, 2, "Certification summary");
	o->para_begin(f);
	fprintf(f, "%u cases: %u passed, %u failed, %u not run, %u excluded. ", (unsigned)n,
		cnt[CONF_PASS], cnt[CONF_FAIL], cnt[CONF_NOTRUN], cnt[CONF_EXCLUDED]);
	if (!cnt[CONF_FAIL] && !cnt[CONF_EXCLUDED]) {
		fputs("The implementation conforms: every case that ran passed.", f);
		o->para_end(f);
	} else {
		fputs("The implementation conforms except:", f);
		o->para_end(f);
		o->list_begin(f);
		for (size_t i = 0; i < n; i++) {
			const struct conf_result *r = &res[i];

			if (r->state != CONF_FAIL && r->state != CONF_EXCLUDED)
				continue;
			o->item_begin(f);
			o->text(f, r->c->id);
			fputs(r->state == CONF_FAIL ? " (failed, unexplained): " :
						      " (excluded by the manifest): ", f);
			o->text(f, r->c->desc);
			fputs(r->state == CONF_FAIL ? " -- observed: " : " -- reason: ", f);
			o->text(f, r->msg);
			o->item_end(f);
		}
		o->list_end(f);
	}
	if (!cnt[CONF_NOTRUN])
		return;
	/* Not run, grouped by reason (a reason names the missing precondition). */
	o->para_begin(f);
	fputs("Not run here (a precondition is missing; these are not deviations):", f);
	o->para_end(f);
	o->list_begin(f);
	bool *done = calloc(n, sizeof *done);
	for (size_t i = 0; done && i < n; i++) {
		if (res[i].state != CONF_NOTRUN || done[i])
			continue;
		const char *why = res[i].msg ? res[i].msg : "";
		o->item_begin(f);
		o->text(f, why);
		fputs(": ", f);
		for (size_t j = i, k = 0; j < n; j++) {
			if (res[j].state != CONF_NOTRUN || done[j] ||
			    strcmp(why, res[j].msg ? res[j].msg : ""))
				continue;
			done[j] = true;
			fputs(k++ ? ", " : "", f);
			o->text(f, res[j].c->id);
		}
		o->item_end(f);
	}
	free(done);
	o->list_end(f);
}

/* Is res[i] the first result of its area (areas are reported in order of first appearance,
 * each with all of its cases)? */
static bool first_of_area(const struct conf_result *res, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(res[k].c->area, res[i].c->area))
			return false;
	return true;
}

static void per_area_counts(const struct doc_ops *o, FILE *f, const struct conf_result *res,
			    size_t n)
{
	static const char *const cols[] = { "area", "pass", "fail", "notrun", "excluded" };

	o->heading(f, 2, "Results per area");
	o->table_begin(f, cols, 5);
	for (size_t i = 0; i < n; i++) {
		unsigned c[4] = { 0 };

		if (!first_of_area(res, i))
			continue;
		for (size_t j = i; j < n; j++)
			if (!strcmp(res[j].c->area, res[i].c->area))
				c[res[j].state]++;
		o->row_begin(f);
		o->text(f, res[i].c->area);
		for (int k = 0; k < 4; k++) {
			o->cell_sep(f);
			fprintf(f, "%u", c[k]);
		}
		o->row_end(f);
	}
	o->table_end(f);
}

static void cases(const struct doc_ops *o, FILE *f, const struct conf_result *res, size_t n)
{
	static const char *const cols[] = { "case", "row", "result", "expected (real stack)",
					    "documented (man page)", "observed" };

	for (size_t i = 0; i < n; i++) {
		if (!first_of_area(res, i))
			continue;
		o->heading(f, 2, res[i].c->area);
		o->table_begin(f, cols, 6);
		for (size_t j = i; j < n; j++) {
			const struct conf_result *r = &res[j];

			if (strcmp(r->c->area, res[i].c->area))
				continue;
			o->row_begin(f);
			o->text(f, r->c->id);
			o->cell_sep(f);
			fprintf(f, "%d", r->c->row);
			o->cell_sep(f);
			state_cell(o, f, r->state);
			o->cell_sep(f);
			o->text(f, r->c->desc);
			o->cell_sep(f);
			o->text(f, r->c->documented ? r->c->documented : "as expected");
			o->cell_sep(f);
			if (r->state == CONF_EXCLUDED)
				fputs("excluded: ", f);
			else if (r->state == CONF_NOTRUN)
				fputs("not run: ", f);
			o->text(f, r->msg);
			o->row_end(f);
		}
		o->table_end(f);
	}
}

/* Each seed statement, the cases that check it and their results in this run. */
static void seed_section(const struct doc_ops *o, FILE *f, const struct conf_result *res,
			 size_t n)
{
	static const char *const cols[] = { "seed", "statement", "checked by (result)" };

	o->heading(f, 2, "Seed statements");
	o->table_begin(f, cols, 3);
	for (const struct conf_seed *s = conf_seeds; s->seed; s++) {
		o->row_begin(f);
		o->text(f, s->seed);
		o->cell_sep(f);
		o->text(f, s->statement);
		o->cell_sep(f);
		if (!s->cases) {
			fputs("not checkable: ", f);
			o->text(f, s->unchecked);
		}
		for (const char *p = s->cases; p && *p;) {
			size_t len = strcspn(p, " ");
			char id[64];
			const char *st = "not selected";

			snprintf(id, sizeof id, "%.*s", (int)len, p);
			for (size_t i = 0; i < n; i++)
				if (!strcmp(res[i].c->id, id))
					st = conf_state_name(res[i].state);
			o->text(f, id);
			fprintf(f, " (%s)%s", st, p[len] ? ", " : "");
			p += len;
			p += strspn(p, " ");
		}
		o->row_end(f);
	}
	o->table_end(f);
}

int conf_report_doc(const char *path, const struct conf_result *res, size_t n,
		    const char *header)
{
	const char *dot = strrchr(path, '.');
	const struct doc_ops *o = dot && !strcmp(dot, ".md") ? &md_ops : &html_ops;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	o->begin(f, "rdmaemu-conformance report");
	o->pre(f, header);
	summary(o, f, res, n);
	per_area_counts(o, f, res, n);
	seed_section(o, f, res, n);
	cases(o, f, res, n);
	o->end(f);
	return fclose(f);
}
