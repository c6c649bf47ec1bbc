// WeaveSupport's types in WeaveHealth's API, nameable by whoever imports WeaveHealth: the signal a
// monitor fires when it publishes a report, which a watching `/health` waits on.
@_exported import class WeaveSupport.ChangeSignal
