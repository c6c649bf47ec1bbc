// What an application's integration uses, through `import WeaveAppEndpoint` alone: the container
// (`WeaveDI`), `HealthCheckable` and `HealthStatus` (`WeaveHealth`), `ServiceIdentity`, `MetricCollector`
// (`WeavePrometheus`), `ExpositionText` and `MetricsBridge` (`WeaveObservability`), `HealthRouter`,
// which the framework adapters mount (`WeaveHealthRoutes`), and the container's routes for a router
// of one's own (`WeaveContainerRoutes`).
@_exported import WeaveContainerRoutes
@_exported import WeaveDI
@_exported import WeaveHealth
@_exported import WeaveHealthRoutes
@_exported import WeaveObservability
@_exported import WeavePrometheus
