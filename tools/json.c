// SPDX-License-Identifier: MIT
/* JSON output of the softefa tool. */
#include <stdio.h>

#include "tool.h"

void tool_json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}
