// SPDX-License-Identifier: MIT
/*
 * Object lifetime as rdma-core has it (docs/lifetime.md): ibv_close_device leaves the
 * application's objects to it, detached from the engine; their later destroy calls
 * succeed in any order and touch no freed memory (this test runs under ASan and
 * LeakSanitizer too); the engine is gone with its last context; and teardown called
 * from a signal handler that interrupted a verbs call of the same thread returns
 * instead of waiting for itself.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/util/clock.h"
#include "child.h"
#include "pair.h"
#include "threads.h"

/* The base UDP port a GID names (docs/addressing.md). */
static uint16_t gid_port(const union ibv_gid *g)
{
	return (uint16_t)(g->raw[6] << 8 | g->raw[7]);
}

static bool port_free(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	bool ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The objects of an end whose context is closed, but its PD: each destroy succeeds. */
static void destroy_closed(struct end *e)
{
	if (e->ch)
		CHECK_EQ(ibv_destroy_comp_channel(e->ch), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	if (e->ah)
		CHECK_EQ(ibv_destroy_ah(e->ah), 0);
	CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	free(e->buf);
}

/* libfabric 1.17's failing open: the device is closed, then its PD deallocated. */
static void test_pd_after_close(void)
{
	struct ibv_context *ctx = first_device_open();
	struct ibv_pd *pd;

	REQUIRE(ctx);
	pd = ibv_alloc_pd(ctx);
	REQUIRE(pd);
	CHECK_EQ(ibv_close_device(ctx), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/*
 * Every kind of object alive at close, traffic to it afterwards, and destroys in an
 * order a live context would refuse (PD first, CQ before its QP, channel before its CQ).
 */
static void test_objects_after_close(void)
{
	struct end a = {0}, b = {0};
	struct ibv_wc wc[4];
	uint16_t a_port;

	end_open(&a, 1, 1, 1);
	end_open(&b, 0, 0, 0);
	end_connect(&a, &b);
	end_connect(&b, &a);
	a_port = gid_port(&a.gid);

	/* A working pair first: one message each way. */
	end_post_recv(&a, 0, PAIR_SLOT);
	end_post_recv(&b, 0, PAIR_SLOT);
	memset(end_sslot(&b, 0), 0xab, 64);
	REQUIRE(!end_send(&b, &a, 1, 0, 64, 0, 0));
	CHECK_EQ(poll_n(b.cq, wc, 1), 1);
	CHECK_EQ(poll_n(a.cq, wc, 1), 1);
	CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);

	/* A receive posted and an event armed when the device closes. */
	end_post_recv(&a, 1, PAIR_SLOT);
	REQUIRE(!ibv_req_notify_cq(a.cq, 0));
	memset(end_rslot(&a, 1), 0x11, PAIR_SLOT);
	CHECK_EQ(ibv_close_device(a.ctx), 0);
	/* A second close of a context whose objects keep it: refused, not a crash. */
	CHECK_EQ(ibv_close_device(a.ctx), EINVAL);

	/* The QP is gone from the engine (which b still uses): nothing lands in its
	 * receive buffer, and the sender completes as UD does. */
	REQUIRE(!end_send(&b, &a, 2, 0, 64, 0, 0));
	CHECK_EQ(poll_n(b.cq, wc, 1), 1);
	for (int i = 0; i < 20000; i++)
		ibv_poll_cq(b.cq, 4, wc);
	for (unsigned i = 0; i < PAIR_SLOT; i++)
		if (end_rslot(&a, 1)[i] != 0x11) {
			CHECK(!"a closed context's receive buffer was written");
			break;
		}
	/* The engine stays while b's context is open. */
	CHECK(!port_free(a_port));

	CHECK_EQ(ibv_dealloc_pd(a.pd), 0);
	destroy_closed(&a);
	end_close(&b);
}

/*
 * An event queued on a channel when its context closes names a CQ the application may
 * free right after: the channel hands out nothing more (EIO, as the kernel's event file
 * of a closed context), rather than the freed CQ.
 */
static void test_events_after_close(void)
{
	struct end a = {0};
	struct ibv_wc wc;
	struct ibv_cq *cq;
	void *cq_ctx;

	end_open(&a, 0, 0, 1);
	end_connect(&a, &a);
	REQUIRE(!ibv_req_notify_cq(a.cq, 0));
	end_post_recv(&a, 0, PAIR_SLOT);
	REQUIRE(!end_send(&a, &a, 1, 0, 64, 0, 0));
	CHECK_EQ(poll_n(a.cq, &wc, 1), 1); /* the send; the event is queued by now */
	CHECK_EQ(ibv_close_device(a.ctx), 0);
	CHECK_EQ(ibv_destroy_ah(a.ah), 0);
	CHECK_EQ(ibv_destroy_qp(a.qp), 0);
	CHECK_EQ(ibv_destroy_cq(a.cq), 0);
	errno = 0;
	CHECK_EQ(ibv_get_cq_event(a.ch, &cq, &cq_ctx), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(ibv_destroy_comp_channel(a.ch), 0);
	CHECK_EQ(ibv_dereg_mr(a.mr), 0);
	CHECK_EQ(ibv_dealloc_pd(a.pd), 0);
	free(a.buf);
}

/* A CQ takes a channel of its own context only (another's could go before it). */
static void test_foreign_channel(void)
{
	struct end a = {0}, b = {0};

	end_open(&a, 0, 0, 1);
	end_open(&b, 0, 0, 0);
	errno = 0;
	CHECK(!ibv_create_cq(b.ctx, 16, NULL, a.ch, 0));
	CHECK_EQ(errno, EINVAL);
	end_close(&a);
	end_close(&b);
}

/*
 * The engine's progress thread takes no signal: one meant for the process (Ctrl-C)
 * reaches an application thread, never the engine in the middle of its work.
 */
static void test_progress_thread_signals(void)
{
	struct end a = {0};
	unsigned others, blocking;

	end_open(&a, 0, 0, 0);
	blocking = threads_blocking(1ull << (SIGINT - 1) | 1ull << (SIGTERM - 1), &others);
	CHECK(others >= 1);
	CHECK_EQ(blocking, others);
	end_close(&a);
}

/* The engine (its sockets) goes with the last context, even if objects remain. */
static void test_engine_reclaimed(void)
{
	struct end a = {0};
	uint16_t port;

	end_open(&a, 0, 0, 0);
	port = gid_port(&a.gid);
	CHECK(!port_free(port));
	CHECK_EQ(ibv_close_device(a.ctx), 0);
	CHECK(port_free(port));
	CHECK_EQ(ibv_destroy_qp(a.qp), 0);
	CHECK_EQ(ibv_dereg_mr(a.mr), 0);
	CHECK_EQ(ibv_destroy_cq(a.cq), 0);
	CHECK_EQ(ibv_dealloc_pd(a.pd), 0);
	free(a.buf);
}

struct sleeper {
	struct end *e;
	_Atomic long tid;
	int rc, err;
};

static void *sleep_in_get_cq_event(void *arg)
{
	struct sleeper *s = arg;
	struct ibv_cq *cq;
	void *cq_ctx;

	atomic_store(&s->tid, (long)syscall(SYS_gettid));
	s->rc = ibv_get_cq_event(s->e->ch, &cq, &cq_ctx);
	s->err = errno;
	return NULL;
}

/*
 * A thread asleep in ibv_get_cq_event (where it also watches the device's socket and
 * holds its engine) when the context closes: it returns EIO, and the engine, its
 * port with it, goes once it has (before, it slept on for ever).
 */
static void test_close_under_sleeper(void)
{
	struct end a = {0};
	struct sleeper s = {.e = &a};
	pthread_t t;
	uint16_t port;

	end_open(&a, 0, 0, 1);
	port = gid_port(&a.gid);
	REQUIRE(!ibv_req_notify_cq(a.cq, 0));
	REQUIRE(!pthread_create(&t, NULL, sleep_in_get_cq_event, &s));
	/* Bounded (5 s each): a thread that never sleeps leaves the checks below to tell. */
	for (uint64_t end = sefa_now_ns() + 5000000000ull;
	     sefa_now_ns() < end && !atomic_load(&s.tid);)
		;
	if (atomic_load(&s.tid))
		thread_asleep((int)atomic_load(&s.tid), 5);
	CHECK_EQ(ibv_close_device(a.ctx), 0);
	REQUIRE(!pthread_join(t, NULL));
	CHECK_EQ(s.rc, -1);
	CHECK_EQ(s.err, EIO);
	CHECK(port_free(port));
	destroy_closed(&a);
	CHECK_EQ(ibv_dealloc_pd(a.pd), 0);
}

/* SRD sends in flight to a peer that never answers when the device closes. */
static void test_srd_in_flight(void)
{
	struct ibv_qp_cap cap = {
	    .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = PAIR_QKEY};
	struct ibv_ah_attr aa = {.is_global = 1, .port_num = 1};
	static uint8_t buf[4096];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_ah *ah;

	ctx = first_device_open();
	REQUIRE(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	REQUIRE(pd && cq && mr);
	qp = srd_qp_create(ctx, pd, cq, &cap, 0, NULL);
	REQUIRE(qp);
	REQUIRE(!ibv_modify_qp(qp, &attr,
	                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	attr.qp_state = IBV_QPS_RTR;
	REQUIRE(!ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	attr.qp_state = IBV_QPS_RTS;
	REQUIRE(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
	/* A peer on a port nobody listens on: the sends stay in flight. */
	REQUIRE(!ibv_query_gid(ctx, 1, 0, &aa.grh.dgid));
	aa.grh.dgid.raw[6] ^= 0x40;
	ah = ibv_create_ah(pd, &aa);
	REQUIRE(ah);
	for (int i = 0; i < 8; i++) {
		struct ibv_sge sge = {(uintptr_t)buf, 512, mr->lkey};
		struct ibv_send_wr wr = {.wr_id = (uint64_t)i,
		                         .sg_list = &sge,
		                         .num_sge = 1,
		                         .opcode = IBV_WR_SEND,
		                         .send_flags = IBV_SEND_SIGNALED},
		                   *bad;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 2;
		wr.wr.ud.remote_qkey = PAIR_QKEY;
		CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	}
	CHECK_EQ(ibv_close_device(ctx), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/*
 * exit() from a signal handler that interrupted the thread inside a verbs call, and
 * teardown from an atexit hook as libfabric's does: the process must end at once, the
 * context closed or left to the exit, never waiting for its own locks. Each round is
 * a child process, so the interrupted call never resumes (as after a real exit).
 */
static struct end sig_end;

static void teardown_at_exit(void)
{
	/* libfabric's order: the device first, then what it had made on it. */
	ibv_close_device(sig_end.ctx);
	ibv_destroy_qp(sig_end.qp);
	ibv_dereg_mr(sig_end.mr);
	ibv_destroy_cq(sig_end.cq);
	ibv_dealloc_pd(sig_end.pd);
}

static int sig_fd = -1;

static void on_alarm(int sig)
{
	uint64_t t = sefa_now_ns();

	(void)sig;
	/* Tell the parent when the signal came, then exit as libfabric's handler does. */
	if (write(sig_fd, &t, sizeof(t)) != sizeof(t))
		_exit(4);
	exit(0);
}

static void signal_child(unsigned delay_us)
{
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {.it_value = {0, delay_us}};
	struct ibv_wc wc[4];

	end_open(&sig_end, 0, 0, 0);
	end_connect(&sig_end, &sig_end);
	atexit(teardown_at_exit);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/* Busy in the data path, where the engine and CQ locks are taken. */
	for (unsigned i = 0;; i++) {
		end_post_recv(&sig_end, i % PAIR_SLOTS, PAIR_SLOT);
		end_send(&sig_end, &sig_end, i, i % PAIR_SLOTS, 64, 0, 0);
		for (int k = 0; k < 4; k++)
			ibv_poll_cq(sig_end.cq, 4, wc);
	}
}

/* Each round: the child must be gone within 2 s of its signal, with status 0. */
static void test_exit_in_signal(void)
{
	for (int round = 0; round < 20; round++) {
		unsigned delay = 1000 + (unsigned)(round * 7919) % 20000;
		uint64_t sig_at = 0, gone_at, t0 = sefa_now_ns();
		int status = 0, fd;
		pid_t pid;

		pid = child_fork_piped(&fd);
		REQUIRE(pid >= 0);
		if (pid == 0) {
			sig_fd = fd;
			signal_child(delay);
		}
		/* Bounded wait: a child that hangs is killed and counted. */
		while (waitpid(pid, &status, WNOHANG) == 0) {
			if (sefa_now_ns() - t0 > 20000000000ull) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				break;
			}
			usleep(1000);
		}
		gone_at = sefa_now_ns();
		if (read(fd, &sig_at, sizeof(sig_at)) != sizeof(sig_at))
			sig_at = 0;
		close(fd);
		if (!sig_at || gone_at - sig_at > 2000000000ull || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(
			    stderr,
			    "round %d (signal after %u us): %s, status %#x, gone %.3f s after the "
			    "signal\n",
			    round, delay, sig_at ? "signalled" : "never signalled", status,
			    sig_at ? (double)(gone_at - sig_at) / 1e9 : -1.0);
			CHECK(!"a process did not end within 2 s of exit() in its signal handler");
		}
	}
}

int main(void)
{
	test_pd_after_close();
	test_objects_after_close();
	test_engine_reclaimed();
	test_events_after_close();
	test_close_under_sleeper();
	test_foreign_channel();
	test_progress_thread_signals();
	test_srd_in_flight();
	test_exit_in_signal();
	return check_report("test_lifetime");
}
