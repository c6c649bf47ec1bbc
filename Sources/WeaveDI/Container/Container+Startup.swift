extension Container {
    /// The first factory run of each dependency since the container was made: the runs so far while
    /// startup lasts, all of them once `endStartup()` ended it.
    public var startupTree: StartupTree {
        startup.tree(clock)
    }

    /// Ends startup: later factory runs are not kept. The first call logs the tree once (the time
    /// spent resolving and the slowest chain, `WeaveEvent.startupResolutions`) and tells the `onStartup`
    /// handlers; it returns the tree, or nil when startup had already ended. An `AppEndpoint` calls
    /// it when its application is first ready.
    @discardableResult
    public func endStartup() -> StartupTree? {
        guard startup.end() else { return nil }
        let tree = startupTree
        instrumentation.startupEnded(tree)
        return tree
    }
}
