// The token every hook registration returns (the container's, and a memory-pressure monitor's),
// nameable by whoever imports WeaveDI.
@_exported import class WeaveSupport.HookToken
