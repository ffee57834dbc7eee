// SPDX-License-Identifier: MIT
/*
 * The shared secret (src/util/secret.c): a key file is used only when it is a regular
 * file of ours that nobody else may read, holding 64 hex digits and nothing else; the
 * run directory's is made once (mode 0600) and then read back the same.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/util/secret.h"
#include "check.h"

static char dir[] = "/tmp/softefa-secret-XXXXXX";
static const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";

static void put(const char *name, const char *text, mode_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	REQUIRE(!chmod(path, mode));
}

static int load(const char *name, uint8_t key[SEFA_SECRET_LEN])
{
	struct sefa_config cfg = {0};

	snprintf(cfg.key_file, sizeof(cfg.key_file), "%s/%s", dir, name);
	return sefa_secret_load(&cfg, key);
}

int main(void)
{
	uint8_t key[SEFA_SECRET_LEN], again[SEFA_SECRET_LEN];
	char big[200], path[256], link_path[256];
	struct sefa_config cfg = {0};
	struct stat st;

	REQUIRE(mkdtemp(dir));
	put("good", hex, 0600);
	CHECK_EQ(load("good", key), 0);
	CHECK(key[0] == 0x00 && key[1] == 0x11 && key[15] == 0xff && key[31] == 0xff);
	put("good-nl", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n", 0400);
	CHECK_EQ(load("good-nl", key), 0);
	put("readable", hex, 0644);
	CHECK_EQ(load("readable", key), -EPERM);
	put("short", "0011", 0600);
	CHECK_EQ(load("short", key), -EINVAL);
	put("nothex", "zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 0600);
	CHECK_EQ(load("nothex", key), -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("long", big, 0600);
	CHECK_EQ(load("long", key), -EINVAL);
	CHECK_EQ(load("missing", key), -ENOENT);
	snprintf(path, sizeof(path), "%s/good", dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	REQUIRE(!symlink(path, link_path));
	CHECK_EQ(load("link", key), -ELOOP);
	unlink(link_path);

	/* The run directory's: made on first use, private, the same when read again. */
	setenv("SOFTEFA_RUN_DIR", dir, 1);
	CHECK_EQ(sefa_secret_load(&cfg, key), 0);
	CHECK_EQ(sefa_secret_load(&cfg, again), 0);
	CHECK(!memcmp(key, again, sizeof(key)));
	snprintf(path, sizeof(path), "%s/auth.key", dir);
	REQUIRE(!stat(path, &st));
	CHECK_EQ(st.st_mode & 0777, 0600);

	for (const char *const *n = (const char *const[]){"good", "good-nl", "readable", "short",
	                                                  "nothex", "long", "auth.key", NULL};
	     *n; n++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *n);
		unlink(path);
	}
	rmdir(dir);
	return check_report("test_secret");
}
