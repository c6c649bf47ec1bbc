// WeaveSupport's types in WeaveDI's API, nameable by whoever imports WeaveDI: the token every hook
// registration returns (the container's, and a memory-pressure monitor's), and the log rate limit
// of `InstrumentationSettings` with the throttle that applies it (the daemon's applications' events too).
@_exported import class WeaveSupport.HookToken
@_exported import struct WeaveSupport.LogRateLimit
@_exported import class WeaveSupport.LogThrottle
