// SPDX-License-Identifier: MIT
/*
 * softefa: the command-line front end.
 *   softefa run [--] CMD [ARGS...]  run an unmodified program on softefa (our rdma on PATH)
 *   softefa trace [-o FILE] [--] CMD [ARGS...]
 *                                   the same, every datagram in a pcap (SOFTEFA_TRACE)
 *   softefa env                     print the environment `run` sets, for eval
 *   softefa info                    list devices and their attributes
 *   softefa stats ...               counters, peers, paths and QPs of live processes
 *   softefa config                  every variable: value, default, range, source
 *   softefa doctor [-- CMD]         check the set-up, say what to fix
 *   softefa demo [--iters N]        two processes exchange messages; latency, throughput
 *   softefa sim ...                 the SRD core on the network simulator (sim_cmd.c)
 *   softefa --version
 * A usage error names the argument and exits 2 (args.c).
 */
#include <errno.h>
#include <infiniband/efadv.h>
#include <infiniband/verbs.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"
#include "../src/util/config.h"

static int usage(FILE *f)
{
	fprintf(
	    f, "usage: softefa COMMAND [ARGS...]\n"
	       "  run [--] CMD [ARGS...]   run CMD on softefa's libibverbs and libefa (and our\n"
	       "                           rdma first on PATH)\n"
	       "  trace [-o FILE] [--] CMD [ARGS...]\n"
	       "                           run CMD as `run` does, every datagram its engines send\n"
	       "                           and receive in a pcap (default softefa-<pid>.pcap;\n"
	       "                           docs/trace.md)\n"
	       "  env                      print the environment `run` sets, for eval\n"
	       "  info                     list the devices and their attributes\n"
	       "  stats [--pid PID] [--name TEXT] [--json] [--interval SEC | --watch [SEC]\n"
	       "        [--count N]] | --describe\n"
	       "                           counters, peers (state, RTT, cwnd, retransmissions),\n"
	       "                           paths and QPs of live softefa processes; rates over\n"
	       "                           an interval, a live table (softefa stats --help)\n"
	       "  config [--json]          every SOFTEFA_* variable: value, default, range and\n"
	       "                           source (environment or default)\n"
	       "  demo [--iters N]         two processes exchange messages: latency and\n"
	       "                           throughput (N round trips a size, default 10000)\n"
	       "  doctor [-- CMD]          check the set-up (address, ports, MTU, run directory,\n"
	       "                           key file, which libibverbs CMD would load): exit 1\n"
	       "                           if anything needs fixing\n"
	       "  sim campaign|replay|fabric ...\n"
	       "                           the SRD core on the network simulator\n"
	       "                           (softefa sim --help)\n"
	       "  --version                print the version\n"
	       "The SOFTEFA_* variables: man 7 softefa-config (docs/configuration.md).\n");
	return f == stderr ? 2 : 0;
}

/*
 * dir of this executable + rel: the installed layout (cmake/layout.cmake) when what
 * the path must hold is there, else the build tree's. 0 or -errno.
 */
static int beside_exe(const char *rel, const char *build_rel, const char *holds, char *out,
                      size_t cap)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *dir;

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(probe, sizeof(probe), "%s/%s/%s", dir, rel, holds);
	snprintf(out, cap, "%s/%s", dir, access(probe, F_OK) == 0 ? rel : build_rel);
	return 0;
}

int tool_lib_dir(char *out, size_t cap)
{
	const char *env = getenv("SOFTEFA_LIBDIR");

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return 0;
	}
	return beside_exe(SEFA_REL_LIBDIR, "../lib", "libibverbs.so.1", out, cap);
}

/*
 * Puts our `rdma` (docs/rdma-tool.md) first on PATH, so programs that run `rdma`
 * (pyverbs' tests do) see softefa's devices.
 */
static void tools_on_path(void)
{
	const char *old = getenv("PATH");
	char dir[PATH_MAX], real[PATH_MAX], buf[PATH_MAX * 4];

	if (beside_exe(SEFA_REL_LIBEXECDIR, "../libexec/softefa", "rdma", dir, sizeof(dir)) ||
	    !realpath(dir, real))
		return;
	snprintf(buf, sizeof(buf), "%s%s%s", real, old && *old ? ":" : "", old ? old : "");
	setenv("PATH", buf, 1);
}

/*
 * The directories in use go to the program as SOFTEFA_RUN_DIR and SOFTEFA_SYSFS_DIR:
 * when the library refused the configured ones for a private fallback, the program
 * (and what it starts) then uses the same fallback, its stats and tree, rather than
 * refusing them again and making one of its own.
 */
static void pass_dirs_on(const char *tree)
{
	char root[PATH_MAX];
	const char *slash = strrchr(tree, '/');

	if (*softefa_run_dir())
		setenv("SOFTEFA_RUN_DIR", softefa_run_dir(), 1);
	if (slash && slash != tree) {
		snprintf(root, sizeof(root), "%.*s", (int)(slash - tree), tree);
		setenv("SOFTEFA_SYSFS_DIR", root, 1);
	}
}

/* libfabric's efa provider reads the host's id from FI_EFA_HOST_ID_FILE (by default
 * where an EC2 instance has it): the tree's, unless the user named one. */
static void host_id_on(const char *tree)
{
	char path[PATH_MAX];

	if (!*tree || getenv("FI_EFA_HOST_ID_FILE"))
		return;
	if (snprintf(path, sizeof(path), "%s/%s", tree, SOFTEFA_HOST_ID_FILE) < (int)sizeof(path))
		setenv("FI_EFA_HOST_ID_FILE", path, 1);
}

static int setup_env(char *libdir, size_t cap, const char **sysfs, bool quiet_config)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char buf[PATH_MAX * 2], real[PATH_MAX];
	struct ibv_device **list;
	int err = tool_lib_dir(libdir, cap);

	if (err)
		return err;
	if (realpath(libdir, real))
		snprintf(libdir, cap, "%s", real);
	snprintf(buf, sizeof(buf), "%s%s%s", libdir, old && *old ? ":" : "", old ? old : "");
	setenv("LD_LIBRARY_PATH", buf, 1);
	/* Listing the devices makes the library build its sysfs tree, and say which
	 * directory it refused (the program will be given the fallback, and not refuse it
	 * again); for `run`, not what is wrong with the settings, which the program says
	 * itself. */
	if (quiet_config)
		softefa_quiet_config();
	list = ibv_get_device_list(NULL);
	if (list)
		ibv_free_device_list(list);
	/* SYSFS_PATH names only a tree the library vetted (docs/security.md); with none,
	 * an inherited one goes too, and readers see /sys. */
	*sysfs = softefa_sysfs_dir();
	if (**sysfs)
		setenv("SYSFS_PATH", *sysfs, 1);
	else
		unsetenv("SYSFS_PATH");
	pass_dirs_on(*sysfs);
	host_id_on(*sysfs);
	return 0;
}

/* Runs argv on softefa's libraries: only returns (127, or 1) when it cannot. */
static int exec_on_softefa(char **argv)
{
	char libdir[PATH_MAX];
	const char *sysfs;
	int err;

	err = setup_env(libdir, sizeof(libdir), &sysfs, true);
	if (err) {
		fprintf(stderr, "softefa: cannot find the library directory: %s\n", strerror(-err));
		return 1;
	}
	tools_on_path();
	execvp(argv[0], argv);
	fprintf(stderr, "softefa: %s: %s\n", argv[0], strerror(errno));
	return 127;
}

static int cmd_run(int argc, char **argv)
{
	if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
		printf("usage: softefa run [--] CMD [ARGS...]\n"
		       "  runs CMD on softefa's libibverbs and libefa (LD_LIBRARY_PATH), with\n"
		       "  SYSFS_PATH at softefa's sysfs tree and our rdma first on PATH\n"
		       "  (man softefa-run)\n");
		return 0;
	}
	if (argc > 0 && !strcmp(argv[0], "--")) {
		argc--;
		argv++;
	}
	if (argc < 1)
		return tool_arg_error("softefa run",
		                      "no command to run (softefa run [--] CMD [ARGS...])");
	return exec_on_softefa(argv);
}

#define TRACE_CMD "softefa trace"

static int trace_usage(void)
{
	printf("usage: softefa trace [-o FILE] [--] CMD [ARGS...]\n"
	       "  runs CMD as softefa run does, with SOFTEFA_TRACE=FILE: every datagram its\n"
	       "  engines send and receive goes to FILE, a pcap that tcpdump, tshark and\n"
	       "  Wireshark read (tools/wireshark/softefa.lua decodes softefa in it)\n"
	       "  -o FILE   where (default softefa-%%p.pcap here); %%p is the process id, so\n"
	       "            each process CMD starts that uses a device writes its own file\n");
	return 0;
}

/* in with each '%' doubled, as the library's %p expansion reads "%%": 0 or -1 (no room). */
static int percent_escaped(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	for (; *in; in++) {
		if (o + 2 >= cap)
			return -1;
		if (*in == '%')
			out[o++] = '%';
		out[o++] = *in;
	}
	out[o] = '\0';
	return 0;
}

/*
 * The trace file as SOFTEFA_TRACE gets it: absolute, so a program that changes its
 * directory still writes where the user asked; a '%' of the current directory's name
 * is doubled, so that only the user's FILE has its %p expanded. shown: the same as the
 * user reads it. 0, or the usage error's 2.
 */
static int trace_path(const char *file, char *out, char *shown, size_t cap)
{
	char cwd[PATH_MAX], esc[2 * PATH_MAX];
	int n = 0;

	if (file[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return tool_arg_error(TRACE_CMD, "-o %s: the current directory is unknown (%s)",
		                      file, strerror(errno));
	if (file[0] == '/')
		cwd[0] = esc[0] = '\0';
	else if (percent_escaped(cwd, esc, sizeof(esc)))
		n = -1;
	if (n == 0)
		n = snprintf(out, cap, "%s%s%s", esc, esc[0] ? "/" : "", file);
	if (n >= 0)
		snprintf(shown, cap, "%s%s%s", cwd, cwd[0] ? "/" : "", file);
	if (n < 0 || (size_t)n >= cap || (size_t)n >= SEFA_PATH_MAX)
		return tool_arg_error(TRACE_CMD, "-o %s: longer than %d bytes", file,
		                      SEFA_PATH_MAX - 1);
	return 0;
}

static int cmd_trace(int argc, char **argv)
{
	const char *file = "softefa-%p.pcap";
	char path[PATH_MAX], shown[PATH_MAX];
	int i = 0, rc;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return trace_usage();
		if (strcmp(argv[i], "-o") && strcmp(argv[i], "--output"))
			return tool_arg_error(TRACE_CMD, "unknown argument '%s'", argv[i]);
		if (i + 1 >= argc || !argv[i + 1][0])
			return tool_arg_error(TRACE_CMD, "%s needs a file name", argv[i]);
		file = argv[++i];
	}
	if (i >= argc)
		return tool_arg_error(
		    TRACE_CMD, "no command to run (softefa trace [-o FILE] [--] CMD [ARGS...])");
	rc = trace_path(file, path, shown, sizeof(path));
	if (rc)
		return rc;
	setenv("SOFTEFA_TRACE", path, 1);
	/* The library puts the pid in for %p; CMD keeps this process's, so it is known. */
	fprintf(stderr, "%s: datagrams to %s%s%d\n", TRACE_CMD, shown,
	        strstr(file, "%p") ? " with %p = " : ", pid ", (int)getpid());
	return exec_on_softefa(argv + i);
}

static int cmd_env(void)
{
	char libdir[PATH_MAX];
	const char *sysfs;
	int err = setup_env(libdir, sizeof(libdir), &sysfs, false);

	if (err)
		return 1;
	tools_on_path();
	printf("export LD_LIBRARY_PATH='%s'\n", getenv("LD_LIBRARY_PATH"));
	if (*sysfs)
		printf("export SYSFS_PATH='%s'\n", sysfs);
	else
		printf("unset SYSFS_PATH\n");
	if (getenv("SOFTEFA_RUN_DIR"))
		printf("export SOFTEFA_RUN_DIR='%s'\n", getenv("SOFTEFA_RUN_DIR"));
	if (getenv("SOFTEFA_SYSFS_DIR"))
		printf("export SOFTEFA_SYSFS_DIR='%s'\n", getenv("SOFTEFA_SYSFS_DIR"));
	if (getenv("FI_EFA_HOST_ID_FILE"))
		printf("export FI_EFA_HOST_ID_FILE='%s'\n", getenv("FI_EFA_HOST_ID_FILE"));
	printf("export PATH='%s'\n", getenv("PATH") ? getenv("PATH") : "");
	return 0;
}

static int cmd_info(void)
{
	struct ibv_device **list;
	int n = 0, rc = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		/* The library has said why on stderr, once, unless SOFTEFA_LOG=0 silenced it. */
		if (getenv("SOFTEFA_LOG") && !strcmp(getenv("SOFTEFA_LOG"), "0"))
			fprintf(stderr, "softefa: no devices (SOFTEFA_LOG=0 hides why)\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);
		struct efadv_device_attr efa;
		struct ibv_device_attr da;
		struct ibv_port_attr pa;
		union ibv_gid gid;
		char gs[64];

		if (!ctx) {
			fprintf(stderr, "softefa: %s: open: %s\n", ibv_get_device_name(list[i]),
			        strerror(errno));
			rc = 1;
			continue;
		}
		if (ibv_query_device(ctx, &da) || ibv_query_port(ctx, 1, &pa) ||
		    ibv_query_gid(ctx, 1, 0, &gid) || efadv_query_device(ctx, &efa, sizeof(efa))) {
			fprintf(stderr, "softefa: %s: query failed\n",
			        ibv_get_device_name(list[i]));
			ibv_close_device(ctx);
			rc = 1;
			continue;
		}
		tool_gid_str(&gid, gs, sizeof(gs));
		printf("%s\n", ibv_get_device_name(list[i]));
		printf("  gid              %s (%s)\n", gs, tool_gid_endpoint(&gid));
		printf("  vendor           0x%04x part 0x%04x fw %s\n", da.vendor_id,
		       da.vendor_part_id, da.fw_ver);
		printf("  port 1           %s, max_msg_sz %u\n", ibv_port_state_str(pa.state),
		       pa.max_msg_sz);
		printf("  limits           qp %d, cq %d, cqe %d, mr %d, pd %d, ah %d\n", da.max_qp,
		       da.max_cq, da.max_cqe, da.max_mr, da.max_pd, da.max_ah);
		printf("  efa              sq_wr %u rq_wr %u sq_sge %u rq_sge %u inline %u/%u "
		       "rdma %u caps 0x%x\n",
		       efa.max_sq_wr, efa.max_rq_wr, efa.max_sq_sge, efa.max_rq_sge,
		       efa.inline_buf_size, efa.inline_buf_size_ex, efa.max_rdma_size,
		       efa.device_caps);
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	/* A device listed that cannot be opened is an error the caller must see. */
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "softefa: no command given\n");
		return usage(stderr);
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if ((!strcmp(argv[1], "env") || !strcmp(argv[1], "info")) && argc == 3 &&
	    (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		printf("usage: softefa %s\n  %s (man softefa-%s)\n", argv[1],
		       !strcmp(argv[1], "env")
		           ? "prints the environment `softefa run` sets, for eval"
		           : "lists the devices and their attributes",
		       argv[1]);
		return 0;
	}
	if (!strcmp(argv[1], "trace"))
		return cmd_trace(argc - 2, argv + 2);
	if ((!strcmp(argv[1], "env") || !strcmp(argv[1], "info")) && argc > 2)
		return tool_arg_error("softefa", "%s takes no arguments ('%s')", argv[1], argv[2]);
	if (!strcmp(argv[1], "env"))
		return cmd_env();
	if (!strcmp(argv[1], "info"))
		return cmd_info();
	if (!strcmp(argv[1], "stats"))
		return tool_stats(argc - 2, argv + 2);
	if (!strcmp(argv[1], "config"))
		return tool_config(argc - 2, argv + 2);
	if (!strcmp(argv[1], "demo"))
		return tool_demo(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sim"))
		return tool_sim(argc - 2, argv + 2);
	if (!strcmp(argv[1], "doctor"))
		return tool_doctor(argc - 2, argv + 2);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("softefa %s\n", SEFA_VERSION);
		return 0;
	}
	return tool_arg_error("softefa", "unknown command '%s'", argv[1]);
}
