/* SPDX-License-Identifier: MIT */
/*
 * ThreadSanitizer's annotations, empty in every other build. Used only where a race
 * the sanitizer would report is one the design accepts, with the reason beside it.
 */
#ifndef SOFTEFA_UTIL_TSAN_H
#define SOFTEFA_UTIL_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define SEFA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SEFA_TSAN 1
#endif
#endif

#ifdef SEFA_TSAN
/* Provided by the sanitizer's runtime. */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#define SEFA_TSAN_IGNORE_READS_BEGIN() AnnotateIgnoreReadsBegin(__FILE__, __LINE__)
#define SEFA_TSAN_IGNORE_READS_END()   AnnotateIgnoreReadsEnd(__FILE__, __LINE__)
#else
#define SEFA_TSAN_IGNORE_READS_BEGIN() ((void)0)
#define SEFA_TSAN_IGNORE_READS_END()   ((void)0)
#endif

/*
 * The fences of a seqlock whose other side is always another process (a stats file's
 * writer and its readers): ThreadSanitizer sees neither side, and GCC refuses fences in
 * its builds (-Wtsan), so that one warning is silenced here and nowhere else.
 */
#if defined(SEFA_TSAN) && defined(__GNUC__) && !defined(__clang__)
#define SEFA_FENCE(order)                                                                   \
	do {                                                                                \
		_Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wtsan\"") \
		    __atomic_thread_fence(order);                                           \
		_Pragma("GCC diagnostic pop")                                               \
	} while (0)
#else
#define SEFA_FENCE(order) __atomic_thread_fence(order)
#endif

#endif
