// SPDX-License-Identifier: MIT
/*
 * The directories of this process's state, decided once. The default run directory,
 * /tmp/softefa-<uid>, has a name anyone can guess: another local user may make it
 * first and fill it with a sysfs tree of their own, stats files that are FIFOs, or a
 * symlink into their own space. So a directory is used only once it and the
 * directories above it vet (src/util/fs.h); else the user is told why, in one line,
 * and the process goes on in a private fallback no one else can have made.
 */
#include "rundir.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fs.h"
#include "log.h"

#define DIR_CAP (SEFA_PATH_MAX + 16)

static char run_dir[DIR_CAP], sysfs_root[DIR_CAP], fallback_dir[DIR_CAP];
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;

/* Makes dir (mkdir -p, mode) and vets it and what is above it: 0, -EPERM (*u says
 * why) or -errno. */
static int dir_usable(const char *dir, mode_t mode, struct sefa_unsafe *u)
{
	int err = sefa_mkdirs(dir, mode);

	if (!err)
		err = sefa_vet_parents(dir, u);
	if (!err)
		err = sefa_vet_dir(dir, u);
	return err;
}

/*
 * The fallback, made on first need: $XDG_RUNTIME_DIR/softefa when that is private to
 * us (systemd makes it so, and it stays the same for every process of the session),
 * else a new directory from mkdtemp, which no one else can have made. "" if neither.
 */
static const char *fallback(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct sefa_unsafe u;

	if (fallback_dir[0])
		return fallback_dir;
	if (xdg && xdg[0] == '/' &&
	    snprintf(fallback_dir, sizeof(fallback_dir), "%s/softefa", xdg) <
	        (int)sizeof(fallback_dir) &&
	    !dir_usable(fallback_dir, 0700, &u))
		return fallback_dir;
	snprintf(fallback_dir, sizeof(fallback_dir), "/tmp/softefa-%u.XXXXXX", (unsigned)getuid());
	if (!mkdtemp(fallback_dir)) {
		sefa_log(SEFA_LOG_ERROR, "cannot make a private directory %s: %s", fallback_dir,
		         strerror(errno));
		fallback_dir[0] = '\0';
	}
	return fallback_dir;
}

/* The one line that says a directory was refused, why, what is used instead, and
 * which variable the user sets to choose another. */
static void say_refused(const char *what, const char *dir, int err, const struct sefa_unsafe *u,
                        const char *instead, const char *var)
{
	const char *none = "nothing (no sysfs tree, no stats file)";

	if (err != -EPERM)
		sefa_log(SEFA_LOG_ERROR, "%s %s cannot be used: %s. Using %s instead; set %s", what,
		         dir, strerror(-err), *instead ? instead : none, var);
	else
		sefa_log(SEFA_LOG_ERROR,
		         "%s %s refused, as another local user could control what is in it: "
		         "%s %s. Using %s instead; set %s to a directory of your own",
		         what, dir, strcmp(u->path, dir) ? u->path : "it", u->why,
		         *instead ? instead : none, var);
}

/* The sysfs root in place was refused (err, *u): <fallback>/sysfs, unless that is
 * what was refused. */
static void sysfs_fall_back(int err, const struct sefa_unsafe *u)
{
	char refused[DIR_CAP], instead[DIR_CAP + 8] = "";
	const char *fb = fallback();
	struct sefa_unsafe again;

	snprintf(refused, sizeof(refused), "%s", sysfs_root);
	if (*fb)
		snprintf(instead, sizeof(instead), "%s/sysfs", fb);
	if (!strcmp(instead, refused) || (*instead && dir_usable(instead, 0755, &again)) ||
	    strlen(instead) >= sizeof(sysfs_root))
		instead[0] = '\0';
	memcpy(sysfs_root, instead, strlen(instead) + 1); /* fits: checked above */
	say_refused("sysfs directory", refused, err, u, sysfs_root, "SOFTEFA_SYSFS_DIR");
}

static void dirs_resolve(void)
{
	const struct sefa_config *c = sefa_config_get();
	char def_sysfs[DIR_CAP];
	struct sefa_unsafe u;
	bool sysfs_inside;
	int err;

	/* The sysfs root goes with the run directory unless it was set apart. */
	snprintf(def_sysfs, sizeof(def_sysfs), "%s/sysfs", c->run_dir);
	sysfs_inside = !strcmp(c->sysfs_dir, def_sysfs);
	err = dir_usable(c->run_dir, 0700, &u);
	if (!err) {
		snprintf(run_dir, sizeof(run_dir), "%s", c->run_dir);
	} else {
		snprintf(run_dir, sizeof(run_dir), "%s", fallback());
		say_refused("run directory", c->run_dir, err, &u, run_dir, "SOFTEFA_RUN_DIR");
	}
	if (sysfs_inside && !run_dir[0])
		return;
	if (snprintf(sysfs_root, sizeof(sysfs_root), "%s%s", sysfs_inside ? run_dir : c->sysfs_dir,
	             sysfs_inside ? "/sysfs" : "") >= (int)sizeof(sysfs_root))
		err = -ENAMETOOLONG;
	else
		err = dir_usable(sysfs_root, 0755, &u);
	if (err)
		sysfs_fall_back(err, &u);
}

const char *sefa_run_dir(void)
{
	pthread_once(&dirs_once, dirs_resolve);
	return run_dir;
}

const char *sefa_sysfs_root(void)
{
	pthread_once(&dirs_once, dirs_resolve);
	return sysfs_root;
}
