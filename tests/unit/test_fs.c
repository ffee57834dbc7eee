// SPDX-License-Identifier: MIT
/*
 * The checks of src/util/fs.c that keep other local users out (docs/security.md): what
 * vets and what is refused, with the reason given; that a planted FIFO never blocks a
 * check or an open; that links are not followed (out of a tree, by an open, by a
 * removal); and sefa_private_file_open's rules for a secret. Ownership by someone else
 * is made with chown, so those cases run as root only.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/util/fs.h"
#include "check.h"

#define OTHER_UID 61999

static char top[] = "/tmp/softefa-test-fs-XXXXXX";
static bool is_root;

static const char *at(const char *rel)
{
	static char paths[8][PATH_MAX];
	static unsigned next;
	char *p = paths[next++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", top, rel);
	return p;
}

static void put(const char *rel, mode_t mode)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, mode);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "x\n", 2) == 2);
	close(fd);
	REQUIRE(!chmod(at(rel), mode));
}

/* err is -EPERM and the reason contains want. */
static bool refused(int err, const struct sefa_unsafe *u, const char *want)
{
	if (err != -EPERM || !strstr(u->why, want)) {
		fprintf(stderr, "  got %d, \"%s %s\", wanted -EPERM \"%s\"\n", err,
		        err == -EPERM ? u->path : "", err == -EPERM ? u->why : "", want);
		return false;
	}
	return true;
}

static void test_dir(void)
{
	struct sefa_unsafe u;

	REQUIRE(!mkdir(at("d"), 0700));
	CHECK_EQ(sefa_vet_dir(at("d"), &u), 0);
	CHECK_EQ(sefa_vet_dir(at("absent"), &u), -ENOENT);
	REQUIRE(!chmod(at("d"), 0777));
	CHECK(refused(sefa_vet_dir(at("d"), &u), &u, "writable by others (mode 0777)"));
	REQUIRE(!chmod(at("d"), 0720));
	CHECK(refused(sefa_vet_dir(at("d"), &u), &u, "writable by others"));
	REQUIRE(!chmod(at("d"), 0755));
	REQUIRE(!symlink("d", at("dlink")));
	CHECK(refused(sefa_vet_dir(at("dlink"), &u), &u, "is a symbolic link (to d"));
	CHECK(!strcmp(u.path, at("dlink")));
	put("f", 0600);
	CHECK(refused(sefa_vet_dir(at("f"), &u), &u, "is a regular file, not a directory"));
	if (is_root) {
		REQUIRE(!mkdir(at("theirs"), 0700));
		REQUIRE(!chown(at("theirs"), OTHER_UID, OTHER_UID));
		CHECK(refused(sefa_vet_dir(at("theirs"), &u), &u, "belongs to uid 61999"));
		/* sefa_private_dir makes what is absent and refuses what is theirs. */
		CHECK_EQ(sefa_private_dir(at("theirs")), -EPERM);
	}
	CHECK_EQ(sefa_private_dir(at("new/private")), 0);
	CHECK_EQ(sefa_vet_dir(at("new/private"), &u), 0);
}

static void test_parents(void)
{
	struct sefa_unsafe u;

	REQUIRE(!mkdir(at("open"), 0777) && !chmod(at("open"), 0777));
	REQUIRE(!mkdir(at("open/run"), 0700));
	CHECK(refused(sefa_vet_parents(at("open/run"), &u), &u, "not sticky (mode 0777)"));
	/* Sticky, as /tmp: others cannot rename what is ours there. */
	REQUIRE(!chmod(at("open"), 01777));
	CHECK_EQ(sefa_vet_parents(at("open/run"), &u), 0);
	CHECK_EQ(sefa_vet_parents("/tmp/softefa-test-fs-absent", &u), 0);
	REQUIRE(!symlink("open", at("openlink")));
	CHECK_EQ(sefa_vet_parents(at("openlink/run"), &u), 0);
	if (is_root) {
		/* A link on the way made by someone else: they could point it elsewhere. */
		REQUIRE(!lchown(at("openlink"), OTHER_UID, OTHER_UID));
		CHECK(refused(sefa_vet_parents(at("openlink/run"), &u), &u,
		              "is a symbolic link made by uid 61999"));
		REQUIRE(!chmod(at("open"), 0755) && !chown(at("open"), OTHER_UID, OTHER_UID));
		CHECK(refused(sefa_vet_parents(at("open/run"), &u), &u, "belongs to uid 61999"));
	}
}

/* A tree as the library builds one: directories, files, links that stay inside. */
static void make_tree(void)
{
	REQUIRE(!mkdir(at("root"), 0755) && !mkdir(at("root/t"), 0755));
	REQUIRE(!mkdir(at("root/t/a"), 0755) && !mkdir(at("root/t/a/b"), 0755));
	REQUIRE(!mkdir(at("root/counters"), 0755));
	put("root/t/stamp", 0644);
	put("root/t/a/b/board_id", 0644);
	REQUIRE(!symlink("../../a", at("root/t/a/b/up")));
	REQUIRE(!symlink("../../../counters", at("root/t/a/b/counters")));
}

static void test_tree(void)
{
	struct sefa_unsafe u;

	make_tree();
	CHECK_EQ(sefa_vet_tree(at("root"), "t", &u), 0);
	CHECK_EQ(sefa_vet_tree(at("root"), "t/a", &u), 0);
	CHECK_EQ(sefa_vet_tree(at("root"), "gone", &u), -ENOENT);

	/* A FIFO is named, never opened: the walk returns. */
	REQUIRE(!mkfifo(at("root/t/a/b/fifo"), 0644));
	CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "is a FIFO, not a regular file"));
	CHECK(!strcmp(u.path, at("root/t/a/b/fifo")));
	REQUIRE(!unlink(at("root/t/a/b/fifo")));

	/* Out of the root: one ".." too many, or absolute. */
	REQUIRE(!symlink("../../../../x", at("root/t/a/b/out")));
	CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "links out of the tree"));
	REQUIRE(!unlink(at("root/t/a/b/out")));
	REQUIRE(!symlink("/etc/passwd", at("root/t/a/b/out")));
	CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "links out of the tree"));
	REQUIRE(!unlink(at("root/t/a/b/out")));
	/* From the tree's own root, the link into counters leaves it. */
	CHECK(refused(sefa_vet_tree(at("root/t"), "", &u), &u, "links out of the tree"));

	REQUIRE(!chmod(at("root/t/a/b/board_id"), 0666));
	CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "writable by others"));
	REQUIRE(!chmod(at("root/t/a/b/board_id"), 0644));
	REQUIRE(!chmod(at("root/t/a"), 0775));
	CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "writable by others"));
	CHECK(!strcmp(u.path, at("root/t/a")));
	REQUIRE(!chmod(at("root/t/a"), 0755));

	/* A link where sub goes down: refused, not followed. */
	REQUIRE(!symlink("t", at("root/tl")));
	CHECK(refused(sefa_vet_tree(at("root"), "tl/a", &u), &u, "is a symbolic link"));
	if (is_root) {
		REQUIRE(!lchown(at("root/t/a/b/up"), OTHER_UID, OTHER_UID));
		CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "belongs to uid 61999"));
		REQUIRE(!lchown(at("root/t/a/b/up"), 0, 0));
		REQUIRE(!chown(at("root/t/stamp"), OTHER_UID, OTHER_UID));
		CHECK(refused(sefa_vet_tree(at("root"), "t", &u), &u, "belongs to uid 61999"));
		REQUIRE(!chown(at("root/t/stamp"), 0, 0));
	}
	CHECK_EQ(sefa_vet_tree(at("root"), "t", &u), 0);
}

static void test_open_ours(void)
{
	int fd;

	put("plain", 0644);
	fd = sefa_open_ours(at("plain"), O_RDONLY, 0);
	CHECK(fd >= 0);
	/* Asked blocking, given blocking: O_NONBLOCK was only for the open. */
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	if (fd >= 0)
		close(fd);
	REQUIRE(!mkfifo(at("fifo"), 0666));
	CHECK_EQ(sefa_open_ours(at("fifo"), O_RDONLY, 0), -EPERM);
	REQUIRE(!symlink("plain", at("plainlink")));
	CHECK_EQ(sefa_open_ours(at("plainlink"), O_RDONLY, 0), -ELOOP);
	fd = sefa_open_ours(at("made"), O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	put("wide", 0666);
	CHECK_EQ(sefa_open_ours(at("wide"), O_RDONLY, 0), -EPERM);
	if (is_root) {
		REQUIRE(!chown(at("plain"), OTHER_UID, OTHER_UID));
		CHECK_EQ(sefa_open_ours(at("plain"), O_RDONLY, 0), -EPERM);
	}
}

static void test_private_file(void)
{
	struct stat st;
	int fd;

	REQUIRE(!mkdir(at("keys"), 0700));
	fd = sefa_private_file_open(at("keys/secret"), O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(fd >= 0 && !fstat(fd, &st) && (st.st_mode & 0777) == 0600);
	if (fd >= 0)
		close(fd);
	fd = sefa_private_file_open(at("keys/secret"), O_RDONLY, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	/* A secret others may read is no secret, whoever widened it. */
	REQUIRE(!chmod(at("keys/secret"), 0640));
	CHECK_EQ(sefa_private_file_open(at("keys/secret"), O_RDONLY, 0600), -EPERM);
	/* Not private, the rule is only: writable by no one else. */
	fd = sefa_private_file_open(at("keys/secret"), O_RDONLY, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	REQUIRE(!symlink("secret", at("keys/link")));
	CHECK_EQ(sefa_private_file_open(at("keys/link"), O_RDONLY, 0600), -ELOOP);
	REQUIRE(!mkfifo(at("keys/fifo"), 0600));
	CHECK_EQ(sefa_private_file_open(at("keys/fifo"), O_RDONLY, 0600), -EPERM);
	CHECK_EQ(sefa_private_file_open(at("keys/"), O_RDONLY, 0600), -EISDIR);
	/* The directory must vet: writable by others, or a link to one that vets. */
	REQUIRE(!chmod(at("keys"), 0733));
	CHECK_EQ(sefa_private_file_open(at("keys/new"), O_RDWR | O_CREAT, 0600), -EPERM);
	CHECK(access(at("keys/new"), F_OK) && errno == ENOENT);
	REQUIRE(!chmod(at("keys"), 0700));
	REQUIRE(!symlink("keys", at("keylink")));
	CHECK_EQ(sefa_private_file_open(at("keylink/secret"), O_RDONLY, 0600), -EPERM);
}

static void test_rm_tree(void)
{
	REQUIRE(!mkdir(at("keep"), 0755));
	put("keep/precious", 0644);
	REQUIRE(!mkdir(at("doomed"), 0755) && !mkdir(at("doomed/sub"), 0755));
	put("doomed/sub/f", 0644);
	REQUIRE(!mkfifo(at("doomed/sub/fifo"), 0644));
	REQUIRE(!symlink("../../keep", at("doomed/sub/keep")));
	REQUIRE(!symlink(at("keep"), at("doomed/abs")));
	sefa_rm_tree(at("doomed"));
	CHECK(access(at("doomed"), F_OK) && errno == ENOENT);
	CHECK(!access(at("keep/precious"), F_OK));
}

int main(void)
{
	is_root = getuid() == 0;
	REQUIRE(mkdtemp(top));
	test_dir();
	test_parents();
	test_tree();
	test_open_ours();
	test_private_file();
	test_rm_tree();
	sefa_rm_tree(top);
	if (!is_root)
		printf("test_fs: not root, the cases of files of another user were skipped\n");
	return check_report("test_fs");
}
