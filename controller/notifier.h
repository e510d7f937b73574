/*
 * Delivering a plan's notifications to its webhooks
 * (spec.notifications.webhooks; what is notified, and the body, are decided
 * in reconcilers/notify.h).
 *
 * Never in the reconcile's way: notifier_send() copies the body into the
 * webhook's queue and returns; the POST starts on a later turn of the loop,
 * through libcurl on the loop as every API request (controller/kube/kube_http.h:
 * one client per webhook). Bounded:
 *   - one notification in flight per webhook, in the order they were queued;
 *   - each within the webhook's timeout, retries included: 429, 5xx and
 *     transport errors are retried with jittered exponential backoff
 *     (0.2 s doubling to 5 s); another answer is final;
 *   - at most NOTIFIER_QUEUE_MAX waiting per webhook: a full queue drops its
 *     oldest notification, logged and counted (result "dropped").
 * Counted on /metrics: drashift_notifications_total{plan,webhook,event,result}
 * (delivered, failed, dropped), drashift_notification_attempts_total
 * {plan,webhook,code} (code "error" for a transport error: more attempts than
 * notifications are retries), drashift_notification_queue{plan,webhook}.
 *
 * A URL is never logged nor shown in a metric (it may carry a token): logs
 * name the webhook and the URL's host.
 *
 * Not durable: what is queued or in flight when the process stops is lost.
 * Nothing is sent twice for that either: the changes notified are those of
 * the plan's status, and a new process (or leader) starts from the status
 * that recorded them.
 */
#ifndef DRASHIFT_NOTIFIER_H
#define DRASHIFT_NOTIFIER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "metrics.h"
#include "plan.h"

#define NOTIFIER_QUEUE_MAX 64
/* Largest answer read from a webhook (the rest is an error): receivers say "ok". */
#define NOTIFIER_MAX_ANSWER (64 * 1024)

typedef struct notifier notifier_t;

notifier_t *notifier_new(uv_loop_t *loop);
void notifier_set_metrics(notifier_t *n, metrics_registry_t *r);

/* Notifications decided, not sent yet. */
typedef struct notifier_batch notifier_batch_t;

/*
 * What a plan's status now (new_status) says changed since the status
 * recorded (old_status; NULL: none), as reconcilers/notify.h decides: one
 * body for each webhook that wants each change. NULL when there is nothing
 * to send. now_s is now_ms in RFC 3339.
 */
notifier_batch_t *notifier_decide(const plan_t *plan, const cJSON *old_status, const cJSON *new_status, int64_t now_ms,
				  const char *now_s);
/* Queue the batch's notifications (once the status that records them is written) and free it; b may be NULL. */
void notifier_send(notifier_t *n, notifier_batch_t *b);
void notifier_batch_free(notifier_batch_t *b);

/* The plan is gone: what its webhooks have queued or in flight is dropped (counted). */
void notifier_forget(notifier_t *n, const char *plan);

/*
 * Stop: abort what is in flight, drop the queues. The notifier is free to
 * go (notifier_free) once notifier_busy() says false; the loop must run
 * until then.
 */
void notifier_close(notifier_t *n);
bool notifier_busy(const notifier_t *n);
void notifier_free(notifier_t *n);

#endif
