// SPDX-License-Identifier: MIT
#include "fs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int sefa_mkdirs(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int sefa_private_dir(const char *path)
{
	struct stat st;
	int err = sefa_mkdirs(path, 0700);

	if (err)
		return err;
	if (lstat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022)) {
		sefa_log(SEFA_LOG_ERROR, "%s is not a private directory of this user: not using it",
		         path);
		return -EPERM;
	}
	return 0;
}
