#include "rfc3339.h"

#include <stdbool.h>
#include <stdio.h>

int64_t rfc3339_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3u : 9u)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

void rfc3339_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int64_t rfc3339_floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int rfc3339_format(int64_t unix_us, unsigned frac_digits, char *buf, size_t len)
{
	static const int64_t scale[] = { 1000000, 100000, 10000, 1000, 100, 10, 1 };
	if (frac_digits > 6)
		return -1;
	int64_t secs = rfc3339_floor_div(unix_us, 1000000);
	int64_t us = unix_us - secs * 1000000;
	int64_t days = rfc3339_floor_div(secs, 86400);
	int64_t sod = secs - days * 86400;
	int64_t y;
	unsigned m, d;
	rfc3339_civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999)
		return -1;
	int n;
	if (frac_digits == 0)
		n = snprintf(buf, len, "%04d-%02u-%02uT%02d:%02d:%02dZ", (int)y, m, d, (int)(sod / 3600),
			     (int)(sod / 60 % 60), (int)(sod % 60));
	else
		n = snprintf(buf, len, "%04d-%02u-%02uT%02d:%02d:%02d.%0*dZ", (int)y, m, d,
			     (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)frac_digits,
			     (int)(us / scale[frac_digits]));
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* n decimal digits at *p into *out; advances *p. Stops at the first non-digit, so never past a NUL. */
static bool rfc3339_digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/* The character c (or, when alt is not NUL, alt) at *p; advances *p. */
static bool rfc3339_expect(const char **p, char c, char alt)
{
	if (**p == '\0' || (**p != c && (alt == '\0' || **p != alt)))
		return false;
	(*p)++;
	return true;
}

int rfc3339_parse(const char *s, int64_t *unix_us)
{
	static const unsigned mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *p = s;
	int y, mo, d, h, mi, sec;
	if (s == NULL || !rfc3339_digits(&p, 4, &y) || !rfc3339_expect(&p, '-', 0) ||
	    !rfc3339_digits(&p, 2, &mo) || !rfc3339_expect(&p, '-', 0) || !rfc3339_digits(&p, 2, &d) ||
	    !rfc3339_expect(&p, 'T', 't') || !rfc3339_digits(&p, 2, &h) || !rfc3339_expect(&p, ':', 0) ||
	    !rfc3339_digits(&p, 2, &mi) || !rfc3339_expect(&p, ':', 0) || !rfc3339_digits(&p, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59)
		return -1;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (d < 1 || (unsigned)d > mdays[mo - 1] + (mo == 2 && leap))
		return -1;
	int64_t us = 0;
	if (*p == '.') {
		p++;
		int ndigits = 0;
		for (; *p >= '0' && *p <= '9'; p++, ndigits++)
			if (ndigits < 6)
				us = us * 10 + (*p - '0');
		if (ndigits == 0)
			return -1;
		for (int i = ndigits; i < 6; i++)
			us *= 10;
	}
	int64_t offset_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;
		if (!rfc3339_digits(&p, 2, &oh) || !rfc3339_expect(&p, ':', 0) || !rfc3339_digits(&p, 2, &om) ||
		    oh > 23 || om > 59)
			return -1;
		offset_s = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return -1;
	}
	if (*p != '\0')
		return -1;
	int64_t secs = rfc3339_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
		       sec - offset_s;
	*unix_us = secs * 1000000 + us;
	return 0;
}
