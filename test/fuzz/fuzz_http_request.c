/*
 * libFuzzer target for the request-head parser of controller/http_server.c,
 * the one decoder of untrusted bytes in the probe and metrics server.
 *
 * Beyond memory safety (the input is copied into an allocation of exactly
 * its size, so ASan catches any read past the end), it checks the
 * properties the server relies on, aborting when one fails:
 *   - a complete head is never longer than the input, and every pointer
 *     the parser hands back lies inside the head;
 *   - the path is a prefix of the target's path part and has no '?';
 *   - the result depends only on the head: every strict prefix of a
 *     complete head is "incomplete" (so the server, which parses as bytes
 *     arrive, can never reject a request it would accept whole), and the
 *     head alone parses to the same length;
 *   - an error, once seen, stays an error as more bytes arrive.
 *
 * CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
 * meson compile -C build-fuzz test/fuzz/fuzz_http_request
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_server.h"

#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz_http_request: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                         \
		}                                                                        \
	} while (0)

static void check_inside(const char *p, size_t n, const char *buf, size_t len)
{
	CHECK(p >= buf && n <= len && (size_t)(p - buf) <= len - n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The server never parses more than this; larger inputs only slow the fuzzer down. */
	if (size > 2 * HTTP_SERVER_MAX_HEAD)
		return 0;
	char *buf = malloc(size ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);

	http_server_request_t req;
	int rc = http_server_parse_request(buf, size, &req);
	CHECK(rc == HTTP_SERVER_PARSE_INCOMPLETE || rc == HTTP_SERVER_PARSE_BAD ||
		rc == HTTP_SERVER_PARSE_BAD_VERSION || rc > 0);

	if (rc > 0) {
		size_t head = (size_t)rc;
		CHECK(head <= size);
		CHECK(buf[head - 1] == '\n');
		CHECK(req.method_len > 0 && req.target_len > 0);
		check_inside(req.method, req.method_len, buf, head);
		check_inside(req.target, req.target_len, buf, head);
		check_inside(req.path, req.path_len, req.target, req.target_len);
		CHECK(memchr(req.path, '?', req.path_len) == NULL);
		CHECK(req.path_len == 0 || req.path[0] == '/');
		CHECK(req.version_minor >= 0 && req.version_minor <= 9);
		if (req.host != NULL)
			check_inside(req.host, req.host_len, buf, head);
		CHECK(req.version_minor == 0 || req.host != NULL);

		http_server_request_t again;
		CHECK(http_server_parse_request(buf, head, &again) == rc);
		CHECK(again.method == req.method && again.method_len == req.method_len);
		CHECK(again.target == req.target && again.target_len == req.target_len);
		CHECK(again.path == req.path && again.path_len == req.path_len);
		CHECK(again.host == req.host && again.host_len == req.host_len);
		CHECK(again.version_minor == req.version_minor && again.header_count == req.header_count);
		/* A few strict prefixes, not all: keep each run fast. */
		size_t cuts[] = { head - 1, head / 2, head / 3, 1, 0 };
		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			char *prefix = malloc(cuts[i] ? cuts[i] : 1);
			if (prefix == NULL)
				break;
			memcpy(prefix, buf, cuts[i]);
			CHECK(http_server_parse_request(prefix, cuts[i], &again) == HTTP_SERVER_PARSE_INCOMPLETE);
			free(prefix);
		}
	} else if (rc < 0 && size < 2 * HTTP_SERVER_MAX_HEAD) {
		/* One more byte cannot make an invalid head valid. */
		char *longer = malloc(size + 1);
		if (longer != NULL) {
			memcpy(longer, buf, size);
			longer[size] = '\n';
			CHECK(http_server_parse_request(longer, size + 1, &req) == rc);
			free(longer);
		}
	}
	free(buf);
	return 0;
}
