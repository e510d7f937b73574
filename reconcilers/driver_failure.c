#include "driver_failure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "handover.h"
#include "projection.h"
#include "xalloc.h"

static const char *const driver_failure_class_names[DRIVER_FAILURE_CLASSES] = {
	[DRIVER_FAILURE_RETRYABLE] = "retryable",
	[DRIVER_FAILURE_PERMANENT] = "permanent",
	[DRIVER_FAILURE_CLEANUP] = "needsCleanup",
};

const char *driver_failure_class_name(driver_failure_class_t c)
{
	return (size_t)c < DRIVER_FAILURE_CLASSES ? driver_failure_class_names[c] : "unknown";
}

/* "DRA driver <driver> is not registered" somewhere in message, for exactly this driver. */
static bool driver_failure_names_unregistered(const char *message, const char *driver)
{
	static const char head[] = "DRA driver ", tail[] = " is not registered";
	size_t dl = strlen(driver);
	for (const char *p = strstr(message, head); p != NULL; p = strstr(p + 1, head)) {
		const char *name = p + sizeof(head) - 1;
		if (strncmp(name, driver, dl) == 0 && strncmp(name + dl, tail, sizeof(tail) - 1) == 0)
			return true;
	}
	return false;
}

driver_report_t driver_failure_read(const char *message, const char *driver)
{
	if (message == NULL)
		return DRIVER_REPORT_OTHER;
	if (driver != NULL && driver[0] != '\0' && driver_failure_names_unregistered(message, driver))
		return DRIVER_REPORT_NOT_REGISTERED;
	const char *rpc = strstr(message, "NodePrepareResources");
	if (rpc == NULL)
		return DRIVER_REPORT_OTHER;
	/* gRPC's status text: "rpc error: code = DeadlineExceeded desc = context deadline exceeded". */
	if (strstr(rpc, "code = DeadlineExceeded") != NULL)
		return DRIVER_REPORT_DEADLINE;
	return DRIVER_REPORT_PREPARE_FAILED;
}

static void driver_failure_say(char *buf, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Append to buf, truncating (the line is for people; the counts come first). */
static void driver_failure_say(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = (size_t)n < cap - *len ? *len + (size_t)n : cap - 1;
}

void driver_failure_decide(const driver_failure_node_t *in, driver_failure_decision_t *out)
{
	memset(out, 0, sizeof(*out));
	/* The kubelet withdraws an absent driver's slices itself, after its wiping delay: only then are they stale. */
	bool away = in->not_registered > 0;
	bool stale = away && in->slices_present && in->now_ms - in->not_registered_since_ms >= DRIVER_FAILURE_WIPE_DELAY_MS;
	out->in[DRIVER_FAILURE_RETRYABLE] = in->deadline > 0 || (away && !stale);
	out->in[DRIVER_FAILURE_PERMANENT] = in->prepare_failed > 0;
	out->in[DRIVER_FAILURE_CLEANUP] = stale || in->stuck_claims > 0;

	char what[512];
	size_t len = 0;
	what[0] = '\0';
	if (in->prepare_failed > 0)
		driver_failure_say(what, sizeof(what), &len, "; permanent: the driver failed NodePrepareResources %u time(s)", in->prepare_failed);
	if (stale)
		driver_failure_say(what, sizeof(what), &len, "; needsCleanup: the driver is not registered but its ResourceSlices for the node "
				   "remain (stale): restart the driver or delete them");
	if (in->stuck_claims > 0)
		driver_failure_say(what, sizeof(what), &len, "; needsCleanup: %u deleted claim(s) still held by %s: the pods holding them must "
				   "be unprepared (restart the driver) or removed by a person",
				   in->stuck_claims, PROJECTION_CLAIM_FINALIZER);
	if (in->deadline > 0)
		driver_failure_say(what, sizeof(what), &len, "; retryable: NodePrepareResources timed out (DeadlineExceeded) %u time(s)", in->deadline);
	if (away && !stale)
		driver_failure_say(what, sizeof(what), &len,
				   "; retryable: the driver is not registered (%u report(s)); %s: pods prepare once it "
				   "registers again",
				   in->not_registered,
				   in->slices_present ? "the kubelet withdraws its slices 30 s after it went"
						      : "its slices are withdrawn");
	if (len == 0)
		return;

	bool quarantine = out->in[DRIVER_FAILURE_PERMANENT] && in->dra_owned && !in->quarantined;
	const char *fate = in->quarantined	  ? "; quarantined"
			   : quarantine		  ? "; quarantining: cordon, leave out of the pool's progress"
			   : out->in[DRIVER_FAILURE_PERMANENT] ? "; not quarantined: the driver does not own the node"
							       : "";
	out->message = xasprintf("%s%s%s", in->node, what, fate);
	if (!quarantine)
		return;

	cJSON *patch = cJSON_CreateObject();
	cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
	char *why = xasprintf("%s (lift once the driver is fixed and the breach acknowledged: kubectl annotate node "
			      "%s %s-)",
			      what + 2, in->node, DRIVER_FAILURE_ANN_QUARANTINE);
	cJSON_AddStringToObject(ann, DRIVER_FAILURE_ANN_QUARANTINE, why);
	free(why);
	if (!in->unschedulable) {
		/* Leave what you found: only a cordon drashift made is marked as drashift's. */
		cJSON_AddStringToObject(ann, HANDOVER_ANN_CORDONED, "true");
		cJSON_AddBoolToObject(cJSON_AddObjectToObject(patch, "spec"), "unschedulable", true);
	}
	out->patch = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	if (out->patch == NULL)
		abort();
}

void driver_failure_decision_free(driver_failure_decision_t *d)
{
	free(d->patch);
	free(d->message);
	memset(d, 0, sizeof(*d));
}
