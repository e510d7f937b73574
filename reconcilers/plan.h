/*
 * A MigrationPlan as the reconcilers read it (drashift.io/v1alpha1).
 *
 * This is the decoded, validated spec: every default applied, every duration
 * in milliseconds, every selector parsed. The CRD's schema and CEL rules
 * (crds/) reject nonsense at admission; plan_decode() checks the same rules
 * again, because a plan can be stored before the CRD was updated and the
 * operator must never act on a plan it does not fully understand. A plan
 * that fails here is marked Invalid and nothing is done for it.
 */
#ifndef DRASHIFT_PLAN_H
#define DRASHIFT_PLAN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify.h"
#include "projection.h"
#include "window.h"

/* One label requirement: key In/NotIn values, Exists, DoesNotExist (metav1.LabelSelector). */
typedef enum {
	PLAN_SELECTOR_IN,
	PLAN_SELECTOR_NOT_IN,
	PLAN_SELECTOR_EXISTS,
	PLAN_SELECTOR_DOES_NOT_EXIST,
} plan_selector_op_t;

typedef struct {
	char *key;
	plan_selector_op_t op;
	char **values;
	size_t n_values;
} plan_requirement_t;

/* matchLabels and matchExpressions, ANDed; an empty selector matches nothing (never every node). */
typedef struct {
	plan_requirement_t *reqs;
	size_t n_reqs;
} plan_selector_t;

/* An ownership label: the key, and the values meaning "this owner runs here" or not. */
typedef struct {
	char *key;
	char *enabled;  /* default "true" */
	char *disabled; /* default "false" */
} plan_label_t;

typedef enum { PLAN_DRAIN_WAIT, PLAN_DRAIN_EVICT } plan_drain_policy_t;
typedef enum { PLAN_BREACH_FREEZE, PLAN_BREACH_FREEZE_AND_ROLLBACK } plan_breach_policy_t;
/*
 * How a freeze stops new DRA allocations: the admission policy denies new
 * claims for the plan's DeviceClasses, and/or a DeviceTaintRule taints the
 * driver's devices NoSchedule so the scheduler allocates none of them (also
 * not for pods asking for the extended resource, which then go to legacy nodes).
 */
typedef enum { PLAN_FREEZE_ADMISSION, PLAN_FREEZE_DEVICE_TAINT, PLAN_FREEZE_ADMISSION_AND_DEVICE_TAINT } plan_freeze_mode_t;

typedef struct {
	char *name;
	plan_selector_t node_selector;
	/* Canary size: nodes, or percent of the pool rounded up (at least 1). Exactly one is set. */
	int32_t canary_nodes;
	int32_t canary_percent;
	/* Namespaces allowed to use the DRA classes while the pool is in Canary (empty: all). */
	char **canary_namespaces;
	size_t n_canary_namespaces;
	int32_t max_unavailable; /* nodes in handover at once; default 1 */
	uint64_t bake_ms;        /* Canary bakes this long before expanding; default 10m */
	/* Per-step deadlines; a node past one becomes failed. */
	uint64_t drain_deadline_ms;    /* waiting for the old owner's users to go; default 1h */
	uint64_t handover_deadline_ms; /* each advertisement wait (allocatable 0, slices complete, ...); default 10m */
	plan_drain_policy_t drain_policy;
	uint64_t eviction_deadline_ms; /* Evict only: give up evicting after this; default 30m */
	bool rollback;                 /* spec.rollback.pools names this pool */
	bool promote;                  /* spec.promote.pools names it: the canary need not wait out its bake */
	/*
	 * capacity: how the device plugin's units map to the driver's devices
	 * (reconcilers/capacity.h). More extended resources the plugin serves on
	 * the pool's nodes besides spec.extendedResource (MIG profiles such as
	 * nvidia.com/mig-1g.10gb): drained, gated and counted like it.
	 */
	char **legacy_resources;
	size_t n_legacy_resources;
	int32_t replicas_per_device;   /* plugin units per physical device; 0: from the node's labels */
	bool manual_promotion;         /* promotion: Manual: after the bake and the gate, wait for spec.promote */
} plan_pool_t;

/* At most this many queries in spec.slo.prometheus.queries (the CRD's maxItems). */
#define PLAN_MAX_PROM_QUERIES 16

/* What a Prometheus query's value must not do: rise above its threshold (default) or fall below it. */
typedef enum { PLAN_PROM_BREACH_ABOVE, PLAN_PROM_BREACH_BELOW } plan_prom_direction_t;
/* A query's verdict when it has no value to judge (onNoData, onError). An error is never a Pass. */
typedef enum { PLAN_PROM_INCONCLUSIVE, PLAN_PROM_PASS, PLAN_PROM_BREACH } plan_prom_rule_t;

/* spec.slo.prometheus.queries[]: one PromQL expression judged against a threshold. */
typedef struct {
	char *name;      /* its signal name in status, /metrics and breaches */
	char *query;     /* PromQL; $window is replaced by window */
	double threshold;
	plan_prom_direction_t breach_when;
	uint64_t window_ms;            /* default spec.slo.window */
	plan_prom_rule_t on_no_data;   /* empty result or NaN; default Inconclusive */
	plan_prom_rule_t on_error;     /* the query failed; Inconclusive (default) or Breach */
} plan_prom_query_t;

/* spec.slo.prometheus; address NULL: not configured. */
typedef struct {
	char *address;          /* http(s)://host:port[/path], no trailing slash */
	char *secret_name;      /* a Secret in drashift's namespace: token, ca.crt; NULL: none */
	bool insecure_skip_verify;
	uint64_t interval_ms;   /* how often each query runs; default 30s */
	uint64_t timeout_ms;    /* a query's deadline; default 10s */
	plan_prom_query_t *queries;
	size_t n_queries;
} plan_prometheus_t;

typedef struct {
	uint64_t window_ms;               /* default 10m */
	uint32_t min_samples;             /* default 20: fewer is "inconclusive" */
	uint64_t allocation_latency_p95_ms; /* 0: not judged */
	uint64_t ready_latency_p95_ms;      /* 0: not judged */
	uint32_t max_allocation_failure_percent; /* default 5 */
	uint32_t max_driver_errors;        /* default 0 */
	uint32_t max_capacity_drift;       /* devices; default 0 */
	uint64_t stuck_threshold_ms;       /* a pod pending/not ready this long counts as failed; default 5m */
	plan_breach_policy_t breach_policy;
	plan_freeze_mode_t freeze_mode; /* default Admission */
	plan_prometheus_t prometheus;
} plan_slo_t;

/*
 * spec.preflight: Enforce (pools that have not started wait until the
 * preflight checks pass) or Warn (they show, and nothing waits for them).
 */
typedef enum { PLAN_PREFLIGHT_ENFORCE, PLAN_PREFLIGHT_WARN } plan_preflight_t;

/*
 * spec.notifications.webhooks[]: where drashift POSTs what happened
 * (reconcilers/notify.h). The URL is kept in the plan, which anyone who may
 * read MigrationPlans reads: a URL that carries a token (Slack's do) is a
 * credential (README, "Notifications").
 */
typedef struct {
	char *name;             /* unique in the plan; names the webhook in logs and metrics */
	char *url;              /* http:// or https:// */
	notify_format_t format; /* default JSON */
	uint32_t events;        /* bits 1 << notify_event_t; every event when the spec lists none */
	uint64_t timeout_ms;    /* one notification, its retries included; default 30s */
} plan_webhook_t;

/* The freeze's parts a mode asks for. */
bool plan_freeze_by_admission(plan_freeze_mode_t mode);
bool plan_freeze_by_device_taint(plan_freeze_mode_t mode);

typedef struct {
	char *name;
	char *uid;
	int64_t generation;
	char *driver;            /* DRA driver whose ResourceSlices prove a node is ready */
	char *extended_resource; /* device-plugin resource, e.g. example.com/gpu */
	char **device_classes;
	size_t n_device_classes;
	plan_label_t device_plugin_label; /* default key drashift.io/device-plugin */
	plan_label_t dra_label;           /* default key drashift.io/dra-driver */
	plan_pool_t *pools;               /* in migration order */
	size_t n_pools;
	int32_t max_concurrent_pools;     /* default 1 */
	bool paused;
	bool rollback_all;                /* spec.rollback.all */
	plan_slo_t slo;
	plan_preflight_t preflight;
	/* A person lifts a freeze by writing the breach's id here (spec.acknowledgedBreach). */
	char *acknowledged_breach;
	/* spec.windows: handovers start only inside one (none: always). Zones are loaded by the controller. */
	window_t *windows;
	size_t n_windows;
	/*
	 * spec.tenancy: namespaces allowed to create claims for the plan's
	 * classes while it migrates, by name and by labels (n_reqs 0: no
	 * selector). Neither set: every namespace (reconcilers/tenancy.h).
	 */
	char **tenancy_namespaces;
	size_t n_tenancy_namespaces;
	plan_selector_t tenancy_selector;
	plan_webhook_t *webhooks; /* spec.notifications.webhooks */
	size_t n_webhooks;
} plan_t;

/*
 * Decode and validate a MigrationPlan object. Returns 0, or -1 with one line
 * in err naming the field (spec.pools[1].canary.percent: must be 1..100).
 * On error *out is zeroed.
 */
int plan_decode(const cJSON *obj, plan_t *out, char *err, size_t errlen);
void plan_free(plan_t *p);

/*
 * Does the node match the selector? Every label the node carries is read, in
 * place and in any order: a node has as many labels as the API server let
 * through (NFD and GPU feature discovery put hundreds on a GPU node). This is
 * the matcher the controller's pool index uses (pool_index_matcher_t).
 */
bool plan_selector_matches(const plan_selector_t *sel, const projection_node_t *node);

/* The same for any object's labels (a namespace's, for spec.tenancy.namespaceSelector). */
bool plan_selector_matches_labels(const plan_selector_t *sel, const projection_label_t *labels, size_t n_labels);

/* The canary size of a pool of n nodes: at least 1, at most n. */
size_t plan_canary_size(const plan_pool_t *pool, size_t n_nodes);

/*
 * The name of an object drashift keeps for a plan: prefix and the plan's
 * name ("drashift-freeze-gpu"), or, when that passes the 253 characters of a
 * name, as much of the plan's name as fits and a hash of the whole name.
 * NULL when plan is NULL or empty.
 */
char *plan_child_name(const char *prefix, const char *plan);


#endif
