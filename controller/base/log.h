/*
 * Structured one-line logs: level=info msg="..." key=value ...
 *
 * Values are quoted when they contain spaces, quotes or '=' so that every line
 * stays machine-parseable. Logs go to stderr; stdout is left for the output a
 * command was asked for (--version, --dry-run actions).
 */
#ifndef DRASHIFT_LOG_H
#define DRASHIFT_LOG_H

typedef enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level_t;

void log_set_level(log_level_t level);
/* Parse "debug", "info", "warn", "error"; returns 0 or -1. */
int log_parse_level(const char *name, log_level_t *out);

/*
 * log_write(LOG_INFO, "connected", "server", url, "version", v, NULL):
 * pairs of key and value follow the message, ended by NULL.
 */
void log_write(log_level_t level, const char *msg, ...) __attribute__((sentinel));

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__, NULL)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__, NULL)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__, NULL)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__, NULL)

#endif
