// SPDX-License-Identifier: MIT
/*
 * softefa doctor [-- CMD]: checks what a run needs from the host, one line each,
 * "ok" or "problem" with what to do; exits 1 if any check found a problem. It reads
 * the settings as the library would but changes nothing (no directory or key is made).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/util/config.h"
#include "tool.h"

static int problems;

static void say(int ok, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%-8s %-10s ", ok ? "ok" : "problem", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	problems += !ok;
}

/* Binds a UDP socket to ip:port: 0 or the errno. */
static int try_bind(struct in_addr ip, unsigned port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = ip, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = errno;
	close(fd);
	return err;
}

/*
 * Every variable parsed as the library parses it (src/util/config.c, which says on
 * stderr what is wrong with each): one it cannot use lists no device, and the checks
 * that read the settings would judge values the library never takes.
 */
static bool check_settings(void)
{
	if (sefa_config_valid()) {
		say(1, "settings", "every SOFTEFA_* value can be used");
		return true;
	}
	say(0, "settings",
	    "a SOFTEFA_* value cannot be used (stderr says which), so no device is "
	    "listed: fix or unset it (man 7 softefa-config); the network checks wait");
	return false;
}

/* The address, the ports of every device's paths, and the interface's MTU. */
static void check_net(void)
{
	const struct sefa_config *c = sefa_config_get();
	const char *text = getenv("SOFTEFA_ADDR") && *getenv("SOFTEFA_ADDR")
	                       ? getenv("SOFTEFA_ADDR")
	                       : "127.0.0.1";
	unsigned long port = c->port, paths = c->paths, ndevs = c->ndevs, mtu = c->mtu;
	struct ifaddrs *ifs = NULL;
	const char *ifname = NULL;
	struct in_addr ip = c->addr;
	int err;

	err = try_bind(ip, 0);
	if (err) {
		say(0, "address", "SOFTEFA_ADDR=%s cannot be bound (%s): set one of `ip -4 addr`",
		    text, strerror(err));
		return;
	}
	say(1, "address", "SOFTEFA_ADDR=%s is an address of this host", text);
	if (port) {
		unsigned long busy = 0;

		for (unsigned long p = port; p < port + paths * ndevs && p <= 65535 && !busy; p++)
			busy = try_bind(ip, (unsigned)p) ? p : 0;
		if (busy || port + paths * ndevs - 1 > 65535)
			say(0, "ports",
			    "UDP port %lu of %lu-%lu is taken or out of range: choose "
			    "another SOFTEFA_PORT, or 0 for free ports",
			    busy, port, port + paths * ndevs - 1);
		else
			say(1, "ports", "UDP ports %lu-%lu are free", port,
			    port + paths * ndevs - 1);
	} else {
		say(1, "ports", "SOFTEFA_PORT=0: each engine takes %lu free consecutive ports",
		    paths);
	}
	if (getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i && !ifname; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr ==
			        ip.s_addr)
				ifname = i->ifa_name;
	}
	if (ifname) {
		char path[128];
		unsigned long ifmtu = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lu", &ifmtu) != 1)
			ifmtu = 0;
		if (f)
			fclose(f);
		if (mtu && ifmtu && mtu > ifmtu)
			say(0, "mtu",
			    "SOFTEFA_MTU=%lu is above %s's MTU %lu: datagrams would not fit; "
			    "unset it or lower it",
			    mtu, ifname, ifmtu);
		else
			say(1, "mtu", "%s's MTU is %lu%s", ifname, ifmtu,
			    mtu ? " (SOFTEFA_MTU is below it)" : ", the paths' MTU");
	}
	freeifaddrs(ifs);
}

/* A directory or file softefa trusts must be the user's and writable by no one else. */
static int private_to_me(const char *path, const struct stat *st, const char *what)
{
	if (st->st_uid != getuid()) {
		say(0, what, "%s belongs to uid %u, not to you (%u): remove it or set another",
		    path, (unsigned)st->st_uid, (unsigned)getuid());
		return 0;
	}
	if (st->st_mode & 022) {
		say(0, what, "%s is writable by others (mode %03o): chmod go-w %s", path,
		    (unsigned)(st->st_mode & 0777), path);
		return 0;
	}
	return 1;
}

static void check_files(char *run, size_t cap)
{
	const char *key = getenv("SOFTEFA_KEY_FILE");
	char path[PATH_MAX], hex[80];
	struct stat st;
	size_t n = 0;
	FILE *f;

	if (getenv("SOFTEFA_RUN_DIR") && *getenv("SOFTEFA_RUN_DIR"))
		snprintf(run, cap, "%s", getenv("SOFTEFA_RUN_DIR"));
	else
		snprintf(run, cap, "/tmp/softefa-%u", (unsigned)getuid());
	if (lstat(run, &st))
		say(1, "run dir", "%s does not exist yet: the first softefa process makes it", run);
	else if (!S_ISDIR(st.st_mode))
		say(0, "run dir", "%s is not a directory: remove it or set SOFTEFA_RUN_DIR", run);
	else if (private_to_me(run, &st, "run dir"))
		say(1, "run dir", "%s is yours and private", run);
	if (!key && getenv("SOFTEFA_AUTH") && !strcmp(getenv("SOFTEFA_AUTH"), "0")) {
		say(1, "key", "SOFTEFA_AUTH=0: no key is used (datagrams are not authenticated)");
		return;
	}
	snprintf(path, sizeof(path), "%s", key ? key : run);
	if (!key)
		strncat(path, "/auth.key", sizeof(path) - strlen(path) - 1);
	if (stat(path, &st)) {
		if (key)
			say(0, "key", "SOFTEFA_KEY_FILE=%s: %s: give it 64 hex digits, mode 0600",
			    path, strerror(errno));
		else
			say(1, "key", "%s does not exist yet: made on first use", path);
		return;
	}
	if (!private_to_me(path, &st, "key"))
		return;
	if (st.st_mode & 077) {
		say(0, "key", "%s is readable by others (mode %03o): chmod 600 %s", path,
		    (unsigned)(st.st_mode & 0777), path);
		return;
	}
	f = fopen(path, "r");
	if (f) {
		n = fread(hex, 1, sizeof(hex) - 1, f);
		fclose(f);
	}
	while (n && (hex[n - 1] == '\n' || hex[n - 1] == '\r'))
		n--;
	hex[n] = '\0';
	if (n != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64)
		say(0, "key",
		    "%s does not hold 64 hexadecimal digits: replace it (every host the same)",
		    path);
	else
		say(1, "key", "%s: 64 hex digits, mode %03o", path, (unsigned)(st.st_mode & 0777));
}

/* Whether dir holds a file name (a library the loader would take from there). */
static int holds(const char *dir, const char *name)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return 0;
	return access(p, R_OK) == 0;
}

/* The first LD_LIBRARY_PATH entry before ours that holds libibverbs.so.1, if any. */
static void check_loader(const char *libdir)
{
	const char *lp = getenv("LD_LIBRARY_PATH");
	char buf[PATH_MAX], line[PATH_MAX + 64], sys[PATH_MAX] = "";
	FILE *p;

	if (!holds(libdir, "libibverbs.so.1") || !holds(libdir, "libefa.so.1")) {
		say(0, "libraries",
		    "%s lacks libibverbs.so.1 or libefa.so.1: build first (make), "
		    "or set SOFTEFA_LIBDIR",
		    libdir);
		return;
	}
	say(1, "libraries", "softefa run puts %s first on LD_LIBRARY_PATH", libdir);
	for (const char *s = lp; s && *s;) {
		size_t n = strcspn(s, ":");

		snprintf(buf, sizeof(buf), "%.*s", (int)n, s);
		if (*buf && holds(buf, "libibverbs.so.1") && !strstr(buf, libdir))
			say(1, "libraries",
			    "LD_LIBRARY_PATH's %s holds a libibverbs.so.1: outside "
			    "softefa run it is loaded instead of softefa's",
			    buf);
		s += n + (s[n] == ':');
	}
	/* What a program outside `softefa run` gets from the loader's cache. */
	p = popen("ldconfig -p 2>/dev/null", "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, "=> ");

		if (!*sys && strstr(line, "libibverbs.so.1 ") && arrow)
			snprintf(sys, sizeof(sys), "%.*s", (int)strcspn(arrow + 3, "\n"),
			         arrow + 3);
	}
	if (p)
		pclose(p);
	say(1, "libraries", "without softefa run, the loader's cache gives %s",
	    *sys ? sys : "no libibverbs.so.1");
}

/* Directories of CMD's DT_RPATH that hold a libibverbs: searched before LD_LIBRARY_PATH. */
static void check_program(const char *cmd)
{
	char path[PATH_MAX], quoted[PATH_MAX + 64], line[PATH_MAX + 128], dir[PATH_MAX];
	int found = 0, shadow = 0;
	FILE *p;

	if (strchr(cmd, '/')) {
		snprintf(path, sizeof(path), "%s", cmd);
	} else {
		snprintf(quoted, sizeof(quoted), "command -v '%s' 2>/dev/null", cmd);
		p = popen(quoted, "r");
		if (!p || !fgets(path, sizeof(path), p))
			path[0] = '\0';
		if (p)
			pclose(p);
		path[strcspn(path, "\n")] = '\0';
	}
	if (!*path || access(path, X_OK)) {
		say(0, "program", "%s: not found on PATH", cmd);
		return;
	}
	snprintf(quoted, sizeof(quoted), "readelf -d '%s' 2>/dev/null", path);
	p = popen(quoted, "r");
	while (p && fgets(line, sizeof(line), p)) {
		int rpath = strstr(line, "(RPATH)") != NULL,
		    runpath = strstr(line, "(RUNPATH)") != NULL;
		char *open = strchr(line, '['), *end = strrchr(line, ']');

		if (!(rpath || runpath) || !open || !end)
			continue;
		found = 1;
		*end = '\0';
		for (char *d = strtok(open + 1, ":"); d; d = strtok(NULL, ":")) {
			if (!strncmp(d, "$ORIGIN", 7)) {
				char base[PATH_MAX];

				snprintf(base, sizeof(base), "%s", path);
				*strrchr(base, '/') = '\0';
				snprintf(dir, sizeof(dir), "%s%s", base, d + 7);
			} else {
				snprintf(dir, sizeof(dir), "%s", d);
			}
			if (!holds(dir, "libibverbs.so.1"))
				continue;
			/* DT_RPATH comes before LD_LIBRARY_PATH; DT_RUNPATH after it. */
			shadow |= rpath;
			say(!rpath, "program",
			    rpath ? "%s's RPATH %s holds a libibverbs.so.1 that shadows softefa's: "
			            "rebuild it with RUNPATH (-Wl,--enable-new-dtags) or remove "
			            "that copy"
			          : "%s's RUNPATH %s holds a libibverbs.so.1; softefa run's comes "
			            "first",
			    path, dir);
		}
	}
	if (p)
		pclose(p);
	if (!shadow)
		say(1, "program", "%s%s loads softefa's libibverbs under softefa run", path,
		    found ? "" : " (no RPATH or RUNPATH)");
}

int tool_doctor(int argc, char **argv)
{
	char libdir[PATH_MAX], run[PATH_MAX];

	if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
		printf(
		    "usage: softefa doctor [-- CMD]\n"
		    "Checks SOFTEFA_ADDR, the ports, the interface's MTU, the run directory, the\n"
		    "key file and the libraries the loader picks (for CMD: its RPATH too); one\n"
		    "line each, ok or problem with what to fix. Exits 1 if there is a problem.\n");
		return 0;
	}
	if (argc > 0 && strcmp(argv[0], "--"))
		return tool_arg_error("softefa doctor",
		                      "unknown argument '%s' (softefa doctor "
		                      "[-- CMD])",
		                      argv[0]);
	if (argc == 1)
		return tool_arg_error("softefa doctor", "no command after '--'");
	if (check_settings())
		check_net();
	check_files(run, sizeof(run));
	if (tool_lib_dir(libdir, sizeof(libdir)) == 0) {
		char real[PATH_MAX];

		if (realpath(libdir, real))
			snprintf(libdir, sizeof(libdir), "%s", real);
		check_loader(libdir);
	}
	if (argc > 1)
		check_program(argv[1]);
	printf(problems ? "%d problem(s): see the lines above\n" : "all ok\n", problems);
	return problems ? 1 : 0;
}
