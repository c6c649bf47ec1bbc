import WeaveHealthd

// The daemon is the WeaveHealthd library (so its tests link what runs); this is its entry point.
await Daemon.run(arguments: Array(CommandLine.arguments.dropFirst()))
