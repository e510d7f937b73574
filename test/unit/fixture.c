#include "fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "xalloc.h"

#ifndef FIXTURES
#error "FIXTURES must name the test/unit/fixtures directory"
#endif

char *fixture_read(const char *relpath, size_t *len)
{
	char *path = xasprintf("%s/%s", FIXTURES, relpath);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open fixture %s", path);
	free(path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	assert_true(size >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	char *buf = xmalloc((size_t)size + 1);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	while (size > 0 && buf[size - 1] == '\n')
		size--;
	buf[size] = '\0';
	*len = (size_t)size;
	return buf;
}

cJSON *fixture_json(const char *relpath)
{
	size_t len;
	char *text = fixture_read(relpath, &len);
	cJSON *obj = cJSON_ParseWithLength(text, len);
	free(text);
	if (obj == NULL)
		fail_msg("fixture %s is not valid JSON", relpath);
	return obj;
}

cJSON *fixture_quoted_json(const char *single_quoted)
{
	char *s = xstrdup(single_quoted);
	for (char *p = s; *p != '\0'; p++) {
		if (*p == '\'')
			*p = '"';
	}
	cJSON *obj = cJSON_Parse(s);
	if (obj == NULL)
		fail_msg("test JSON does not parse: %s", s);
	free(s);
	return obj;
}

void fixture_assert_zeroed(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		if (b[i] != 0)
			fail_msg("byte %zu of %zu is not zero after a failed decode", i, n);
	}
}
