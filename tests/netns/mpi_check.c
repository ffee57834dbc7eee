/* SPDX-License-Identifier: MIT */
/*
 * An MPI job that checks every byte it moves: a token ring, a ring of large buffers
 * (MPI_Sendrecv to the right, from the left) and MPI_Allreduce of int64 vectors whose
 * sum is known, at 8 B to 4 MiB. Rounds repeat until --seconds have passed (rank 0
 * decides, so every rank runs the same number), at least once; with --after FILE the
 * seconds count from when FILE or FILE.why appears (a fault injected mid-run: the job
 * goes on that long under it, however late it came), AFTER_MAX_S from the start at the
 * latest when neither does. Rank 0 prints one line,
 * "rounds R ranks N bytes B errors E", and every rank exits 1 when any check failed
 * anywhere: the namespace MPI test (tests/netns/mpi_suite.sh) runs it across hosts.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BYTES   (4u << 20)
#define AFTER_MAX_S 60.0

static const size_t sizes[] = {8, 1024, 8192, 65536, 262144, 1u << 20, MAX_BYTES};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* The byte at offset i of what rank `src` sends in round r at size s. */
static uint8_t pattern(int src, long r, size_t s, size_t i)
{
	uint64_t x =
	    (uint64_t)src * 0x9e3779b97f4a7c15ull ^ (uint64_t)r * 0xbf58476d1ce4e5b9ull ^ s;

	x += i * 0x94d049bb133111ebull;
	return (uint8_t)(x >> 56 ^ x >> 29 ^ i);
}

struct job {
	int rank, n;
	long round;
	uint8_t *out, *in;
	int64_t *vec, *sum;
	uint64_t bytes, errors;
};

/* A token goes round the ring once; every rank adds rank + 1 to it. */
static void token_ring(struct job *j)
{
	int right = (j->rank + 1) % j->n, left = (j->rank + j->n - 1) % j->n;
	long tok = 0;

	if (j->n < 2)
		return;
	if (j->rank == 0) {
		tok = 1;
		MPI_Send(&tok, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
		MPI_Recv(&tok, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (tok != (long)j->n * (j->n + 1) / 2) {
			fprintf(stderr, "round %ld: the token came back as %ld, not %ld\n",
			        j->round, tok, (long)j->n * (j->n + 1) / 2);
			j->errors++;
		}
	} else {
		MPI_Recv(&tok, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		tok += j->rank + 1;
		MPI_Send(&tok, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
	}
}

/* Every rank sends s bytes to its right and checks the s bytes from its left. */
static void buffer_ring(struct job *j, size_t s)
{
	int right = (j->rank + 1) % j->n, left = (j->rank + j->n - 1) % j->n;
	size_t i, bad = 0;

	for (i = 0; i < s; i++)
		j->out[i] = pattern(j->rank, j->round, s, i);
	memset(j->in, 0, s);
	MPI_Sendrecv(j->out, (int)s, MPI_BYTE, right, 2, j->in, (int)s, MPI_BYTE, left, 2,
	             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < s; i++)
		bad += j->in[i] != pattern(left, j->round, s, i);
	if (bad) {
		fprintf(stderr, "rank %d round %ld: %zu of %zu bytes from rank %d wrong\n", j->rank,
		        j->round, bad, s, left);
		j->errors++;
	}
	j->bytes += s;
}

/* Element k of rank r is r * len + k + round, so the sum is known at every k. */
static void allreduce(struct job *j, size_t s)
{
	size_t len = s / sizeof(int64_t), k, bad = 0;
	int64_t n = j->n;

	for (k = 0; k < len; k++)
		j->vec[k] = (int64_t)j->rank * (int64_t)len + (int64_t)k + j->round;
	MPI_Allreduce(j->vec, j->sum, (int)len, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (k = 0; k < len; k++)
		bad += j->sum[k] != (int64_t)len * n * (n - 1) / 2 + n * ((int64_t)k + j->round);
	if (bad) {
		fprintf(stderr, "rank %d round %ld: allreduce of %zu B wrong at %zu elements\n",
		        j->rank, j->round, s, bad);
		j->errors++;
	}
	j->bytes += s;
}

/* Has the file that --after waits for, or its .why, appeared? */
static int appeared(const char *file)
{
	char why[4096];

	snprintf(why, sizeof(why), "%s.why", file);
	return access(file, F_OK) == 0 || access(why, F_OK) == 0;
}

/* Rank 0 decides for all (the others' view of the file and clock is not asked). */
static int go_on(int rank, double *t0, double seconds, const char **after)
{
	double now = MPI_Wtime();
	int more;

	if (rank == 0 && *after && appeared(*after)) {
		*after = NULL; /* from now on, the seconds count */
		*t0 = now;
	}
	more = *after ? now - *t0 < AFTER_MAX_S : now - *t0 < seconds;

	MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return more;
}

int main(int argc, char **argv)
{
	struct job j = {0};
	double seconds = 0, t0;
	const char *after = NULL;
	uint64_t errors = 0, bytes = 0;
	size_t i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &j.n);
	if (argc >= 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	if (argc == 5 && !strcmp(argv[3], "--after"))
		after = argv[4];
	j.out = malloc(MAX_BYTES);
	j.in = malloc(MAX_BYTES);
	j.vec = malloc(MAX_BYTES);
	j.sum = malloc(MAX_BYTES);
	if (!j.out || !j.in || !j.vec || !j.sum) {
		fprintf(stderr, "rank %d: out of memory\n", j.rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	t0 = MPI_Wtime();
	do {
		token_ring(&j);
		for (i = 0; i < NSIZES; i++) {
			buffer_ring(&j, sizes[i]);
			allreduce(&j, sizes[i]);
		}
		j.round++;
	} while (go_on(j.rank, &t0, seconds, &after));
	MPI_Allreduce(&j.errors, &errors, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&j.bytes, &bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (j.rank == 0)
		printf("rounds %ld ranks %d bytes %llu errors %llu\n", j.round, j.n,
		       (unsigned long long)bytes, (unsigned long long)errors);
	MPI_Finalize();
	return errors ? 1 : 0;
}
