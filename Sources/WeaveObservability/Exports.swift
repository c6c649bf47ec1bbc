// What the seed's `import WeaveDI` gave, through `import WeaveObservability` alone: the container
// and its wrappers (`WeaveDI`), `HealthCheckable` and `HealthMonitor` (`WeaveHealth`), and
// `HealthMonitor(container:)` (here). docs/porting.md says so.
@_exported import WeaveDI
@_exported import WeaveHealth
