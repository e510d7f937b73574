/* TZif parsing and offsets; see tzif.h. */
#include "tzif.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rfc3339.h"
#include "xalloc.h"

#define TZ_HEADER_LEN 44
#define TZ_MAX_NAME 128
/* RFC 8536: an offset is more than -25 hours and less than 26 hours. */
#define TZ_OFFSET_MIN (-89999)
#define TZ_OFFSET_MAX 93599

static int tz__fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int tz__fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err != NULL && errlen > 0)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t tz__be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t tz__be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)tz__be32(p) << 32 | tz__be32(p + 4));
}

typedef struct {
	size_t isut, isstd, leap, time, type, chars;
} tz__counts_t;

static int tz__header(const uint8_t *p, size_t len, tz__counts_t *c)
{
	if (len < TZ_HEADER_LEN || memcmp(p, "TZif", 4) != 0)
		return -1;
	c->isut = tz__be32(p + 20);
	c->isstd = tz__be32(p + 24);
	c->leap = tz__be32(p + 28);
	c->time = tz__be32(p + 32);
	c->type = tz__be32(p + 36);
	c->chars = tz__be32(p + 40);
	return 0;
}

/* Bytes of a data block whose times are tsize bytes wide (0 when the counts overflow). */
static size_t tz__block_len(const tz__counts_t *c, size_t tsize)
{
	uint64_t n = (uint64_t)c->time * tsize + c->time + (uint64_t)c->type * 6 + c->chars +
		     (uint64_t)c->leap * (tsize + 4) + c->isstd + c->isut;
	return n > SIZE_MAX / 2 ? 0 : (size_t)n;
}

/* ---- the footer: a POSIX TZ string ---- */

static const char *tz__rule_name(const char *s)
{
	if (*s == '<') {
		const char *e = strchr(s, '>');
		return e != NULL && e - s >= 4 ? e + 1 : NULL;
	}
	const char *b = s;
	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
		s++;
	return s - b >= 3 ? s : NULL;
}

static const char *tz__num(const char *s, int min, int max, int *out)
{
	int v = 0, digits = 0;
	while (*s >= '0' && *s <= '9' && digits < 4) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	if (digits == 0 || v < min || v > max)
		return NULL;
	*out = v;
	return s;
}

/* [+-]hh[:mm[:ss]] in seconds; hours up to 167 (RFC 8536's extension). */
static const char *tz__hms(const char *s, int32_t *out)
{
	int sign = 1, h, m = 0, sec = 0;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	if ((s = tz__num(s, 0, 167, &h)) == NULL)
		return NULL;
	if (*s == ':' && ((s = tz__num(s + 1, 0, 59, &m)) == NULL || (*s == ':' && (s = tz__num(s + 1, 0, 59, &sec)) == NULL)))
		return NULL;
	*out = sign * (h * 3600 + m * 60 + sec);
	return s;
}

static const char *tz__rule_date(const char *s, tz_rule_date_t *d)
{
	d->time_s = 2 * 3600;
	if (*s == 'M') {
		d->kind = 'M';
		if ((s = tz__num(s + 1, 1, 12, &d->month)) == NULL || *s != '.' ||
		    (s = tz__num(s + 1, 1, 5, &d->week)) == NULL || *s != '.' ||
		    (s = tz__num(s + 1, 0, 6, &d->weekday)) == NULL)
			return NULL;
	} else if (*s == 'J') {
		d->kind = 'J';
		if ((s = tz__num(s + 1, 1, 365, &d->day)) == NULL)
			return NULL;
	} else {
		d->kind = 'n';
		if ((s = tz__num(s, 0, 365, &d->day)) == NULL)
			return NULL;
	}
	if (*s == '/')
		s = tz__hms(s + 1, &d->time_s);
	return s;
}

static int tz__footer(const char *s, tz_zone_t *z)
{
	int32_t off;
	if ((s = tz__rule_name(s)) == NULL || (s = tz__hms(s, &off)) == NULL)
		return -1;
	if (-off < TZ_OFFSET_MIN || -off > TZ_OFFSET_MAX)
		return -1;
	z->std_off = z->dst_off = -off; /* POSIX counts west of Greenwich */
	z->has_rule = true;
	if (*s == '\0')
		return 0;
	if ((s = tz__rule_name(s)) == NULL)
		return -1;
	z->rule_dst = true;
	z->dst_off = z->std_off + 3600;
	if (*s != ',' && *s != '\0') {
		if ((s = tz__hms(s, &off)) == NULL || -off < TZ_OFFSET_MIN || -off > TZ_OFFSET_MAX)
			return -1;
		z->dst_off = -off;
	}
	/* tzdata always writes the rule; POSIX leaves a missing one to the implementation: refused. */
	if (*s != ',' || (s = tz__rule_date(s + 1, &z->dst_start)) == NULL || *s != ',' ||
	    (s = tz__rule_date(s + 1, &z->dst_end)) == NULL)
		return -1;
	return *s == '\0' ? 0 : -1;
}

/* ---- parsing ---- */

void tz_free(tz_zone_t *z)
{
	free(z->times);
	free(z->offsets);
	memset(z, 0, sizeof(*z));
}

static int tz__parse(const uint8_t *data, size_t len, tz_zone_t *z, char *err, size_t errlen)
{
	tz__counts_t c;
	if (tz__header(data, len, &c) != 0)
		return tz__fail(err, errlen, "not a TZif file");
	size_t tsize = 4, off = TZ_HEADER_LEN;
	bool v2 = data[4] >= '2';
	if (v2) {
		size_t v1 = tz__block_len(&c, 4);
		if (v1 == 0 && (c.time | c.type | c.chars | c.leap | c.isstd | c.isut) != 0)
			return tz__fail(err, errlen, "TZif counts overflow");
		if (len - off < v1 || tz__header(data + off + v1, len - off - v1, &c) != 0)
			return tz__fail(err, errlen, "TZif version 2 header missing");
		off += v1 + TZ_HEADER_LEN;
		tsize = 8;
	}
	size_t block = tz__block_len(&c, tsize);
	if (c.type == 0 || block == 0 || len - off < block)
		return tz__fail(err, errlen, "TZif data truncated");
	const uint8_t *times = data + off, *idx = times + c.time * tsize, *types = idx + c.time;
	int32_t *type_off = xcalloc(c.type, sizeof(int32_t));
	for (size_t i = 0; i < c.type; i++) {
		type_off[i] = (int32_t)tz__be32(types + i * 6);
		if (type_off[i] < TZ_OFFSET_MIN || type_off[i] > TZ_OFFSET_MAX || types[i * 6 + 4] > 1) {
			free(type_off);
			return tz__fail(err, errlen, "TZif local time type %zu invalid", i);
		}
	}
	z->initial = type_off[0];
	z->times = xcalloc(c.time + 1, sizeof(int64_t));
	z->offsets = xcalloc(c.time + 1, sizeof(int32_t));
	z->n = c.time;
	for (size_t i = 0; i < c.time; i++) {
		z->times[i] = tsize == 8 ? tz__be64(times + i * 8) : (int64_t)(int32_t)tz__be32(times + i * 4);
		if (idx[i] >= c.type || (i > 0 && z->times[i] <= z->times[i - 1])) {
			free(type_off);
			return tz__fail(err, errlen, "TZif transition %zu invalid", i);
		}
		z->offsets[i] = type_off[idx[i]];
	}
	free(type_off);
	off += block;
	if (!v2 || off >= len)
		return 0;
	/* The footer: "\n" rule "\n"; an empty rule leaves the last offset in force. */
	const char *f = (const char *)data + off;
	size_t flen = len - off;
	const char *nl = flen > 1 && f[0] == '\n' ? memchr(f + 1, '\n', flen - 1) : NULL;
	if (nl == NULL || (size_t)(nl - f) > TZ_MAX_NAME)
		return tz__fail(err, errlen, "TZif footer malformed");
	char rule[TZ_MAX_NAME + 1];
	memcpy(rule, f + 1, (size_t)(nl - f - 1));
	rule[nl - f - 1] = '\0';
	if (rule[0] != '\0' && tz__footer(rule, z) != 0)
		return tz__fail(err, errlen, "TZif footer rule not understood");
	return 0;
}

int tz_parse(const uint8_t *data, size_t len, tz_zone_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (data == NULL || tz__parse(data, len, out, err, errlen) != 0) {
		if (data == NULL)
			tz__fail(err, errlen, "no data");
		tz_free(out);
		return -1;
	}
	return 0;
}

/* ---- offsets ---- */

static bool tz__leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* The local midnight (as seconds of local "wall" time since the epoch) of a rule date in year y. */
static int64_t tz__rule_day(const tz_rule_date_t *d, int64_t y)
{
	int64_t jan1 = rfc3339_days_from_civil(y, 1, 1);
	if (d->kind == 'J')
		return (jan1 + d->day - 1 + (tz__leap(y) && d->day >= 60)) * 86400;
	if (d->kind == 'n')
		return (jan1 + d->day) * 86400;
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int64_t first = rfc3339_days_from_civil(y, (unsigned)d->month, 1);
	int wd1 = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
	int day = 1 + (d->weekday - wd1 + 7) % 7 + (d->week - 1) * 7;
	int len = mdays[d->month - 1] + (d->month == 2 && tz__leap(y));
	while (day > len)
		day -= 7;
	return (first + day - 1) * 86400;
}

/* The UTC instants DST starts and ends in year y. */
static void tz__rule_year(const tz_zone_t *z, int64_t y, int64_t *start, int64_t *end)
{
	*start = tz__rule_day(&z->dst_start, y) + z->dst_start.time_s - z->std_off;
	*end = tz__rule_day(&z->dst_end, y) + z->dst_end.time_s - z->dst_off;
}

static int64_t tz__year_of(int64_t t)
{
	int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400), y;
	unsigned m, d;
	rfc3339_civil_from_days(days, &y, &m, &d);
	return y;
}

static int32_t tz__rule_offset(const tz_zone_t *z, int64_t t)
{
	if (!z->rule_dst)
		return z->std_off;
	int64_t start, end;
	tz__rule_year(z, tz__year_of(t), &start, &end);
	bool dst = start < end ? (t >= start && t < end) : (t < end || t >= start);
	return dst ? z->dst_off : z->std_off;
}

/* Transitions are searched by bisection: the last one at or before t, or -1. */
static ptrdiff_t tz__last_at_or_before(const tz_zone_t *z, int64_t t)
{
	size_t lo = 0, hi = z->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->times[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

int32_t tz_offset(const tz_zone_t *z, int64_t t)
{
	ptrdiff_t i = tz__last_at_or_before(z, t);
	if (i < 0)
		return z->n > 0 || !z->has_rule ? z->initial : tz__rule_offset(z, t);
	if ((size_t)i == z->n - 1 && z->has_rule)
		return tz__rule_offset(z, t);
	return z->offsets[i];
}

int64_t tz_next_change(const tz_zone_t *z, int64_t t)
{
	ptrdiff_t i = tz__last_at_or_before(z, t);
	if ((size_t)(i + 1) < z->n)
		return z->times[i + 1];
	if (!z->has_rule || !z->rule_dst)
		return INT64_MAX;
	int64_t best = INT64_MAX, y = tz__year_of(t);
	for (int64_t k = y - 1; k <= y + 1; k++) {
		int64_t start, end;
		tz__rule_year(z, k, &start, &end);
		if (start > t && start < best)
			best = start;
		if (end > t && end < best)
			best = end;
	}
	return best;
}

bool tz_valid_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > TZ_MAX_NAME || name[0] == '/' || name[n - 1] == '/')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '-' || c == '+' || c == '/' || c == '.';
		if (!ok || (c == '/' && name[i + 1] == '/'))
			return false;
		/* No "." or ".." component: the name stays inside the zoneinfo. */
		if (c == '.' && (i == 0 || name[i - 1] == '/'))
			return false;
	}
	return true;
}
