// Counting heap calls in a test program, to show that a code path allocates nothing.
// Include in ONE translation unit of a test executable: on glibc without AddressSanitizer
// it defines malloc, calloc and realloc, which count while g_count_allocs is set and
// forward to glibc. Elsewhere COUNT_ALLOCS is 0 and a test should skip (ASan brings its
// own allocator). volatile: the compiler assumes malloc reads no globals and could
// otherwise move the flag's stores across the calls.
#ifndef CCSIM_TEST_HEAP_H
#define CCSIM_TEST_HEAP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

#if !ASAN && defined(__GLIBC__)
#define COUNT_ALLOCS 1
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
static volatile int g_count_allocs, g_allocs;
void *malloc(size_t size) {
  g_allocs += g_count_allocs;
  return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
  g_allocs += g_count_allocs;
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t size) {
  g_allocs += g_count_allocs;
  return __libc_realloc(p, size);
}
#else
#define COUNT_ALLOCS 0
static volatile int g_count_allocs, g_allocs;
#endif

#endif
