// SPDX-License-Identifier: MIT
/*
 * rdma_out.h. The JSON follows the writer iproute2 uses: a comma before every item but
 * the first at its level, and when pretty a line break and four spaces per level before
 * each key and before a closing bracket that has items.
 */
#include "rdma_out.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static void indent(struct rd_out *o)
{
	if (!o->pretty)
		return;
	putchar('\n');
	for (unsigned i = 0; i < o->depth; i++)
		fputs("    ", stdout);
}

static void item(struct rd_out *o)
{
	if (o->sep)
		putchar(o->sep);
	o->sep = ',';
}

static void open_c(struct rd_out *o, char c)
{
	item(o);
	putchar(c);
	o->depth++;
	o->sep = '\0';
}

static void close_c(struct rd_out *o, char c)
{
	o->depth--;
	if (o->sep)
		indent(o);
	putchar(c);
	o->sep = ',';
}

static void key(struct rd_out *o, const char *k)
{
	item(o);
	indent(o);
	o->sep = '\0';
	printf("\"%s\":%s", k, o->pretty ? " " : "");
}

void rd_out_begin(struct rd_out *o, bool json, bool pretty)
{
	o->json = json;
	o->pretty = json && pretty;
	o->depth = 0;
	o->sep = '\0';
	if (!json)
		return;
	open_c(o, '[');
	if (o->pretty)
		putchar(' ');
}

void rd_out_end(struct rd_out *o)
{
	if (!o->json)
		return;
	close_c(o, ']');
	putchar('\n');
}

void rd_out_open(struct rd_out *o)
{
	if (o->json)
		open_c(o, '{');
}

void rd_out_close(struct rd_out *o)
{
	if (o->json)
		close_c(o, '}');
	/* Newer iproute2 ends every record with a line break, in JSON too. */
	putchar('\n');
}

/*
 * What every field does first, whatever its type: as text, prints the format text (if
 * any) with the value passed after it; in JSON, writes the key (if any). True when the
 * caller is to write the value in JSON.
 */
static bool field(struct rd_out *o, const char *k, const char *text, ...)
{
	va_list ap;

	if (!o->json) {
		if (text) {
			va_start(ap, text);
			vprintf(text, ap);
			va_end(ap);
		}
		return false;
	}
	if (!k)
		return false;
	key(o, k);
	item(o);
	return true;
}

void rd_out_str(struct rd_out *o, const char *k, const char *text, const char *value)
{
	if (!field(o, k, text, value))
		return;
	putchar('"');
	for (const char *p = value; *p; p++) {
		if (*p == '"' || *p == '\\')
			putchar('\\');
		putchar(*p);
	}
	putchar('"');
}

void rd_out_u64(struct rd_out *o, const char *k, const char *text, uint64_t value)
{
	if (field(o, k, text, value))
		printf("%" PRIu64, value);
}

void rd_out_text(struct rd_out *o, const char *text)
{
	if (!o->json)
		fputs(text, stdout);
}
