/* SPDX-License-Identifier: MIT */
/*
 * SOFTEFA_TRACE=FILE: every datagram the process's engines send and receive, in a
 * classic pcap file (docs/trace.md). One file per process, shared by all its engines:
 * each record carries real IPv4 and UDP headers, so the devices' traffic is told apart
 * by address and port as on a wire. A "%p" in FILE stands for the process id.
 *
 * The data path only copies a record into a memory buffer under a short lock; a
 * thread of the trace's own writes the buffer to the file, so a slow disk costs
 * records (counted, and said when the process ends), never the data path's time.
 */
#ifndef SOFTEFA_NET_TRACE_H
#define SOFTEFA_NET_TRACE_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/uio.h>

#include "../util/config.h"

struct net_trace;

/*
 * The process's trace: opened by the first engine when cfg->trace names a file, the
 * same for every engine after; each engine that gets it puts it back (net_trace_put). NULL when tracing is off, or the file cannot be used
 * (said once on stderr: not a regular file of ours, a symbolic link, in use by
 * another process, ...). Thread-safe.
 */
struct net_trace *net_trace_get(const struct sefa_config *cfg);

/*
 * Records one datagram, the bytes of iov[0..niov) end to end, as sent from src to dst
 * (a datagram larger than UDP allows is cut to 65507 bytes). Never blocks on the file;
 * when the buffer is full the record is lost and counted. Thread-safe.
 */
void net_trace_dgram(struct net_trace *t, const struct sockaddr_in *src,
                     const struct sockaddr_in *dst, const struct iovec *iov, size_t niov);

/*
 * An engine done with the trace (t may be NULL): what is buffered goes to the file
 * (its traffic is in the file once its device is closed), and after the last engine
 * the writer thread is stopped and joined. The file stays open: a later net_trace_get
 * appends to it. Bounded, as teardown is (docs/lifetime.md): the writer is waited for
 * at most a second, and nothing is done from a signal handler that interrupted
 * net_trace_dgram on this thread.
 */
void net_trace_put(struct net_trace *t);

#endif
