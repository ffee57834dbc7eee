/* SPDX-License-Identifier: MIT */
/*
 * IMB-like MPI loops for bench/mpi.sh: PingPong (ranks 0 and 1; the others wait in a
 * barrier, as IMB's do), Sendrecv (every rank to its right, from its left) and
 * Allreduce (MPI_SUM of floats) at 8 B to 4 MiB (the sizes[] up to --max). For each
 * size, a few untimed rounds and a few timed to learn the cost, then as many as fit in
 * --budget seconds (--min-iters, default 10, to 100000), each timed. With --cap
 * SECONDS a size's timed loop also ends once it has run that long and a fifth of
 * --min-iters (a p99 from 1,000 still has 200), or three times that long whatever it
 * ran (looked at every 16 iterations, between timed ones): under loss a transport
 * stuck in retransmission backoffs must not hold the run for minutes. One line per
 * size on stdout:
 *   BENCH RANKS BYTES ITERS AVG_US P50_US P99_US
 * ITERS is how many ran; PingPong's times are half a round trip (IMB's convention),
 * the others one call; AVG is the mean over ranks of each rank's mean, P50 and P99
 * rank 0's (with fewer than 100 iterations, P99 is the slowest: a p99 needs a few
 * hundred, --min-iters).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITERS 100000
#define CAP_EVERY 16 /* iterations between looks at --cap */

static const long sizes[] = {8, 64, 512, 4096, 8192, 32768, 262144, 1l << 20, 4l << 20};

enum bench { PINGPONG, SENDRECV, ALLREDUCE };
static const char *const names[] = {"PingPong", "Sendrecv", "Allreduce"};

struct ctx {
	int rank, n;
	char *a, *b;
	double *t;     /* this rank's time of each iteration */
	double budget; /* seconds a size's timed loop should take */
	double cap;    /* ... and may take at most (0: no bound) */
	int min_iters; /* it runs at least this many, the cap permitting */
};

static void once(struct ctx *c, enum bench which, int bytes)
{
	int right = (c->rank + 1) % c->n, left = (c->rank + c->n - 1) % c->n;

	switch (which) {
	case PINGPONG:
		if (c->rank == 0) {
			MPI_Send(c->a, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(c->b, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (c->rank == 1) {
			MPI_Recv(c->b, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(c->a, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
		break;
	case SENDRECV:
		MPI_Sendrecv(c->a, bytes, MPI_BYTE, right, 0, c->b, bytes, MPI_BYTE, left, 0,
		             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		break;
	case ALLREDUCE:
		MPI_Allreduce(c->a, c->b, bytes / (int)sizeof(float), MPI_FLOAT, MPI_SUM,
		              MPI_COMM_WORLD);
		break;
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/*
 * How many iterations fill the budget, every rank running the same number. Rank 0
 * times rounds of 1, 2, 4, ... iterations until a round takes a twentieth of the
 * budget: under loss one iteration in twenty may take a hundred times the others, and
 * a few quick ones would promise a run many times the budget.
 */
static int iterations(struct ctx *c, enum bench which, int bytes)
{
	double budget = c->budget;
	int i, k, iters = 0, more = 1;
	double t0, per = 0;

	for (i = 0; i < 3; i++)
		once(c, which, bytes);
	for (k = 1; more; k *= 2) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (i = 0; i < k; i++)
			once(c, which, bytes);
		if (c->rank == 0) {
			per = (MPI_Wtime() - t0) / k;
			more = per * k < budget / 20 && k < MAX_ITERS;
		}
		MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	if (c->rank == 0) {
		double want = per > 0 ? budget / per : MAX_ITERS;

		iters = want < c->min_iters ? c->min_iters
		        : want > MAX_ITERS  ? MAX_ITERS
		                            : (int)want;
	}
	MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return iters;
}

/* Whether the timed loop goes on after iteration `done`: every rank must stop at the
 * same one, so rank 0 decides, every CAP_EVERY iterations, between timed iterations
 * (its message may still be on its way when the next one begins). */
static int go_on(const struct ctx *c, int done, double start)
{
	int more = 0;

	if (c->cap <= 0 || done % CAP_EVERY)
		return 1;
	if (c->rank == 0) {
		double took = MPI_Wtime() - start;

		more = took < c->cap || (done < c->min_iters / 5 && took < 3 * c->cap);
	}
	MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return more;
}

static void measure(struct ctx *c, enum bench which, int bytes)
{
	int i, iters = iterations(c, which, bytes);
	double half = which == PINGPONG ? 0.5 : 1.0, start, mine = 0, sum = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	start = MPI_Wtime();
	for (i = 0; i < iters && (i == 0 || go_on(c, i, start)); i++) {
		double t0 = MPI_Wtime();

		once(c, which, bytes);
		c->t[i] = (MPI_Wtime() - t0) * half * 1e6;
		mine += c->t[i];
	}
	iters = i;
	mine /= iters;
	if (which == PINGPONG && c->rank > 1)
		mine = 0;
	MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (c->rank != 0)
		return;
	qsort(c->t, (size_t)iters, sizeof(double), cmp_double);
	printf("%s %d %d %d %.2f %.2f %.2f\n", names[which], c->n, bytes, iters,
	       sum / (which == PINGPONG ? 2 : c->n), c->t[iters / 2], c->t[iters * 99 / 100]);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct ctx c = {.budget = 0.25, .min_iters = 10};
	long max = 4l << 20;
	int i, w;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.n);
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--max"))
			max = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--budget"))
			c.budget = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--min-iters"))
			c.min_iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--cap"))
			c.cap = atof(argv[i + 1]);
	}
	if (c.n < 2 || max < 8 || max > (1l << 30) || c.budget <= 0 || c.min_iters < 1 ||
	    c.min_iters > MAX_ITERS || c.cap < 0) {
		if (c.rank == 0)
			fprintf(stderr, "usage: mpi_bench [--max BYTES] [--budget SECONDS] "
			                "[--min-iters N] [--cap SECONDS], on 2 or more ranks\n");
		MPI_Finalize();
		return 2;
	}
	c.a = calloc(1, (size_t)max);
	c.b = calloc(1, (size_t)max);
	c.t = calloc(MAX_ITERS, sizeof(double));
	if (!c.a || !c.b || !c.t)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (w = PINGPONG; w <= ALLREDUCE; w++)
		for (i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])) && sizes[i] <= max; i++)
			measure(&c, (enum bench)w, (int)sizes[i]);
	MPI_Finalize();
	return 0;
}
