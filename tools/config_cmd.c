// SPDX-License-Identifier: MIT
/* softefa config: every variable softefa reads, with its value, default, range and
 * where the value comes from (src/util/config.c lists them). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../src/util/config.h"
#include "tool.h"

#define CMD "softefa config"

struct out {
	bool json;
	unsigned n;
};

static void one(const struct sefa_var_info *v, void *arg)
{
	struct out *o = arg;

	if (!o->json) {
		printf("%-27s %-22s %-11s %-22s %s\n", v->name, v->value, v->source, v->def,
		       v->range);
		o->n++;
		return;
	}
	printf("%s{\"name\": ", o->n++ ? ", " : "");
	tool_json_str(v->name);
	printf(", \"value\": ");
	tool_json_str(v->value);
	printf(", \"default\": ");
	tool_json_str(v->def);
	printf(", \"range\": ");
	tool_json_str(v->range);
	printf(", \"source\": \"%s\"}", v->source);
}

int tool_config(int argc, char **argv)
{
	struct out o = {false, 0};

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: softefa config [--json]\n"
			       "  every SOFTEFA_* variable: its value, default, range and source\n"
			       "  (environment or default); man 7 softefa-config says what each "
			       "does\n");
			return 0;
		} else {
			return tool_arg_error(CMD, "unknown argument '%s'", argv[i]);
		}
	}
	if (o.json)
		printf("[");
	else
		printf("%-27s %-22s %-11s %-22s %s\n", "variable", "value", "source", "default",
		       "range");
	sefa_config_each(one, &o);
	if (o.json)
		printf("]\n");
	return 0;
}
