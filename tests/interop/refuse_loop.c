// SPDX-License-Identifier: MIT
/*
 * A client hammering a refused call: N ibv_query_port calls on port 2 of efa_0, each
 * refused with EINVAL. errors.sh counts what reaches stderr (the log is rate-limited).
 * Exits 0 when every call was refused as expected.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_port_attr pa;

	if (!ctx) {
		fprintf(stderr, "refuse_loop: no device to open\n");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (ibv_query_port(ctx, 2, &pa) != EINVAL) {
			fprintf(stderr, "refuse_loop: port 2 was not refused with EINVAL\n");
			return 1;
		}
	}
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
