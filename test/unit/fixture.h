/*
 * The unit tests' one way to read test/unit/fixtures/ (FIXTURES, an absolute
 * path set by the build) and to write JSON inline. A missing or broken
 * fixture fails the test that asked for it.
 */
#ifndef DRASHIFT_TEST_FIXTURE_H
#define DRASHIFT_TEST_FIXTURE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * The bytes of FIXTURES/relpath, NUL-terminated, without trailing newlines
 * (a watch line reaches the decoders without its "\n"). Free it.
 */
char *fixture_read(const char *relpath, size_t *len);
/* FIXTURES/relpath parsed as JSON. cJSON_Delete it. */
cJSON *fixture_json(const char *relpath);
/* JSON written with single quotes for readability: {'a':1} -> {"a":1}. cJSON_Delete it. */
cJSON *fixture_quoted_json(const char *single_quoted);
/* Fail the test unless the n bytes at p are zero: the promise of a decoder that refused its input. */
void fixture_assert_zeroed(const void *p, size_t n);

#endif
