#include "log.h"
#include "rfc3339.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static log_level_t log_min_level = LOG_INFO;
static const char *const log_level_names[] = { "debug", "info", "warn", "error" };

void log_set_level(log_level_t level)
{
	log_min_level = level;
}

int log_parse_level(const char *name, log_level_t *out)
{
	for (size_t i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); i++) {
		if (strcmp(name, log_level_names[i]) == 0) {
			*out = (log_level_t)i;
			return 0;
		}
	}
	return -1;
}

static bool log_needs_quotes(const char *v)
{
	if (*v == '\0')
		return true;
	return strpbrk(v, " \t\n\"=\\") != NULL;
}

static void log_value(FILE *f, const char *v)
{
	if (v == NULL)
		v = "";
	if (!log_needs_quotes(v)) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

void log_write(log_level_t level, const char *msg, ...)
{
	if (level < log_min_level)
		return;
	char ts[RFC3339_LEN];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (rfc3339_format((int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000, 3, ts, sizeof(ts)) != 0)
		snprintf(ts, sizeof(ts), "1970-01-01T00:00:00.000Z");

	/* Build the line in memory so concurrent writers never interleave it. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return;
	fprintf(f, "time=%s level=%s msg=", ts, log_level_names[level]);
	log_value(f, msg);
	va_list ap;
	va_start(ap, msg);
	for (;;) {
		const char *key = va_arg(ap, const char *);
		if (key == NULL)
			break;
		const char *value = va_arg(ap, const char *);
		fprintf(f, " %s=", key);
		log_value(f, value);
	}
	va_end(ap);
	fputc('\n', f);
	fclose(f);
	fwrite(buf, 1, len, stderr);
	free(buf);
}
