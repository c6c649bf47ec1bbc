// What an application's integration uses, through `import WeaveAppEndpoint` alone: the container
// (`WeaveDI`), `HealthCheckable` and `HealthStatus` (`WeaveHealth`), `ServiceIdentity`, `MetricCollector`
// (`WeavePrometheus`), `ExpositionText` and `MetricsBridge` (`WeaveObservability`), and `HealthRouter`,
// which the framework adapters mount (`WeaveHealthRoutes`).
@_exported import WeaveDI
@_exported import WeaveHealth
@_exported import WeaveHealthRoutes
@_exported import WeaveObservability
@_exported import WeavePrometheus
